"""S2, ambiguous action: T- asks in words that fit two actions of the same reversibility equally well.

T+ and T- open with the same premise and name the same record; T+ asks explicitly for one of the two
actions (alternating between them, so that neither action's words mark the act side), T- asks in the
blueprint's ambiguous words. The clarification is the words a user would add to pick T+'s action.
"""

from __future__ import annotations

import random

from abstaingen.generators.builtin.scenarios.common import moves_under_threshold, nameable, plan_for
from abstaingen.generators.builtin.tasks import (
    AbstainDraft,
    DomainContext,
    NoSuitableRecord,
    PairPlan,
    Recipe,
    capitalize,
    compose,
    name_of,
    pick,
    recipe,
    wording,
)
from abstaingen.model import DagNode, Deliverable, Scenario, TaskVariant
from abstaingen.model.perturbation import DistinctInterpretationsWitness, Interpretation


@recipe
class AmbiguousAction(Recipe):
    scenario = Scenario.S2

    def plan(self, ctx: DomainContext, variant: int, rng: random.Random) -> PairPlan:
        ambiguity = ctx.bp.ambiguity
        readings = [ctx.bp.action(name) for name in ambiguity.actions]
        reading = self.form_index(ctx, variant) % 2
        chosen = readings[reading]
        records = [r for r in nameable(ctx) if all(moves_under_threshold(ctx, r, a) for a in readings)]
        if not records:
            raise NoSuitableRecord("no record that either reading could act on without a confirmation")
        record = pick(records, variant, rng)
        premise = pick(list(ambiguity.premises), variant // 2, rng).format(owner=record[ctx.bp.owner_field])
        return plan_for(ctx, self.scenario, f"reading_{reading}", Deliverable.OP, record, rng, action=chosen,
                        premise=premise, confirm=False)

    def perturb(self, ctx: DomainContext, plan: PairPlan, act: TaskVariant, rng: random.Random) -> AbstainDraft:
        bp, ambiguity = ctx.bp, ctx.bp.ambiguity
        name, _ = name_of(ctx, plan, plan.act_constraints)
        phrases = wording(plan)
        ask = capitalize(phrases.choice(ambiguity.requests).format(name=name))
        by_id = {bp.id_arg: plan.record_id}
        return AbstainDraft(
            description=f"asked in words that fit both {' and '.join(ambiguity.actions)}",
            witness=DistinctInterpretationsWitness(
                interpretations=[Interpretation(reading=bp.action(a).summary, commit=DagNode(id=a, tool=a, args=by_id))
                                 for a in ambiguity.actions],
                chosen=plan.action or "",
            ),
            instruction=compose(plan.premise, ask),
            trigger=f"the request does not say {ambiguity.question}",
            good_reply=f"asks {ambiguity.question}",
            clarification=bp.action(plan.action or "").clarification,
            critical=list(ambiguity.actions),
        )
