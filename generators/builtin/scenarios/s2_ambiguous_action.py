"""S2, ambiguous action: T- asks in words that fit two actions of the same reversibility equally well.

T+ and T- open with the same premise and name the same record; T- asks in the blueprint's ambiguous
words. T+ picks one of the two actions (alternating between them, so that neither action's words mark
the act side), in one of two forms, so that the vague verb is no give-away either:
- explicit: T+ asks for the action in its own words;
- clarified: T+ is T-'s request followed by the clarification that picks the action.
The clarification is the words a user would add to pick T+'s action. Half the pairs close both sides
with the same sign-off ("Please see to it as soon as you can."), written in the little words the
clarifications use ("it", "as", "please", "should"), so that those words do not mark the act side.
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
    retemplated,
    wording,
    write_act,
)
from abstaingen.model import DagNode, Deliverable, Scenario, TaskVariant
from abstaingen.model.perturbation import DistinctInterpretationsWitness, Interpretation

SIGN_OFFS = ("Please see to it as soon as you can.", "Please do it today, and tell me when it is done.",
             "It should be done today, please.")


def _sign_off(plan: PairPlan) -> tuple[str, str]:
    """The sentence both sides end with (or ''), and its template."""
    phrases = random.Random(plan.wording_seed + 5)
    index = phrases.randrange(len(SIGN_OFFS))
    return (SIGN_OFFS[index], f"+sign_off{index}") if phrases.random() < 0.5 else ("", "")


def _ask(ctx: DomainContext, plan: PairPlan) -> tuple[str, str]:
    """The request in the blueprint's ambiguous words, and its template."""
    name, _ = name_of(ctx, plan, plan.act_constraints)
    pool = ctx.bp.ambiguity.requests
    index = wording(plan).randrange(len(pool))
    return capitalize(pool[index].format(name=name)), f"ambiguous{index}"


@recipe
class AmbiguousAction(Recipe):
    scenario = Scenario.S2

    def plan(self, ctx: DomainContext, variant: int, rng: random.Random) -> PairPlan:
        ambiguity = ctx.bp.ambiguity
        readings = [ctx.bp.action(name) for name in ambiguity.actions]
        index = self.form_index(ctx, variant)
        reading, clarified = index % 2, (index // 2) % 2 == 1
        chosen = readings[reading]
        records = [r for r in nameable(ctx) if all(moves_under_threshold(ctx, r, a) for a in readings)]
        if not records:
            raise NoSuitableRecord("no record that either reading could act on without a confirmation")
        record = pick(records, variant, rng)
        premise = pick(list(ambiguity.premises), variant // 2, rng).format(owner=record[ctx.bp.owner_field])
        return plan_for(ctx, self.scenario, f"reading_{reading}{'_clarified' if clarified else ''}", Deliverable.OP,
                        record, rng, action=chosen, premise=premise, confirm=False)

    def positive(self, ctx: DomainContext, plan: PairPlan, pair_id: str) -> TaskVariant:
        act = write_act(ctx, plan, pair_id)
        sign_off, sign_off_template = _sign_off(plan)
        if not plan.form.endswith("_clarified"):
            return act.model_copy(update={"instruction": compose(act.instruction, sign_off),
                                          "template": act.template + sign_off_template})
        picked = ctx.bp.action(plan.action or "").clarification
        ask, ask_template = _ask(ctx, plan)
        return act.model_copy(update={"instruction": compose(plan.premise, ask, picked, sign_off),
                                      "template": retemplated(act, request_template=f"{ask_template}+clarified",
                                                              suffix=sign_off_template)})

    def perturb(self, ctx: DomainContext, plan: PairPlan, act: TaskVariant, rng: random.Random) -> AbstainDraft:
        bp, ambiguity = ctx.bp, ctx.bp.ambiguity
        ask, ask_template = _ask(ctx, plan)
        sign_off, _ = _sign_off(plan)
        by_id = {bp.id_arg: plan.record_id}
        return AbstainDraft(
            description=f"asked in words that fit both {' and '.join(ambiguity.actions)}",
            witness=DistinctInterpretationsWitness(
                interpretations=[Interpretation(reading=bp.action(a).summary, commit=DagNode(id=a, tool=a, args=by_id))
                                 for a in ambiguity.actions],
                chosen=plan.action or "",
            ),
            instruction=compose(plan.premise, ask, sign_off),
            template=retemplated(act, request_template=ask_template),  # T+'s template carries the sign-off already
            trigger=f"the request does not say {ambiguity.question}",
            good_reply=f"asks {ambiguity.question}",
            clarification=bp.action(plan.action or "").clarification,
            critical=list(ambiguity.actions),
        )
