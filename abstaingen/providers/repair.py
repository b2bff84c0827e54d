"""The one repair loop every llm stage goes through: ask, parse, validate (the draft's schema, then
the stage's own checks), and on failure ask again with the findings, at most `max_rounds` times."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

from pydantic import ValidationError

from abstaingen.model.release import RepairCount
from abstaingen.prompts import RenderedPrompt, render
from abstaingen.providers import StructuredRequest
from abstaingen.providers.calls import Caller
from abstaingen.providers.drafts import Draft, strict_schema

D = TypeVar("D", bound=Draft)
Check = Callable[[D], Awaitable[list[str]]]  # the stage's own checks: problems, empty when the draft is fine
ANSWER_CHARS = 60_000  # the previous answer goes back whole (a real environment is ~30,000 characters)


class RepairFailed(Exception):  # noqa: N818 - an outcome the funnel counts
    def __init__(self, stage: str, problems: list[str]):
        super().__init__(f"{stage}: no usable answer after repairs: {'; '.join(problems[:5])}")
        self.stage = stage
        self.problems = problems


@dataclass
class RepairLog:
    """Per stage: drafts accepted at once, after repairs, or not at all; the rounds spent; and why
    answers were sent back (the kind of each problem, before its details)."""

    first_try: Counter[str] = field(default_factory=Counter)
    repaired: Counter[str] = field(default_factory=Counter)
    failed: Counter[str] = field(default_factory=Counter)
    rounds: Counter[str] = field(default_factory=Counter)
    reasons: dict[str, Counter[str]] = field(default_factory=dict)

    def counts(self) -> list[RepairCount]:
        stages = sorted(set(self.first_try) | set(self.repaired) | set(self.failed) | set(self.reasons))
        return [RepairCount(stage=s, first_try=self.first_try[s], repaired=self.repaired[s], failed=self.failed[s],
                            rounds=self.rounds[s], sent_back=dict(self.reasons.get(s, {}))) for s in stages]

    def note_problems(self, stage: str, problems: list[str]) -> None:
        kinds = self.reasons.setdefault(stage, Counter())
        for problem in problems:  # "check: witness: ..." counts as witness, "schema: tools.0: ..." as schema
            head = problem.removeprefix("check: ").split(":")[0]
            kinds[head if re.fullmatch(r"[a-z_]{1,32}", head) else problem.split(":")[0]] += 1


def problems_of(error: ValidationError) -> list[str]:
    found = []
    for item in error.errors()[:10]:
        where = ".".join(str(part) for part in item["loc"]) or "the object"
        found.append(f"schema: {where}: {item['msg']}")
    return found


async def draft(caller: Caller, stage: str, model_key: str, prompt: RenderedPrompt, draft_type: type[D],
                check: Check[D] | None = None, max_rounds: int = 2, log: RepairLog | None = None,
                wanted: Check[D] | None = None) -> D:
    """The stage's draft, valid by its schema and its checks; RepairFailed after `max_rounds` repairs.
    `wanted`: what a draft should have but may lack: its findings go back while rounds remain; when the
    rounds are spent, the last draft that passed `check` is taken without it (a stage that loses some of
    what it could make, not all)."""
    schema = strict_schema(draft_type)
    user = prompt.user
    lacking: D | None = None  # the last draft that passed `check` but not `wanted`
    for round_number in range(max_rounds + 1):
        reply = await caller.call(stage, model_key, StructuredRequest(
            system=prompt.system, user=user, schema_name=stage, json_schema=schema))
        problems: list[str]
        if reply.problem is not None:
            problems, answer = [f"reply: {reply.problem}"], reply.text or ""
        else:
            answer = json.dumps(reply.value, ensure_ascii=False)
            try:
                candidate = draft_type.model_validate(reply.value)
            except ValidationError as exc:
                problems = problems_of(exc)
            else:
                problems = [f"check: {p}" for p in await check(candidate)] if check is not None else []
                if not problems and wanted is not None and round_number < max_rounds:
                    problems = [f"check: {p}" for p in await wanted(candidate)]
                    lacking = candidate if problems else lacking
                if not problems:
                    if log is not None:
                        (log.repaired if round_number else log.first_try)[stage] += 1
                        log.rounds[stage] += round_number
                    return candidate
        if log is not None:
            log.note_problems(stage, problems)
        shown = answer if len(answer) <= ANSWER_CHARS else answer[:ANSWER_CHARS] + " [cut]"
        user = render("repair", original=prompt.user, answer=shown, problems=problems).user
    if log is not None:
        (log.repaired if lacking is not None else log.failed)[stage] += 1
        log.rounds[stage] += max_rounds
    if lacking is not None:
        return lacking
    raise RepairFailed(stage, problems)
