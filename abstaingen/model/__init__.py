"""The domain model: pydantic contracts that every stage reads and writes."""

from abstaingen.model.common import JsonValue, canonical_json, content_hash
from abstaingen.model.dag import DagNode, ExecutionDag, OutputRef
from abstaingen.model.environment import (
    CapabilitySpec,
    EnvironmentBundle,
    ToolKind,
    ToolSpec,
)
from abstaingen.model.pair import (
    CheckResult,
    JudgeVerdict,
    Provenance,
    TaskPair,
    ValidationReport,
)
from abstaingen.model.perturbation import (
    SCENARIOS,
    Dimension,
    Perturbation,
    Phase,
    Scenario,
    ScenarioInfo,
    Witness,
)
from abstaingen.model.release import FunnelStage, Release, ReleaseFile
from abstaingen.model.task import (
    BrokenTool,
    Deliverable,
    PatchOp,
    StateAssertion,
    TaskVariant,
    TaskOverlay,
)
from abstaingen.model.trace import ToolCallRecord, Trace

__all__ = [
    "SCENARIOS",
    "BrokenTool",
    "CapabilitySpec",
    "CheckResult",
    "DagNode",
    "Deliverable",
    "Dimension",
    "EnvironmentBundle",
    "ExecutionDag",
    "FunnelStage",
    "JsonValue",
    "JudgeVerdict",
    "OutputRef",
    "PatchOp",
    "Perturbation",
    "Phase",
    "Provenance",
    "Release",
    "ReleaseFile",
    "Scenario",
    "ScenarioInfo",
    "StateAssertion",
    "TaskOverlay",
    "TaskPair",
    "TaskVariant",
    "ToolCallRecord",
    "ToolKind",
    "ToolSpec",
    "Trace",
    "ValidationReport",
    "Witness",
    "canonical_json",
    "content_hash",
]
