"""The manifest of a published, immutable dataset version."""

from __future__ import annotations

from pydantic import Field

from abstaingen.model.common import Model
from abstaingen.model.score import AgentMetrics, LeakageScore, ShortcutScore


class FunnelStage(Model):
    stage: str
    received: int
    passed: int
    rejected: dict[str, int] = Field(default_factory=dict, description="reason -> count")
    retried: int = Field(default=0, description="work run again in a fresh sandbox after its sandbox died or hung")


class ReleaseFile(Model):
    path: str
    sha256: str
    bytes: int


class Release(Model):
    name: str
    version: str
    created_by: str
    config_fingerprint: str
    sandbox: str
    sandbox_image: str | None = None  # digest of the Docker image that ran the environments
    counts: dict[str, dict[str, int]]  # by scenario / domain / phase / deliverable
    total_pairs: int
    funnel: list[FunnelStage]
    cost_usd: float = 0.0
    baselines: list[AgentMetrics] = Field(default_factory=list)
    leakage: list[LeakageScore] = Field(default_factory=list)
    shortcuts: list[ShortcutScore] = Field(
        default_factory=list, description="per scenario, the best single-feature separation of act from abstain"
    )
    warnings: list[str] = Field(
        default_factory=list, description="what a user of the data must know, e.g. pairs lost to sandbox failures"
    )
    files: list[ReleaseFile] = Field(default_factory=list)
