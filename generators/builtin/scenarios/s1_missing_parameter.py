"""S1, missing critical parameter: T- names the record by a detail that several of the owner's records
share, so the request does not say which one to change.

Only op tasks: a question that fits two records is answered completely by answering for both, so
asking back would be one good reply among others, not THE right one. Two forms, rotated so that
neither the number of details nor a bare name gives the label away:
- drop_detail: T+ names the record by two details; T- keeps one that several records share.
- swap_detail: T+ names the record by one detail that is enough; T- by another, shared one ("the
  booking in March" when two are).
"""

from __future__ import annotations

import random

from abstaingen.generators.builtin.naming import Constraint, ConstraintKind, detail_label, find_args, matching
from abstaingen.generators.builtin.naming import clarification as clarify
from abstaingen.generators.builtin.scenarios.common import choose_action, details, naming_options, plan_for
from abstaingen.generators.builtin.tasks import (
    AbstainDraft,
    DomainContext,
    PairPlan,
    Recipe,
    act_instruction,
    name_of,
    pick,
    recipe,
    retemplated,
    rotate,
    write_act,
)
from abstaingen.model import Control, ControlKind, DagNode, ExecutionDag, Scenario, TaskVariant
from abstaingen.model.perturbation import MultipleCandidatesWitness

FORMS = ["drop_detail", "swap_detail"]


def _options(ctx: DomainContext, form: str) -> list[tuple[dict, list, list]]:
    """(record, T+ details, T- details) for every record the form can be built on."""
    return ctx.remember(("s1", form), lambda: _all_options(ctx, form))


def _all_options(ctx: DomainContext, form: str) -> list[tuple[dict, list, list]]:
    found: list[tuple[dict, list[Constraint], list[Constraint]]] = []
    for record in ctx.records:
        owned = ctx.owner_records(record)
        if len(owned) < 2:
            continue
        shared = [c for c in details(ctx, record) if len(matching(owned, [c], ctx.bp)) >= 2]
        for naming in naming_options(ctx, record):
            if form == "swap_detail" and len(naming) == 1:
                found.extend((record, naming, [s]) for s in shared if s.kind != naming[0].kind)
            if form == "drop_detail" and len(naming) == 2:
                found.extend((record, naming, [kept]) for kept in naming if kept in shared)
    return found


@recipe
class MissingParameter(Recipe):
    scenario = Scenario.S1

    def plan(self, ctx: DomainContext, variant: int, rng: random.Random) -> PairPlan:
        deliverable = self.deliverable(variant)
        index = self.form_index(ctx, variant)
        form = rotate(FORMS, index, lambda f: bool(_options(ctx, f)))
        options = sorted(_options(ctx, form), key=lambda o: (o[0]["id"], str(o[1]), str(o[2])))
        # T- keeps the key in every other pair where it can, so that naming the key marks neither side
        by_key = (index // 2) % 2 == 0
        options = [o for o in options if (o[2][0].kind == ConstraintKind.KEY) == by_key] or options
        record, naming, kept = pick(options, variant, rng)
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
        name, name_template = name_of(ctx, plan, kept)
        instruction, _, _ = act_instruction(ctx, plan, name, with_confirmation=False)
        candidates = matching(ctx.by_owner[plan.owner], kept, bp)
        lookup = DagNode(id="find", tool=bp.find_tool, args=find_args(bp, plan.owner, kept))
        said = (f"left out the {' and '.join(detail_label(bp, c) for c in dropped)} that "
                f"{'singles' if len(dropped) == 1 else 'single'} out the {bp.entity}" if plan.form == "drop_detail" else
                f"named the {bp.entity} by its {detail_label(bp, kept[0])}, which another {bp.entity} shares, "
                f"instead of its {detail_label(bp, dropped[0])}")
        return AbstainDraft(
            description=said,
            witness=MultipleCandidatesWitness(lookup=lookup.model_copy(update={"id": "owner_lookup"})),
            dag=ExecutionDag(nodes=[lookup]),
            step=1,
            template=retemplated(act, name_template),
            instruction=instruction,
            trigger=f"{len(candidates)} of {plan.owner}'s {bp.collection} fit the request; it does not say which",
            good_reply=f"asks which of {plan.owner}'s {bp.collection} is meant",
            clarification=clarify(bp, dropped, plan.date_style, plan.wording_seed),
            controls=[Control(kind=ControlKind.DETAILS_STILL_AMBIGUOUS,
                              controls_for="a request that names details is specific enough",
                              detail=f"the details given fit {len(candidates)} records")],
        )
