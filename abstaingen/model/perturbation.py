"""The eight abstention scenarios and the controlled perturbation that turns T+ into T-."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import Field

from abstaingen.model.common import JsonValue, Model
from abstaingen.model.dag import DagNode


class Scenario(StrEnum):
    S1 = "S1"
    S2 = "S2"
    S3 = "S3"
    S4 = "S4"
    S5 = "S5"
    S6 = "S6"
    S7 = "S7"
    S8 = "S8"


class Phase(StrEnum):
    PRE_EXECUTION = "pre_execution"
    RUNTIME = "runtime"


class Dimension(StrEnum):
    INSTRUCTION = "instruction"
    ENV_STATE = "env_state"
    TOOL_AVAILABILITY = "tool_availability"
    TOOL_BEHAVIOR = "tool_behavior"


class ScenarioInfo(Model):
    scenario: Scenario
    name: str
    category: str  # the AgentAbstain category name
    phase: Phase
    dimension: Dimension


SCENARIOS: dict[Scenario, ScenarioInfo] = {
    info.scenario: info
    for info in [
        ScenarioInfo(scenario=Scenario.S1, name="missing critical parameter", category="missing_parameter",
                     phase=Phase.PRE_EXECUTION, dimension=Dimension.INSTRUCTION),
        ScenarioInfo(scenario=Scenario.S2, name="ambiguous action", category="ambiguous_action",
                     phase=Phase.PRE_EXECUTION, dimension=Dimension.INSTRUCTION),
        ScenarioInfo(scenario=Scenario.S3, name="conflicting constraints", category="conflicting_constraints",
                     phase=Phase.PRE_EXECUTION, dimension=Dimension.INSTRUCTION),
        ScenarioInfo(scenario=Scenario.S4, name="high-stakes action", category="high_stakes",
                     phase=Phase.PRE_EXECUTION, dimension=Dimension.INSTRUCTION),
        ScenarioInfo(scenario=Scenario.S5, name="insufficient tool capability", category="insufficient_capability",
                     phase=Phase.PRE_EXECUTION, dimension=Dimension.TOOL_AVAILABILITY),
        ScenarioInfo(scenario=Scenario.S6, name="critical tool failure", category="tool_failure",
                     phase=Phase.RUNTIME, dimension=Dimension.TOOL_BEHAVIOR),
        ScenarioInfo(scenario=Scenario.S7, name="conflicting evidence", category="conflicting_evidence",
                     phase=Phase.RUNTIME, dimension=Dimension.ENV_STATE),
        ScenarioInfo(scenario=Scenario.S8, name="emergent risk", category="emergent_risk",
                     phase=Phase.RUNTIME, dimension=Dimension.ENV_STATE),
    ]
}


# Witnesses: the machine-checkable claim that makes T- a should-abstain task.
# Each names the calls a validator executes in the T- environment to confirm it.


class MultipleCandidatesWitness(Model):
    """S1: a lookup using only the constraints the instruction kept returns >= 2 candidates."""

    kind: Literal["multiple_candidates"] = "multiple_candidates"
    lookup: DagNode
    candidates_path: list[str | int] = Field(default_factory=lambda: ["results"])
    min_candidates: int = 2


class Interpretation(Model):
    reading: str
    commit: DagNode


class DistinctInterpretationsWitness(Model):
    """S2: >= 2 readings of the instruction map to distinct commit calls."""

    kind: Literal["distinct_interpretations"] = "distinct_interpretations"
    interpretations: list[Interpretation] = Field(min_length=2)


class ConflictingConstraintsWitness(Model):
    """S3: each constraint alone is satisfiable; all together match nothing."""

    kind: Literal["conflicting_constraints"] = "conflicting_constraints"
    each_alone: list[DagNode] = Field(min_length=2)
    together: DagNode
    candidates_path: list[str | int] = Field(default_factory=lambda: ["results"])


class HighStakesWitness(Model):
    """S4: the commit is irreversible, its impact exceeds a stated threshold, no confirmation given."""

    kind: Literal["high_stakes"] = "high_stakes"
    commit: DagNode
    impact_argument: str
    impact: float
    threshold: float
    threshold_statement: str  # where the threshold is stated (system prompt sentence)


class MissingCapabilityWitness(Model):
    """S5: the tool with the critical effect is hidden and no remaining tool has that effect.

    `probe_args` are the values (record id, amount, ...) a validator may pass to every remaining
    tool to confirm by execution that none of them achieves the act side's deliverable.
    """

    kind: Literal["missing_capability"] = "missing_capability"
    hidden_tool: str
    effect: str
    probe_args: dict[str, JsonValue] = Field(default_factory=dict)


class ToolFailureWitness(Model):
    """S6: the critical tool always errors and no other tool has its effect."""

    kind: Literal["tool_failure"] = "tool_failure"
    failing_call: DagNode
    effect: str
    probe_args: dict[str, JsonValue] = Field(default_factory=dict)


class ConflictingEvidenceWitness(Model):
    """S7: two reads in the DAG disagree on the fact the commit depends on."""

    kind: Literal["conflicting_evidence"] = "conflicting_evidence"
    read_a: DagNode
    path_a: list[str | int]
    read_b: DagNode
    path_b: list[str | int]


class RiskMarkerWitness(Model):
    """S8: a read before the commit reveals a risk marker the instruction did not foresee."""

    kind: Literal["risk_marker"] = "risk_marker"
    revealing_read: DagNode
    path: list[str | int]
    marker: JsonValue


Witness = Annotated[
    MultipleCandidatesWitness
    | DistinctInterpretationsWitness
    | ConflictingConstraintsWitness
    | HighStakesWitness
    | MissingCapabilityWitness
    | ToolFailureWitness
    | ConflictingEvidenceWitness
    | RiskMarkerWitness,
    Field(discriminator="kind"),
]

WITNESS_FOR_SCENARIO: dict[Scenario, str] = {
    Scenario.S1: "multiple_candidates",
    Scenario.S2: "distinct_interpretations",
    Scenario.S3: "conflicting_constraints",
    Scenario.S4: "high_stakes",
    Scenario.S5: "missing_capability",
    Scenario.S6: "tool_failure",
    Scenario.S7: "conflicting_evidence",
    Scenario.S8: "risk_marker",
}


class Perturbation(Model):
    scenario: Scenario
    phase: Phase
    dimension: Dimension
    description: str
    witness: Witness
