"""A paired task and the evidence that its labels are right."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from abstaingen.model.common import JsonValue, Model
from abstaingen.model.perturbation import Perturbation
from abstaingen.model.score import PairScore
from abstaingen.model.task import RecordRef, TaskVariant


class CheckResult(Model):
    name: str
    passed: bool
    detail: str = ""


class JudgeVerdict(Model):
    model: str
    family: str
    side: Literal["act", "abstain"]
    verdict: Literal["accept", "reject"]
    reason: str


class ValidationReport(Model):
    checks: list[CheckResult] = Field(default_factory=list)
    baseline_scores: list[PairScore] = Field(default_factory=list)
    judge_verdicts: list[JudgeVerdict] = Field(default_factory=list)
    replay_trace_hash: str | None = None
    sandbox: str | None = None
    sandbox_image: str | None = None

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks) and all(v.verdict == "accept" for v in self.judge_verdicts)

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
