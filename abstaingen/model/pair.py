"""A paired task and the evidence that its labels are right."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from abstaingen.model.common import JsonValue, Model
from abstaingen.model.dag import ExecutionDag
from abstaingen.model.perturbation import Perturbation
from abstaingen.model.score import PairScore
from abstaingen.model.task import RecordRef, TaskVariant


class CheckResult(Model):
    name: str
    passed: bool
    detail: str = ""


class RubricAnswer(Model):
    """One judge's answer on one rubric item of one side."""

    item: str = Field(description="the rubric item, e.g. 'fully_specified' (act) or 'abstention_required' (abstain)")
    holds: bool
    reason: str


class JudgeVerdict(Model):
    """One judge's verdict on one side of a pair."""

    model: str = Field(description="the model's name at its provider")
    family: str
    side: Literal["act", "abstain"]
    verdict: Literal["accept", "reject"] = Field(description="accept when every rubric item of the side holds")
    reason: str
    rubric: list[RubricAnswer] = Field(default_factory=list)
    route: ExecutionDag | None = Field(default=None, description="abstain side: the calls the judge claims still "
                                                                 "complete T-, when it claims so")
    route_completes: bool | None = Field(default=None, description="what replaying the route under T-'s overlay "
                                                                   "showed (None: no route claimed)")
    route_detail: str = ""


class ValidationReport(Model):
    checks: list[CheckResult] = Field(default_factory=list)
    baseline_scores: list[PairScore] = Field(default_factory=list)
    judge_verdicts: list[JudgeVerdict] = Field(default_factory=list)
    replay_trace_hash: str | None = None
    sandbox: str | None = None
    sandbox_image: str | None = None

    judged_by: list[str] = Field(default_factory=list, description="the committee that judged the pair: model "
                                                                   "(family); empty when no judge ran")

    @property
    def passed(self) -> bool:
        """Every check passed; the committee's decision is one of them (a single judge's verdict is a vote)."""
        return all(c.passed for c in self.checks)

    def failures(self) -> list[CheckResult]:
        return [c for c in self.checks if not c.passed]


class Provenance(Model):
    backend: dict[str, str]  # stage -> backend
    models: dict[str, str] = Field(default_factory=dict)  # stage -> model (llm backend only)
    prompt_hashes: dict[str, str] = Field(default_factory=dict)
    seed: int
    code_version: str


class TaskPair(Model):
    pair_id: str
    domain: str
    scenario: str
    act: TaskVariant
    abstain: TaskVariant
    perturbation: Perturbation
    target: RecordRef | None = Field(
        default=None, description="the record the task is about (what the act side changes or reports on)"
    )
    scope: dict[str, JsonValue] = Field(
        default_factory=dict,
        description="field values that pick out the records the request could mean (the owner's), for people who "
        "audit the pair",
    )
    validation: ValidationReport = Field(default_factory=ValidationReport)
    provenance: Provenance
