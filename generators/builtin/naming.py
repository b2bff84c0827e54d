"""How instructions single out a record: constraints on an owner's records, and the words for them.

A constraint is one detail a person may give ("on flight LH402", "departing before 5 March", "with a
fare over $1,000"). S1 drops one so that several records fit; S3 changes one so that each detail
fits a different record; every other scenario names its record with details that fit it alone.
"""

from __future__ import annotations

import math
import random
from datetime import date, timedelta
from enum import StrEnum

from pydantic import JsonValue

from abstaingen.generators.builtin.blueprint import DomainBlueprint
from abstaingen.model.common import Model

NICE_STEPS = (1000, 500, 250, 100, 50, 25, 10)  # a bound people would say: "over $1,500", not "over $3,225"
FAMILY_ORDER = ("key", "date", "date_bound", "amount_bound")  # the order details are said in
DATE_STYLES = ("iso", "long", "us")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")


class ConstraintKind(StrEnum):
    KEY = "key"
    DATE = "date"
    DATE_BEFORE = "date_before"
    DATE_AFTER = "date_after"
    AMOUNT_OVER = "amount_over"
    AMOUNT_UNDER = "amount_under"

    @property
    def family(self) -> str:
        """Constraints of one family are alternatives for the same detail (S3 swaps within a family)."""
        return {"date_before": "date_bound", "date_after": "date_bound", "amount_over": "amount_bound",
                "amount_under": "amount_bound"}.get(self.value, self.value)

    @property
    def axis(self) -> str:
        """What the detail is about; a name gives at most one detail per axis ("on 14 August, after 4 August")."""
        return {"date_bound": "date", "amount_bound": "amount"}.get(self.family, self.family)


class Constraint(Model):
    kind: ConstraintKind
    value: str | int

    def matches(self, record: dict, bp: DomainBlueprint) -> bool:
        value = self.value
        match self.kind:
            case ConstraintKind.KEY:
                return bool(record[bp.key.name] == value)
            case ConstraintKind.DATE:
                return bool(record["date"] == value)
            case ConstraintKind.DATE_BEFORE:
                return bool(record["date"] < str(value))
            case ConstraintKind.DATE_AFTER:
                return bool(record["date"] > str(value))
            case ConstraintKind.AMOUNT_OVER:
                return bool(record[bp.amount_field] > int(value))
            case ConstraintKind.AMOUNT_UNDER:
                return bool(record[bp.amount_field] < int(value))
        raise AssertionError(self.kind)

    def find_args(self, bp: DomainBlueprint) -> dict[str, JsonValue]:
        """The find tool's filters for this constraint. Bounds never sit on a record's own value, so the
        tool's inclusive ranges select the same records as the strict words."""
        filters: dict[ConstraintKind, dict[str, JsonValue]] = {
            ConstraintKind.KEY: {bp.key.name: self.value},
            ConstraintKind.DATE: {"date": self.value},
            ConstraintKind.DATE_BEFORE: {"date_to": self.value},
            ConstraintKind.DATE_AFTER: {"date_from": self.value},
            ConstraintKind.AMOUNT_OVER: {f"min_{bp.amount_field}": self.value},
            ConstraintKind.AMOUNT_UNDER: {f"max_{bp.amount_field}": self.value},
        }
        return filters[self.kind]


def matching(records: list[dict], constraints: list[Constraint], bp: DomainBlueprint) -> list[dict]:
    return [r for r in records if all(c.matches(r, bp) for c in constraints)]


def find_args(bp: DomainBlueprint, owner: str, constraints: list[Constraint]) -> dict[str, JsonValue]:
    args: dict[str, JsonValue] = {bp.owner_field: owner}
    for constraint in constraints:
        args.update(constraint.find_args(bp))
    return args


def _nice_between(low: float, high: float) -> int | None:
    """A round number strictly between low and high, as round as the gap allows."""
    for step in NICE_STEPS:
        candidate = (math.floor(low / step) + 1) * step
        if low < candidate < high:
            return candidate
    return None


def _day(iso: str, shift: int) -> str:
    return (date.fromisoformat(iso) + timedelta(days=shift)).isoformat()


def single_out(target: dict, records: list[dict], bp: DomainBlueprint) -> list[Constraint]:
    """Every one-detail constraint that, among `records` (one owner's), fits `target` and nothing else."""
    others = [r for r in records if r["id"] != target["id"]]
    found = []
    if all(r[bp.key.name] != target[bp.key.name] for r in others):
        found.append(Constraint(kind=ConstraintKind.KEY, value=target[bp.key.name]))
    if all(r["date"] != target["date"] for r in others):
        found.append(Constraint(kind=ConstraintKind.DATE, value=target["date"]))
    day = date.fromisoformat(target["date"])
    later = sorted(date.fromisoformat(r["date"]) for r in others if r["date"] > target["date"])
    earlier = sorted(date.fromisoformat(r["date"]) for r in others if r["date"] < target["date"])
    same_day = any(r["date"] == target["date"] for r in others)
    if later and not earlier and not same_day and (gap := (later[0] - day).days) >= 2:
        found.append(Constraint(kind=ConstraintKind.DATE_BEFORE, value=_day(target["date"], gap // 2)))
    if earlier and not later and not same_day and (gap := (day - earlier[-1]).days) >= 2:
        found.append(Constraint(kind=ConstraintKind.DATE_AFTER, value=_day(target["date"], -(gap // 2))))
    amount = target[bp.amount_field]
    above = [r[bp.amount_field] for r in others if r[bp.amount_field] >= amount]
    below = [r[bp.amount_field] for r in others if r[bp.amount_field] <= amount]
    if others and not above and (bound := _nice_between(max(below), amount)) is not None:
        found.append(Constraint(kind=ConstraintKind.AMOUNT_OVER, value=bound))
    if others and not below and (bound := _nice_between(amount, min(above))) is not None:
        found.append(Constraint(kind=ConstraintKind.AMOUNT_UNDER, value=bound))
    return [c for c in found if matching(records, [c], bp) == [target]]


def detail_label(bp: DomainBlueprint, constraint: Constraint) -> str:
    """How a person names the kind of detail: 'flight', 'date', 'date bound', 'fare bound'."""
    return {"key": bp.key.label, "date": "date", "date_bound": "date bound",
            "amount_bound": f"{bp.amount_label} bound"}[constraint.kind.family]


def format_date(iso: str, style: str) -> str:
    day = date.fromisoformat(iso)
    if style == "long":
        return f"{day.day} {MONTHS[day.month - 1]} {day.year}"
    if style == "us":
        return f"{MONTHS[day.month - 1]} {day.day}, {day.year}"
    return iso


def phrase(bp: DomainBlueprint, constraint: Constraint, style: str, seed: int) -> tuple[str, str]:
    """The words for one constraint (starting with a space) and the id of the template they came from. The
    template depends on the seed and the kind of detail only, so both sides of a pair phrase a shared detail
    alike however many details each gives."""
    pools = {
        ConstraintKind.KEY: bp.naming.key,
        ConstraintKind.DATE: bp.naming.date,
        ConstraintKind.DATE_BEFORE: bp.naming.date_before,
        ConstraintKind.DATE_AFTER: bp.naming.date_after,
        ConstraintKind.AMOUNT_OVER: bp.naming.amount_over,
        ConstraintKind.AMOUNT_UNDER: bp.naming.amount_under,
    }[constraint.kind]
    index = random.Random(f"{seed}:{constraint.kind.value}").randrange(len(pools))
    value = constraint.value
    text = pools[index].format(
        key=value,
        date=format_date(str(value), style) if constraint.kind.family in ("date", "date_bound") else value,
        amount=bp.format_amount(int(value)) if constraint.kind.family == "amount_bound" else value,
    )
    return text, f"{constraint.kind.value}{index}"


def record_name(bp: DomainBlueprint, owner: str, constraints: list[Constraint], style: str,
                seed: int) -> tuple[str, str]:
    """'Olga Petrova's booking on flight LH402 departing 5 March 2027' and its template id."""
    head = random.Random(f"{seed}:head").randrange(len(bp.naming.heads))
    ordered = sorted(constraints, key=lambda c: FAMILY_ORDER.index(c.kind.family))
    parts = [phrase(bp, c, style, seed) for c in ordered]
    text = bp.naming.heads[head].format(owner=owner) + "".join(p for p, _ in parts)
    return text, "+".join([f"head{head}", *(t for _, t in parts)])


def clarification(bp: DomainBlueprint, constraints: list[Constraint], style: str, seed: int) -> str:
    details = "".join(phrase(bp, c, style, seed)[0] for c in constraints)
    return random.Random(f"{seed}:clarify").choice(bp.naming.clarifications).format(details=details)
