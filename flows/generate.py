"""The generation flow: seed instructions in, a validated, published release out.

pre-flight -> capability extraction -> environment synthesis -> positive tasks + DAGs -> perturbation
-> dedup -> validation (structural and preconditions; replay, policy, witness and baseline gates in the
sandbox) -> release gates (baselines, leakage, shortcuts, coverage) -> release

A thin shell over abstaingen.pipelines.pairs: each stage there runs here as a Prefect task over one
environment (or the whole seed list), never a single tool call, so each is worth far more than
Prefect's per-task overhead, and each shows in the UI, named after its domain.

The flow runs the same however it is started (the CLI, a schedule, the UI): its parameters have
defaults, and everything the CLI used to settle before starting it (the seed, the sandbox, the
seeds) is settled inside, by `plan_run`. Its final state is honest: Completed with a release,
Failed when the gates refused the data or the input was bad (the GenerationResult says which).

No `from __future__ import annotations` here: Prefect builds the parameter schema from these
annotations, also in the process a served deployment starts for each run.
"""

import asyncio
import contextlib
import os
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypeVar

import anyio
import httpx
from prefect import flow, get_client, get_run_logger, tags, task
from prefect.cache_policies import NONE
from prefect.context import get_run_context
from prefect.states import Failed, State
from pydantic import Field

import abstaingen
from abstaingen.checkpoints import Checkpoints, DatasetLock
from abstaingen.config import GenerateConfig, SandboxConfig, SeedInstruction
from abstaingen.errors import AbstaingenError, HostError
from abstaingen.flows.artifacts import (
    StageProgress,
    publish_funnel,
    publish_refusal,
    publish_release_artifacts,
    rejection_samples,
)
from abstaingen.flows.scale import build_task_runner, on_dask, submit_each
from abstaingen.generators import get_generator
from abstaingen.interrupts import hold_signals, note_published, publishing, stop_on_signals, stop_run, take_signals
from abstaingen.model import CapabilitySpec, EnvironmentBundle, FunnelStage, Provenance, Release, TaskPair
from abstaingen.model.common import Model
from abstaingen.model.release import RejectionSample
from abstaingen.pipelines.pairs import (
    GENERATION_STAGES,
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
    perturb_all,
    plan_run,
    release_of,
    run_pairs,
    synthesize_all,
    write_positives,
)
from abstaingen.progress import report
from abstaingen.providers.calls import ProviderUnavailable
from abstaingen.sandboxes.backends import (
    DockerBackend,
    SandboxLimits,
    child_processes,
    get_backend,
    mark_run_owner,
    orphans_of_dead_runs,
    stop_local_sandboxes,
)
from abstaingen.sandboxes.docker_transport import LEFTOVERS
from abstaingen.store import (
    dataset_canary,
    publish_release,
    release_folder,
    remove_scratch,
    scratch_owners,
)
from abstaingen.validators.decontaminate import ReferenceIndex, load_references
from abstaingen.validators.dedup import EarlierReleases, earlier_releases
from abstaingen.validators.judge import Committee, JudgedBatch, judge_environment, open_committee
from abstaingen.validators.validate import LAYERS, ValidatedBatch, validate_pairs_async

EXIT_FAILED, EXIT_USER_ERROR = 1, 2
T = TypeVar("T")


class GenerationResult(Model):
    """How a generation run ended: the flow run's return value (with a Failed state unless published)."""

    outcome: Literal["published", "refused", "bad_input"] = Field(
        description="published: a new version is out; refused: the data failed a release gate; bad_input: the "
                    "config, seeds or output folder cannot be used")
    release: Release | None = Field(default=None, description="the published manifest")
    folder: Path | None = Field(default=None, description="where the release was published")
    funnel: list[FunnelStage] = Field(default_factory=list, description="items in, out and why, per stage")
    refusal: str | None = Field(default=None, description="why nothing was published")
    rejection_samples: list[RejectionSample] = Field(default_factory=list,
                                                     description="a few rejected pairs per reason")
    warnings: list[str] = Field(default_factory=list)
    seed: int | None = Field(default=None, description="the seed the run drew from (rerun with it to resume)")
    flow_run_id: str | None = Field(default=None, description="the Prefect flow run")
    ui_url: str | None = Field(default=None, description="the flow run's page, when a Prefect server (not the "
                                                         "temporary one) recorded it")
    elapsed_s: float = Field(default=0.0, description="wall-clock seconds from the start of the flow run")


def sweep_sandboxes(backend: str) -> None:
    """Containers of this run that are still there (their removal failed, or the run was cut short)."""
    if backend == "docker":
        with contextlib.suppress(Exception):  # the engine itself may be what failed
            DockerBackend().sweep()


def clean_up_after_dead_runs() -> None:
    """What runs killed with SIGKILL left behind, which had no chance to clean up: Prefect's temporary
    server (it keeps serving), sandbox containers, and scratch folders. Each is known by the process
    that made it, and only that process's death makes it this run's to remove."""
    for pid in orphans_of_dead_runs():
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    for pid in scratch_owners():
        if not Path(f"/proc/{pid}").exists():
            remove_scratch(pid)
    sweep_sandboxes("docker")


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


@contextlib.contextmanager
def provider_given_up() -> Iterator[None]:
    """A provider that keeps failing ends the run with one line (inside the task, before Prefect logs
    a traceback); the response cache keeps every answer already had, so a rerun picks up from there."""
    try:
        yield
    except ProviderUnavailable as exc:
        stop_run(f"error: {exc}; the run stopped (answers so far are in the response cache)", EXIT_FAILED)


# Generation stages take the backend's name (the config's choice for the stage), not a generator object:
# Prefect records task parameters, and a name is what the UI should show. The run's generators are
# opened once by the flow (generators_for_run) and looked up by that name. Task runs are named after
# the domain they work on, so the UI reads "validate travel", not "validate-63a".


@task(name="extract capabilities", task_run_name="extract capabilities", cache_policy=NONE)
async def extract_capabilities_stage(seeds: list[SeedInstruction], backend: str) -> CapabilityBatch:
    with provider_given_up():
        return await extract_all(get_generator(backend), seeds)


@task(name="synthesize environment", task_run_name="synthesize {spec.domain}", cache_policy=NONE)
async def synthesize_environment_stage(spec: CapabilitySpec, seed: int, backend: str) -> EnvironmentBatch:
    with provider_given_up():
        return await synthesize_all(get_generator(backend), [spec], seed)


@task(name="write positive tasks", task_run_name="write tasks {bundle.domain}", cache_policy=NONE)
async def positive_tasks_stage(bundle: EnvironmentBundle, variants: int, seed: int, backend: str) -> PositiveBatch:
    with provider_given_up():
        return await write_positives(get_generator(backend), bundle, variants, seed)


@task(name="perturb", task_run_name="perturb {bundle.domain}", cache_policy=NONE)
async def perturb_stage(bundle: EnvironmentBundle, positives: PositiveBatch, provenance: Provenance, seed: int,
                        backend: str) -> PerturbedBatch:
    with provider_given_up():
        return await perturb_all(get_generator(backend), bundle, positives, provenance, seed)


dedup_stage = task(name="remove near-duplicates", task_run_name="remove near-duplicates", cache_policy=NONE)(deduplicate)
assemble_stage = task(name="assemble release", task_run_name="assemble release", cache_policy=NONE)(assemble)

# Environments validated (or judged) at once in this process: each holds a sandbox. Every
# environment's task run starts at once, so the UI lists the queued ones too, and waits here for a slot.
_sandbox_slots: list[anyio.CapacityLimiter] = []


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
    saved, item = Checkpoints(checkpoints, code_version()), validation_item(bundle, pairs, sandbox)
    batch = saved.load("validate", item, ValidatedBatch)
    if batch is not None:
        logger.info("%s: %d of %d pairs accepted (validated by an earlier, interrupted run of this plan)",
                    bundle.env_id, len(batch.accepted), len(pairs))
        return batch
    async with sandbox_slot(bundle.env_id):
        logger.info("%s: validating %d candidate pairs in the %s sandbox", bundle.env_id, len(pairs), sandbox.backend)
        backend = get_backend(sandbox.backend, SandboxLimits(call_timeout_s=sandbox.call_timeout_s,
                                                             memory_mb=sandbox.memory_mb))
        batch = await validate_pairs_async(bundle, pairs, backend, sandbox.allow_unsandboxed)
    rejected = {reason: n for stage in batch.stages for reason, n in stage.rejected.items()}
    logger.info("%s: %d of %d pairs accepted; rejected: %s", bundle.env_id, len(batch.accepted), len(pairs),
                ", ".join(f"{k} {v}" for k, v in rejected.items()) or "none")
    saved.save("validate", item, batch)
    return batch


async def validate_all(bundles: list[EnvironmentBundle], candidates: list[list[TaskPair]], sandbox: SandboxConfig,
                       checkpoints: Path, after: object) -> list[ValidatedBatch]:
    """Each environment's validation is a Prefect task of its own: on the flow's loop, `sandbox.concurrency`
    at once, or one on each Dask worker when the flow's task runner is Dask's ([orchestration])."""
    bar = await StageProgress("validate", len(bundles)).start()
    if on_dask():
        async def done(index: int, batch: ValidatedBatch) -> None:
            await bar.advance(len(batch.accepted), bundles[index].domain)

        # no wait_for: it would ship the whole dedup result to every worker
        return await submit_each(validate_stage, [(b, c, sandbox, checkpoints) for b, c in zip(bundles, candidates)],
                                 on_done=done)
    _sandbox_slots.append(anyio.CapacityLimiter(sandbox.concurrency))

    async def validate(bundle: EnvironmentBundle, pairs: list[TaskPair]) -> ValidatedBatch:
        batch = await validate_stage(bundle, pairs, sandbox, checkpoints, wait_for=[after])
        await bar.advance(len(batch.accepted), bundle.domain)
        return batch

    try:
        return list(await asyncio.gather(*(validate(b, c) for b, c in zip(bundles, candidates))))
    finally:
        _sandbox_slots.pop()


@task(name="judge", task_run_name="judge {bundle.domain}", cache_policy=NONE)
async def judge_stage(bundle: EnvironmentBundle, pairs: list[TaskPair], sandbox: SandboxConfig) -> JudgedBatch:
    backend = get_backend(sandbox.backend, SandboxLimits(call_timeout_s=sandbox.call_timeout_s,
                                                         memory_mb=sandbox.memory_mb))
    with provider_given_up():
        return await judge_environment(open_committee(), bundle, pairs, backend)


async def tracked(stage: str, work: list[Awaitable[T]], notes: list[str]) -> list[T]:
    """Run a stage's items at once, telling its progress as each finishes."""
    bar = await StageProgress(stage, len(work)).start()

    async def one(item: Awaitable[T], note: str) -> T:
        result = await item
        await bar.advance(note=note)
        return result

    return list(await asyncio.gather(*(one(w, n) for w, n in zip(work, notes))))


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


async def label_run(config: GenerateConfig) -> None:
    """Name and tag the flow run by what it makes, now that its seed and sandbox are known."""
    flow_run = get_run_context().flow_run  # type: ignore[union-attr]
    if flow_run is None:
        return
    backends = "+".join(sorted({config.backend_for(stage) for stage in GENERATION_STAGES}))
    labels = [f"dataset:{config.dataset.name}", f"backend:{backends}", f"sandbox:{config.sandbox.backend}"]
    async with get_client() as client:
        await client.update_flow_run(flow_run.id, name=f"{config.dataset.name} seed {config.dataset.seed}",
                                     tags=sorted({*flow_run.tags, *labels}))


async def take_dataset_lock(lock: DatasetLock) -> None:
    if lock.try_acquire():
        return
    get_run_logger().info("another run of this dataset (process %s) holds %s; waiting for it to finish",
                          lock.holder(), lock.path)
    while not lock.try_acquire():
        await asyncio.sleep(2)


DEFAULT_CONFIG = GenerateConfig()


@flow(name="generate-release", log_prints=True)
async def generate_release(config: GenerateConfig = DEFAULT_CONFIG,
                           seeds_file: Path | None = None) -> GenerationResult | State[Any]:
    """Make and publish a new version of the dataset `config.dataset.name`.

    `seeds_file` (JSONL) holds the seed instructions, by reference since Prefect stores a flow's
    parameters with the run and caps their size; unset: the config's seeds_file, else the builtin
    default seeds. Returns the GenerationResult, in a Failed state unless a release was published."""
    take_signals()  # Prefect put its own SIGTERM handler in place for the flow
    started = time.monotonic()
    try:
        plan = plan_run(config, seeds_file)
    except AbstaingenError as exc:
        get_run_logger().error("bad input: %s", exc)
        return Failed(message=f"bad input: {exc}", data=GenerationResult(outcome="bad_input", refusal=str(exc)))
    config = plan.config
    await label_run(config)
    if config.orchestration.kind == "dask" and not on_dask():
        get_run_logger().warning("[orchestration] kind = \"dask\" takes effect in runs started by `abstaingen generate`; "
                                 "this run validates on its own event loop")
    probe = await api_probe()
    watcher = asyncio.create_task(watch_api(probe))
    lock = DatasetLock(config.dataset.output_dir / config.dataset.name)
    try:
        await take_dataset_lock(lock)
        with tags(f"dataset:{config.dataset.name}"):
            result = await _generate_release(plan, probe)
    except HostError as exc:
        stop_run(f"error: {exc}", EXIT_FAILED)
    except AbstaingenError as exc:
        get_run_logger().error("bad input: %s", exc)
        result = GenerationResult(outcome="bad_input", refusal=str(exc))
    finally:
        lock.release()
        watcher.cancel()
    result = result.model_copy(update={"elapsed_s": round(time.monotonic() - started, 1)})
    if result.outcome == "published":
        return result
    prefix = "release refused" if result.outcome == "refused" else "bad input"
    return Failed(message=f"{prefix}: {result.refusal}", data=result)


class FlowStages(StageRunner):
    """run_pairs' stages as this flow's Prefect tasks: one per environment, named for the UI, with their
    progress artifacts, the run's graph (`wait_for`), and the validation checkpoints of an interrupted run."""

    def __init__(self, checkpoints: Path):
        self.checkpoints = checkpoints

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
        batches = await validate_all(bundles, candidates, sandbox, self.checkpoints, after)
        if LEFTOVERS:
            get_run_logger().warning("%d containers could not be removed at once; removed in the background "
                                     "(first: %s)", len(LEFTOVERS), LEFTOVERS[0])
        return batches

    async def judge(self, committee: Committee, bundles: list[EnvironmentBundle], groups: list[list[TaskPair]],
                    sandbox: SandboxConfig, after: list[Any]) -> Judged:
        bar = await StageProgress("judge", sum(1 for group in groups if group)).start()

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
        return await tracked(stage, work, notes)

    def log(self, message: str) -> None:
        get_run_logger().info("%s", message)


async def _generate_release(plan: RunPlan, probe: ApiProbe) -> GenerationResult:
    logger = get_run_logger()
    config, seeds = plan.config, plan.seeds
    seed = config.dataset.seed
    dataset_dir = config.dataset.output_dir / config.dataset.name
    # read under the dataset's lock: what the run must not repeat, and what it is checked against
    earlier = earlier_releases(dataset_dir)
    references = load_references(config.decontamination)
    checkpoints = Checkpoints.for_run(dataset_dir, config.fingerprint(seeds), code_version())
    if resumed := checkpoints.saved("validate"):
        logger.info("resuming an interrupted run of this plan: %d environments were already validated", resumed)
    run = await run_pairs(plan, code_version(), FlowStages(checkpoints.folder), earlier, references)
    for metrics in run.assembly.baselines:
        logger.info("baseline %-14s act %5.1f%%  abstain %5.1f%%  paired %5.1f%%", metrics.agent,
                    100 * metrics.act, 100 * metrics.abstain, 100 * metrics.paired)
    for warning in run.warnings:
        logger.warning("%s", warning)
    if run.refusal:
        # info, not error: the run's Failed state carries the reason, and the CLI's summary shows it
        logger.info("release refused, nothing was published: %s", run.refusal)
        samples = rejection_samples(run.rejected, LAYERS)
        await publish_refusal(config.dataset.name, run.refusal, run.funnel, samples)
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
    await publish_funnel(release.funnel, f"{release.name} {release.version}", rejection_samples(run.rejected, LAYERS))
    await publish_release_artifacts(release, folder)
    logger.info("published %s %s: %d pairs in %s", release.name, release.version, release.total_pairs, folder)
    return GenerationResult(outcome="published", release=release, folder=folder, funnel=release.funnel,
                            warnings=run.warnings, seed=seed)


def ui_link(flow_run_id: str) -> str | None:
    """The run's page in the Prefect UI, when the run was recorded by a server that outlives it."""
    api = os.environ.get("PREFECT_API_URL")
    if not api:
        return None
    return f"{api.rstrip('/').removesuffix('/api')}/runs/flow-run/{flow_run_id}"


def run_generate_flow(config: GenerateConfig, seeds_path: Path | None = None) -> GenerationResult:
    """Entry point for the CLI and tests. Runs the pre-flight checks here first, so that bad input is
    one line before Prefect starts, then the flow (which checks again: a scheduled run has no CLI).
    Raises AbstaingenError for bad input; returns the result, published or refused."""
    seeds_path = seeds_path.resolve() if seeds_path is not None else None
    chosen = plan_run(config, seeds_path).config.sandbox.backend
    mark_run_owner()
    clean_up_after_dead_runs()
    try:
        with stop_on_signals(abandon_run):
            run = generate_release.with_options(task_runner=build_task_runner(config.orchestration))
            state: State[Any] = asyncio.run(run(config, seeds_path, return_state=True))  # type: ignore[arg-type]
    finally:
        sweep_sandboxes(chosen)
    result = state.result(raise_on_failure=False)
    if isinstance(result, BaseException):
        raise result
    assert isinstance(result, GenerationResult)
    if result.outcome == "bad_input":
        raise AbstaingenError(result.refusal or "bad input")
    run_id = str(state.state_details.flow_run_id) if state.state_details.flow_run_id else None
    return result.model_copy(update={"flow_run_id": run_id, "ui_url": ui_link(run_id) if run_id else None})
