"""A small validation flow run twice, on the flow's loop and on Dask workers (for tests/test_dask.py).

    python tests/dask_flow.py OUT.json --domains travel banking [--workers 2]

Builds builtin candidate pairs of the domains, validates them on the local sandbox backend once with
the `local` orchestration and once with `dask` (a LocalCluster of worker processes), and writes both
results, the process each validation ran in, and the task runs the Prefect API holds for each flow
run to OUT.json. Run in a process of its own: Dask starts worker processes, and Prefect its server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from pathlib import Path

from prefect import flow, get_client, task
from prefect.cache_policies import NONE
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId
from prefect.context import FlowRunContext

from abstaingen.config import SandboxConfig, SeedInstruction
from abstaingen.flows.scale import OrchestrationConfig, build_task_runner, validate_on_runner
from abstaingen.generators.builtin.domains import DOMAINS
from abstaingen.generators.builtin.stages import BuiltinGenerator
from abstaingen.model import EnvironmentBundle, Provenance, TaskPair
from abstaingen.pipelines.pairs import (
    deduplicate,
    extract_all,
    perturb_all,
    sandbox_for,
    synthesize_all,
    write_positives,
)
from abstaingen.validators.validate import ValidatedBatch, validate_pairs_async

PIDS = "ABSTAINGEN_TEST_PID_FOLDER"  # where each validation notes its process (worker processes inherit it)


async def builtin_candidates(domains: list[str], variants: int, seed: int
                             ) -> tuple[list[EnvironmentBundle], list[list[TaskPair]]]:
    """The builtin generator's environments and deduplicated candidate pairs for `domains`."""
    generator = BuiltinGenerator()
    seeds = [SeedInstruction(instruction=DOMAINS[d].seed_instruction, domain=d) for d in domains]
    specs = (await extract_all(generator, seeds)).specs
    bundles = (await synthesize_all(generator, specs, seed)).bundles
    provenance = Provenance(backend={"all": "builtin"}, seed=seed, code_version="test")
    perturbed = []
    for bundle in bundles:
        positives = await write_positives(generator, bundle, variants, seed)
        perturbed.append((await perturb_all(generator, bundle, positives, provenance, seed)).pairs)
    return bundles, deduplicate(bundles, perturbed).by_environment


@task(name="validate", cache_policy=NONE)
async def validate_noting_process(bundle: EnvironmentBundle, pairs: list[TaskPair], sandbox: SandboxConfig
                                  ) -> ValidatedBatch:
    """The flow's validation task (flows/generate.py validate_stage), noting the process it ran in."""
    (Path(os.environ[PIDS]) / f"{bundle.env_id}.pid").write_text(str(os.getpid()))
    return await validate_pairs_async(bundle, pairs, sandbox_for(sandbox), sandbox.allow_unsandboxed)


@flow(name="validate-scale-test")
async def validate_flow(domains: list[str], concurrency: int) -> dict:
    bundles, candidates = await builtin_candidates(domains, variants=1, seed=11)
    done: list[tuple[str, int]] = []

    async def note(bundle: EnvironmentBundle, batch: ValidatedBatch) -> None:
        done.append((bundle.env_id, len(batch.accepted)))

    batches = await validate_on_runner(validate_noting_process, bundles, candidates, SandboxConfig(backend="local"),
                                       concurrency=concurrency, on_done=note)
    context = FlowRunContext.get()
    assert context is not None and context.flow_run is not None
    return {"flow_run_id": str(context.flow_run.id), "env_ids": [b.env_id for b in bundles], "done": done,
            "batches": [b.model_dump(mode="json") for b in batches]}


async def task_runs(flow_run_id: str) -> list[dict]:
    async with get_client() as client:
        runs = await client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id])))
    return [{"name": r.name, "state": r.state_name} for r in runs]


def run(orchestration: OrchestrationConfig, domains: list[str], folder: Path) -> dict:
    folder.mkdir(parents=True, exist_ok=True)
    os.environ[PIDS] = str(folder)
    runner = build_task_runner(orchestration)
    result = asyncio.run(validate_flow.with_options(task_runner=runner)(domains, 4))
    result["pids"] = {p.stem: int(p.read_text()) for p in folder.glob("*.pid")}
    result["task_runs"] = asyncio.run(task_runs(result["flow_run_id"]))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--domains", nargs="+", default=["travel", "banking"])
    parser.add_argument("--workers", type=int, default=2)
    options = parser.parse_args()
    scratch = options.out.parent / "pids"
    local = run(OrchestrationConfig(kind="local"), options.domains, scratch / "local")
    dask = run(OrchestrationConfig(kind="dask", workers=options.workers), options.domains, scratch / "dask")
    options.out.write_text(json.dumps({"flow_pid": os.getpid(), "local": local, "dask": dask}, indent=1))


if __name__ == "__main__":
    main()
