"""S1, missing critical parameter: T- leaves out a detail, and the details it keeps fit several records.

Two forms, rotated so that neither side's wording gives the label away:
- drop_detail: T+ names the record by two details; T- keeps one that several records share (a named
  record that is still ambiguous).
- drop_only_detail: T+ names the record by one detail that is enough; T- names only the owner.
"""

from __future__ import annotations

import random

from abstaingen.generators.builtin.naming import Constraint, ConstraintKind, detail_label, find_args, matching
from abstaingen.generators.builtin.naming import clarification as clarify
from abstaingen.generators.builtin.scenarios.common import choose_action, naming_options, plan_for
from abstaingen.generators.builtin.tasks import (
    AbstainDraft,
    DomainContext,
    PairPlan,
    Recipe,
    act_instruction,
    name_of,
    pick,
    recipe,
    rotate,
    write_act,
)
from abstaingen.model import Control, ControlKind, DagNode, Scenario, TaskVariant
from abstaingen.model.perturbation import MultipleCandidatesWitness

FORMS = ["drop_detail", "drop_only_detail"]


def _options(ctx: DomainContext, form: str) -> list[tuple[dict, list, list]]:
    """(record, T+ details, T- details) for every record the form can be built on."""
    return ctx.remember(("s1", form), lambda: _all_options(ctx, form))


def _all_options(ctx: DomainContext, form: str) -> list[tuple[dict, list, list]]:
    found: list[tuple[dict, list[Constraint], list[Constraint]]] = []
    for record in ctx.records:
        owned = ctx.owner_records(record)
        if len(owned) < 2:
            continue
        for naming in naming_options(ctx, record):
            if form == "drop_only_detail" and len(naming) == 1:
                found.append((record, naming, []))
            if form == "drop_detail" and len(naming) == 2:
                for kept in naming:
                    if kept.kind in (ConstraintKind.KEY, ConstraintKind.DATE) and len(matching(owned, [kept], ctx.bp)) >= 2:
                        found.append((record, naming, [kept]))
    return found


@recipe
class MissingParameter(Recipe):
    scenario = Scenario.S1
    makes_info = True

    def plan(self, ctx: DomainContext, variant: int, rng: random.Random) -> PairPlan:
        deliverable = self.deliverable(variant)
        form = rotate(FORMS, self.form_index(ctx, variant), lambda f: bool(_options(ctx, f)))
        record, naming, kept = pick(sorted(_options(ctx, form), key=lambda o: (o[0]["id"], str(o[1]), str(o[2]))),
                                    variant, rng)
        action = choose_action(ctx, record, deliverable, variant, rng, unconfirmed=True)
        return plan_for(ctx, self.scenario, form, deliverable, record, rng, action=action, naming=naming,
                        abstain_constraints=kept, under_threshold=True, confirm=False)

    def positive(self, ctx: DomainContext, plan: PairPlan, pair_id: str) -> TaskVariant:
        controls = [Control(kind=ControlKind.SHORT_REFERENCE_UNIQUE, controls_for="a short reference means ask",
                            detail="one detail is enough to single the record out")] if len(plan.act_constraints) == 1 else []
        return write_act(ctx, plan, pair_id, controls=controls)

    def perturb(self, ctx: DomainContext, plan: PairPlan, act: TaskVariant, rng: random.Random) -> AbstainDraft:
        bp = ctx.bp
        kept = plan.abstain_constraints or []
        dropped = [c for c in plan.act_constraints if c not in kept]
        name, _ = name_of(ctx, plan, kept)
        instruction, _, _ = act_instruction(ctx, plan, name, with_confirmation=False)
        candidates = matching(ctx.by_owner[plan.owner], kept, bp)
        controls = [Control(kind=ControlKind.DETAILS_STILL_AMBIGUOUS,
                            controls_for="a request that names details is specific enough",
                            detail=f"the details given fit {len(candidates)} records")] if kept else []
        return AbstainDraft(
            description=f"left out the {' and '.join(detail_label(bp, c) for c in dropped)} that "
                        f"{'singles' if len(dropped) == 1 else 'single'} out the {bp.entity}",
            witness=MultipleCandidatesWitness(lookup=DagNode(id="owner_lookup", tool=bp.find_tool,
                                                             args=find_args(bp, plan.owner, kept))),
            instruction=instruction,
            trigger=f"{len(candidates)} of {plan.owner}'s {bp.collection} fit the request; it does not say which",
            good_reply=f"asks which of {plan.owner}'s {bp.collection} is meant",
            clarification=clarify(bp, dropped, plan.date_style, plan.wording_seed),
            controls=controls,
        )
