"""The manifest of a published, immutable dataset version."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from abstaingen.model.common import LeavesOutEmpty, Model
from abstaingen.model.environment import EnvironmentSource
from abstaingen.model.ood import OodLeakage, OodScore
from abstaingen.model.score import AgentAbstainView, AgentMetrics, LeakageScore, ShortcutScore

# The four generation stages, by the one name each has everywhere: the backend chosen for it ([backends]),
# its funnel line, its progress line and its flow tasks.
GENERATION_STAGES: tuple[str, ...] = ("capability", "environment", "task", "perturbation")


class FunnelStage(Model):
    stage: str
    received: int
    passed: int
    rejected: dict[str, int] = Field(default_factory=dict, description="reason -> count")
    retried: int = Field(default=0, description="work run again in a fresh sandbox after its sandbox died or hung")
    repaired: int = Field(default=0, description="llm stages: drafts taken after the model was sent its findings")
    repair_rounds: int = Field(default=0, description="llm stages: answers sent back to the model, in all")
    sent_back: dict[str, int] = Field(default_factory=dict, description="llm stages: why answers were sent back "
                                                                        "(kind of finding -> count)")

    @classmethod
    def counted(cls, stage: str, received: int, rejected: dict[str, int] | None = None, retried: int = 0) -> FunnelStage:
        """A stage's line from what it received and rejected and why: the rest passed."""
        rejected = rejected or {}
        return cls(stage=stage, received=received, passed=received - sum(rejected.values()), rejected=rejected,
                   retried=retried)


class RejectionSample(Model):
    """A rejected pair, as an example of why pairs were rejected."""

    pair_id: str = Field(description="the pair")
    scenario: str = Field(description="its scenario, S1-S8")
    domain: str = Field(description="its domain")
    stage: str = Field(description="the funnel stage that rejected it")
    reason: str = Field(description="the first failed check and its detail")


class RepairCount(Model):
    """One llm stage's repair loop over a run."""

    stage: str
    first_try: int = Field(description="drafts taken as first answered")
    repaired: int = Field(description="drafts taken after one or more rounds of findings")
    failed: int = Field(description="items given up after the last round")
    rounds: int = Field(description="answers sent back, in all")
    sent_back: dict[str, int] = Field(default_factory=dict, description="kind of finding -> count")


class CostLine(Model):
    """Model calls of one stage and model: how many, how many the cache answered, tokens and money."""

    stage: str
    model: str = Field(description="the key of [models]")
    calls: int
    cached: int = Field(description="answered from the response cache: no request, no cost")
    input_tokens: int = Field(description="of the requests actually sent")
    output_tokens: int
    cost_usd: float


class GenerationReport(Model):
    """What a generator tells the flow about its run, for the manifest (empty for builtin)."""

    models: dict[str, str] = Field(default_factory=dict, description="[models] key -> model name (family)")
    prompts: dict[str, str] = Field(default_factory=dict, description="template -> sha256 of its text")
    repairs: list[RepairCount] = Field(default_factory=list)
    cost: list[CostLine] = Field(default_factory=list)


class RubricAgreement(Model):
    """How a judge committee agreed on one rubric item, over the pairs every member judged."""

    item: str = Field(description="side.item, e.g. 'abstain.abstention_required'")
    pairs: int = Field(description="pairs every member of the committee gave a verdict on")
    raw: float | None = Field(description="mean share of agreeing pairs of judges per pair (Fleiss' P-bar)")
    kappa: float | None = Field(description="Fleiss' kappa; None when undefined (one judge, or every answer the same)")
    failed: int = Field(description="pairs on which the committee decided this item does not hold (for side.verdict: "
                                    "pairs whose side it rejected)")


class JudgeReport(Model):
    """What the judge layer did in a run."""

    judged: bool = Field(description="whether pairs went before an LLM judge committee at all")
    models: list[str] = Field(default_factory=list, description="the committee: model (family)")
    rule: str | None = Field(default=None, description="majority or unanimous")
    pairs: int = Field(default=0, description="pairs put before the committee")
    rejected: dict[str, int] = Field(default_factory=dict, description="why the committee rejected pairs: the rubric "
                                                                        "items it failed, route_completes, no_verdict")
    judge_errors: dict[str, int] = Field(default_factory=dict, description="verdicts that did not count: malformed "
                                                                           "after repairs, provider errors, claimed "
                                                                           "routes that failed in the sandbox")
    routes_claimed: int = 0
    routes_completed: int = Field(default=0, description="claimed routes that replayed to T+'s outcome under T-")
    agreement: list[RubricAgreement] = Field(default_factory=list)


def canary_string(guid: str) -> str:
    return f"abstaingen evaluation data, keep out of training corpora. canary GUID {guid}"


class ReleaseFile(Model):
    path: str
    sha256: str
    bytes: int


class Manifest(Model):
    """What every published release states, whatever kind of records it holds (see Release, OodRelease)."""

    name: str
    version: str
    kind: str = Field(description="what the release holds: 'pairs' (task pairs) or 'ood' (out-of-scope items)")
    created_by: str
    config_fingerprint: str
    seed: int | None = Field(default=None, description="the seed the generators drew from (drawn fresh for each run "
                                                       "unless the config gives one)")
    canary: str = Field(default="", description="the dataset's canary string, the same in every release of the "
                                                "dataset and in every record")
    checked_against: list[str] = Field(default_factory=list, description="the earlier versions of the dataset whose "
                                                                         "records this one was deduplicated against")
    created_at: str | None = Field(default=None, description="when the run assembled the release (UTC, ISO 8601)")
    counts: dict[str, dict[str, int]] = Field(description="records per value of each field the release is "
                                                          "counted by (e.g. scenario, domain)")
    funnel: list[FunnelStage]
    cost_usd: float = Field(default=0.0, description="money spent on model calls by this run")
    backends: dict[str, str] = Field(default_factory=dict, description="stage -> backend (builtin or llm), the judge "
                                                                       "included")
    models: dict[str, str] = Field(default_factory=dict, description="llm stages: [models] key -> model (family)")
    prompts: dict[str, str] = Field(default_factory=dict, description="llm stages: template -> sha256; each record's "
                                                                      "provenance names the ones that wrote it")
    cost: list[CostLine] = Field(default_factory=list, description="calls, tokens and money per stage and model")
    warnings: list[str] = Field(
        default_factory=list, description="what a user of the data must know, e.g. pairs lost to sandbox failures"
    )
    files: list[ReleaseFile] = Field(default_factory=list)


class Release(Manifest, LeavesOutEmpty):
    """A release of task pairs."""

    kind: Literal["pairs"] = "pairs"
    derived_from: str | None = Field(default=None, description="the version whose pairs this one re-judged "
                                                               "(abstaingen release judge); None for a generated one")
    decontaminated_against: list[str] = Field(default_factory=list, description="reference texts no pair's request "
                                                                                "overlaps (decontamination config)")
    sandbox: str
    sandbox_image: str | None = None  # digest of the Docker image that ran the environments
    total_pairs: int
    cost_per_pair_usd: float = Field(default=0.0, description="cost_usd over the released pairs")
    judge: JudgeReport = Field(default_factory=lambda: JudgeReport(judged=False),
                               description="whether and by which models pairs were judged, agreement, rejections")
    baselines: list[AgentMetrics] = Field(default_factory=list)
    agentabstain_view: list[AgentAbstainView] = Field(default_factory=list, description="the baselines as "
                                                      "AgentAbstain's rules and averages score them (see README), over the "
                                                      "pairs its export holds: pairs with a transient fault are left out")
    leakage: list[LeakageScore] = Field(default_factory=list)
    shortcuts: list[ShortcutScore] = Field(
        default_factory=list, description="per scenario, the best single-feature separation of act from abstain"
    )
    imported_environments: dict[str, EnvironmentSource] = Field(
        default_factory=dict, description="env_id -> where it came from, for the environments read by `abstaingen env "
                                          "import` (`generation.environments`)")

    left_out_when_empty: ClassVar[tuple[str, ...]] = ("imported_environments",)  # others' manifests read as before


class OodRelease(Manifest):
    """A release of the out-of-scope dataset: items for scoped assistants (abstaingen.model.ood)."""

    kind: Literal["ood"] = "ood"
    total_items: int
    roles: list[str] = Field(description="the role_ids the items are written for")
    languages: list[str]
    bank: str = Field(description="where the off-topic questions came from: 'builtin' or a Hugging Face dataset")
    relatedness_threshold: float = Field(description="bank questions scoring this or more against a role were dropped "
                                                     "as too close to it")
    baselines: list[OodScore] = Field(default_factory=list, description="scripted agents' scores, per suffix and "
                                                                        "language")
    leakage: OodLeakage | None = Field(default=None, description="whether a frame's words give laundered items away")
    repairs: list[RepairCount] = Field(default_factory=list, description="llm stages: drafts taken at once, after "
                                                                         "findings were sent back, or given up")
