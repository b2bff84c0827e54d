"""Scale-out of the validation stage: where the per-environment validation tasks run.

`local` is the path the flow has always taken: every environment's validation task awaited on the
flow's own event loop, a few at once. `dask` submits one task per environment to a Dask cluster
through prefect-dask's DaskTaskRunner, so each runs in a Dask worker process, on this machine (a
LocalCluster started for the run) or on others (an existing scheduler's address).

What a Dask worker needs, found by running it (tests/test_dask.py):
- the task and its arguments pickle: they are pydantic models and a module-level task;
- the flow's Prefect API. A worker process has no PREFECT_API_URL when the flow runs on Prefect's
  temporary server (its URL lives only in the flow's process), so each worker would start a
  temporary server of its own on the same database: slow, and on another machine a different
  database altogether. prefect-dask sends the flow's settings context along with every task, so
  `submit_each` submits under a settings context that names the flow's API URL;
- the sandbox: the task writes the bundle to a scratch folder of the worker and starts the sandbox
  there (a subprocess of the worker's Python for `local`, the image for `docker`), so nothing but
  the models crosses between machines; results come back the same way. What the task writes to
  disk besides (the flow's validation checkpoints) lands on the worker's machine: shared storage, or
  it is lost to a resumed run.

prefect-dask is an optional extra (the `[dask]` extra); only the `dask` kind imports it.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Sequence
from typing import Any, TypeVar
from urllib.parse import urlsplit

from prefect import Task, get_client, get_run_logger
from prefect.context import FlowRunContext
from prefect.settings import PREFECT_API_URL, temporary_settings
from prefect.task_runners import TaskRunner, ThreadPoolTaskRunner

from abstaingen.config import OrchestrationConfig
from abstaingen.model import EnvironmentBundle, TaskPair
from abstaingen.optional import require
from abstaingen.pipelines.pairs import validate_concurrently
from abstaingen.validators.validate import ValidatedBatch

WORKER_SETUP = "abstaingen.flows.dask_worker"  # each local worker's preload: its shutdown stays quiet
POLL_S = 0.1  # how often the flow's loop looks whether the submitted validations are done

R = TypeVar("R")

__all__ = ["OrchestrationConfig", "build_task_runner", "on_dask", "quiet_local_cluster", "submit_each",
           "unreachable_api", "validate_on_runner"]


def build_task_runner(config: OrchestrationConfig) -> TaskRunner[Any]:
    """The flow's task runner for `config`; give it with `flow.with_options(task_runner=...)`."""
    if config.kind == "local":
        return ThreadPoolTaskRunner()  # Prefect's default; validation does not submit to it
    DaskTaskRunner = require("prefect_dask", "orchestration kind \"dask\"").DaskTaskRunner
    if config.address is not None:
        return DaskTaskRunner(address=config.address)
    # One thread a worker: a validation is an event loop of its own, and two in one process fight
    # over the GIL. On loopback; the scheduler's HTTP server (its dashboard, when bokeh is installed)
    # on a free port, so that runs at the same time do not clash over 8787.
    return DaskTaskRunner(cluster_class=quiet_local_cluster,
                          cluster_kwargs={"n_workers": config.workers, "threads_per_worker": 1, "processes": True,
                                          "host": "127.0.0.1", "dashboard_address": "127.0.0.1:0"})


def quiet_local_cluster(**kwargs: Any) -> Any:
    """A distributed.LocalCluster whose scheduler and workers log warnings and errors only.

    Prefect's log handler is on the root logger before distributed is imported, so distributed sends
    its records there instead of to a handler of its own, and LocalCluster's `silence_logs` (which
    quiets that handler) does not take: each worker would print its start-up banner and shutdown,
    line by line. The level has to be set in the flow's process and, through an environment variable
    read when distributed is imported, in each worker process. Each worker also loads WORKER_SETUP."""
    import dask
    import distributed

    logging.getLogger("distributed").setLevel(logging.WARNING)
    environ = {**dask.config.get("distributed.nanny.pre-spawn-environ", default={}),
               "DASK_LOGGING__DISTRIBUTED": "warning"}
    with dask.config.set({"distributed.nanny.pre-spawn-environ": environ}):
        return distributed.LocalCluster(preload=[WORKER_SETUP], **kwargs)


def on_dask(runner: TaskRunner[Any] | None = None) -> bool:
    """Whether `runner` (unset: the running flow's) is a DaskTaskRunner."""
    if runner is None:
        context = FlowRunContext.get()
        runner = context.task_runner if context is not None else None
    if runner is None:
        return False
    try:
        from prefect_dask import DaskTaskRunner
    except ImportError:
        return False
    return isinstance(runner, DaskTaskRunner)


def _loopback(host: str | None) -> bool:
    if not host or host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def unreachable_api(api_url: str, scheduler_address: str | None) -> str | None:
    """Why workers behind `scheduler_address` may not reach the API at `api_url`, if they may not:
    a loopback API (Prefect's temporary server is one) is this machine's alone."""
    if scheduler_address is None or not _loopback(urlsplit(api_url).hostname):
        return None
    scheduler_host = urlsplit(scheduler_address if "://" in scheduler_address else f"tcp://{scheduler_address}").hostname
    if _loopback(scheduler_host):
        return None
    return (f"the Prefect API {api_url} is on loopback, but the Dask scheduler {scheduler_address} is not: workers on "
            "other machines cannot report to it; run a Prefect server (`prefect server start --host 0.0.0.0`) and set "
            "PREFECT_API_URL to an address they reach")


async def submit_each(task: Task[..., Coroutine[Any, Any, R]], calls: Sequence[Sequence[Any]], *,
                      wait_for: Iterable[Any] | None = None, on_done: Callable[[int, R], Awaitable[None]] | None = None,
                      ) -> list[R]:
    """One run of `task` for each argument list of `calls`, submitted to the flow's Dask task runner
    (so each runs in a Dask worker); the results in the order of `calls`. `on_done(index, result)`
    is awaited on the flow's loop as each finishes (a progress display, say). The first failure
    cancels the runs not finished and is raised, as is a cancellation of the flow."""
    context = FlowRunContext.get()
    if context is None or not on_dask(context.task_runner):
        raise RuntimeError("submit_each runs in a flow whose task runner is a DaskTaskRunner")
    if not calls:
        return []
    async with get_client() as client:
        api_url = str(client.api_url)
    if problem := unreachable_api(api_url, getattr(context.task_runner, "address", None)):
        get_run_logger().warning("%s", problem)

    def submit() -> list[Any]:
        # In a thread: the first submission starts or connects to the cluster, which takes seconds the
        # flow's loop (its API watcher) must not wait for. The thread has the flow's context (to_thread
        # copies it); each task takes the settings context along, with the API URL in it.
        with temporary_settings(updates={PREFECT_API_URL: api_url}):
            return [task.submit(*args, wait_for=wait_for) for args in calls]

    futures = await asyncio.to_thread(submit)
    pending, results = dict(enumerate(futures)), {}
    try:
        while pending:
            for index in [i for i, future in pending.items() if future.wrapped_future.done()]:
                results[index] = await asyncio.to_thread(pending.pop(index).result)
                if on_done is not None:
                    await on_done(index, results[index])
            if pending:
                await asyncio.sleep(POLL_S)
    except BaseException:  # a failed validation, or the run being stopped: nothing keeps running for it
        for future in pending.values():
            future.wrapped_future.cancel()
        raise
    return [results[index] for index in range(len(futures))]


async def validate_on_runner(task: Task[..., Coroutine[Any, Any, ValidatedBatch]], bundles: list[EnvironmentBundle],
                             candidates: list[list[TaskPair]], *args: Any, concurrency: int,
                             wait_for: Iterable[Any] | None = None,
                             on_done: Callable[[EnvironmentBundle, ValidatedBatch], Awaitable[None]] | None = None,
                             ) -> list[ValidatedBatch]:
    """Each environment's validation as a run of `task(bundle, pairs, *args)`: one `.submit()` per
    environment when the flow's task runner is a Dask one, else awaited on the flow's event loop,
    `concurrency` at once (pipeline.validate_concurrently). The batches come back in the order of
    `bundles` either way; `on_done(bundle, batch)` is awaited as each finishes."""
    if on_dask():
        async def done(index: int, batch: ValidatedBatch) -> None:
            if on_done is not None:
                await on_done(bundles[index], batch)

        return await submit_each(task, [(bundle, pairs, *args) for bundle, pairs in zip(bundles, candidates)],
                                 wait_for=wait_for, on_done=done)

    async def validate(bundle: EnvironmentBundle, pairs: list[TaskPair]) -> ValidatedBatch:
        batch = await task(bundle, pairs, *args, wait_for=wait_for)
        if on_done is not None:
            await on_done(bundle, batch)
        return batch

    return await validate_concurrently(bundles, candidates, concurrency, validate)
