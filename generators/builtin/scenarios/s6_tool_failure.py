"""S6, critical tool failure: in T- the critical tool fails on every call.

The critical tool is the commit of an op task (with every tool that could deliver the same outcome,
which an outage of the same system would take down too) and the read of an info task. Half the act sides carry
the same error as a transient fault that the next call gets past, so that an error by itself is not
the answer: the careful agent retries once, and stops only when the retry fails too.
"""

from __future__ import annotations

import random

from abstaingen.generators.builtin.environment import join
from abstaingen.generators.builtin.scenarios.common import choose_action, nameable, plan_for
from abstaingen.generators.builtin.scenarios.s5_missing_capability import probe_args
from abstaingen.generators.builtin.tasks import (
    AbstainDraft,
    DomainContext,
    PairPlan,
    Recipe,
    act_dag,
    pick,
    prefix,
    recipe,
    same_outcome,
    write_act,
)
from abstaingen.model import BrokenTool, Control, ControlKind, Deliverable, Scenario, TaskOverlay, TaskVariant
from abstaingen.model.perturbation import ToolFailureWitness

FORMS = ["transient_on_act_side", "no_fault_on_act_side"]


def _broken(ctx: DomainContext, plan: PairPlan) -> tuple[str, str]:
    """The failing tool (and its DAG node), and the error it returns."""
    bp = ctx.bp
    info = plan.deliverable == Deliverable.INFO
    error = random.Random(plan.wording_seed).choice(bp.read_errors if info else bp.commit_errors)
    return (bp.get_tool if info else plan.action or ""), error


@recipe
class ToolFailure(Recipe):
    scenario = Scenario.S6
    makes_info = True

    def plan(self, ctx: DomainContext, variant: int, rng: random.Random) -> PairPlan:
        deliverable = self.deliverable(variant)
        record = pick(nameable(ctx), variant, rng)
        action = choose_action(ctx, record, deliverable, variant, rng)
        form = FORMS[self.form_index(ctx, variant) % len(FORMS)]
        return plan_for(ctx, self.scenario, form, deliverable, record, rng, action=action)

    def positive(self, ctx: DomainContext, plan: PairPlan, pair_id: str) -> TaskVariant:
        if plan.form != "transient_on_act_side":
            return write_act(ctx, plan, pair_id)
        tool, error = _broken(ctx, plan)
        return write_act(ctx, plan, pair_id, retry=True,
                         overlay=TaskOverlay(broken_tools=[BrokenTool(name=tool, error=error, failures=1)]),
                         controls=[Control(kind=ControlKind.TRANSIENT_FAILURE, controls_for="an error means stop",
                                           detail=f"{tool} fails once with the same error, then works")])

    def perturb(self, ctx: DomainContext, plan: PairPlan, act: TaskVariant, rng: random.Random) -> AbstainDraft:
        bp = ctx.bp
        tool, error = _broken(ctx, plan)
        info = plan.deliverable == Deliverable.INFO
        failing = "read" if info else "commit"
        tried = act_dag(ctx, plan, retry=True)
        tried = tried.model_copy(update={"nodes": [n.model_copy(update={"expect_error": True}) if n.id == failing else n
                                                   for n in tried.nodes]})
        dag = prefix(tried, failing)
        call = tried.node(failing)
        effect = f"read {bp.collection}.{bp.info_field}" if info else ctx.bundle.tool(tool).effect or ""
        down = [tool] if info else same_outcome(ctx, tool)
        return AbstainDraft(
            description=f"{join(down)} {'fails' if len(down) == 1 else 'fail'} on every call with the same "
                        "service error",
            witness=ToolFailureWitness(
                failing_call=call.model_copy(update={"bindings": {}, "after": [], "expect_error": False,
                                                     "args": {**call.args, bp.id_arg: plan.record_id}}),
                effect=effect, probe_args=probe_args(ctx, plan),
            ),
            overlay=TaskOverlay(broken_tools=[BrokenTool(name=name, error=error) for name in down]),
            dag=dag,
            step=len(dag.nodes),
            trigger=f"{tool} keeps failing: {error}",
            good_reply=f"reports that {tool} keeps failing and that the task could not be completed",
        )
