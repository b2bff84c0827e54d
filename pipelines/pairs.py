"""The pairs product without Prefect: the stage functions, and `run_pairs`, which composes them from a plan to
the release gates. The generate flow runs the same composition with each stage as a Prefect task (it passes
its own StageRunner); `release judge`, the benchmarks and the tests call these directly. Each function takes
and returns pydantic models; nothing here writes files (`release_of` makes what the store publishes)."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import anyio
from pydantic import Field

from abstaingen.config import (
    BUILTIN_DOMAINS,
    GenerateConfig,
    SandboxConfig,
    SeedInstruction,
    builtin_domain,
    load_seeds,
)
from abstaingen.errors import AbstaingenError, shown
from abstaingen.generators import (
    PROVIDER_ERROR,
    Generator,
    ItemLost,
    NotApplicable,
    PositiveTask,
    generators_for_run,
    get_generator,
    make_generator,
)
from abstaingen.generators.builtin.capability import default_seeds, extract_capabilities
from abstaingen.model import CapabilitySpec, EnvironmentBundle, FunnelStage, Provenance, Release, Scenario, TaskPair
from abstaingen.model.common import Model
from abstaingen.model.release import GENERATION_STAGES, CostLine, GenerationReport, JudgeReport, RepairCount
from abstaingen.model.score import AgentAbstainView, AgentMetrics, LeakageScore, ShortcutScore
from abstaingen.progress import report
from abstaingen.sandboxes.backends import SandboxBackend, SandboxLimits, get_backend, select_backend
from abstaingen.sandboxes.trust import untrusted
from abstaingen.scoring import agentabstain_view, aggregate
from abstaingen.store import read_bundle, require_writable_dir
from abstaingen.validators.baselines import BASELINES
from abstaingen.validators.decontaminate import ReferenceIndex
from abstaingen.validators.dedup import EarlierReleases, remove_near_duplicates, target_key
from abstaingen.validators.judge import CHECKS as JUDGE_CHECKS
from abstaingen.validators.judge import Committee, JudgedBatch, committee_for_run, judge_environment, judge_report
from abstaingen.validators.judge import prompt_hashes as judge_prompts
from abstaingen.validators.leakage import leakage_report
from abstaingen.validators.shortcuts import MIN_PAIRS, shortcut_report
from abstaingen.validators.validate import (
    ENV_INFRASTRUCTURE,
    INFRASTRUCTURE,
    LAYERS,
    ValidatedBatch,
    validate_pairs_async,
)

FUNNEL_STAGES = (*GENERATION_STAGES, "dedup", *LAYERS, "judge")
RUNTIME_SCENARIOS = {"S6", "S7", "S8"}
# Why work is lost to the infrastructure rather than on its merits: a sandbox that failed on every attempt (a
# pair's, or its environment checks'), a model request that kept failing.
SANDBOX_FAILURES = frozenset({INFRASTRUCTURE, ENV_INFRASTRUCTURE})
INFRASTRUCTURE_REASONS = SANDBOX_FAILURES | {PROVIDER_ERROR}
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
    funnel: FunnelStage


async def extract_all(generator: Generator, seeds: list[SeedInstruction]) -> CapabilityBatch:
    specs, lost = await each([generator.extract_capabilities(s) for s in seeds], [""] * len(seeds))
    return CapabilityBatch(specs=[s for s in specs if s is not None],
                           funnel=FunnelStage.counted(stage="capability", received=len(seeds), rejected=dict(lost)))


def one_per_domain(specs: list[CapabilitySpec]) -> list[CapabilitySpec]:
    """Seeds of one domain share an environment: their specs become one, with the first's summary, every
    capability once, and the other seeds' instructions as requests the environment must also serve."""
    merged: dict[str, CapabilitySpec] = {}
    for spec in specs:
        first = merged.setdefault(spec.domain, spec)
        if first is not spec:
            merged[spec.domain] = first.model_copy(update={
                "capabilities": list(dict.fromkeys([*first.capabilities, *spec.capabilities])),
                "other_instructions": [*first.other_instructions, spec.seed_instruction, *spec.other_instructions]})
    return list(merged.values())


class EnvironmentBatch(Model):
    bundles: list[EnvironmentBundle]
    funnel: FunnelStage


async def synthesize_all(generator: Generator, specs: list[CapabilitySpec], seed: int) -> EnvironmentBatch:
    bundles, lost = await each([generator.synthesize_environment(s, seed) for s in specs], [""] * len(specs))
    return EnvironmentBatch(bundles=[b for b in bundles if b is not None],
                            funnel=FunnelStage.counted(stage="environment", received=len(specs), rejected=dict(lost)))


class PositiveBatch(Model):
    tasks: list[PositiveTask]
    funnel: FunnelStage


async def write_positives(generator: Generator, bundle: EnvironmentBundle, variants: int, seed: int) -> PositiveBatch:
    """T+ for every scenario and variant the environment allows; the rest is counted, with its reason."""
    wanted = [(scenario, variant) for scenario in Scenario for variant in range(variants)]
    tasks, lost = await each([generator.write_positive_task(bundle, scenario, variant, seed)
                              for scenario, variant in wanted], [f"{scenario.value}: " for scenario, _ in wanted])
    return PositiveBatch(tasks=[t for t in tasks if t is not None],
                         funnel=FunnelStage.counted(stage="task", received=len(wanted), rejected=dict(lost)))


class PerturbedBatch(Model):
    pairs: list[TaskPair]
    funnel: FunnelStage


async def perturb_all(generator: Generator, bundle: EnvironmentBundle, positives: PositiveBatch,
                      provenance: Provenance, seed: int) -> PerturbedBatch:
    pairs, lost = await each([generator.perturb(p, bundle, provenance, seed) for p in positives.tasks],
                             [f"{p.scenario.value}: " for p in positives.tasks])
    return PerturbedBatch(pairs=[p for p in pairs if p is not None],
                          funnel=FunnelStage.counted(stage="perturbation", received=len(positives.tasks), rejected=dict(lost)))


def stage_of_template(template: str) -> str:
    """The generation stage whose model calls a prompt template makes, where its repairs are counted: a
    template is not a stage (the perturbation stage has one per scenario, perturb_s1 ... perturb_s8), and
    the llm generator's calls, cache entries and repair counts are keyed by template."""
    return {"positive_task": "task"}.get(template, "perturbation" if template.startswith("perturb_") else template)


def with_repairs(funnel: list[FunnelStage], repairs: list[RepairCount]) -> list[FunnelStage]:
    """The funnel with each generation stage's repair loop counted on its line."""
    lines = {f.stage: f for f in funnel}
    for count in repairs:
        stage = stage_of_template(count.stage)
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
    funnel: FunnelStage


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
                        funnel=FunnelStage.counted(stage="dedup", received=len(everything),
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
    lost = [p for p in rejected if any(c.name in SANDBOX_FAILURES for c in p.validation.failures())]
    if not lost:
        return [], []
    gone = [f"{kind} {value}" for kind in ("domain", "scenario")
            for value in sorted({str(getattr(p, kind)) for p in lost} - {str(getattr(p, kind)) for p in kept})]
    warning = f"{len(lost)} pairs were rejected because their sandbox failed on every attempt"
    return gone, [warning + (f"; lost entirely: {', '.join(gone)}" if gone else "")]


def lost_to_infrastructure(stage: FunnelStage) -> dict[str, int]:
    """The stage's rejections whose reason is an infrastructure failure (reason -> count); a generation stage
    prefixes its reasons with the scenario ("S5: provider_error")."""
    return {reason: n for reason, n in stage.rejected.items()
            if reason.rpartition(": ")[2] in INFRASTRUCTURE_REASONS}


# The funnel stages whose items are pairs (before them, seed instructions and environments).
PAIR_STAGES = ("task", "perturbation", *LAYERS)


def scenario_floor(planned: int) -> int:
    """The fewest pairs a scenario may keep before its release is degraded: as many as the release gates need
    to judge it (MIN_PAIRS: below that, leakage and shortcuts are reported but not gated) when the run set out
    to write that many; otherwise one, the coverage the release asks for."""
    return MIN_PAIRS if planned >= MIN_PAIRS else 1


def degradation(funnel: Sequence[FunnelStage], kept: Sequence[TaskPair], planned_per_scenario: int) -> str | None:
    """Why a release that may be published is not the one its run set out to make, in one line: pairs,
    environments or seeds lost to the infrastructure, and each scenario left under its floor (scenario_floor of
    the pairs planned for it). None: nothing was lost that way."""
    lines = {line.stage: line for line in funnel}
    parts = []
    lost = sum(n for stage in PAIR_STAGES if stage in lines for n in lost_to_infrastructure(lines[stage]).values())
    if lost:
        planned = lines["task"].received if "task" in lines else lost
        parts.append(f"{lost} of {planned} pairs lost to infrastructure")
    for stage, items in (("capability", "seed instructions"), ("environment", "environments")):
        if stage in lines and (gone := sum(lost_to_infrastructure(lines[stage]).values())):
            parts.append(f"{gone} of {lines[stage].received} {items} lost to infrastructure")
    counts = Counter(str(pair.scenario) for pair in kept)
    floor = scenario_floor(planned_per_scenario)
    parts += [f"{scenario} {counts[scenario]} pairs (floor {floor})" for scenario in (s.value for s in Scenario)
              if counts[scenario] < floor]
    return f"degraded: {'; '.join(parts)}" if parts else None


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
    problems += [f"{score.scenario} instructions leak the label to a bag-of-words classifier (accuracy "
                 f"{score.accuracy:.0%}, limit {score.limit:.0%})"
                 for score in leakage if score.gated and score.accuracy > score.limit]
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
    funnel: FunnelStage
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
    funnel = FunnelStage.counted(stage="judge", received=sum(len(g) for g in groups),
                        rejected=dict(sum((Counter(b.funnel.rejected) for b in batches), Counter())))
    kept = [p for b in batches for p in b.accepted]
    return Judged(kept=kept, rejected=rejected, funnel=funnel, cost=committee.cost(), models=committee.models(),
                  report=judge_report(committee, [*kept, *rejected], funnel.rejected.get("budget_exhausted", 0)))


def merge_funnel(batches: Sequence[FunnelStage], order: Sequence[str] = FUNNEL_STAGES) -> list[FunnelStage]:
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


# --- the whole run, without Prefect ----------------------------------------------------------------------


class RunPlan(Model):
    """What a run works from, settled before any work: nothing here may still be 'auto' or unset."""

    config: GenerateConfig = Field(description="with its seed drawn and its sandbox backend chosen")
    seeds: list[SeedInstruction] = Field(description="the seed instructions in scope")
    environments: list[EnvironmentBundle] = Field(default_factory=list, description=(
        "the imported environments the run generates in (`generation.environments`), read and checked; with "
        "them there are no seeds"))

    def fingerprint(self) -> str:
        """The config's fingerprint for these seeds and environments."""
        return self.config.fingerprint(self.seeds, [bundle.content_hash for bundle in self.environments])


def imported_environments(config: GenerateConfig) -> list[EnvironmentBundle]:
    """The bundles `generation.environments` names: each must be one `abstaingen env import` wrote."""
    bundles = []
    for folder in config.generation.environments:
        bundle = read_bundle(folder)
        if bundle.origin != "imported":
            raise AbstaingenError(f"generation.environments: {folder} is not an imported environment (origin "
                                  f"{bundle.origin}); bring it in with `abstaingen env import bundle {folder} OUT_DIR`")
        bundles.append(bundle)
    repeated = sorted({b.env_id for b in bundles if sum(o.env_id == b.env_id for o in bundles) > 1})
    if repeated:
        raise AbstaingenError(f"generation.environments: {repeated[0]} is listed more than once")
    return bundles


def plan_run(config: GenerateConfig, seeds_file: Path | None) -> RunPlan:
    """Pre-flight checks: everything a run can be refused for before it spends anything. Raises
    AbstaingenError, with one line, for input the user has to fix."""
    config = config.with_seed()  # before the generators open: the seed is part of every model call's cache key
    environments = imported_environments(config)
    path = seeds_file or config.generation.seeds_file
    seeds = load_seeds(path, config.backend_for("capability") == "builtin") if path is not None else []
    in_scope = [] if environments else seeds_in_scope(config, seeds)
    if not in_scope and not environments:
        raise AbstaingenError("no seed instruction belongs to the configured domains "
                              f"({', '.join(config.generation.domains)})")
    # `auto` becomes a backend here, once: a missing Docker image is one line, not a traceback from
    # inside every validation task
    backend = select_backend(config.sandbox.backend)
    if untrusted(environments) and not backend.isolated and not config.sandbox.allow_unsandboxed:
        raise AbstaingenError(f"generation.environments: imported code runs only in an isolating sandbox (docker or "
                              f"bwrap), not on {backend.name}")
    config = config.model_copy(update={"sandbox": config.sandbox.model_copy(update={"backend": backend.name})})
    for name in {config.backend_for(stage) for stage in GENERATION_STAGES}:
        make_generator(name, config)  # a backend the config cannot work with is one line here, not a failed task
    require_writable_dir(config.dataset.output_dir / config.dataset.name)
    return RunPlan(config=config, seeds=in_scope, environments=environments)


def sandbox_for(sandbox: SandboxConfig) -> SandboxBackend:
    return get_backend(sandbox.backend, SandboxLimits(call_timeout_s=sandbox.call_timeout_s, memory_mb=sandbox.memory_mb))


class StageRunner:
    """How `run_pairs` runs each stage's work: here, in this process, on this event loop. The generate flow
    runs each as a Prefect task instead (one per environment, named for the UI), with progress artifacts and
    checkpoints; benchmarks and tests use this one. `after` is the work the stage follows, for a runner that
    records the run's graph."""

    async def extract(self, seeds: list[SeedInstruction], backend: str) -> CapabilityBatch:
        return await extract_all(get_generator(backend), seeds)

    async def synthesize(self, spec: CapabilitySpec, seed: int, backend: str, after: object) -> EnvironmentBatch:
        return await synthesize_all(get_generator(backend), [spec], seed)

    async def write_tasks(self, bundle: EnvironmentBundle, variants: int, seed: int, backend: str,
                          after: object) -> PositiveBatch:
        return await write_positives(get_generator(backend), bundle, variants, seed)

    async def perturb(self, bundle: EnvironmentBundle, positives: PositiveBatch, provenance: Provenance, seed: int,
                      backend: str) -> PerturbedBatch:
        return await perturb_all(get_generator(backend), bundle, positives, provenance, seed)

    def dedup(self, bundles: list[EnvironmentBundle], candidates: list[list[TaskPair]], earlier: EarlierReleases,
              references: ReferenceIndex | None, after: list[Any]) -> Deduplicated:
        return deduplicate(bundles, candidates, earlier, references)

    async def validate(self, bundles: list[EnvironmentBundle], candidates: list[list[TaskPair]],
                       sandbox: SandboxConfig, after: object) -> list[ValidatedBatch]:
        backend = sandbox_for(sandbox)
        return await validate_concurrently(bundles, candidates, sandbox.concurrency, lambda bundle, pairs:
                                           validate_pairs_async(bundle, pairs, backend, sandbox.allow_unsandboxed))

    async def judge(self, committee: Committee, bundles: list[EnvironmentBundle], groups: list[list[TaskPair]],
                    sandbox: SandboxConfig, after: list[Any]) -> Judged:
        backend = sandbox_for(sandbox)
        return await judge_all(committee, bundles, groups, sandbox.concurrency,
                               lambda bundle, pairs: judge_environment(committee, bundle, pairs, backend))

    def assemble(self, kept: list[TaskPair], bundles: list[EnvironmentBundle], rejected: list[TaskPair],
                 allow_infrastructure_loss: bool, expected_domains: Sequence[str], expected_scenarios: Sequence[str],
                 allow_incomplete: bool, after: list[Any]) -> Assembly:
        return assemble(kept, bundles, rejected, allow_infrastructure_loss, expected_domains, expected_scenarios,
                        allow_incomplete)

    async def track(self, stage: str, work: list[Awaitable[T]], notes: list[str]) -> list[T]:
        """A stage's items at once, in order (the flow's runner also tells their progress)."""
        return list(await asyncio.gather(*work))

    def log(self, message: str) -> None:
        _logger.info("%s", message)


_logger = logging.getLogger("abstaingen.pipelines")


class PairsRun(Model):
    """What a run made before anything is published: the release gates' verdict and all the manifest records."""

    plan: RunPlan
    provenance: Provenance = Field(description="the backends per stage, the seed and the code version")
    specs: list[CapabilitySpec]
    bundles: list[EnvironmentBundle]
    assembly: Assembly = Field(description="the kept pairs and what the release gates said about them")
    rejected: list[TaskPair] = Field(description="every pair a validation layer or the committee rejected")
    funnel: list[FunnelStage]
    warnings: list[str] = Field(description="the assembly's warnings and a budget that ran out")
    cost: list[CostLine]
    reports: list[GenerationReport] = Field(description="each generation backend's models, prompts and repairs")
    judged: Judged | None = Field(default=None, description="the committee's verdicts, when the config has one")
    earlier: EarlierReleases = Field(description="the dataset's earlier releases, which the run must not repeat")
    references: list[str] = Field(default_factory=list, description="the reference sources it was decontaminated "
                                                                    "against")

    @property
    def refusal(self) -> str | None:
        """Why nothing may be published; None when the release may go out."""
        if self.assembly.pairs and not self.assembly.refusal:
            return None
        return self.assembly.refusal or "no pair survived validation"

    @property
    def degraded(self) -> str | None:
        """Why the release, though it may go out, is degraded (`degradation`); None when it is whole. Every
        environment made was asked for `variants_per_scenario` pairs of each scenario."""
        planned = len(self.bundles) * self.plan.config.generation.variants_per_scenario
        return degradation(self.funnel, self.assembly.pairs, planned)


def budget_warning(funnel: list[FunnelStage], config: GenerateConfig) -> list[str]:
    lost = sum(n for line in funnel for reason, n in line.rejected.items() if reason.endswith("budget_exhausted"))
    if not lost:
        return []
    return [f"the budget of ${config.llm.budget_usd:g} ran out: {lost} items were not written or judged; every pair "
            "finished before that is in this release"]


async def run_pairs(plan: RunPlan, code_version: str, runner: StageRunner | None = None,
                    earlier: EarlierReleases | None = None, references: ReferenceIndex | None = None) -> PairsRun:
    """The whole pairs product, from the plan to the release gates: generation, dedup, validation in the
    sandbox, the judge committee (when configured) and assembly. Writes nothing; `release_of` makes what
    is published. `earlier` and `references` are read by the caller (under the dataset's lock)."""
    runner = runner or StageRunner()
    earlier = earlier or EarlierReleases()
    config, seeds = plan.config, plan.seeds
    seed = config.dataset.seed
    assert seed is not None
    imported = ("capability", "environment") if plan.environments else ()  # the stages an imported run does not run
    provenance = Provenance(backend={stage: "imported" if stage in imported else config.backend_for(stage)
                                     for stage in GENERATION_STAGES}, seed=seed, code_version=code_version)
    backend = provenance.backend
    async with generators_for_run(config, tuple(s for s in GENERATION_STAGES if s not in imported)) as generators:
        report("capability", 0, len(seeds))
        capability = await runner.extract(seeds, backend["capability"]) if not plan.environments else CapabilityBatch(
            specs=[], funnel=FunnelStage.counted(stage="capability", received=0, rejected={}))
        specs = capability.specs if config.generation.environment_per_seed else one_per_domain(capability.specs)
        report("capability", len(seeds), len(seeds), note=f"{len(specs)} capability specs")
        if plan.environments:  # imported: no capability or environment stage
            runner.log(f"{len(plan.environments)} imported environments: "
                       f"{', '.join(b.env_id for b in plan.environments)}")
            environments = [EnvironmentBatch(bundles=plan.environments, funnel=FunnelStage.counted(
                stage="environment", received=len(plan.environments), rejected={}))]
        else:
            runner.log(f"{len(seeds)} seed instructions -> {len(specs)} capability specs")
            environments = await runner.track("environment", [
                runner.synthesize(spec, seed, backend["environment"], after=capability) for spec in specs],
                [spec.domain for spec in specs])
        made = [(bundle, batch) for batch in environments for bundle in batch.bundles]
        bundles = [bundle for bundle, _ in made]
        variants = config.generation.variants_per_scenario
        positives = await runner.track("task", [
            runner.write_tasks(bundle, variants, seed, backend["task"], after=batch) for bundle, batch in made],
            [b.domain for b in bundles])
        perturbed = await runner.track("perturbation", [  # a pair in an imported environment names its source
            runner.perturb(bundle, batch, provenance.model_copy(update={"environment": bundle.source}), seed,
                           backend["perturbation"])
            for bundle, batch in zip(bundles, positives)], [b.domain for b in bundles])
        candidates = [batch.pairs for batch in perturbed]
        report("dedup", 0, sum(len(c) for c in candidates))
        unique = runner.dedup(bundles, candidates, earlier, references, after=perturbed)
        kept = unique.funnel.received - sum(unique.funnel.rejected.values())
        report("dedup", unique.funnel.received, unique.funnel.received, kept)
        if earlier.versions:
            runner.log(f"checked against {len(earlier.versions)} earlier releases ({', '.join(earlier.versions)}): "
                       f"{unique.funnel.rejected or 'nothing repeated'}")
        batches = await runner.validate(bundles, unique.by_environment, config.sandbox, after=unique)
        reports = [g.report() for g in generators.values()]
    cost = [line for report_ in reports for line in report_.cost]
    accepted = [p for batch in batches for p in batch.accepted]
    rejected = [p for batch in batches for p in batch.rejected]
    judged = None
    async with committee_for_run(config, sum(line.cost_usd for line in cost)) as committee:
        if committee is not None:
            runner.log(f"{len(accepted)} validated pairs go before the judge committee: "
                       f"{', '.join(committee.models().values())} ({committee.rule})")
            judged = await runner.judge(committee, bundles, [b.accepted for b in batches], config.sandbox,
                                        after=batches)
            accepted, rejected, cost = judged.kept, [*rejected, *judged.rejected], [*cost, *judged.cost]
    funnel = with_repairs(merge_funnel([capability.funnel, *(e.funnel for e in environments),
                                        *(p.funnel for p in positives), *(p.funnel for p in perturbed), unique.funnel,
                                        *(s for batch in batches for s in batch.stages),
                                        *([judged.funnel] if judged else [])]),
                          [r for report_ in reports for r in report_.repairs])
    spent = budget_warning(funnel, config)
    # a run whose budget ran out publishes what it finished (the budget is the user's explicit choice)
    assembly = runner.assemble(accepted, bundles, rejected, config.sandbox.allow_infrastructure_loss,
                               sorted({bundle.domain for bundle in plan.environments} or {spec.domain for spec in specs}),
                               [s.value for s in Scenario],
                               config.dataset.allow_incomplete or bool(spent),
                               after=[*batches, *([judged] if judged else [])])
    runner.log(f"{sum(len(c) for c in candidates)} candidate pairs, {kept} after dedup, {len(assembly.pairs)} validated")
    return PairsRun(plan=plan, provenance=provenance, specs=specs, bundles=bundles, assembly=assembly,
                    rejected=rejected, funnel=funnel, warnings=[*assembly.warnings, *spent], cost=cost, reports=reports,
                    judged=judged, earlier=earlier, references=references.describe() if references else [])


def release_of(run: PairsRun, canary: str, created_at: str) -> tuple[Release, list[TaskPair]]:
    """The manifest (before the store numbers its version and lists its files) and the pairs as published."""
    config = run.plan.config
    fingerprint = run.plan.fingerprint()
    pairs = stamped(run.assembly.pairs, canary, created_at, fingerprint)
    judged, cost = run.judged, run.cost
    spent = sum(line.cost_usd for line in cost)
    manifest = Release(
        name=config.dataset.name, version="", created_by=f"abstaingen {run.provenance.code_version}",
        seed=run.provenance.seed, checked_against=run.earlier.versions, canary=canary,
        backends={**run.provenance.backend, "judge": "llm" if judged else "none"},
        decontaminated_against=run.references, created_at=created_at, config_fingerprint=fingerprint,
        sandbox="+".join(sorted({p.validation.sandbox or "none" for p in pairs})),
        sandbox_image=next((p.validation.sandbox_image for p in pairs if p.validation.sandbox_image), None),
        counts={}, total_pairs=0, funnel=run.funnel, baselines=run.assembly.baselines,
        agentabstain_view=run.assembly.agentabstain_view, leakage=run.assembly.leakage,
        shortcuts=run.assembly.shortcuts, warnings=run.warnings, cost=cost, cost_usd=round(spent, 6),
        cost_per_pair_usd=round(spent / len(pairs), 6),
        models={**{k: v for r in run.reports for k, v in r.models.items()}, **(judged.models if judged else {})},
        prompts={**{k: v for r in run.reports for k, v in r.prompts.items()}, **(judge_prompts() if judged else {})},
        judge=judged.report if judged else JudgeReport(judged=False),
        imported_environments={b.env_id: b.source for b in run.bundles if b.source is not None},
    )
    return manifest, pairs
