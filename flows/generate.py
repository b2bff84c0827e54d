"""The generation flow: seed instructions in, a validated, published release out.

pre-flight -> capability extraction -> environment synthesis -> positive tasks + DAGs -> perturbation
-> dedup -> validation (structural and preconditions; replay, policy, witness and baseline gates in the
sandbox) -> release gates (baselines, leakage, shortcuts, coverage) -> release

A thin shell over abstaingen.pipelines.pairs: each stage there runs here as a Prefect task over one
environment (or the whole seed list), never a single tool call, so each is worth far more than
Prefect's per-task overhead, and each shows in the UI, named after its domain.

The flow runs the same however it is started (the CLI, a schedule, the UI): its parameters have
defaults, and everything the CLI used to settle before starting it (the seed, the sandbox, the
seeds) is settled inside, by `plan_run`. Its final state is honest: Completed with a release (with a
message and the tag `degraded` when the release lost pairs to the infrastructure or left a scenario under
its floor), Failed when the gates refused the data or the input was bad (the GenerationResult says which).
Every loss to the infrastructure is logged as a warning, by the task that saw it.

No `from __future__ import annotations` here: Prefect builds the parameter schema from these
annotations, also in the process a served deployment starts for each run.
"""

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import anyio
from prefect import flow, get_run_logger, task
from prefect.cache_policies import NONE
from prefect.states import State
from pydantic import Field

from abstaingen.checkpoints import Checkpoints
from abstaingen.config import GenerateConfig, SandboxConfig, SeedInstruction
from abstaingen.flows.artifacts import (
    PAIRS_ARTIFACTS,
    ArtifactKeys,
    StageProgress,
    publish_funnel,
    publish_refusal,
    publish_release_artifacts,
    rejection_samples,
    tracked,
)
from abstaingen.flows.scale import build_task_runner, on_dask, submit_each
from abstaingen.flows.shell import (
    API_DEAD,
    EXIT_FAILED,
    ApiProbe,
    RunLabels,
    RunResult,
    code_version,
    in_shell,
    run_name_of,
    start_flow,
    warn_of_losses,
)
from abstaingen.generators import get_generator
from abstaingen.interrupts import hold_signals, note_published, stop_run
from abstaingen.model import CapabilitySpec, EnvironmentBundle, Provenance, Release, TaskPair
from abstaingen.model.release import GENERATION_STAGES, RejectionSample
from abstaingen.pipelines.pairs import (
    Assembly,
    CapabilityBatch,
    Deduplicated,
    EnvironmentBatch,
    Judged,
    PerturbedBatch,
    PositiveBatch,
    RunPlan,
    StageRunner,
    assemble,
    deduplicate,
    extract_all,
    judge_all,
    lost_to_infrastructure,
    perturb_all,
    plan_run,
    release_of,
    run_pairs,
    sandbox_for,
    synthesize_all,
    write_positives,
)
from abstaingen.progress import report
from abstaingen.providers.calls import ProviderUnavailable
from abstaingen.sandboxes.docker_transport import LEFTOVERS
from abstaingen.store import (
    dataset_canary,
    publish_release,
    release_folder,
)
from abstaingen.validators.decontaminate import ReferenceIndex, load_references
from abstaingen.validators.dedup import EarlierReleases, earlier_releases
from abstaingen.validators.judge import Committee, JudgedBatch, judge_environment, open_committee
from abstaingen.validators.validate import LAYERS, ValidatedBatch, validate_pairs_async

T = TypeVar("T")


class GenerationResult(RunResult):
    """How a generation run ended: the flow run's return value (with a Failed state unless published)."""

    release: Release | None = Field(default=None, description="the published manifest")
    rejection_samples: list[RejectionSample] = Field(default_factory=list,
                                                     description="a few rejected pairs per reason")
    warnings: list[str] = Field(default_factory=list)


@contextlib.contextmanager
def provider_given_up() -> Iterator[None]:
    """A provider that keeps failing ends the run with one line (inside the task, before Prefect logs
    a traceback); the response cache keeps every answer already had, so a rerun picks up from there."""
    try:
        yield
    except ProviderUnavailable as exc:
        stop_run(f"error: {exc}; the run stopped (answers so far are in the response cache)", EXIT_FAILED)


# Each stage's task is named as the stage is everywhere (GENERATION_STAGES, the funnel, the progress lines).
# Generation stages take the backend's name (the config's choice for the stage), not a generator object:
# Prefect records task parameters, and a name is what the UI should show. The run's generators are
# opened once by the flow (generators_for_run) and looked up by that name. Task runs are named after
# the domain they work on, so the UI reads "validate travel", not "validate-63a".


@task(name="capability", task_run_name="capability", cache_policy=NONE)
async def extract_capabilities_stage(seeds: list[SeedInstruction], backend: str) -> CapabilityBatch:
    with provider_given_up():
        batch = await extract_all(get_generator(backend), seeds)
    warn_of_losses("capability", [batch.funnel], "seed instructions")
    return batch


@task(name="environment", task_run_name="environment {spec.domain}", cache_policy=NONE)
async def synthesize_environment_stage(spec: CapabilitySpec, seed: int, backend: str) -> EnvironmentBatch:
    with provider_given_up():
        batch = await synthesize_all(get_generator(backend), [spec], seed)
    warn_of_losses(spec.domain, [batch.funnel], "environments")
    return batch


@task(name="task", task_run_name="task {bundle.domain}", cache_policy=NONE)
async def positive_tasks_stage(bundle: EnvironmentBundle, variants: int, seed: int, backend: str) -> PositiveBatch:
    with provider_given_up():
        batch = await write_positives(get_generator(backend), bundle, variants, seed)
    warn_of_losses(bundle.env_id, [batch.funnel], "tasks")
    return batch


@task(name="perturbation", task_run_name="perturbation {bundle.domain}", cache_policy=NONE)
async def perturb_stage(bundle: EnvironmentBundle, positives: PositiveBatch, provenance: Provenance, seed: int,
                        backend: str) -> PerturbedBatch:
    with provider_given_up():
        batch = await perturb_all(get_generator(backend), bundle, positives, provenance, seed)
    warn_of_losses(bundle.env_id, [batch.funnel], "pairs")
    return batch


dedup_stage = task(name="dedup", task_run_name="dedup", cache_policy=NONE)(deduplicate)
assemble_stage = task(name="assemble release", task_run_name="assemble release", cache_policy=NONE)(assemble)

# Environments validated (or judged) at once in this process: each holds a sandbox. Every
# environment's task run starts at once, so the UI lists the queued ones too, and waits here for a slot.
_sandbox_slots: list[anyio.CapacityLimiter] = []
# The validate stage's progress in this process, which its tasks advance pair by pair (on another engine's
# worker there is none: the flow advances it by each environment's pairs once they are done).
_validate_progress: list[StageProgress] = []


@contextlib.asynccontextmanager
async def sandbox_slot(what: str) -> AsyncIterator[None]:
    if not _sandbox_slots:  # a task run on another engine's worker: that engine limits concurrency
        yield
        return
    slots = _sandbox_slots[-1]
    if slots.available_tokens < 1:
        get_run_logger().info("%s: waiting for one of %d sandbox slots", what, int(slots.total_tokens))
    async with slots:
        yield


def validation_item(bundle: EnvironmentBundle, pairs: list[TaskPair], sandbox: SandboxConfig) -> str:
    """An environment's checkpoint name: the same environment, candidates and sandbox, the same name."""
    return f"{bundle.env_id}-{Checkpoints.key(sandbox.backend, *sorted(p.pair_id for p in pairs))}"


@task(name="validate", task_run_name="validate {bundle.domain}", cache_policy=NONE)
async def validate_stage(bundle: EnvironmentBundle, pairs: list[TaskPair], sandbox: SandboxConfig,
                         checkpoints: Path) -> ValidatedBatch:
    """Validate one environment's candidates, or take the result an interrupted run of the same
    plan saved for it."""
    logger = get_run_logger()
    bar = _validate_progress[-1] if _validate_progress else None

    async def validated(done: int, passed: int) -> None:
        if bar is not None:
            await bar.advance(passed, bundle.domain, items=done)

    saved, item = Checkpoints(checkpoints, code_version()), validation_item(bundle, pairs, sandbox)
    batch = saved.load("validate", item, ValidatedBatch)
    if batch is not None:
        logger.info("%s: %d of %d pairs accepted (validated by an earlier, interrupted run of this plan)",
                    bundle.env_id, len(batch.accepted), len(pairs))
        await validated(len(pairs), len(batch.accepted))
    else:
        async with sandbox_slot(bundle.env_id):
            logger.info("%s: validating %d candidate pairs in the %s sandbox", bundle.env_id, len(pairs),
                        sandbox.backend)
            batch = await validate_pairs_async(bundle, pairs, sandbox_for(sandbox), sandbox.allow_unsandboxed,
                                               on_validated=validated)
        saved.save("validate", item, batch)
    lost = {reason for stage in batch.stages for reason in lost_to_infrastructure(stage)}
    rejected = {reason: n for stage in batch.stages for reason, n in stage.rejected.items() if reason not in lost}
    logger.info("%s: %d of %d pairs accepted; rejected on their merits: %s", bundle.env_id, len(batch.accepted),
                len(pairs), ", ".join(f"{k} {v}" for k, v in rejected.items()) or "none")
    last = next((c.detail for p in reversed(batch.rejected) for c in p.validation.failures() if c.name in lost), "")
    warn_of_losses(bundle.env_id, batch.stages, "pairs", last)
    return batch


async def validate_all(keys: ArtifactKeys, bundles: list[EnvironmentBundle], candidates: list[list[TaskPair]],
                       sandbox: SandboxConfig, checkpoints: Path, after: object) -> list[ValidatedBatch]:
    """Each environment's validation is a Prefect task of its own: on the flow's loop, `sandbox.concurrency`
    at once, or one on each Dask worker when the flow's task runner is Dask's ([orchestration]). The stage's
    progress counts candidate pairs, each as its validation ends."""
    bar = await StageProgress(keys, "validate", sum(len(pairs) for pairs in candidates), "candidate pairs").start()
    if on_dask():
        async def done(index: int, batch: ValidatedBatch) -> None:
            await bar.advance(len(batch.accepted), bundles[index].domain, items=len(candidates[index]))

        # no wait_for: it would ship the whole dedup result to every worker
        return await submit_each(validate_stage, [(b, c, sandbox, checkpoints) for b, c in zip(bundles, candidates)],
                                 on_done=done)
    _sandbox_slots.append(anyio.CapacityLimiter(sandbox.concurrency))
    _validate_progress.append(bar)
    try:
        return list(await asyncio.gather(*(validate_stage(b, c, sandbox, checkpoints, wait_for=[after])
                                           for b, c in zip(bundles, candidates))))
    finally:
        _sandbox_slots.pop()
        _validate_progress.pop()


@task(name="judge", task_run_name="judge {bundle.domain}", cache_policy=NONE)
async def judge_stage(bundle: EnvironmentBundle, pairs: list[TaskPair], sandbox: SandboxConfig) -> JudgedBatch:
    with provider_given_up():
        return await judge_environment(open_committee(), bundle, pairs, sandbox_for(sandbox))


DEFAULT_CONFIG = GenerateConfig()


@flow(name="generate-release", flow_run_name=run_name_of(lambda config: config.dataset.name), log_prints=True)
async def generate_release(config: GenerateConfig = DEFAULT_CONFIG,
                           seeds_file: Path | None = None) -> GenerationResult | State[Any]:
    """Make and publish a new version of the dataset `config.dataset.name`.

    `seeds_file` (JSONL) holds the seed instructions, by reference since Prefect stores a flow's
    parameters with the run and caps their size; unset: the config's seeds_file, else the builtin
    default seeds. Returns the GenerationResult, in a Failed state unless a release was published."""
    return await in_shell(GenerationResult, lambda: plan_run(config, seeds_file), labels, _generate_release)


def labels(plan: RunPlan) -> RunLabels:
    config = plan.config
    backends = "+".join(sorted({config.backend_for(stage) for stage in GENERATION_STAGES}))
    return RunLabels(dataset=config.dataset.name, seed=config.dataset.seed, dataset_dir=config.dataset.output_dir /
                     config.dataset.name, tags=[f"backend:{backends}", f"sandbox:{config.sandbox.backend}"])


class FlowStages(StageRunner):
    """run_pairs' stages as this flow's Prefect tasks: one per environment, named for the UI, with their
    progress artifacts, the run's graph (`wait_for`), and the validation checkpoints of an interrupted run."""

    def __init__(self, checkpoints: Path, keys: ArtifactKeys):
        self.checkpoints, self.keys = checkpoints, keys

    async def extract(self, seeds: list[SeedInstruction], backend: str) -> CapabilityBatch:
        return await extract_capabilities_stage(seeds, backend)

    async def synthesize(self, spec: CapabilitySpec, seed: int, backend: str, after: object) -> EnvironmentBatch:
        return await synthesize_environment_stage(spec, seed, backend, wait_for=[after])

    async def write_tasks(self, bundle: EnvironmentBundle, variants: int, seed: int, backend: str,
                          after: object) -> PositiveBatch:
        return await positive_tasks_stage(bundle, variants, seed, backend, wait_for=[after])

    async def perturb(self, bundle: EnvironmentBundle, positives: PositiveBatch, provenance: Provenance, seed: int,
                      backend: str) -> PerturbedBatch:
        return await perturb_stage(bundle, positives, provenance, seed, backend)

    def dedup(self, bundles: list[EnvironmentBundle], candidates: list[list[TaskPair]], earlier: EarlierReleases,
              references: ReferenceIndex | None, after: list[Any]) -> Deduplicated:
        return dedup_stage(bundles, candidates, earlier, references, wait_for=after)

    async def validate(self, bundles: list[EnvironmentBundle], candidates: list[list[TaskPair]],
                       sandbox: SandboxConfig, after: object) -> list[ValidatedBatch]:
        batches = await validate_all(self.keys, bundles, candidates, sandbox, self.checkpoints, after)
        if LEFTOVERS:
            get_run_logger().warning("%d containers could not be removed at once; removed in the background "
                                     "(first: %s)", len(LEFTOVERS), LEFTOVERS[0])
        return batches

    async def judge(self, committee: Committee, bundles: list[EnvironmentBundle], groups: list[list[TaskPair]],
                    sandbox: SandboxConfig, after: list[Any]) -> Judged:
        bar = await StageProgress(self.keys, "judge", sum(1 for group in groups if group), "environments").start()

        async def judge(bundle: EnvironmentBundle, pairs: list[TaskPair]) -> JudgedBatch:
            batch = await judge_stage(bundle, pairs, sandbox, wait_for=after)
            await bar.advance(len(batch.accepted), bundle.domain)
            return batch

        return await judge_all(committee, bundles, groups, sandbox.concurrency, judge)

    def assemble(self, kept: list[TaskPair], bundles: list[EnvironmentBundle], rejected: list[TaskPair],
                 allow_infrastructure_loss: bool, expected_domains: Sequence[str], expected_scenarios: Sequence[str],
                 allow_incomplete: bool, after: list[Any]) -> Assembly:
        return assemble_stage(kept, bundles, rejected, allow_infrastructure_loss, expected_domains, expected_scenarios,
                              allow_incomplete, wait_for=after)

    async def track(self, stage: str, work: list[Awaitable[T]], notes: list[str]) -> list[T]:
        return await tracked(self.keys, stage, work, notes, "environments")

    def log(self, message: str) -> None:
        get_run_logger().info("%s", message)


async def _generate_release(plan: RunPlan, probe: ApiProbe) -> GenerationResult:
    logger = get_run_logger()
    config = plan.config
    if config.orchestration.kind == "dask" and not on_dask():
        logger.warning("[orchestration] kind = \"dask\" takes effect in runs started by `abstaingen generate`; "
                       "this run validates on its own event loop")
    seed = config.dataset.seed
    dataset_dir = config.dataset.output_dir / config.dataset.name
    # read under the dataset's lock: what the run must not repeat, and what it is checked against
    earlier = earlier_releases(dataset_dir)
    references = load_references(config.decontamination)
    checkpoints = Checkpoints.for_run(dataset_dir, plan.fingerprint(), code_version())
    if resumed := checkpoints.saved("validate"):
        logger.info("resuming an interrupted run of this plan: %d environments were already validated", resumed)
    keys = ArtifactKeys(dataset=config.dataset.name, names=PAIRS_ARTIFACTS)
    run = await run_pairs(plan, code_version(), FlowStages(checkpoints.folder, keys), earlier, references)
    for metrics in run.assembly.baselines:
        logger.info("baseline %-14s act %5.1f%%  abstain %5.1f%%  paired %5.1f%%", metrics.agent,
                    100 * metrics.act, 100 * metrics.abstain, 100 * metrics.paired)
    for warning in run.warnings:
        logger.warning("%s", warning)
    if run.refusal:
        # info, not error: the run's Failed state carries the reason, and the CLI's summary shows it
        logger.info("release refused, nothing was published: %s", run.refusal)
        samples = rejection_samples(run.rejected, LAYERS)
        await publish_refusal(keys, run.refusal, run.funnel, samples)
        checkpoints.clear()
        return GenerationResult(outcome="refused", funnel=run.funnel, refusal=run.refusal, rejection_samples=samples,
                                warnings=run.warnings, seed=seed)
    manifest, pairs = release_of(run, dataset_canary(dataset_dir), datetime.now(UTC).isoformat(timespec="seconds"))
    if not await probe.answers():
        stop_run(API_DEAD, EXIT_FAILED)
    report("publish", 0, 1)
    with hold_signals():
        release = publish_release(config.dataset.output_dir, manifest, pairs, run.bundles)
        note_published(f"{release.name} {release.version}")
    checkpoints.clear()
    folder = release_folder(config.dataset.output_dir, release.name, release.version)
    report("publish", 1, 1, release.total_pairs, note=release.version)
    await publish_funnel(keys, release.funnel, f"{release.name} {release.version}",
                         rejection_samples(run.rejected, LAYERS))
    await publish_release_artifacts(keys, release, folder)
    logger.info("published %s %s: %d pairs in %s", release.name, release.version, release.total_pairs, folder)
    return GenerationResult(outcome="published", release=release, folder=folder, funnel=release.funnel,
                            warnings=run.warnings, seed=seed, degraded=run.degraded)


def run_generate_flow(config: GenerateConfig, seeds_path: Path | None = None) -> GenerationResult:
    """Entry point for the CLI and tests. Runs the pre-flight checks here first, so that bad input is
    one line before Prefect starts, then the flow (which checks again: a scheduled run has no CLI).
    Raises AbstaingenError for bad input; returns the result, published or refused. The flow is given the
    planned config (its seed drawn, its sandbox chosen), so that the run is named by its seed from the start."""
    seeds_path = seeds_path.resolve() if seeds_path is not None else None
    planned = plan_run(config, seeds_path).config
    run = generate_release.with_options(task_runner=build_task_runner(config.orchestration))
    return start_flow(GenerationResult, lambda: run(planned, seeds_path, return_state=True),  # type: ignore[arg-type]
                      planned.sandbox.backend)
