"""What a generation run shows in the Prefect UI besides its logs: tables and a summary per run, and a
progress bar per long stage. Only called from within a flow run."""

from __future__ import annotations

import asyncio
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

from abstaingen import progress
from abstaingen.model import FunnelStage, Release, TaskPair
from abstaingen.model.release import RejectionSample
from abstaingen.validators.shortcuts import LIMIT as SHORTCUT_LIMIT

# An empty cell. A lone "-" in a markdown table cell renders as a list bullet in Prefect's UI.
NONE = "—"


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


async def publish_funnel(funnel: Sequence[FunnelStage], title: str, samples: Sequence[RejectionSample] = ()) -> None:
    await acreate_table_artifact(
        key="stage-funnel",
        table=[{"stage": f.stage, "received": f.received, "passed": f.passed,
                "rejected": ", ".join(f"{k}: {v}" for k, v in f.rejected.items()) or NONE, "retried": f.retried,
                "repaired": f.repaired} for f in funnel],
        description=f"Stage funnel of {title}",
    )
    if samples:
        await acreate_table_artifact(key="rejection-samples", table=[s.model_dump() for s in samples],
                                     description=f"Examples of rejected pairs of {title}, a few per reason")


async def publish_release_artifacts(release: Release, folder: Path) -> None:
    title = f"{release.name} {release.version}"
    theirs = {view.agent: view for view in release.agentabstain_view}
    await acreate_table_artifact(
        key="baseline-gates",
        table=[{"agent": m.agent, "act": f"{m.act:.0%}", "abstain": f"{m.abstain:.0%}", "paired": f"{m.paired:.0%}",
                "CAR": _percent(m.car), "post-hoc": m.post_hoc_abstentions, "implicit": m.implicit_abstentions,
                "AgentAbstain paired (macro)": _percent(theirs[m.agent].paired) if m.agent in theirs else NONE,
                "AgentAbstain CAR (macro)": _percent(theirs[m.agent].car) if m.agent in theirs else NONE}
               for m in release.baselines],
        description=f"Scripted baseline agents on the pairs of {title}, by our rules and by AgentAbstain's",
    )
    await acreate_table_artifact(
        key="shortcut-gate",
        table=[{"scenario": s.scenario, "pairs": s.pairs, "best instruction feature": s.instruction_feature or NONE,
                "accuracy": f"{s.instruction_accuracy:.2f}", "best record feature": s.record_feature or NONE,
                "record accuracy": f"{s.record_accuracy:.2f}", "gated": s.gated, "passed": s.passed}
               for s in release.shortcuts],
        description=f"Best single-feature separation of act from abstain per scenario (limit {SHORTCUT_LIMIT})",
    )
    await acreate_table_artifact(
        key="leakage-report",
        table=[{"scenario": s.scenario, "pairs": s.pairs, "wording-only accuracy": f"{s.accuracy:.2f}",
                "chance": f"{s.chance:.2f}", "at chance": s.at_chance} for s in release.leakage],
        description="How well a bag-of-words classifier tells act from abstain instructions, per scenario "
                    "(cross-validated; runtime scenarios S6-S8 must be at chance)",
    )
    await acreate_table_artifact(
        key="cost",
        table=[{"stage": c.stage, "model": c.model, "calls": c.calls, "cached": c.cached,
                "input tokens": c.input_tokens, "output tokens": c.output_tokens, "USD": f"{c.cost_usd:.4f}"}
               for c in release.cost] or [{"stage": "all", "model": "builtin", "calls": 0, "cached": 0,
                                           "input tokens": 0, "output tokens": 0, "USD": "0.0000"}],
        description=f"Model calls and their cost, ${release.cost_usd:.2f} in all",
    )
    if release.judge.judged:
        await acreate_table_artifact(
            key="judge-agreement",
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
    await acreate_markdown_artifact(key="release-summary", markdown="\n".join(lines))


async def publish_refusal(dataset: str, reason: str, funnel: Sequence[FunnelStage],
                          samples: Sequence[RejectionSample]) -> None:
    await publish_funnel(funnel, f"the refused release of {dataset}", samples)
    await acreate_markdown_artifact(
        key="release-summary",
        markdown=f"# {dataset}: release refused\n\nNothing was published.\n\n**Reason**: {reason}\n\nSee the "
                 "`stage-funnel` and `rejection-samples` artifacts for where pairs were lost.")


T = TypeVar("T")


async def tracked(stage: str, work: list[Awaitable[T]], notes: list[str],
                  kept: Callable[[T], int] = lambda _: 0) -> list[T]:
    """Run a stage's items at once, telling its progress (and what each item `kept`) as each finishes."""
    bar = await StageProgress(stage, len(work)).start()

    async def one(item: Awaitable[T], note: str) -> T:
        result = await item
        await bar.advance(kept(result), note)
        return result

    return list(await asyncio.gather(*(one(w, n) for w, n in zip(work, notes))))


class StageProgress:
    """One stage's progress: told to in-process watchers (the terminal) and shown in the UI as a
    progress artifact. Within a flow run only."""

    def __init__(self, stage: str, total: int):
        self.stage, self.total, self.done, self.accepted = stage, total, 0, 0
        self._artifact: UUID | None = None

    async def start(self) -> StageProgress:
        progress.report(self.stage, 0, self.total, 0)
        if self.total:
            self._artifact = await acreate_progress_artifact(
                0.0, key=f"progress-{self.stage.replace(' ', '-')}",
                description=f"{self.stage}: share of {self.total} items done")
        return self

    async def advance(self, accepted: int = 0, note: str = "") -> None:
        self.done += 1
        self.accepted += accepted
        progress.report(self.stage, self.done, self.total, self.accepted, note)
        if self._artifact is not None:
            await aupdate_progress_artifact(self._artifact, 100.0 * self.done / self.total)
