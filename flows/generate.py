"""The generation flow: seed instructions in, a validated, published release out.

capability extraction -> environment synthesis -> positive tasks + DAGs -> perturbation -> dedup
-> validation (structural and preconditions; replay, policy, witness and baseline gates in the sandbox)
-> release gates (baselines, leakage, shortcuts) -> release

A thin shell over abstaingen.pipeline: each stage there runs here as a Prefect task over one
environment (or the whole seed list), never a single tool call, so each is worth far more than
Prefect's per-task overhead, and each shows in the UI.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
from prefect import flow, get_client, get_run_logger, task
from prefect.artifacts import acreate_markdown_artifact, acreate_table_artifact
from prefect.cache_policies import NONE

import abstaingen
from abstaingen.config import GenerateConfig, SandboxConfig, SeedInstruction, load_seeds, seeds_in_scope
from abstaingen.errors import AbstaingenError
from abstaingen.generators import Generator, generators_for_run, get_generator, make_generator
from abstaingen.interrupts import hold_signals, note_published, publishing, stop_on_signals, stop_run, take_signals
from abstaingen.model import CapabilitySpec, EnvironmentBundle, FunnelStage, Provenance, Release, TaskPair
from abstaingen.model.common import Model
from abstaingen.model.release import JudgeReport
from abstaingen.pipeline import (
    GENERATION_STAGES,
    CapabilityBatch,
    EnvironmentBatch,
    PerturbedBatch,
    PositiveBatch,
    assemble,
    deduplicate,
    extract_all,
    judge_all,
    merge_funnel,
    perturb_all,
    stamped,
    synthesize_all,
    validate_concurrently,
    with_repairs,
    write_positives,
)
from abstaingen.providers.calls import ProviderUnavailable
from abstaingen.sandboxes.backends import (
    DockerBackend,
    SandboxLimits,
    child_processes,
    get_backend,
    select_backend,
    stop_local_sandboxes,
)
from abstaingen.sandboxes.docker_transport import LEFTOVERS
from abstaingen.store import dataset_canary, earlier_releases, publish_release, remove_scratch, scratch_folder
from abstaingen.validators.decontaminate import load_references
from abstaingen.validators.judge import JudgedBatch, committee_for_run, judge_environment, open_committee
from abstaingen.validators.judge import prompt_hashes as judge_prompts
from abstaingen.validators.shortcuts import LIMIT as SHORTCUT_LIMIT
from abstaingen.validators.validate import ValidatedBatch, validate_pairs_async

EXIT_FAILED, EXIT_USER_ERROR = 1, 2


class GenerationResult(Model):
    release: Release | None  # None when the release was refused
    funnel: list[FunnelStage]
    refusal: str | None = None


def sweep_sandboxes(backend: str) -> None:
    """Containers of this run that are still there (their removal failed, or the run was cut short)."""
    if backend == "docker":
        with contextlib.suppress(Exception):  # the engine itself may be what failed
            DockerBackend().sweep()


def abandon_run() -> None:
    """For a run stopped by a signal or a dead API: stop every sandbox this process started, then
    its other children (Prefect's temporary server), and delete its scratch folders."""
    stop_local_sandboxes()
    sweep_sandboxes("docker")
    for child in child_processes():
        with contextlib.suppress(OSError):
            os.kill(child, signal.SIGTERM)
    remove_scratch()


def code_version() -> str:
    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=Path(__file__).parent,
                             capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        sha = ""
    return f"{abstaingen.__version__}+{sha}" if sha else abstaingen.__version__


# Generation stages take the backend's name (the config's choice for the stage), not a generator object:
# Prefect records task parameters, and a name is what the UI should show. The run's generators are
# opened once by the flow (generators_for_run) and looked up by that name.


@contextlib.contextmanager
def provider_given_up() -> Iterator[None]:
    """A provider that keeps failing ends the run with one line (inside the task, before Prefect logs
    a traceback); the response cache keeps every answer already had, so a rerun picks up from there."""
    try:
        yield
    except ProviderUnavailable as exc:
        stop_run(f"error: {exc}; the run stopped (answers so far are in the response cache)", EXIT_FAILED)


@task(name="extract capabilities", cache_policy=NONE)
async def extract_capabilities_stage(seeds: list[SeedInstruction], backend: str) -> CapabilityBatch:
    with provider_given_up():
        return await extract_all(get_generator(backend), seeds)


@task(name="synthesize environment", cache_policy=NONE)
async def synthesize_environment_stage(spec: CapabilitySpec, seed: int, backend: str) -> EnvironmentBatch:
    with provider_given_up():
        return await synthesize_all(get_generator(backend), [spec], seed)


@task(name="write positive tasks", cache_policy=NONE)
async def positive_tasks_stage(bundle: EnvironmentBundle, variants: int, seed: int, backend: str) -> PositiveBatch:
    with provider_given_up():
        return await write_positives(get_generator(backend), bundle, variants, seed)


@task(name="perturb", cache_policy=NONE)
async def perturb_stage(bundle: EnvironmentBundle, positives: PositiveBatch, provenance: Provenance, seed: int,
                        backend: str) -> PerturbedBatch:
    with provider_given_up():
        return await perturb_all(get_generator(backend), bundle, positives, provenance, seed)


dedup_stage = task(name="remove near-duplicates", cache_policy=NONE)(deduplicate)
assemble_stage = task(name="assemble release", cache_policy=NONE)(assemble)


@task(name="validate", cache_policy=NONE)
async def validate_stage(bundle: EnvironmentBundle, pairs: list[TaskPair], sandbox: SandboxConfig) -> ValidatedBatch:
    backend = get_backend(sandbox.backend, SandboxLimits(call_timeout_s=sandbox.call_timeout_s,
                                                         memory_mb=sandbox.memory_mb))
    return await validate_pairs_async(bundle, pairs, backend, sandbox.allow_unsandboxed)


async def validate_all(bundles: list[EnvironmentBundle], candidates: list[list[TaskPair]], sandbox: SandboxConfig,
                       concurrency: int) -> list[ValidatedBatch]:
    """Each environment's validation is a Prefect task of its own (so the UI shows it), run concurrently."""
    async def validate(bundle: EnvironmentBundle, pairs: list[TaskPair]) -> ValidatedBatch:
        return await validate_stage(bundle, pairs, sandbox)

    return await validate_concurrently(bundles, candidates, concurrency, validate)


@task(name="judge", cache_policy=NONE)
async def judge_stage(bundle: EnvironmentBundle, pairs: list[TaskPair], sandbox: SandboxConfig) -> JudgedBatch:
    backend = get_backend(sandbox.backend, SandboxLimits(call_timeout_s=sandbox.call_timeout_s,
                                                         memory_mb=sandbox.memory_mb))
    with provider_given_up():
        return await judge_environment(open_committee(), bundle, pairs, backend)


def sandbox_used(pairs: list[TaskPair]) -> str:
    """The backend(s) that actually ran the pairs (auto may differ from machine to machine)."""
    return "+".join(sorted({p.validation.sandbox or "none" for p in pairs}))


async def publish_prefect_artifacts(release: Release, folder: Path) -> None:
    await acreate_table_artifact(
        key="stage-funnel",
        table=[{"stage": f.stage, "received": f.received, "passed": f.passed,
                "rejected": ", ".join(f"{k}: {v}" for k, v in f.rejected.items()) or "-", "retried": f.retried}
               for f in release.funnel],
        description=f"Stage funnel of {release.name} {release.version}",
    )
    theirs = {view.agent: view for view in release.agentabstain_view}
    await acreate_table_artifact(
        key="baseline-gates",
        table=[{"agent": m.agent, "act": f"{m.act:.0%}", "abstain": f"{m.abstain:.0%}", "paired": f"{m.paired:.0%}",
                "CAR": "-" if m.car is None else f"{m.car:.0%}", "post-hoc": m.post_hoc_abstentions,
                "implicit": m.implicit_abstentions,
                "AgentAbstain paired (macro)": f"{theirs[m.agent].paired:.0%}" if m.agent in theirs else "-",
                "AgentAbstain CAR (macro)": f"{theirs[m.agent].car:.0%}" if m.agent in theirs else "-"}
               for m in release.baselines],
        description="Scripted baseline agents on the released pairs, by our rules and by AgentAbstain's",
    )
    await acreate_table_artifact(
        key="shortcut-gate",
        table=[{"scenario": s.scenario, "pairs": s.pairs, "best instruction feature": s.instruction_feature,
                "accuracy": f"{s.instruction_accuracy:.2f}", "best record feature": s.record_feature,
                "record accuracy": f"{s.record_accuracy:.2f}", "gated": s.gated, "passed": s.passed}
               for s in release.shortcuts],
        description=f"Best single-feature separation of act from abstain per scenario (limit {SHORTCUT_LIMIT})",
    )
    if release.judge.judged:
        await acreate_table_artifact(
            key="judge-agreement",
            table=[{"rubric item": a.item, "pairs": a.pairs, "raw agreement": "-" if a.raw is None else f"{a.raw:.2f}",
                    "Fleiss kappa": "-" if a.kappa is None else f"{a.kappa:.2f}", "failed": a.failed}
                   for a in release.judge.agreement],
            description=f"Judge committee {', '.join(release.judge.models)} ({release.judge.rule}): agreement per "
                        "rubric item",
        )
    lines = [f"# {release.name} {release.version}", "", f"{release.total_pairs} pairs in `{folder}`", ""]
    for dimension, counts in release.counts.items():
        lines.append(f"- **{dimension}**: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    lines.append(f"- **cost**: ${release.cost_usd:.2f}" + (f" (${release.cost_per_pair_usd:.4f} per pair)"
                                                            if release.cost else " (builtin backend)"))
    judge = release.judge
    lines.append(f"- **judged by**: {', '.join(judge.models)} ({judge.rule}); rejected: {judge.rejected or 'none'}; "
                 f"judge errors: {judge.judge_errors or 'none'}" if judge.judged else "- **judged**: no (no judge role)")
    await acreate_markdown_artifact(key="release-summary", markdown="\n".join(lines))


@flow(name="generate-release", log_prints=True)
async def generate_release(config: GenerateConfig, seeds_file: Path) -> GenerationResult:
    """`seeds_file` (JSONL) holds the seed instructions: by reference, since Prefect stores a flow's
    parameters with the run and caps their size."""
    take_signals()  # Prefect put its own SIGTERM handler in place for the flow
    config = config.with_seed()  # before the generators open: the seed is part of every model call's cache key
    probe = await api_probe()
    watcher = asyncio.create_task(watch_api(probe))
    try:
        return await _generate_release(config, seeds_file, probe)
    finally:
        watcher.cancel()


async def _generate_release(config: GenerateConfig, seeds_file: Path, probe: ApiProbe) -> GenerationResult:
    async with generators_for_run(config, GENERATION_STAGES) as generators:
        return await _generate_with(config, seeds_file, probe, generators)


async def _generate_with(config: GenerateConfig, seeds_file: Path, probe: ApiProbe,
                         generators: dict[str, Generator]) -> GenerationResult:
    logger = get_run_logger()
    seeds = load_seeds(seeds_file)
    seed = config.dataset.seed
    assert seed is not None
    try:  # what the run is checked against is read before any work; a fault there is the user's to fix
        earlier = earlier_releases(config.dataset.output_dir / config.dataset.name)
        references = load_references(config.decontamination)
    except AbstaingenError as exc:
        stop_run(f"error: {exc}", EXIT_USER_ERROR)
    provenance = Provenance(backend={stage: config.backend_for(stage) for stage in GENERATION_STAGES},
                            seed=seed, code_version=code_version())

    backend = provenance.backend
    capability = await extract_capabilities_stage(seeds, backend["capability"])
    logger.info("%d seed instructions -> %d capability specs", len(seeds), len(capability.specs))
    environments = list(await asyncio.gather(*(synthesize_environment_stage(spec, seed, backend["environment"])
                                               for spec in capability.specs)))
    bundles = [b for batch in environments for b in batch.bundles]
    variants = config.generation.variants_per_scenario
    positives = list(await asyncio.gather(*(positive_tasks_stage(bundle, variants, seed, backend["task"])
                                            for bundle in bundles)))
    perturbed = list(await asyncio.gather(*(perturb_stage(bundle, batch, provenance, seed, backend["perturbation"])
                                            for bundle, batch in zip(bundles, positives))))
    candidates = [batch.pairs for batch in perturbed]
    unique = dedup_stage(bundles, candidates, earlier, references)
    if earlier.versions:
        logger.info("checked against %d earlier releases (%s): %s", len(earlier.versions), ", ".join(earlier.versions),
                    unique.funnel.rejected or "nothing repeated")
    batches = await validate_all(bundles, unique.by_environment, config.sandbox, config.sandbox.concurrency)
    if LEFTOVERS:
        logger.warning("%d containers could not be removed at once; removed in the background (first: %s)",
                       len(LEFTOVERS), LEFTOVERS[0])
    reports = [g.report() for g in generators.values()]
    cost = [line for report in reports for line in report.cost]
    accepted = [p for batch in batches for p in batch.accepted]
    rejected = [p for batch in batches for p in batch.rejected]
    judged = None
    async with committee_for_run(config, sum(line.cost_usd for line in cost)) as committee:
        if committee is not None:
            logger.info("%d validated pairs go before the judge committee: %s (%s)", len(accepted),
                        ", ".join(committee.models().values()), committee.rule)
            judged = await judge_all(committee, bundles, [b.accepted for b in batches], config.sandbox.concurrency,
                                     lambda bundle, pairs: judge_stage(bundle, pairs, config.sandbox))
            accepted, rejected, cost = judged.kept, [*rejected, *judged.rejected], [*cost, *judged.cost]
    assembly = assemble_stage(accepted, bundles, rejected, config.sandbox.allow_infrastructure_loss)

    funnel = with_repairs(merge_funnel([capability.funnel, *(e.funnel for e in environments),
                                        *(p.funnel for p in positives), *(p.funnel for p in perturbed), unique.funnel,
                                        *(s for batch in batches for s in batch.stages),
                                        *([judged.funnel] if judged else [])]),
                          [r for report in reports for r in report.repairs])
    warnings = [*assembly.warnings, *budget_warning(funnel, config)]
    logger.info("%d candidate pairs, %d after dedup, %d validated", sum(len(c) for c in candidates),
                unique.funnel.received - sum(unique.funnel.rejected.values()), len(assembly.pairs))
    for metrics in assembly.baselines:
        logger.info("baseline %-14s act %5.1f%%  abstain %5.1f%%  paired %5.1f%%", metrics.agent,
                    100 * metrics.act, 100 * metrics.abstain, 100 * metrics.paired)
    for warning in warnings:
        logger.warning("%s", warning)
    if not assembly.pairs or assembly.refusal:
        refusal = assembly.refusal or "no pair survived validation"
        logger.warning("release refused: %s", refusal)
        return GenerationResult(release=None, funnel=funnel, refusal=refusal)
    created_at, fingerprint = datetime.now(UTC).isoformat(timespec="seconds"), config.fingerprint(seeds)
    canary = dataset_canary(config.dataset.output_dir / config.dataset.name)
    pairs = stamped(assembly.pairs, canary, created_at, fingerprint)

    manifest = Release(
        name=config.dataset.name, version="", created_by=f"abstaingen {code_version()}", seed=seed,
        checked_against=earlier.versions, canary=canary,
        backends={**provenance.backend, "judge": "llm" if judged else "none"},
        decontaminated_against=references.describe() if references else [], created_at=created_at,
        config_fingerprint=fingerprint, sandbox=sandbox_used(pairs),
        sandbox_image=next((p.validation.sandbox_image for p in pairs if p.validation.sandbox_image), None),
        counts={}, total_pairs=0, funnel=funnel, baselines=assembly.baselines,
        agentabstain_view=assembly.agentabstain_view, leakage=assembly.leakage,
        shortcuts=assembly.shortcuts, warnings=warnings, cost=cost,
        cost_usd=round(sum(line.cost_usd for line in cost), 6),
        cost_per_pair_usd=round(sum(line.cost_usd for line in cost) / len(pairs), 6),
        models={**{k: v for report in reports for k, v in report.models.items()}, **(judged.models if judged else {})},
        prompts={**{k: v for report in reports for k, v in report.prompts.items()},
                 **(judge_prompts() if judged else {})},
        judge=judged.report if judged else JudgeReport(judged=False),
    )
    if not await probe.answers():
        stop_run(API_DEAD, EXIT_FAILED)
    with hold_signals():
        release = publish_release(config.dataset.output_dir, manifest, pairs, bundles)
        note_published(f"{release.name} {release.version}")
    folder = config.dataset.output_dir / release.name / release.version
    await publish_prefect_artifacts(release, folder)
    logger.info("published %s %s: %d pairs in %s", release.name, release.version, release.total_pairs, folder)
    return GenerationResult(release=release, funnel=funnel)


def budget_warning(funnel: list[FunnelStage], config: GenerateConfig) -> list[str]:
    lost = sum(n for line in funnel for reason, n in line.rejected.items() if reason.endswith("budget_exhausted"))
    if not lost:
        return []
    return [f"the budget of ${config.llm.budget_usd:g} ran out: {lost} items were not written or judged; every pair "
            "finished before that is in this release"]


class ApiProbe:
    """One quick GET of the Prefect API's health endpoint, without the client's retries (which
    spend more than a minute on a dead server)."""

    def __init__(self, api_url: str):
        self.url = api_url.rstrip("/") + "/health"

    async def answers(self) -> bool:
        try:
            async with httpx.AsyncClient(timeout=3) as http:
                return (await http.get(self.url)).is_success
        except httpx.HTTPError:
            return False


async def api_probe() -> ApiProbe:
    async with get_client() as client:
        return ApiProbe(str(client.api_url))


API_DEAD = "error: the Prefect API stopped answering during the run"


async def watch_api(probe: ApiProbe, interval_s: float = 2.0, misses_allowed: int = 2) -> None:
    """Stop the run once the Prefect API has stopped answering: Prefect would retry every state
    report for minutes, and a run without its record must not publish."""
    misses = 0
    while True:
        await asyncio.sleep(interval_s)
        misses = 0 if await probe.answers() else misses + 1
        if misses > misses_allowed and not publishing():
            stop_run(API_DEAD, EXIT_FAILED)


def run_generate(config: GenerateConfig, seeds: list[SeedInstruction] | None = None) -> Release:
    """Entry point for the CLI and tests: checks what the flow cannot do, then runs it."""
    in_scope = seeds_in_scope(config, seeds or [])
    if not in_scope:
        raise AbstaingenError("no seed instruction belongs to the configured domains "
                              f"({', '.join(config.generation.domains)})")
    # Resolve `auto` (and check an explicit backend is usable) once, here: a missing Docker image is
    # the user's to fix and gets one line, not a traceback from inside every validation task.
    chosen = select_backend(config.sandbox.backend).name
    config = config.model_copy(update={"sandbox": config.sandbox.model_copy(update={"backend": chosen})})
    for name in {config.backend_for(stage) for stage in GENERATION_STAGES}:
        make_generator(name, config)  # a backend the config cannot work with is one line here, not a failed task
    with scratch_folder("seeds") as folder:
        seeds_file = Path(folder) / "seeds.jsonl"
        seeds_file.write_text("".join(s.model_dump_json() + "\n" for s in in_scope), encoding="utf-8")
        try:
            with stop_on_signals(abandon_run):
                result = asyncio.run(generate_release(config, seeds_file))
        finally:
            sweep_sandboxes(chosen)
    if result.release is None:
        rejected = "; ".join(f"{f.stage}: {f.rejected}" for f in result.funnel if f.rejected)
        raise AbstaingenError(f"release refused, nothing was published: {result.refusal} (rejections: {rejected or 'none'})")
    return result.release
