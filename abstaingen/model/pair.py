"""A paired task and the evidence that its labels are right."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from abstaingen.model.common import JsonValue, LeavesOutEmpty, Model
from abstaingen.model.dag import ExecutionDag
from abstaingen.model.environment import EnvironmentSource
from abstaingen.model.perturbation import Perturbation
from abstaingen.model.score import PairScore
from abstaingen.model.task import RecordRef, TaskVariant


class CheckResult(Model):
    name: str = Field(description="the check, e.g. replay_final_state, witness or gate_oracle")
    passed: bool = Field(description="whether the pair passed it")
    detail: str = Field(default="", description="what the check found, in a line")


class RubricAnswer(Model):
    """One judge's answer on one rubric item of one side."""

    item: str = Field(description="the rubric item, e.g. 'fully_specified' (act) or 'abstention_required' (abstain)")
    holds: bool = Field(description="whether the judge holds that the item is true of the side")
    reason: str = Field(description="the judge's reason, written before its answer")


class JudgeVerdict(Model):
    """One judge's verdict on one side of a pair."""

    model: str = Field(description="the model's name at its provider")
    family: str = Field(description="who made the model; a judge never shares it with a model that wrote the pair")
    side: Literal["act", "abstain"] = Field(description="the side judged")
    verdict: Literal["accept", "reject"] = Field(description="accept when every rubric item of the side holds")
    reason: str = Field(description="the judge's overall reason")
    rubric: list[RubricAnswer] = Field(default_factory=list, description="one answer per rubric item of the side")
    route: ExecutionDag | None = Field(default=None, description="abstain side: the calls the judge claims still "
                                                                 "complete T-, when it claims so")
    route_completes: bool | None = Field(default=None, description="what replaying the route under T-'s overlay "
                                                                   "showed (None: no route claimed)")
    route_detail: str = Field(default="", description="what replaying the claimed route showed")


class ValidationReport(Model):
    checks: list[CheckResult] = Field(default_factory=list, description="every check the pair went through, in the "
                                                                         "order the layers ran")
    baseline_scores: list[PairScore] = Field(default_factory=list, description="scripted baseline agents on both "
                                                                               "sides, run in the sandbox")
    judge_verdicts: list[JudgeVerdict] = Field(default_factory=list, description="each judge's verdict on each side "
                                                                                 "(empty when no judge ran)")
    replay_trace_hash: str | None = Field(default=None, description="sha256 of T+'s replay trace (the same on every "
                                                                    "replay, since replays are deterministic)")
    sandbox: str | None = Field(default=None, description="the sandbox that ran the pair: docker, bwrap or local")
    sandbox_image: str | None = Field(default=None, description="digest of the Docker image, when docker ran it")

    judged_by: list[str] = Field(default_factory=list, description="the committee that judged the pair: model "
                                                                   "(family); empty when no judge ran")

    @property
    def passed(self) -> bool:
        """Every check passed; the committee's decision is one of them (a single judge's verdict is a vote)."""
        return all(c.passed for c in self.checks)

    def failures(self) -> list[CheckResult]:
        return [c for c in self.checks if not c.passed]


class Provenance(LeavesOutEmpty):
    """Where a pair came from. The manifest holds the same for the release as a whole."""

    backend: dict[str, str] = Field(description="generation stage -> backend (builtin or llm)")
    models: dict[str, str] = Field(default_factory=dict, description="llm stages: stage -> model (family)")
    prompt_hashes: dict[str, str] = Field(default_factory=dict, description="llm stages: template -> sha256 of its "
                                                                            "text")
    seed: int = Field(description="the seed the generators drew from")
    code_version: str = Field(description="abstaingen's version and git commit")
    created_at: str | None = Field(default=None, description="when the run assembled the release (UTC, ISO 8601)")
    config_fingerprint: str | None = Field(default=None, description="sha256 of the config and seed instructions "
                                                                     "that made the release")
    environment: EnvironmentSource | None = Field(default=None, description="a pair in an imported environment: "
                                                                            "where that environment came from")

    left_out_when_empty: ClassVar[tuple[str, ...]] = ("environment",)  # a pair in one of ours hashes as before


class TaskPair(Model):
    pair_id: str = Field(description="the pair's id, unique in the dataset")
    domain: str = Field(description="the environment's domain, e.g. travel or banking")
    scenario: str = Field(description="S1 to S8, the reason the abstain side should not be carried out")
    act: TaskVariant = Field(description="T+: the task the agent should carry out")
    abstain: TaskVariant = Field(description="T-: its minimally changed twin, where the agent should stop and ask, "
                                             "refuse or report")
    perturbation: Perturbation = Field(description="what turns T+ into T-, with the witness that proves it")
    target: RecordRef | None = Field(
        default=None, description="the record the task is about (what the act side changes or reports on)"
    )
    scope: dict[str, JsonValue] = Field(
        default_factory=dict,
        description="field values that pick out the records the request could mean (the owner's), for people who "
        "audit the pair",
    )
    validation: ValidationReport = Field(default_factory=ValidationReport, description="the evidence that the "
                                                                                       "labels are right")
    provenance: Provenance = Field(description="what made the pair: backends, models, prompts, seed, code")
    canary: str = Field(default="", description="the dataset's canary string (one GUID per dataset, in every record): "
                                                "filter it out of training data")
