"""Validation of the same builtin candidates on the flow's loop and on Dask workers; prints the times.

    .venv/bin/python benchmarks/validate_dask.py [--domains travel banking clinical ecommerce] [--variants 2]
        [--runs 3] [--workers 2] [--concurrency 4]

Each run is a Prefect flow run (one temporary Prefect server for the whole benchmark) that builds the
candidates with the builtin generator, then validates them with the flow's own validation task on
the local sandbox backend (tests/dask_flow.py), through abstaingen.flows.scale.validate_on_runner, in one of three ways:

    local      the flow's event loop, `--concurrency` environments at once (today's path)
    dask       a Dask LocalCluster of `--workers` processes started for the run ([orchestration]
               kind = "dask"), so its start and its workers' imports are paid every run
    dask-warm  one LocalCluster started before the runs, reached by its address ([orchestration]
               address = ...): only its first run pays for the workers' imports

Modes take turns run by run, so a change in the machine's load falls on all of them. Prints, per mode,
the validation step (submission to results) and the whole flow run, min / median / max, and checks
that every run accepted the same pairs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from prefect import flow

from abstaingen.config import SandboxConfig
from abstaingen.flows.scale import OrchestrationConfig, build_task_runner, quiet_local_cluster, validate_on_runner

# The candidates and the validation task of tests/test_dask.py: the flow's validation (sandbox and all,
# without its checkpoint files), noting the process that ran it.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from dask_flow import PIDS, builtin_candidates, validate_noting_process  # noqa: E402

SEED = 11


@flow(name="validate-benchmark")
async def validate_flow(domains: list[str], variants: int, concurrency: int) -> dict[str, Any]:
    bundles, candidates = await builtin_candidates(domains, variants, SEED)
    began = time.perf_counter()
    batches = await validate_on_runner(validate_noting_process, bundles, candidates, SandboxConfig(backend="local"),
                                       concurrency=concurrency)
    return {"validation_s": time.perf_counter() - began, "pairs": sum(len(c) for c in candidates),
            "accepted": sorted(p.pair_id for batch in batches for p in batch.accepted)}


def figures(values: list[float]) -> str:
    return f"{min(values):6.1f} {statistics.median(values):6.1f} {max(values):6.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domains", nargs="+", default=["travel", "banking", "clinical", "ecommerce"])
    parser.add_argument("--variants", type=int, default=2, help="variants per scenario and domain")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=4, help="environments at once on the flow's loop")
    options = parser.parse_args()

    # Where each validation notes its process; set before any worker starts, since workers inherit it.
    folder = Path(tempfile.mkdtemp(prefix="validate-dask-"))
    os.environ[PIDS] = str(folder)
    cluster = quiet_local_cluster(n_workers=options.workers, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address="127.0.0.1:0")
    runners = {
        "local": lambda: build_task_runner(OrchestrationConfig(kind="local")),
        "dask": lambda: build_task_runner(OrchestrationConfig(kind="dask", workers=options.workers)),
        "dask-warm": lambda: build_task_runner(OrchestrationConfig(kind="dask", address=cluster.scheduler_address)),
    }
    validation: dict[str, list[float]] = {mode: [] for mode in runners}
    whole: dict[str, list[float]] = {mode: [] for mode in runners}
    accepted: set[tuple[str, ...]] = set()
    pairs = 0
    processes: dict[str, set[int]] = {mode: set() for mode in runners}
    load_before = os.getloadavg()
    try:
        for run in range(options.runs):
            for mode, runner in runners.items():
                began = time.perf_counter()
                result = asyncio.run(validate_flow.with_options(task_runner=runner())(
                    options.domains, options.variants, options.concurrency))
                whole[mode].append(time.perf_counter() - began)
                validation[mode].append(result["validation_s"])
                accepted.add(tuple(result["accepted"]))
                pairs = result["pairs"]
                for noted in folder.glob("*.pid"):
                    processes[mode].add(int(noted.read_text()))
                    noted.unlink()
                print(f"run {run + 1} {mode:<9} validation {validation[mode][-1]:6.1f} s, flow run "
                      f"{whole[mode][-1]:6.1f} s", flush=True)
    finally:
        cluster.close()
        shutil.rmtree(folder, ignore_errors=True)

    print(f"\nmachine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; load average "
          f"{load_before[0]:.1f} before, {os.getloadavg()[0]:.1f} after")
    print(f"{len(options.domains)} domains ({', '.join(options.domains)}), {pairs} candidate pairs, "
          f"{len(next(iter(accepted)))} accepted; {options.runs} runs a mode; workers {options.workers}, "
          f"loop concurrency {options.concurrency}")
    print("every run accepted the same pairs" if len(accepted) == 1 else "RUNS DISAGREE on the accepted pairs")
    print(f"\n{'mode':<10} {'validation s (min med max)':>27}   {'flow run s (min med max)':>25}   processes")
    for mode in runners:
        print(f"{mode:<10} {figures(validation[mode]):>27}   {figures(whole[mode]):>25}   {len(processes[mode])}")


if __name__ == "__main__":
    main()
