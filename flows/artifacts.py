"""What a generation run shows in the Prefect UI besides its logs: tables and a summary per run, and a
progress bar per long stage. Only called from within a flow run.

Every artifact's key is its dataset's, numbered in the order its product's pipeline makes it
(`ArtifactKeys`): `abstaingen-builtin-06-stage-funnel`. Prefect keeps the latest artifact of each key
across runs, so two datasets (the pairs release and the OOD one) never share a key, and each dataset's
artifacts sort by key in pipeline order. Every artifact has a description."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TypeVar
from uuid import UUID

from prefect.artifacts import (
    acreate_markdown_artifact,
    acreate_progress_artifact,
    acreate_table_artifact,
    aupdate_progress_artifact,
)
from pydantic import Field

from abstaingen import progress
from abstaingen.model import FunnelStage, Release, TaskPair
from abstaingen.model.common import Model
from abstaingen.model.release import RejectionSample
from abstaingen.validators.shortcuts import LIMIT as SHORTCUT_LIMIT

# An empty cell. A lone "-" in a markdown table cell renders as a list bullet in Prefect's UI.
NONE = "—"

# Each product's artifacts, in the order its pipeline makes them: a progress bar per long stage as it starts,
# then the tables and the summary once the release is published (or refused).
PAIRS_ARTIFACTS = ("progress-environment", "progress-task", "progress-perturbation", "progress-validate",
                   "progress-judge", "stage-funnel", "rejection-samples", "baseline-gates", "shortcut-gate",
                   "leakage-report", "cost", "judge-agreement", "release-summary")
OOD_ARTIFACTS = ("progress-write-items", "stage-funnel", "ood-baselines", "ood-leakage", "release-summary")


class ArtifactKeys(Model):
    """The keys of one run's artifacts: `<dataset>-<place>-<name>`, the place two digits (so that a sort by key is
    the pipeline's order), the dataset's name in the characters a key may hold (lowercase letters, digits, -)."""

    dataset: str = Field(description="the dataset the run makes, e.g. abstaingen-builtin")
    names: tuple[str, ...] = Field(description="the product's artifacts in pipeline order (PAIRS_ARTIFACTS, "
                                               "OOD_ARTIFACTS)")

    def __call__(self, name: str) -> str:
        slug = re.sub(r"[^a-z0-9-]+", "-", self.dataset.lower()).strip("-")
        return f"{slug}-{self.names.index(name) + 1:02d}-{name}"


def rejection_samples(rejected: Sequence[TaskPair], layers: dict[str, set[str]], per_reason: int = 3,
                      limit: int = 24) -> list[RejectionSample]:
    """A few rejected pairs of each reason (first failed check), so that a refusal can be looked into."""
    samples: list[RejectionSample] = []
    seen: dict[str, int] = {}
    for pair in rejected:
        failures = pair.validation.failures()
        if not failures:
            continue
        check = failures[0]
        if seen.get(check.name, 0) >= per_reason:
            continue
        seen[check.name] = seen.get(check.name, 0) + 1
        stage = next((layer for layer, names in layers.items() if check.name in names), "judge")
        samples.append(RejectionSample(pair_id=pair.pair_id, scenario=str(pair.scenario), domain=pair.domain,
                                       stage=stage, reason=f"{check.name}: {check.detail}"[:300]))
        if len(samples) >= limit:
            break
    return samples


def _percent(value: float | None) -> str:
    return NONE if value is None else f"{value:.0%}"


async def publish_funnel(keys: ArtifactKeys, funnel: Sequence[FunnelStage], title: str,
                         samples: Sequence[RejectionSample] = ()) -> None:
    await acreate_table_artifact(
        key=keys("stage-funnel"),
        table=[{"stage": f.stage, "received": f.received, "passed": f.passed,
                "rejected": ", ".join(f"{k}: {v}" for k, v in f.rejected.items()) or NONE, "retried": f.retried,
                "repaired": f.repaired} for f in funnel],
        description=f"Stage funnel of {title}",
    )
    if samples:
        await acreate_table_artifact(key=keys("rejection-samples"), table=[s.model_dump() for s in samples],
                                     description=f"Examples of rejected pairs of {title}, a few per reason")


async def publish_release_artifacts(keys: ArtifactKeys, release: Release, folder: Path) -> None:
    title = f"{release.name} {release.version}"
    theirs = {view.agent: view for view in release.agentabstain_view}
    await acreate_table_artifact(
        key=keys("baseline-gates"),
        table=[{"agent": m.agent, "act": f"{m.act:.0%}", "abstain": f"{m.abstain:.0%}", "paired": f"{m.paired:.0%}",
                "CAR": _percent(m.car), "post-hoc": m.post_hoc_abstentions, "implicit": m.implicit_abstentions,
                "AgentAbstain paired (macro)": _percent(theirs[m.agent].paired) if m.agent in theirs else NONE,
                "AgentAbstain CAR (macro)": _percent(theirs[m.agent].car) if m.agent in theirs else NONE}
               for m in release.baselines],
        description=f"Scripted baseline agents on the pairs of {title}, by our rules and by AgentAbstain's",
    )
    await acreate_table_artifact(
        key=keys("shortcut-gate"),
        table=[{"scenario": s.scenario, "pairs": s.pairs, "best instruction feature": s.instruction_feature or NONE,
                "accuracy": f"{s.instruction_accuracy:.2f}", "best record feature": s.record_feature or NONE,
                "record accuracy": f"{s.record_accuracy:.2f}", "gated": s.gated, "passed": s.passed}
               for s in release.shortcuts],
        description=f"Best single-feature separation of act from abstain per scenario (limit {SHORTCUT_LIMIT})",
    )
    await acreate_table_artifact(
        key=keys("leakage-report"),
        table=[{"scenario": s.scenario, "pairs": s.pairs, "wording-only accuracy": f"{s.accuracy:.2f}",
                "chance": f"{s.chance:.2f}", "at chance": s.at_chance} for s in release.leakage],
        description="How well a bag-of-words classifier tells act from abstain instructions, per scenario "
                    "(cross-validated; runtime scenarios S6-S8 must be at chance)",
    )
    await acreate_table_artifact(
        key=keys("cost"),
        table=[{"stage": c.stage, "model": c.model, "calls": c.calls, "cached": c.cached,
                "input tokens": c.input_tokens, "output tokens": c.output_tokens, "USD": f"{c.cost_usd:.4f}"}
               for c in release.cost] or [{"stage": "all", "model": "builtin", "calls": 0, "cached": 0,
                                           "input tokens": 0, "output tokens": 0, "USD": "0.0000"}],
        description=f"Model calls and their cost, ${release.cost_usd:.2f} in all",
    )
    if release.judge.judged:
        await acreate_table_artifact(
            key=keys("judge-agreement"),
            table=[{"rubric item": a.item, "pairs": a.pairs, "raw agreement": NONE if a.raw is None else f"{a.raw:.2f}",
                    "Fleiss kappa": NONE if a.kappa is None else f"{a.kappa:.2f}", "failed": a.failed}
                   for a in release.judge.agreement],
            description=f"Judge committee {', '.join(release.judge.models)} ({release.judge.rule}): agreement per "
                        "rubric item",
        )
    lines = [f"# {title}", "", f"{release.total_pairs} pairs in `{folder}` (seed {release.seed}, sandbox "
             f"{release.sandbox})", ""]
    for dimension, counts in release.counts.items():
        lines.append(f"- **{dimension}**: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    lines.append(f"- **cost**: ${release.cost_usd:.2f}" + (f" (${release.cost_per_pair_usd:.4f} per pair)"
                                                            if release.cost else " (builtin backend)"))
    judge = release.judge
    lines.append(f"- **judged by**: {', '.join(judge.models)} ({judge.rule}); rejected: {judge.rejected or 'none'}; "
                 f"judge errors: {judge.judge_errors or 'none'}" if judge.judged else "- **judged**: no (no judge role)")
    lines += [f"- **warning**: {warning}" for warning in release.warnings]
    await publish_summary(keys, "\n".join(lines), f"What {title} holds: pairs by scenario, domain, phase and "
                                                  "deliverable, cost, judging and warnings")


async def publish_summary(keys: ArtifactKeys, markdown: str, description: str) -> None:
    """The run's last artifact: what was published, or why nothing was."""
    await acreate_markdown_artifact(key=keys("release-summary"), markdown=markdown, description=description)


async def publish_refusal(keys: ArtifactKeys, reason: str, funnel: Sequence[FunnelStage],
                          samples: Sequence[RejectionSample] = (), lost: str = "pairs") -> None:
    """The funnel and samples of a refused release, and a summary that says why nothing was published."""
    dataset = keys.dataset
    await publish_funnel(keys, funnel, f"the refused release of {dataset}", samples)
    where = f"`{keys('stage-funnel')}`" + (f" and `{keys('rejection-samples')}` artifacts" if samples else " artifact")
    await publish_summary(keys, f"# {dataset}: release refused\n\nNothing was published.\n\n**Reason**: {reason}"
                                f"\n\nSee the {where} for where {lost} were lost.",
                          f"Why no release of {dataset} was published")


T = TypeVar("T")


async def tracked(keys: ArtifactKeys, stage: str, work: list[Awaitable[T]], notes: list[str], unit: str,
                  kept: Callable[[T], int] = lambda _: 0) -> list[T]:
    """Run a stage's items (`unit`, e.g. environments) at once, telling its progress (and what each item
    `kept`) as each finishes."""
    bar = await StageProgress(keys, stage, len(work), unit).start()

    async def one(item: Awaitable[T], note: str) -> T:
        result = await item
        await bar.advance(kept(result), note)
        return result

    return list(await asyncio.gather(*(one(w, n) for w, n in zip(work, notes))))


class StageProgress:
    """One stage's progress: told to in-process watchers (the terminal) and shown in the UI as a
    progress artifact. Within a flow run only."""

    def __init__(self, keys: ArtifactKeys, stage: str, total: int, unit: str):
        self.keys, self.stage, self.total, self.unit = keys, stage, total, unit
        self.done = self.accepted = self._shown = 0
        self._artifact: UUID | None = None

    async def start(self) -> StageProgress:
        progress.report(self.stage, 0, self.total, 0)
        if self.total:
            self._artifact = await acreate_progress_artifact(
                0.0, key=self.keys(f"progress-{self.stage.replace(' ', '-')}"),
                description=f"{self.stage}: share of {self.total} {self.unit} done")
        return self

    async def advance(self, accepted: int = 0, note: str = "", items: int = 1) -> None:
        """`items` more are done (one by default), `accepted` of them kept; `note` names the latest."""
        self.done += items
        self.accepted += accepted
        progress.report(self.stage, self.done, self.total, self.accepted, note)
        percent = 100 * self.done // self.total if self.total else 100
        if self._artifact is not None and percent > self._shown:  # at most a hundred updates of the artifact
            self._shown = percent
            await aupdate_progress_artifact(self._artifact, float(percent))
