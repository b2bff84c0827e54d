"""The run shell both flows share: what happens around a product's composition, the same for every run.

Inside the flow (`in_shell`): pre-flight (bad input is a Failed run with its one line), the run named and
tagged for the UI, the Prefect API watched (a run without its record must not publish), the dataset's
lock, and the final state (Completed only with a release; a degraded release's run is Completed with a
message that says what was lost, and tagged `degraded`). The run carries its readable name from its
start (`run_name_of`, the flows' flow_run_name). Around the flow (`start_flow`, for the CLI
and tests): pre-flight before Prefect starts, what dead runs left behind cleaned up, signals that stop
the run and everything it started, and its result or its one-line error.

No `from __future__ import annotations`: Prefect reads the annotations of what it runs.
"""

import asyncio
import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

import httpx
from prefect import get_client, get_run_logger, tags
from prefect.context import get_run_context
from prefect.states import Completed, Failed, State
from pydantic import Field, ValidationError

import abstaingen
from abstaingen.checkpoints import DatasetLock
from abstaingen.config import GenerateConfig
from abstaingen.errors import AbstaingenError, HostError
from abstaingen.interrupts import publishing, stop_on_signals, stop_run, take_signals
from abstaingen.model.common import Model
from abstaingen.model.release import FunnelStage
from abstaingen.pipelines.pairs import lost_to_infrastructure
from abstaingen.sandboxes.backends import (
    DockerBackend,
    child_processes,
    mark_run_owner,
    orphans_of_dead_runs,
    stop_local_sandboxes,
)
from abstaingen.store import remove_scratch, scratch_owners

EXIT_FAILED, EXIT_USER_ERROR = 1, 2
API_DEAD = "error: the Prefect API stopped answering during the run"
DEGRADED_TAG = "degraded"  # on a Completed run whose release lost data to the infrastructure or a scenario floor


class RunResult(Model):
    """How a run ended: the flow run's return value (with a Failed state unless published)."""

    outcome: Literal["published", "refused", "bad_input"] = Field(
        description="published: a new version is out; refused: the data failed a release gate; bad_input: the "
                    "config, seeds or output folder cannot be used")
    folder: Path | None = Field(default=None, description="where the release was published")
    funnel: list[FunnelStage] = Field(default_factory=list, description="items in, out and why, per stage")
    refusal: str | None = Field(default=None, description="why nothing was published")
    degraded: str | None = Field(default=None, description="why the published release is degraded, in one line "
                                                           "starting 'degraded: ' (data lost to sandbox or provider "
                                                           "failures, a scenario under its floor); None: it is not")
    seed: int | None = Field(default=None, description="the seed the run drew from (rerun with it to resume)")
    flow_run_id: str | None = Field(default=None, description="the Prefect flow run")
    ui_url: str | None = Field(default=None, description="the flow run's page, when a Prefect server (not the "
                                                         "temporary one) recorded it")
    elapsed_s: float = Field(default=0.0, description="wall-clock seconds from the start of the flow run")


class RunLabels(Model):
    """What a planned run makes, for its name and tags in the UI and its dataset's lock."""

    dataset: str
    seed: int | None
    tags: list[str] = Field(description="besides dataset:<name>, e.g. backend:builtin")
    dataset_dir: Path


R = TypeVar("R", bound=RunResult)
P = TypeVar("P")


async def in_shell(result_type: type[R], plan: Callable[[], P], labels: Callable[[P], RunLabels],
                   work: Callable[[P, "ApiProbe"], Awaitable[R]]) -> R | State[Any]:
    """The flow's body: `plan` (pre-flight; AbstaingenError is bad input), then `work` under the dataset's
    lock while the API is watched. Returns the result, in a Failed state unless a release was published."""
    take_signals()  # Prefect put its own SIGTERM handler in place for the flow
    started = time.monotonic()
    try:
        planned = plan()
    except AbstaingenError as exc:
        get_run_logger().error("bad input: %s", exc)
        return Failed(message=f"bad input: {exc}", data=result_type(outcome="bad_input", refusal=str(exc)))
    about = labels(planned)
    await label_run(about)
    probe = await api_probe()
    watcher = asyncio.create_task(watch_api(probe))
    lock = DatasetLock(about.dataset_dir)
    try:
        await take_dataset_lock(lock)
        with tags(f"dataset:{about.dataset}"):
            result = await work(planned, probe)
    except HostError as exc:
        stop_run(f"error: {exc}", EXIT_FAILED)
    except AbstaingenError as exc:
        get_run_logger().error("bad input: %s", exc)
        result = result_type(outcome="bad_input", refusal=str(exc), seed=about.seed)
    finally:
        lock.release()
        watcher.cancel()
    result = result.model_copy(update={"elapsed_s": round(time.monotonic() - started, 1)})
    if result.outcome == "published" and result.degraded:
        get_run_logger().warning("%s", result.degraded)
        await tag_run(DEGRADED_TAG)
        return Completed(message=result.degraded, data=result)
    if result.outcome == "published":
        return result
    prefix = "release refused" if result.outcome == "refused" else "bad input"
    return Failed(message=f"{prefix}: {result.refusal}", data=result)


def start_flow(result_type: type[R], flow_run: Callable[[], Awaitable[State[Any]]],
               sandbox: str | None = None) -> R:
    """Run a flow from the CLI or a test, its pre-flight already passed: clean up after dead runs, stop
    the run and all it started on a signal, sweep the sandbox's leftovers. Raises AbstaingenError for bad
    input; returns the result, published or refused."""
    mark_run_owner()
    clean_up_after_dead_runs()
    async def run() -> State[Any]:
        return await flow_run()

    try:
        with stop_on_signals(abandon_run):
            state = asyncio.run(run())
    finally:
        sweep_sandboxes(sandbox)
    result = state.result(raise_on_failure=False)
    if isinstance(result, BaseException):
        raise result
    assert isinstance(result, result_type)
    if result.outcome == "bad_input":
        raise AbstaingenError(result.refusal or "bad input")
    run_id = str(state.state_details.flow_run_id) if state.state_details.flow_run_id else None
    return result.model_copy(update={"flow_run_id": run_id, "ui_url": ui_link(run_id) if run_id else None})


def run_name(dataset: str, seed: int | None) -> str:
    """A flow run's name in the UI and in Prefect's log lines: what it makes."""
    return f"{dataset} seed {seed}" if seed is not None else f"{dataset} (seed drawn at its start)"


def run_name_of(dataset: Callable[[GenerateConfig], str]) -> Callable[[], str]:
    """A flow's `flow_run_name`: the run's name from its `config` parameter (the dataset it makes, by `dataset`,
    and its seed) as the run begins, so that Prefect's own "Beginning flow run" line names it. A run whose
    config leaves the seed to be drawn (a schedule's) is renamed once it is (`label_run`)."""
    def name() -> str:
        from prefect.runtime import flow_run

        given = flow_run.parameters.get("config", GenerateConfig())  # a default is not among the parameters
        try:
            config = given if isinstance(given, GenerateConfig) else GenerateConfig.model_validate(given)
        except ValidationError:  # the run fails on it as bad input, under the flow's own name
            return f"{flow_run.flow_name} (bad config)"
        return run_name(dataset(config), config.dataset.seed)

    return name


async def label_run(about: RunLabels) -> None:
    """Name and tag the flow run by what it makes, now that its seed and sandbox are known."""
    flow_run = get_run_context().flow_run  # type: ignore[union-attr]
    if flow_run is None:
        return
    async with get_client() as client:
        await client.update_flow_run(flow_run.id, name=run_name(about.dataset, about.seed),
                                     tags=sorted({*flow_run.tags, f"dataset:{about.dataset}", *about.tags}))


async def tag_run(tag: str) -> None:
    """Add `tag` to the flow run's tags (as the API has them: label_run's among them)."""
    flow_run = get_run_context().flow_run  # type: ignore[union-attr]
    if flow_run is None:
        return
    async with get_client() as client:
        tags = (await client.read_flow_run(flow_run.id)).tags
        await client.update_flow_run(flow_run.id, tags=sorted({*tags, tag}))


def warn_of_losses(subject: str, stages: Sequence[FunnelStage], items: str, cause: str = "") -> None:
    """A warning (never info: a loss to the infrastructure degrades the release) for the items of `stages` that
    sandbox or provider failures lost, by reason, with what the last failure said (`cause`)."""
    for stage in stages:
        if lost := lost_to_infrastructure(stage):
            get_run_logger().warning("%s: %d of %d %s lost to infrastructure at %s (%s)%s", subject,
                                     sum(lost.values()), stage.received, items, stage.stage,
                                     ", ".join(f"{reason} {n}" for reason, n in lost.items()),
                                     f"; {cause}" if cause else "")


async def take_dataset_lock(lock: DatasetLock) -> None:
    if lock.try_acquire():
        return
    get_run_logger().info("another run of this dataset (process %s) holds %s; waiting for it to finish",
                          lock.holder(), lock.path)
    while not lock.try_acquire():
        await asyncio.sleep(2)


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


async def watch_api(probe: ApiProbe, interval_s: float = 2.0, misses_allowed: int = 2) -> None:
    """Stop the run once the Prefect API has stopped answering: Prefect would retry every state
    report for minutes, and a run without its record must not publish."""
    misses = 0
    while True:
        await asyncio.sleep(interval_s)
        misses = 0 if await probe.answers() else misses + 1
        if misses > misses_allowed and not publishing():
            stop_run(API_DEAD, EXIT_FAILED)


def sweep_sandboxes(backend: str | None) -> None:
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


def ui_link(flow_run_id: str) -> str | None:
    """The run's page in the Prefect UI, when the run was recorded by a server that outlives it."""
    api = os.environ.get("PREFECT_API_URL")
    if not api:
        return None
    return f"{api.rstrip('/').removesuffix('/api')}/runs/flow-run/{flow_run_id}"
