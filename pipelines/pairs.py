"""The generation pipeline without Prefect: the stage functions the flow runs as tasks, and that benchmarks
and tests call directly. Each takes and returns pydantic models; nothing here writes files."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

import anyio

from abstaingen.config import BUILTIN_DOMAINS, GenerateConfig, SeedInstruction, builtin_domain
from abstaingen.errors import AbstaingenError, shown
from abstaingen.generators import Generator, ItemLost, NotApplicable, PositiveTask
from abstaingen.generators.builtin.capability import default_seeds, extract_capabilities
from abstaingen.model import CapabilitySpec, EnvironmentBundle, FunnelStage, Provenance, Scenario, TaskPair
from abstaingen.model.common import Model
from abstaingen.model.release import CostLine, JudgeReport, RepairCount
from abstaingen.model.score import AgentAbstainView, AgentMetrics, LeakageScore, ShortcutScore
from abstaingen.scoring import agentabstain_view, aggregate
from abstaingen.validators.baselines import BASELINES
from abstaingen.validators.decontaminate import ReferenceIndex
from abstaingen.validators.dedup import EarlierReleases, remove_near_duplicates, target_key
from abstaingen.validators.judge import CHECKS as JUDGE_CHECKS
from abstaingen.validators.judge import Committee, JudgedBatch, judge_report
from abstaingen.validators.leakage import leakage_report
from abstaingen.validators.shortcuts import shortcut_report
from abstaingen.validators.validate import ENV_INFRASTRUCTURE, INFRASTRUCTURE, LAYERS, StageCount, ValidatedBatch

GENERATION_STAGES = ("capability", "environment", "task", "perturbation")
STAGES = (*GENERATION_STAGES, "dedup", *LAYERS, "judge")
RUNTIME_SCENARIOS = {"S6", "S7", "S8"}
T = TypeVar("T")


async def each(work: list[Awaitable[T]], reasons: list[str]) -> tuple[list[T | None], Counter[str]]:
    """Run the items of a stage at once. An item that is lost (ItemLost, NotApplicable) gives None and
    is counted under its reason, prefixed by `reasons[i]`; any other error ends the stage."""
    outcomes = await asyncio.gather(*work, return_exceptions=True)
    lost = Counter[str]()
    kept: list[T | None] = []
    for prefix, outcome in zip(reasons, outcomes):
        if isinstance(outcome, ItemLost | NotApplicable):
            reason = outcome.reason if isinstance(outcome, ItemLost) else str(outcome)
            lost[f"{prefix}{reason}"] += 1
            kept.append(None)
        elif isinstance(outcome, BaseException):
            raise outcome
        else:
            kept.append(outcome)
    return kept, lost


class CapabilityBatch(Model):
    specs: list[CapabilitySpec]
    funnel: StageCount


async def extract_all(generator: Generator, seeds: list[SeedInstruction]) -> CapabilityBatch:
    specs, lost = await each([generator.extract_capabilities(s) for s in seeds], [""] * len(seeds))
    return CapabilityBatch(specs=[s for s in specs if s is not None],
                           funnel=StageCount(stage="capability", received=len(seeds), rejected=dict(lost)))


class EnvironmentBatch(Model):
    bundles: list[EnvironmentBundle]
    funnel: StageCount


async def synthesize_all(generator: Generator, specs: list[CapabilitySpec], seed: int) -> EnvironmentBatch:
    bundles, lost = await each([generator.synthesize_environment(s, seed) for s in specs], [""] * len(specs))
    return EnvironmentBatch(bundles=[b for b in bundles if b is not None],
                            funnel=StageCount(stage="environment", received=len(specs), rejected=dict(lost)))


class PositiveBatch(Model):
    tasks: list[PositiveTask]
    funnel: StageCount


async def write_positives(generator: Generator, bundle: EnvironmentBundle, variants: int, seed: int) -> PositiveBatch:
    """T+ for every scenario and variant the environment allows; the rest is counted, with its reason."""
    wanted = [(scenario, variant) for scenario in Scenario for variant in range(variants)]
    tasks, lost = await each([generator.write_positive_task(bundle, scenario, variant, seed)
                              for scenario, variant in wanted], [f"{scenario.value}: " for scenario, _ in wanted])
    return PositiveBatch(tasks=[t for t in tasks if t is not None],
                         funnel=StageCount(stage="task", received=len(wanted), rejected=dict(lost)))


class PerturbedBatch(Model):
    pairs: list[TaskPair]
    funnel: StageCount


async def perturb_all(generator: Generator, bundle: EnvironmentBundle, positives: PositiveBatch,
                      provenance: Provenance, seed: int) -> PerturbedBatch:
    pairs, lost = await each([generator.perturb(p, bundle, provenance, seed) for p in positives.tasks],
                             [f"{p.scenario.value}: " for p in positives.tasks])
    return PerturbedBatch(pairs=[p for p in pairs if p is not None],
                          funnel=StageCount(stage="perturbation", received=len(positives.tasks), rejected=dict(lost)))


def funnel_stage_of(llm_stage: str) -> str:
    """The funnel line an llm stage's repairs are counted on (perturb_s1 ... perturb_s8: perturbation)."""
    return {"positive_task": "task"}.get(llm_stage, "perturbation" if llm_stage.startswith("perturb_") else llm_stage)


def with_repairs(funnel: list[FunnelStage], repairs: list[RepairCount]) -> list[FunnelStage]:
    """The funnel with each generation stage's repair loop counted on its line."""
    lines = {f.stage: f for f in funnel}
    for count in repairs:
        stage = funnel_stage_of(count.stage)
        if stage not in lines:
            continue
        line = lines[stage]
        prefix = f"{count.stage.removeprefix('perturb_').upper()} " if stage == "perturbation" else ""
        sent_back = Counter(line.sent_back) + Counter({f"{prefix}{k}": v for k, v in count.sent_back.items()})
        lines[stage] = line.model_copy(update={"repaired": line.repaired + count.repaired,
                                               "repair_rounds": line.repair_rounds + count.rounds,
                                               "sent_back": dict(sent_back)})
    return [lines[f.stage] for f in funnel]


class Deduplicated(Model):
    by_environment: list[list[TaskPair]]  # in the order of the bundles
    funnel: StageCount


def deduplicate(bundles: list[EnvironmentBundle], candidates: list[list[TaskPair]],
                earlier: EarlierReleases | None = None, references: ReferenceIndex | None = None) -> Deduplicated:
    """Across the whole release, against the dataset's earlier releases and against the user's reference
    texts, before any sandbox runs: a duplicate costs nothing to drop here."""
    everything = [p for group in candidates for p in group]
    contaminated = [p for p in everything if references is not None and references.overlaps(p)]
    dropped_ids = {p.pair_id for p in contaminated}
    clean = [p for p in everything if p.pair_id not in dropped_ids]
    by_id = {b.env_id: b for b in bundles}
    targets = {p.pair_id: target_key(p, by_id[p.act.env_id]) for p in clean} if earlier else None
    outcome = remove_near_duplicates(clean, earlier, targets)
    by_env: dict[str, list[TaskPair]] = {b.env_id: [] for b in bundles}
    for pair in outcome.kept:
        by_env[pair.act.env_id].append(pair)
    dropped = {"overlaps_reference_text": contaminated, "near_duplicate": outcome.near_duplicate,
               "seen_in_earlier_release": outcome.seen_in_earlier_release,
               "same_target_as_earlier": outcome.same_target_as_earlier}
    return Deduplicated(by_environment=[by_env[b.env_id] for b in bundles],
                        funnel=StageCount(stage="dedup", received=len(everything),
                                          rejected={reason: len(pairs) for reason, pairs in dropped.items() if pairs}))


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
    agentabstain_view: list[AgentAbstainView]
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


def missing_coverage(kept: list[TaskPair], domains: Sequence[str], scenarios: Sequence[str]) -> list[str]:
    """The domains and scenarios a run was asked for that no kept pair covers."""
    have = {"domain": {p.domain for p in kept}, "scenario": {str(p.scenario) for p in kept}}
    return [f"{kind} {value}" for kind, wanted in (("domain", domains), ("scenario", scenarios))
            for value in wanted if value not in have[kind]]


def assemble(kept: list[TaskPair], bundles: list[EnvironmentBundle], rejected: list[TaskPair] | None = None,
             allow_infrastructure_loss: bool = False, expected_domains: Sequence[str] = (),
             expected_scenarios: Sequence[str] = (), allow_incomplete: bool = False) -> Assembly:
    """The release-level gates: baseline metrics, the leakage report, the shortcut gate, nothing lost
    to sandbox failures, and every domain and scenario asked for present (the last two can be waived,
    and are then said in the warnings)."""
    baselines = [aggregate(agent, [s for p in kept for s in p.validation.baseline_scores if s.agent == agent])
                 for agent in BASELINES]
    action_types = {p.pair_id: str(p.act.deliverable) for p in kept}
    views = [agentabstain_view(agent, [s for p in kept for s in p.validation.baseline_scores if s.agent == agent],
                               action_types) for agent in BASELINES]
    leakage = leakage_report(kept)
    shortcuts = shortcut_report(kept, bundles)
    if not kept:
        return Assembly(pairs=[], baselines=baselines, agentabstain_view=views, leakage=leakage, shortcuts=shortcuts,
                        refusal="no pair survived validation", warnings=infrastructure_losses(kept, rejected or [])[1])
    problems = [f"{m.agent} paired accuracy {m.paired:.1%}" for m in baselines
                if (m.paired < 1.0 if m.agent == "oracle" else m.paired > 0.0)]
    problems += [f"{score.scenario} instructions leak the label (accuracy {score.accuracy:.0%})"
                 for score in leakage if score.scenario in RUNTIME_SCENARIOS and not score.at_chance]
    problems += [f"{s.scenario} has a one-feature shortcut: {_shortcut(s)}" for s in shortcuts if not s.passed]
    gone, warnings = infrastructure_losses(kept, rejected or [])
    if gone and not allow_infrastructure_loss:
        problems.append(f"sandbox failures lost {', '.join(gone)} (sandbox.allow_infrastructure_loss publishes anyway)")
    missing = [m for m in missing_coverage(kept, expected_domains, expected_scenarios) if m not in gone]
    if missing and not allow_incomplete:
        problems.append(f"no pair of {', '.join(missing)} was kept (dataset.allow_incomplete publishes anyway)")
    elif missing:
        warnings.append(f"published without {', '.join(missing)}: no pair of them was kept")
    return Assembly(pairs=kept, baselines=baselines, agentabstain_view=views, leakage=leakage, shortcuts=shortcuts,
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


def stamped(pairs: list[TaskPair], canary: str, created_at: str, config_fingerprint: str) -> list[TaskPair]:
    """The pairs as they are published: each carries the dataset's canary and the run's provenance."""
    return [pair.model_copy(update={"canary": canary, "provenance": pair.provenance.model_copy(update={
        "created_at": created_at, "config_fingerprint": config_fingerprint})}) for pair in pairs]


class Judged(Model):
    """Pairs after the judge committee, with what the manifest says about it."""

    kept: list[TaskPair]
    rejected: list[TaskPair]
    funnel: StageCount
    report: JudgeReport
    cost: list[CostLine]
    models: dict[str, str]


def without_judging(pair: TaskPair) -> TaskPair:
    """The pair as the executable layers left it: an earlier committee's checks and verdicts removed."""
    report = pair.validation.model_copy(update={
        "checks": [c for c in pair.validation.checks if c.name not in JUDGE_CHECKS], "judge_verdicts": [],
        "judged_by": []})
    return pair.model_copy(update={"validation": report})


async def judge_all(committee: Committee, bundles: list[EnvironmentBundle], groups: list[list[TaskPair]],
                    concurrency: int,
                    judge: Callable[[EnvironmentBundle, list[TaskPair]], Awaitable[JudgedBatch]]) -> Judged:
    """Each environment's pairs (`groups`, in the order of the bundles) before the committee through
    `judge` (judge_environment, or the flow's task around it), `concurrency` environments at once, since
    each holds a sandbox."""
    limiter = anyio.CapacityLimiter(concurrency)

    async def limited(bundle: EnvironmentBundle, pairs: list[TaskPair]) -> JudgedBatch:
        async with limiter:
            return await judge(bundle, pairs)

    batches = list(await asyncio.gather(*(limited(b, g) for b, g in zip(bundles, groups) if g)))
    rejected = [p for b in batches for p in b.rejected]
    funnel = StageCount(stage="judge", received=sum(len(g) for g in groups),
                        rejected=dict(sum((Counter(b.funnel.rejected) for b in batches), Counter())))
    kept = [p for b in batches for p in b.accepted]
    return Judged(kept=kept, rejected=rejected, funnel=funnel, cost=committee.cost(), models=committee.models(),
                  report=judge_report(committee, [*kept, *rejected], funnel.rejected.get("budget_exhausted", 0)))


def merge_funnel(batches: Sequence[StageCount], order: Sequence[str] = STAGES) -> list[FunnelStage]:
    """The batches' counts summed per stage, in `order` (stages not in it are left out)."""
    stages: dict[str, FunnelStage] = {}
    for batch in batches:
        previous = stages.get(batch.stage, FunnelStage(stage=batch.stage, received=0, passed=0))
        rejected = Counter(previous.rejected) + Counter(batch.rejected)
        received = previous.received + batch.received
        stages[batch.stage] = FunnelStage(stage=batch.stage, received=received,
                                          passed=received - sum(rejected.values()), rejected=dict(rejected),
                                          retried=previous.retried + batch.retried)
    return [stages[s] for s in order if s in stages]


def seeds_in_scope(config: GenerateConfig, seeds: Sequence[SeedInstruction]) -> list[SeedInstruction]:
    """The seeds a generation run works from, picked as the generate flow picks them:
    the given seeds, or the builtin default seeds when there are none, then only those whose domain is
    configured. The release's config fingerprint is taken over exactly these.

    With the builtin capability stage a seed's domain is what the builtin matcher finds. With the llm
    one the model names the domain, so a seed is in scope unless it names a domain `generation.domains`
    (when the config sets it) leaves out."""
    chosen = list(seeds) or [SeedInstruction(instruction=text, domain=domain) for text, domain in default_seeds()]
    if config.backend_for("capability") == "llm":
        listed = "domains" in config.generation.model_fields_set
        return [s for s in chosen if not listed or s.domain is None or s.domain in config.generation.domains]
    for seed in chosen:
        if seed.domain is not None and seed.domain not in BUILTIN_DOMAINS:
            try:
                builtin_domain(seed.domain)
            except ValueError as exc:
                raise AbstaingenError(f"seed {shown(seed.instruction)}: {exc}") from None
    return [s for s in chosen if extract_capabilities(s.instruction, s.domain).domain in config.generation.domains]
