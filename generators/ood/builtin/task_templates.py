"""In-scope task questions with parameters, so that a builtin role asks real tasks of its own work (a due
date, a fee, a time left) in every release, not only its dozen hand-written questions.

A role's `task_templates` (roles/*.yaml) each name a calculation (`CALCS`) and hold the question in en, zh
and hi as `str.format` templates over that calculation's slots. A question is one draw of the parameters:
its id names the template and the values, and its options and answer position follow from that id alone,
so that drawing the same values again gives the same question block, which the release's cross-release
dedup then skips. Distractors are the mistakes a person makes with those numbers (a week off, one day off,
the wrong operation), never random values.

    - id: renewal_due_date
      calc: date_add                    # slots {date} {days}; the answer is the date `days` later
      params: {days: [7, 14, 21, 28]}   # optional: narrow or widen a slot's default range
      en: "My book is due back on {date}. If I renew it, ... What will the new due date be?"
      zh: ...
      hi: ...

See what a role's templates make (each template's parameter space, and two questions of each in every
language, with the answer):

    python -m abstaingen.generators.ood.builtin.roles library_services

A parameter is a list of values, or {min, max, step}; dates are days of the year (1 March to 31 October, so
that no sum crosses February or the new year), times minutes after midnight, money whole cents. `money` (per
language, "${}" by default) writes an amount, `unit` (per language, "{}" by default) a count's answer;
amounts and counts group thousands with commas ("1,250"), as the roles' own questions do.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Literal

from pydantic import Field, field_validator, model_validator

from abstaingen.model.common import Model
from abstaingen.model.ood import LANGUAGES, Question

Kind = Literal["date", "day_count", "time", "duration", "count", "money", "percent"]
YEAR = 2025  # not a leap year; dates never cross February or the new year, so no question depends on it
FIRST_DAY = date(YEAR, 3, 1).timetuple().tm_yday
LAST_DAY = date(YEAR, 12, 31).timetuple().tm_yday
DRAWS = 40  # draws per question asked for before a template counts as spent


@dataclass(frozen=True)
class Calc:
    """A calculation: its slots with their kinds and default ranges, what the question shows for slots that
    are worked out from the others, the answer, and the mistakes that make the distractors."""

    slots: Mapping[str, tuple[Kind, tuple[int, int, int]]]  # name -> (kind, (min, max, step)) by default
    valid: Callable[[Mapping[str, int]], bool]
    shown: Callable[[Mapping[str, int]], Mapping[str, tuple[Kind, int]]]  # derived slots the text may use
    answer_kind: Kind
    answer: Callable[[Mapping[str, int]], int]
    mistakes: Callable[[Mapping[str, int], int], Sequence[int]]


def _date(v: Mapping[str, int]) -> int:
    return v["date"]


CALCS: dict[str, Calc] = {
    # a date some days later: a renewal, a follow-up visit, a deadline
    "date_add": Calc({"date": ("date", (FIRST_DAY, LAST_DAY - 70, 1)), "days": ("day_count", (2, 60, 1))},
                     lambda v: True, lambda v: {}, "date", lambda v: _date(v) + v["days"],
                     lambda v, a: (a + 7, a - 7, a + 1, a - 1, _date(v) + 2 * v["days"])),
    # the days between two dates: days late, nights of a stay
    "date_diff": Calc({"date": ("date", (FIRST_DAY, LAST_DAY - 70, 1)), "days": ("day_count", (2, 60, 1))},
                      lambda v: True, lambda v: {"end_date": ("date", _date(v) + v["days"])}, "day_count",
                      lambda v: v["days"], lambda v, a: (a + 1, a - 1, a + 7, a - 7)),
    # a time some minutes later: an end time, an arrival time
    "time_add": Calc({"time": ("time", (7 * 60, 19 * 60, 5)), "minutes": ("duration", (15, 240, 5))},
                     lambda v: v["time"] + v["minutes"] < 24 * 60, lambda v: {}, "time",
                     lambda v: v["time"] + v["minutes"],
                     lambda v, a: (a + 15, a - 15, a + 30, a - 30, a + 60, a - 60, v["time"] - v["minutes"])),
    # a time some minutes earlier: when to leave, a reminder
    "time_sub": Calc({"time": ("time", (9 * 60, 22 * 60, 5)), "minutes": ("duration", (15, 240, 5))},
                     lambda v: v["time"] - v["minutes"] >= 6 * 60, lambda v: {}, "time",
                     lambda v: v["time"] - v["minutes"],
                     lambda v, a: (a + 15, a - 15, a + 30, a - 30, v["time"] + v["minutes"], a - 60)),
    # the time between two times: how long a booking lasts, time left before closing
    "time_diff": Calc({"time": ("time", (7 * 60, 19 * 60, 5)), "minutes": ("duration", (15, 300, 5))},
                      lambda v: v["time"] + v["minutes"] < 24 * 60,
                      lambda v: {"end_time": ("time", v["time"] + v["minutes"])}, "duration", lambda v: v["minutes"],
                      lambda v, a: (a + 15, a - 15, a + 30, a - 30, a + 60, a - 60)),
    # several equal stretches of time: sessions, nights of a class
    "duration_mul": Calc({"count": ("count", (2, 12, 1)), "minutes": ("duration", (15, 120, 5))},
                         lambda v: True, lambda v: {}, "duration", lambda v: v["count"] * v["minutes"],
                         lambda v, a: (a + v["minutes"], a - v["minutes"], a + 30, a - 30)),
    # what is left of a limit: items still allowed, days of leave left
    "count_sub": Calc({"total": ("count", (5, 60, 1)), "used": ("count", (1, 59, 1))},
                      lambda v: v["used"] < v["total"], lambda v: {}, "count", lambda v: v["total"] - v["used"],
                      lambda v, a: (a + 1, a - 1, v["total"] + v["used"], a + 2)),
    # a total of two counts
    "count_add": Calc({"first": ("count", (1, 40, 1)), "second": ("count", (1, 40, 1))},
                      lambda v: v["first"] != v["second"], lambda v: {}, "count", lambda v: v["first"] + v["second"],
                      lambda v, a: (a + 1, a - 1, abs(v["first"] - v["second"]), a + 10)),
    # a count times a count: guests times nights, items times packs
    "count_mul": Calc({"first": ("count", (2, 12, 1)), "second": ("count", (2, 12, 1))},
                      lambda v: True, lambda v: {}, "count", lambda v: v["first"] * v["second"],
                      lambda v, a: (v["first"] + v["second"], a + v["first"], a - v["first"], a + v["second"],
                                    a - v["second"])),
    # a price per unit times a count: a fine per day, a fee per night
    "money_mul": Calc({"price": ("money", (25, 20000, 25)), "count": ("count", (2, 14, 1))},
                      lambda v: True, lambda v: {}, "money", lambda v: v["price"] * v["count"],
                      lambda v, a: (a + v["price"], a - v["price"], a + 100, a - 100, 2 * a)),
    # the sum of two amounts
    "money_add": Calc({"first": ("money", (50, 50000, 5)), "second": ("money", (50, 50000, 5))},
                      lambda v: v["first"] != v["second"], lambda v: {}, "money", lambda v: v["first"] + v["second"],
                      lambda v, a: (a + 10, a - 10, a + 100, a - 100, abs(v["first"] - v["second"]))),
    # what is left of an amount: a balance after a payment, a refund after a fee
    "money_sub": Calc({"total": ("money", (100, 100000, 5)), "part": ("money", (50, 90000, 5))},
                      lambda v: v["part"] < v["total"], lambda v: {}, "money", lambda v: v["total"] - v["part"],
                      lambda v, a: (v["total"] + v["part"], a + 10, a - 10, a + 100, a - 100)),
    # a percentage of an amount: a deposit, a discount, a cancellation charge
    "money_percent": Calc({"amount": ("money", (1000, 100000, 100)), "percent": ("percent", (5, 50, 5))},
                          lambda v: v["amount"] * v["percent"] % 100 == 0, lambda v: {}, "money",
                          lambda v: v["amount"] * v["percent"] // 100,
                          lambda v, a: (v["amount"] - a, 2 * a, a + v["amount"] // 100, a - v["amount"] // 100,
                                        v["amount"] * v["percent"] // 1000)),
}

_MONTHS = {
    "en": ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"),
    "hi": ("जनवरी", "फ़रवरी", "मार्च", "अप्रैल", "मई", "जून", "जुलाई", "अगस्त", "सितंबर", "अक्टूबर", "नवंबर", "दिसंबर"),
}


def _format(kind: Kind, value: int, language: str, money: str, unit: str = "{}", oblique: bool = False) -> str:
    """A value as a question or option writes it. `oblique`: a Hindi duration in the text stands before a
    postposition ("1 घंटे पहले"), an option alone ("1 घंटा")."""
    if kind == "date":
        day = date(YEAR, 1, 1) + timedelta(days=value - 1)
        return f"{day.month}月{day.day}日" if language == "zh" else f"{day.day} {_MONTHS[language][day.month - 1]}"
    if kind == "time":
        return f"{value // 60:02d}:{value % 60:02d}"
    if kind == "duration":
        hours, minutes = divmod(value, 60)
        words = {"en": (("hour", "hours"), ("minute", "minutes")), "zh": (("小时", "小时"), ("分钟", "分钟")),
                 "hi": (("घंटे" if oblique else "घंटा", "घंटे"), ("मिनट", "मिनट"))}[language]
        parts = [f"{n}{'' if language == 'zh' else ' '}{word[0] if n == 1 else word[1]}"
                 for n, word in ((hours, words[0]), (minutes, words[1])) if n]
        return ("" if language == "zh" else " ").join(parts)
    if kind == "money":  # thousands grouped with commas, as the roles' hand-written questions write them
        return money.format(f"{value // 100:,}" if value % 100 == 0 else f"{value / 100:,.2f}")
    return unit.format(f"{value:,}" if kind == "count" else value)


class TaskTemplate(Model):
    """One parameterised in-scope question of a role, in every language."""

    id: str = Field(pattern=r"^[a-z][a-z0-9_]{1,40}$", description="unique within the role")
    calc: str = Field(description="the calculation (a key of CALCS) that gives the answer and its distractors")
    params: dict[str, list[int] | dict[str, int]] = Field(
        default_factory=dict, description="slot -> its values, or {min, max, step}; a slot left out keeps the "
                                          "calculation's range. Money in cents, dates as day of the year, times as "
                                          "minutes after midnight")
    texts: dict[str, str] = Field(description="language -> the question as a str.format template over the slots")
    money: dict[str, str] = Field(default_factory=dict, description="language -> how an amount is written: '${}'")
    unit: dict[str, str] = Field(default_factory=dict, description="language -> how the answer count is written: "
                                                                   "'{} days'; '{}' by default")

    @field_validator("calc")
    @classmethod
    def _known_calc(cls, calc: str) -> str:
        if calc not in CALCS:
            raise ValueError(f"unknown calc {calc!r}; the calcs are {', '.join(CALCS)}")
        return calc

    @model_validator(mode="after")
    def _slots_fit(self) -> TaskTemplate:
        calc = CALCS[self.calc]
        if unknown := sorted(set(self.params) - set(calc.slots)):
            raise ValueError(f"params {unknown} are not slots of {self.calc} ({', '.join(calc.slots)})")
        sample = next(self._draws(random.Random(0)), None)
        if sample is None:
            raise ValueError("no draw of the params makes a valid question")
        names = set(calc.slots) | set(calc.shown(sample))
        for language in LANGUAGES:
            if language not in self.texts:
                raise ValueError(f"no {language} text")
            try:
                self.texts[language].format(**dict.fromkeys(names, "x"))
            except (KeyError, IndexError, ValueError) as exc:
                raise ValueError(f"{language} text: a slot that {self.calc} does not have, or a stray brace: {exc}") from None
        return self

    def values(self, slot: str) -> list[int]:
        kind, (low, high, step) = CALCS[self.calc].slots[slot]
        given = self.params.get(slot)
        if isinstance(given, list):
            return given
        if isinstance(given, dict):
            low, high, step = given.get("min", low), given.get("max", high), given.get("step", step)
        return list(range(low, high + 1, step))

    def space(self) -> int:
        """How many parameter draws there are (valid or not): an upper bound on the questions it can ask."""
        total = 1
        for slot in CALCS[self.calc].slots:
            total *= len(self.values(slot))
        return total

    def _draws(self, rng: random.Random) -> Iterator[dict[str, int]]:
        calc = CALCS[self.calc]
        ranges = {slot: self.values(slot) for slot in calc.slots}
        for _ in range(DRAWS * 25):
            drawn = {slot: rng.choice(values) for slot, values in ranges.items()}
            if calc.valid(drawn):
                yield drawn

    def question(self, role_id: str, drawn: Mapping[str, int]) -> list[Question]:
        """The question these values make, in every language: the same block whenever they are drawn.
        Empty when the values leave fewer than three sensible distractors."""
        calc = CALCS[self.calc]
        question_id = f"{role_id}.task.{self.id}." + "-".join(str(drawn[slot]) for slot in calc.slots)
        answer = calc.answer(drawn)
        rng = random.Random(hashlib.sha256(question_id.encode()).hexdigest())
        wrong = [value for value in dict.fromkeys(calc.mistakes(drawn, answer))
                 if value != answer and value >= 0 and _in_range(calc.answer_kind, value)]
        if len(wrong) < 3:
            return []
        values = [answer, *rng.sample(wrong, 3)]
        position = rng.randrange(4)
        values[0], values[position] = values[position], values[0]
        made = []
        for language in LANGUAGES:
            money, unit = self.money.get(language, "${}"), self.unit.get(language, "{}")
            slots = {slot: _format(kind, drawn[slot], language, money, oblique=True)
                     for slot, (kind, _) in calc.slots.items()}
            slots |= {slot: _format(kind, value, language, money)
                      for slot, (kind, value) in calc.shown(drawn).items()}
            options = [_format(calc.answer_kind, value, language, money, unit) for value in values]
            if len(set(options)) < 4:
                return []
            made.append(Question(question_id=question_id, subject=role_id, language=language,
                                 text=self.texts[language].format(**slots), options=options, answer=position,
                                 source="builtin", form="calculation"))
        return made

    def draw(self, role_id: str, rng: random.Random, skip: Callable[[list[Question]], bool]) -> list[Question]:
        """A question none of whose versions `skip` refuses, or empty when DRAWS draws found none."""
        for number, drawn in enumerate(self._draws(rng)):
            if number >= DRAWS:
                break
            if (made := self.question(role_id, drawn)) and not skip(made):
                return made
        return []


def _in_range(kind: Kind, value: int) -> bool:
    if kind == "date":
        return FIRST_DAY <= value <= LAST_DAY
    if kind == "time":
        return 0 <= value < 24 * 60
    return value > 0 if kind in ("duration", "day_count", "money") else True


def task_questions(role_id: str, templates: Sequence[TaskTemplate], count: int, seed: int,
                   skip: Callable[[list[Question]], bool]) -> list[list[Question]]:
    """Up to `count` questions, each in every language, from `templates` in turn (seeded order), none that
    `skip` refuses or that this call made already; fewer when the templates are spent."""
    rng = random.Random(f"{seed}:{role_id}:tasks")
    order = list(templates)
    rng.shuffle(order)
    made: list[list[Question]] = []
    taken: set[str] = set()
    live = order
    while len(made) < count and live:
        still = []
        for template in live:
            if len(made) >= count:
                break
            question = template.draw(role_id, rng, lambda q: q[0].question_id in taken or skip(q))
            if question:
                taken.add(question[0].question_id)
                made.append(question)
                still.append(template)
        live = still
    return made

