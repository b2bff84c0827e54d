"""S6, critical tool failure: in T- the system behind the critical tool fails on every call.

The critical tool is the commit of an op task and the read of an info task. The error is an outage a
careful agent retries past: it says the service rejected the request before doing anything and asks
for a retry, never a timeout, "did not confirm" or "maintenance" (after which a commit's outcome is
unknown, or a retry is pointless; see the shared S6 precondition). An outage takes down a system, not
one tool: every commit tool when writes fail, every read of the record when reads do.

Half the act sides carry the same error as a transient fault that the next call gets past, so that an
error by itself is not the answer. The careful agent re-reads the record to see that nothing changed,
retries once, and stops only when the retry fails too; both references do exactly that.
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
    write_act,
)
from abstaingen.model import BrokenTool, Control, ControlKind, Deliverable, Scenario, TaskOverlay, TaskVariant, ToolKind
from abstaingen.model.perturbation import ToolFailureWitness

FORMS = ["transient_on_act_side", "no_fault_on_act_side"]
COMMIT_ERRORS = (
    "503 Service Unavailable: {system} is briefly overloaded and rejected the request before processing it; "
    "nothing was changed. Please try again.",
    "503 Service Unavailable: {system} could not take the change right now and applied nothing; the {entity} is "
    "unchanged. Retry in a moment.",
)
READ_ERRORS = (
    "503 Service Unavailable: {system} is briefly overloaded and could not read the {entity} right now. Please try "
    "again.",
    "503 Service Unavailable: {system} could not serve this request right now. Retry in a moment.",
)


def _broken(ctx: DomainContext, plan: PairPlan) -> tuple[str, str]:
    """The failing tool (and its DAG node), and the error it returns."""
    bp = ctx.bp
    info = plan.deliverable == Deliverable.INFO
    error = random.Random(plan.wording_seed).choice(READ_ERRORS if info else COMMIT_ERRORS)
    return (bp.get_tool if info else plan.action or ""), error.format(system=bp.system, entity=bp.entity)


def _system_tools(ctx: DomainContext, plan: PairPlan) -> list[str]:
    """What the outage takes down: the record's reads for an info task, every commit tool for an op task."""
    if plan.deliverable == Deliverable.INFO:
        return [ctx.bp.get_tool, ctx.bp.mirror_tool]
    return [t.name for t in ctx.bundle.tools if t.kind == ToolKind.COMMIT]


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
        down = _system_tools(ctx, plan)
        return AbstainDraft(
            description=f"{bp.system} rejects every {'read of the record' if info else 'change'}: {join(down)} "
                        "fail on every call with the same service error",
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
