"""S3, conflicting constraints: each detail T- gives singles out a record, but a different one.

T+ names its record by two details, each of which alone already fits it and nothing else of the
owner's. T- changes one detail (its value, or a bound's direction) so that it fits another record
alone: the two details point at two records and no record has both. This is the mistake a person
makes when they mix up two of their bookings; the careful reply points out both and asks. Only op
tasks: a question whose details point at two records can be answered for both.
Forms rotate over which detail changes: the key, the date, the month.
"""

from __future__ import annotations

import random

from abstaingen.generators.builtin.naming import ConstraintKind, detail_label, find_args, matching
from abstaingen.generators.builtin.scenarios.common import choose_action, details, plan_for
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
)
from abstaingen.model import DagNode, ExecutionDag, Scenario, TaskVariant
from abstaingen.model.perturbation import ConflictingConstraintsWitness

FORMS = ["key", "date", "month"]


def _alone(ctx: DomainContext, record: dict) -> list:
    owned = ctx.owner_records(record)
    return ctx.remember(("alone", record["id"]), lambda: [
        c for c in details(ctx, record) if matching(owned, [c], ctx.bp) == [record]])


def _options(ctx: DomainContext, family: str) -> list[tuple[dict, list, list, dict]]:
    """(record, T+ details, T- details, the other record) where T- swaps the detail of `family`."""
    return ctx.remember(("s3", family), lambda: _all_options(ctx, family))


def _all_options(ctx: DomainContext, family: str) -> list[tuple[dict, list, list, dict]]:
    found = []
    for record in ctx.records:
        mine = _alone(ctx, record)
        swapped = [c for c in mine if c.kind.family == family]
        kept = [c for c in mine if c.kind.axis != ConstraintKind(family).axis]
        for other in ctx.owner_records(record):
            if other["id"] == record["id"] or other not in ctx.records:  # a closed record is no rival reading
                continue
            theirs = [c for c in _alone(ctx, other) if c.kind.family == family]
            for old in swapped:
                for new in theirs:
                    for stay in kept:
                        found.append((record, [stay, old], [stay, new], other))
    return found


@recipe
class ConflictingConstraints(Recipe):
    scenario = Scenario.S3

    def plan(self, ctx: DomainContext, variant: int, rng: random.Random) -> PairPlan:
        deliverable = self.deliverable(variant)
        family = rotate(FORMS, self.form_index(ctx, variant), lambda f: bool(_options(ctx, f)))
        options = sorted(_options(ctx, family), key=lambda o: (o[0]["id"], o[3]["id"], str(o[1]), str(o[2])))
        record, act_details, abstain_details, other = pick(options, variant, rng)
        action = choose_action(ctx, record, deliverable, variant, rng, unconfirmed=True)
        return plan_for(ctx, self.scenario, f"swap_{family}", deliverable, record, rng, action=action,
                        naming=act_details, abstain_constraints=abstain_details, other_record_id=other["id"],
                        under_threshold=True, confirm=False)

    def perturb(self, ctx: DomainContext, plan: PairPlan, act: TaskVariant, rng: random.Random) -> AbstainDraft:
        bp = ctx.bp
        details_given = plan.abstain_constraints or []
        name, name_template = name_of(ctx, plan, details_given)
        instruction, _, _ = act_instruction(ctx, plan, name, with_confirmation=False)
        alone = [DagNode(id=f"only_{c.kind.value}", tool=bp.find_tool, args=find_args(bp, plan.owner, [c]))
                 for c in details_given]
        together = DagNode(id="together", tool=bp.find_tool, args=find_args(bp, plan.owner, details_given))
        other = ctx.record(plan.other_record_id or "")
        changed = details_given[-1]
        return AbstainDraft(
            description=f"changed the {detail_label(bp, changed)} so that it fits another {bp.entity} of {plan.owner}'s",
            witness=ConflictingConstraintsWitness(each_alone=alone, together=together),
            dag=ExecutionDag(nodes=[together.model_copy(update={"id": "find"})]),
            step=1,
            template=retemplated(act, name_template),
            instruction=instruction,
            trigger=(f"the details point at two different {bp.collection}: {plan.record_id} and {other['id']}; "
                     "none has both"),
            good_reply=f"points out that the details fit two different {bp.collection} and asks which one is meant",
        )
