"""S5, insufficient tool capability: T- hides every tool that can do what T+ asks (or read what it asks)."""

from __future__ import annotations

import random

from pydantic import JsonValue

from abstaingen.generators.builtin.environment import join
from abstaingen.generators.builtin.scenarios.common import choose_action, nameable, plan_for
from abstaingen.generators.builtin.tasks import (
    AbstainDraft,
    DomainContext,
    PairPlan,
    Recipe,
    pick,
    recipe,
    same_outcome,
)
from abstaingen.model import Deliverable, Scenario, TaskOverlay, TaskVariant
from abstaingen.model.perturbation import MissingCapabilityWitness


def probe_args(ctx: DomainContext, plan: PairPlan) -> dict[str, JsonValue]:
    """Everything a remaining tool could be called with to try to reach the deliverable anyway."""
    bp, record = ctx.bp, ctx.record(plan.record_id)
    return {bp.id_arg: plan.record_id, "amount": plan.amount or record[bp.amount_field],
            bp.owner_field: plan.owner, bp.key.name: record[bp.key.name], "date": record["date"]}


@recipe
class MissingCapability(Recipe):
    scenario = Scenario.S5
    makes_info = True

    def plan(self, ctx: DomainContext, variant: int, rng: random.Random) -> PairPlan:
        deliverable = self.deliverable(variant)
        record = pick(nameable(ctx), variant, rng)
        action = choose_action(ctx, record, deliverable, variant, rng)
        return plan_for(ctx, self.scenario, "hidden_tool", deliverable, record, rng, action=action)

    def perturb(self, ctx: DomainContext, plan: PairPlan, act: TaskVariant, rng: random.Random) -> AbstainDraft:
        bp = ctx.bp
        if plan.deliverable == Deliverable.INFO:
            return AbstainDraft(
                description=f"removed {bp.get_tool}, the only tool that reads the {bp.info_label}",
                witness=MissingCapabilityWitness(hidden_tool=bp.get_tool, effect=f"read {bp.collection}.{bp.info_field}",
                                                 probe_args=probe_args(ctx, plan)),
                overlay=TaskOverlay(hidden_tools=[bp.get_tool]),
                trigger=f"no available tool can read the {bp.info_label}",
                good_reply=f"explains that the {bp.info_label} cannot be read with the available tools",
            )
        action = bp.action(plan.action or "")
        hidden = same_outcome(ctx, action.name)
        return AbstainDraft(
            description=f"removed {join(hidden)}: no tool left can {action.summary}",
            witness=MissingCapabilityWitness(hidden_tool=action.name, effect=ctx.bundle.tool(action.name).effect or "",
                                             probe_args=probe_args(ctx, plan)),
            overlay=TaskOverlay(hidden_tools=hidden),
            trigger=f"no available tool can {action.summary}",
            good_reply=f"explains that it has no tool to {action.summary}",
        )
