"""How instructions single out a record: constraints on an owner's records, and the words for them.

A constraint is one detail a person knows and would give ("on flight LH402", "departing 5 March 2027",
"departing in March 2027"): what the record is about, its day, its month. Nobody names their booking by a
numeric bound ("with a fare over $1,000"), so no constraint is one. S1 drops or swaps a detail so that
several records fit; S3 changes one so that each detail fits a different record; every other scenario
names its record with details that fit it alone.
"""

from __future__ import annotations

import random
from datetime import date, timedelta
from enum import StrEnum

from pydantic import JsonValue

from abstaingen.generators.builtin.blueprint import DomainBlueprint
from abstaingen.model.common import Model

FAMILY_ORDER = ("key", "date", "month")  # the order details are said in
DATE_STYLES = ("long", "us")  # how a person writes a date (nobody types 2027-03-05 in a request)
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")


class ConstraintKind(StrEnum):
    KEY = "key"
    DATE = "date"
    MONTH = "month"

    @property
    def family(self) -> str:
        """Constraints of one family are alternatives for the same detail (S3 swaps within a family)."""
        return self.value

    @property
    def axis(self) -> str:
        """What the detail is about; a name gives at most one detail per axis ("on 14 August, in August")."""
        return {"month": "date"}.get(self.value, self.value)


class Constraint(Model):
    kind: ConstraintKind
    value: str

    def matches(self, record: dict, bp: DomainBlueprint) -> bool:
        match self.kind:
            case ConstraintKind.KEY:
                return bool(record[bp.key.name] == self.value)
            case ConstraintKind.DATE:
                return bool(record["date"] == self.value)
            case ConstraintKind.MONTH:
                return bool(record["date"][:7] == self.value)
        raise AssertionError(self.kind)

    def find_args(self, bp: DomainBlueprint) -> dict[str, JsonValue]:
        """The find tool's filters for this constraint (a month is the range of its days)."""
        match self.kind:
            case ConstraintKind.KEY:
                return {bp.key.name: self.value}
            case ConstraintKind.DATE:
                return {"date": self.value}
            case ConstraintKind.MONTH:
                return {"date_from": f"{self.value}-01", "date_to": month_end(self.value)}
        raise AssertionError(self.kind)


def month_end(month: str) -> str:
    """'2027-02' -> '2027-02-28'."""
    first = date.fromisoformat(f"{month}-01")
    return (first.replace(year=first.year + first.month // 12, month=first.month % 12 + 1) - timedelta(days=1)).isoformat()


def matching(records: list[dict], constraints: list[Constraint], bp: DomainBlueprint) -> list[dict]:
    return [r for r in records if all(c.matches(r, bp) for c in constraints)]


def find_args(bp: DomainBlueprint, owner: str, constraints: list[Constraint]) -> dict[str, JsonValue]:
    args: dict[str, JsonValue] = {bp.owner_field: owner}
    for constraint in constraints:
        args.update(constraint.find_args(bp))
    return args


def detail_label(bp: DomainBlueprint, constraint: Constraint) -> str:
    """How a person names the kind of detail: 'flight', 'date', 'month'."""
    return {"key": bp.key.label, "date": "date", "month": "month"}[constraint.kind.family]


def format_date(iso: str, style: str) -> str:
    """'5 March 2027' (long) or 'March 5, 2027' (us); a month ('2027-03') is 'March 2027' in either style."""
    if len(iso) == 7:
        return f"{MONTHS[int(iso[5:]) - 1]} {iso[:4]}"
    day = date.fromisoformat(iso)
    if style == "long":
        return f"{day.day} {MONTHS[day.month - 1]} {day.year}"
    return f"{MONTHS[day.month - 1]} {day.day}, {day.year}"


def phrase(bp: DomainBlueprint, constraint: Constraint, style: str, seed: int) -> tuple[str, str]:
    """The words for one constraint (starting with a space) and the id of the template they came from. The
    template depends on the seed and the kind of detail only, so both sides of a pair phrase a shared detail
    alike however many details each gives."""
    pools = {
        ConstraintKind.KEY: bp.naming.key,
        ConstraintKind.DATE: bp.naming.date,
        ConstraintKind.MONTH: bp.naming.month,
    }[constraint.kind]
    index = random.Random(f"{seed}:{constraint.kind.value}").randrange(len(pools))
    value = constraint.value
    shown = value if constraint.kind == ConstraintKind.KEY else format_date(value, style)
    text = pools[index].format(key=shown, date=shown, month=shown)
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
