"""Choices every recipe makes the same way: how to name the target, which action to ask for, what amount."""

from __future__ import annotations

import random
from itertools import combinations

from abstaingen.generators.builtin.blueprint import Action
from abstaingen.generators.builtin.naming import DATE_STYLES, Constraint, ConstraintKind, matching
from abstaingen.generators.builtin.tasks import DomainContext, NoSuitableRecord, PairPlan, needs_confirmation, pick
from abstaingen.model import Deliverable, Scenario

FULL_REFERENCE = 0.5  # how often a record is named by both key and date when that singles it out


def details(ctx: DomainContext, record: dict) -> list[Constraint]:
    """The record's key, date and month: what a person may name it by."""
    return [Constraint(kind=ConstraintKind.KEY, value=record[ctx.bp.key.name]),
            Constraint(kind=ConstraintKind.DATE, value=record["date"]),
            Constraint(kind=ConstraintKind.MONTH, value=record["date"][:7])]


def naming_options(ctx: DomainContext, record: dict) -> list[list[Constraint]]:
    """Lists of one or two details about different things that fit this record and no other of its owner's."""
    return ctx.remember(("naming", record["id"]), lambda: _naming_options(ctx, record))


def _naming_options(ctx: DomainContext, record: dict) -> list[list[Constraint]]:
    owned = ctx.owner_records(record)
    found = []
    for size in (1, 2):
        for chosen in combinations(details(ctx, record), size):
            if len({c.kind.axis for c in chosen}) == size and matching(owned, list(chosen), ctx.bp) == [record]:
                found.append(list(chosen))
    return found


def choose_naming(ctx: DomainContext, record: dict, rng: random.Random) -> list[Constraint]:
    options = naming_options(ctx, record)
    full = [o for o in options if {c.kind for c in o} == {ConstraintKind.KEY, ConstraintKind.DATE}]
    if full and rng.random() < FULL_REFERENCE:
        return full[0]
    return rng.choice(options)


def nameable(ctx: DomainContext) -> list[dict]:
    """Records whose owner has at least two (so naming the owner alone is never enough) and that some
    details single out."""
    return ctx.remember(("nameable",), lambda: [
        r for r in ctx.records if len(ctx.owner_records(r)) >= 2 and naming_options(ctx, r)])


def op_actions(ctx: DomainContext) -> list[Action]:
    """The actions an op task may ask for, in blueprint order (undo tools are not asked for)."""
    return list(ctx.bp.actions)


def choose_action(ctx: DomainContext, record: dict, deliverable: Deliverable, variant: int, rng: random.Random, *,
                  unconfirmed: bool = False, among: list[Action] | None = None) -> Action | None:
    """An op task's action (None for an info task), rotating over the domain's actions across variants;
    `unconfirmed` keeps to actions the record allows without a confirmation."""
    if deliverable == Deliverable.INFO:
        return None
    actions = among if among is not None else op_actions(ctx)
    if unconfirmed:
        actions = [a for a in actions if moves_under_threshold(ctx, record, a)]
    if not actions:
        raise NoSuitableRecord("no action on this record can be asked for here")
    return pick(actions, variant // 2, rng)


def nice_amount(low: float, high: float, rng: random.Random) -> int | None:
    """A round amount in [low, high]: the roundest step that has one, picked at random among its multiples."""
    for step in (1000, 500, 100, 50, 10, 5):
        first, last = -(-int(low) // step), int(high) // step
        if first <= last and (last - first >= 2 or step == 5):
            return rng.randint(first, last) * step
    return None


def available(ctx: DomainContext, record: dict) -> float:
    return float(record[ctx.bp.amount_field] - record[ctx.bp.amount_used_field])


def plan_for(ctx: DomainContext, scenario: Scenario, form: str, deliverable: Deliverable, record: dict,
             rng: random.Random, *, action: Action | None = None, naming: list[Constraint] | None = None,
             amount: float | None = None, under_threshold: bool = False, **extra) -> PairPlan:
    """A plan on `record`. For amount actions without an `amount`, a round amount is chosen (under the
    confirmation threshold when `under_threshold`). `confirm` is set whenever the policy needs it."""
    if action is not None and action.is_amount_action and amount is None and not extra.get("full_amount"):
        cap = available(ctx, record)
        if under_threshold:
            cap = min(cap, ctx.bp.confirmation.threshold)
        amount = nice_amount(cap * 0.2, cap * 0.8, rng)
        if amount is None:
            raise ValueError(f"no round amount under {cap}")
    plan = PairPlan(
        scenario=scenario, form=form, deliverable=deliverable, record_id=record["id"],
        owner=record[ctx.bp.owner_field], action=action.name if action else None,
        date_style=rng.choice(DATE_STYLES),
        act_constraints=naming if naming is not None else choose_naming(ctx, record, rng),
        amount=amount, wording_seed=rng.randrange(2**31), **extra,
    )
    if "confirm" not in extra and plan.action is not None and needs_confirmation(ctx, plan):
        plan = plan.model_copy(update={"confirm": True})
    return plan


def moves_under_threshold(ctx: DomainContext, record: dict, action: Action) -> bool:
    """Whether asking for `action` on `record` needs no confirmation (S1-S3 keep their wording free of one)."""
    if action.moves_record_amount:
        return bool(record[ctx.bp.amount_field] <= ctx.bp.confirmation.threshold)
    return not action.is_amount_action or available(ctx, record) * 0.2 <= ctx.bp.confirmation.threshold
