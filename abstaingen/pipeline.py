"""The generation pipeline without Prefect: the stage functions the flow runs as tasks, and that benchmarks
and tests call directly. Each takes and returns pydantic models; nothing here writes files."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable

import anyio

from abstaingen.generators import Generator, NotApplicable, PositiveTask
from abstaingen.model import EnvironmentBundle, FunnelStage, Provenance, Scenario, TaskPair
from abstaingen.model.common import Model
from abstaingen.model.score import AgentMetrics, LeakageScore, ShortcutScore
from abstaingen.scoring import aggregate
from abstaingen.validators.baselines import BASELINES
from abstaingen.validators.dedup import remove_near_duplicates
from abstaingen.validators.leakage import leakage_report
from abstaingen.validators.shortcuts import shortcut_report
from abstaingen.validators.validate import ENV_INFRASTRUCTURE, INFRASTRUCTURE, LAYERS, StageCount, ValidatedBatch

STAGES = ("environment", "task", "dedup", *LAYERS)
RUNTIME_SCENARIOS = {"S6", "S7", "S8"}


class PositiveBatch(Model):
    tasks: list[PositiveTask]
    funnel: StageCount


async def write_positives(generator: Generator, bundle: EnvironmentBundle, variants: int, seed: int) -> PositiveBatch:
    """T+ for every scenario and variant the environment allows; the rest is counted, with its reason."""
    wanted = [(scenario, variant) for scenario in Scenario for variant in range(variants)]
    written = await asyncio.gather(*(generator.write_positive_task(bundle, scenario, variant, seed)
                                     for scenario, variant in wanted), return_exceptions=True)
    tasks, rejected = [], Counter[str]()
    for (scenario, _), outcome in zip(wanted, written):
        if isinstance(outcome, NotApplicable):
            rejected[f"{scenario.value}: {outcome}"] += 1
        elif isinstance(outcome, BaseException):
            raise outcome
        else:
            tasks.append(outcome)
    return PositiveBatch(tasks=tasks, funnel=StageCount(stage="task", received=len(wanted), rejected=dict(rejected)))


async def perturb_all(generator: Generator, bundle: EnvironmentBundle, positives: PositiveBatch,
                      provenance: Provenance, seed: int) -> list[TaskPair]:
    return list(await asyncio.gather(*(generator.perturb(p, bundle, provenance, seed) for p in positives.tasks)))


class Deduplicated(Model):
    by_environment: list[list[TaskPair]]  # in the order of the bundles
    funnel: StageCount


def deduplicate(bundles: list[EnvironmentBundle], candidates: list[list[TaskPair]]) -> Deduplicated:
    """Across the whole release and before any sandbox runs: a duplicate costs nothing to drop here."""
    everything = [p for group in candidates for p in group]
    kept, removed = remove_near_duplicates(everything)
    by_env: dict[str, list[TaskPair]] = {b.env_id: [] for b in bundles}
    for pair in kept:
        by_env[pair.act.env_id].append(pair)
    return Deduplicated(
        by_environment=[by_env[b.env_id] for b in bundles],
        funnel=StageCount(stage="dedup", received=len(everything),
                          rejected={"near_duplicate": len(removed)} if removed else {}),
    )


async def validate_concurrently(bundles: list[EnvironmentBundle], candidates: list[list[TaskPair]], concurrency: int,
                                validate: Callable[[EnvironmentBundle, list[TaskPair]], Awaitable[ValidatedBatch]],
                                ) -> list[ValidatedBatch]:
    """Validate environments concurrently on one event loop. Sandbox sessions spend their time waiting
    on each other's round trips, which one loop interleaves well; threads, each with a loop of its
    own, fought over the GIL and were a third slower."""
    limiter = anyio.CapacityLimiter(concurrency)

    async def limited(bundle: EnvironmentBundle, pairs: list[TaskPair]) -> ValidatedBatch:
        async with limiter:
            return await validate(bundle, pairs)

    return list(await asyncio.gather(*(limited(b, c) for b, c in zip(bundles, candidates))))


class Assembly(Model):
    pairs: list[TaskPair]
    baselines: list[AgentMetrics]
    leakage: list[LeakageScore]
    shortcuts: list[ShortcutScore]
    refusal: str | None
    warnings: list[str] = []


def infrastructure_losses(kept: list[TaskPair], rejected: list[TaskPair]) -> tuple[list[str], list[str]]:
    """(domains and scenarios that lost every pair to sandbox failures, a warning per kind of loss).

    A sandbox that failed on every attempt says nothing about the data, so a release missing a
    domain or scenario for that reason is not the release the config asked for."""
    lost = [p for p in rejected if any(c.name in (INFRASTRUCTURE, ENV_INFRASTRUCTURE) for c in p.validation.failures())]
    if not lost:
        return [], []
    gone = [f"{kind} {value}" for kind in ("domain", "scenario")
            for value in sorted({str(getattr(p, kind)) for p in lost} - {str(getattr(p, kind)) for p in kept})]
    warning = f"{len(lost)} pairs were rejected because their sandbox failed on every attempt"
    return gone, [warning + (f"; lost entirely: {', '.join(gone)}" if gone else "")]


def assemble(kept: list[TaskPair], bundles: list[EnvironmentBundle], rejected: list[TaskPair] | None = None,
             allow_infrastructure_loss: bool = False) -> Assembly:
    """The release-level gates: baseline metrics, the leakage report, the shortcut gate, and
    nothing lost to sandbox failures (unless allowed, and then said in the warnings)."""
    baselines = [aggregate(agent, [s for p in kept for s in p.validation.baseline_scores if s.agent == agent])
                 for agent in BASELINES]
    leakage = leakage_report(kept)
    shortcuts = shortcut_report(kept, bundles)
    problems = [f"{m.agent} paired accuracy {m.paired:.1%}" for m in baselines
                if (m.paired < 1.0 if m.agent == "oracle" else m.paired > 0.0)]
    problems += [f"{score.scenario} instructions leak the label (accuracy {score.accuracy:.0%})"
                 for score in leakage if score.scenario in RUNTIME_SCENARIOS and not score.at_chance]
    problems += [f"{s.scenario} has a one-feature shortcut: {_shortcut(s)}" for s in shortcuts if not s.passed]
    gone, warnings = infrastructure_losses(kept, rejected or [])
    if gone and not allow_infrastructure_loss:
        problems.append(f"sandbox failures lost {', '.join(gone)} (sandbox.allow_infrastructure_loss publishes anyway)")
    return Assembly(pairs=kept, baselines=baselines, leakage=leakage, shortcuts=shortcuts,
                    refusal="; ".join(problems) or None, warnings=warnings)


def _shortcut(score: ShortcutScore) -> str:
    parts = []
    if score.instruction_accuracy > score.limit:
        parts.append(f"instruction '{score.instruction_feature}' ({score.instruction_accuracy:.0%})")
    if score.record_accuracy > score.limit:
        parts.append(f"record '{score.record_feature}' ({score.record_accuracy:.0%})")
    if score.abstain_only_fields:
        parts.append(f"fields set only on abstain sides: {', '.join(score.abstain_only_fields)}")
    return "; ".join(parts)


def merge_funnel(batches: list[StageCount]) -> list[FunnelStage]:
    stages: dict[str, FunnelStage] = {}
    for batch in batches:
        previous = stages.get(batch.stage, FunnelStage(stage=batch.stage, received=0, passed=0))
        rejected = Counter(previous.rejected) + Counter(batch.rejected)
        received = previous.received + batch.received
        stages[batch.stage] = FunnelStage(stage=batch.stage, received=received,
                                          passed=received - sum(rejected.values()), rejected=dict(rejected),
                                          retried=previous.retried + batch.retried)
    return [stages[s] for s in STAGES if s in stages]
