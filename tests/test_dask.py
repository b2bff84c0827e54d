"""Validation on Dask workers (abstaingen.flows.scale): the same results as on the flow's own loop,
from other processes, recorded in the flow's Prefect API."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from abstaingen.flows.scale import OrchestrationConfig, build_task_runner, unreachable_api

pytestmark = pytest.mark.flow

pytest.importorskip("prefect_dask")

HELPER = Path(__file__).with_name("dask_flow.py")


@pytest.fixture(scope="module")
def both_paths(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, str]:
    folder = tmp_path_factory.mktemp("dask")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "DASK_"))}
    env.update(PREFECT_HOME=str(folder / "prefect-home"), PREFECT_SERVER_ANALYTICS_ENABLED="false", DO_NOT_TRACK="1",
               PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="180")
    out = folder / "out.json"
    run = subprocess.run([sys.executable, str(HELPER), str(out), "--domains", "travel", "banking", "--workers", "2"],
                         cwd=folder, env=env, capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
    assert run.returncode == 0, run.stderr[-4000:]
    return json.loads(out.read_text()), run.stdout + run.stderr


def outcome(batch: dict) -> dict:
    """What validation decided for each pair, and why: ids, every check, the replay hashes, the funnel."""
    return {
        "accepted": [p["pair_id"] for p in batch["accepted"]],
        "rejected": [p["pair_id"] for p in batch["rejected"]],
        "checks": {p["pair_id"]: [(c["name"], c["passed"], c["detail"]) for c in p["validation"]["checks"]]
                   for p in batch["accepted"] + batch["rejected"]},
        "hashes": {p["pair_id"]: p["validation"]["replay_trace_hash"] for p in batch["accepted"]},
        "stages": [(s["stage"], s["received"], s["rejected"]) for s in batch["stages"]],
    }


def test_dask_workers_validate_exactly_as_the_flow_loop_does(both_paths) -> None:
    result, _ = both_paths
    local, dask = result["local"], result["dask"]
    assert local["env_ids"] == dask["env_ids"] and len(dask["env_ids"]) == 2
    assert [outcome(b) for b in dask["batches"]] == [outcome(b) for b in local["batches"]]
    # in bundle order, and real work: every environment has pairs that passed the replay in the sandbox
    for env_id, batch in zip(dask["env_ids"], dask["batches"]):
        assert batch["accepted"] and {p["act"]["env_id"] for p in batch["accepted"]} == {env_id}
        assert all(p["validation"]["sandbox"] == "local" for p in batch["accepted"])
        assert all(any(c["name"] == "replay_final_state" and c["passed"] for c in p["validation"]["checks"])
                   for p in batch["accepted"])
    assert {p["domain"] for b in dask["batches"] for p in b["accepted"]} == {"travel", "banking"}
    for path in (local, dask):  # each environment reported once as it finished, with its own batch
        assert sorted(map(tuple, path["done"])) == sorted(
            (env_id, len(batch["accepted"])) for env_id, batch in zip(path["env_ids"], path["batches"]))


def test_each_environment_ran_in_a_worker_process_of_its_own(both_paths) -> None:
    result, _ = both_paths
    flow_pid = result["flow_pid"]
    assert set(result["local"]["pids"].values()) == {flow_pid}  # the one-loop path stays in the flow's process
    dask_pids = result["dask"]["pids"]
    assert sorted(dask_pids) == sorted(result["dask"]["env_ids"])
    assert flow_pid not in dask_pids.values() and len(set(dask_pids.values())) == 2


def test_worker_task_runs_report_to_the_flows_api(both_paths) -> None:
    result, output = both_paths
    for path in ("local", "dask"):
        runs = result[path]["task_runs"]
        assert len(runs) == 2 and {r["state"] for r in runs} == {"Completed"}, (path, runs)
    # workers used the flow's temporary server instead of each starting one of their own
    assert output.count("Starting temporary server") == 1, output[-3000:]
    assert "distributed.worker" not in output  # the workers' start-up banners stay quiet


def test_only_a_closing_workers_failed_heartbeat_goes_unreported() -> None:
    """distributed logs a heartbeat cut short by the worker's own shutdown as an error; the workers of a
    run's LocalCluster drop that record, and only that one, and only while they close."""
    import logging
    from types import SimpleNamespace

    from distributed.core import Status

    from abstaingen.flows.dask_worker import ShutdownHeartbeatFilter

    def record(message: str) -> logging.LogRecord:
        return logging.LogRecord("distributed.worker", logging.ERROR, __file__, 1, message, None, None)

    worker = SimpleNamespace(status=Status.running)
    heartbeat = ShutdownHeartbeatFilter(worker)
    assert heartbeat.filter(record("Failed to communicate with scheduler during heartbeat."))
    worker.status = Status.closing
    assert not heartbeat.filter(record("Failed to communicate with scheduler during heartbeat."))
    assert heartbeat.filter(record("Unexpected exception during heartbeat. Closing worker."))


def test_orchestration_config_and_runner() -> None:
    assert type(build_task_runner(OrchestrationConfig())).__name__ == "ThreadPoolTaskRunner"
    remote = build_task_runner(OrchestrationConfig(kind="dask", address="tcp://10.0.0.5:8786"))
    assert type(remote).__name__ == "DaskTaskRunner" and remote.address == "tcp://10.0.0.5:8786"
    local = build_task_runner(OrchestrationConfig(kind="dask", workers=3))
    assert local.address is None and local.cluster_kwargs["n_workers"] == 3
    with pytest.raises(ValidationError, match="kind"):
        OrchestrationConfig(address="tcp://10.0.0.5:8786")
    with pytest.raises(ValidationError):
        OrchestrationConfig(kind="dask", workers=0)
    assert all(field.description for field in OrchestrationConfig.model_fields.values())


def test_a_loopback_api_is_flagged_for_remote_workers_only() -> None:
    temporary = "http://127.0.0.1:8123/api"
    assert unreachable_api(temporary, None) is None
    assert unreachable_api(temporary, "tcp://127.0.0.1:8786") is None
    assert "PREFECT_API_URL" in (unreachable_api(temporary, "tcp://10.0.0.5:8786") or "")
    assert unreachable_api("http://prefect.internal:4200/api", "tcp://10.0.0.5:8786") is None


def test_generate_validates_on_dask_workers_when_the_config_says_so(prefect_api: str, tmp_path: Path) -> None:
    """The wiring from [orchestration] to the flow: `abstaingen generate` on a local Dask cluster publishes
    a release, each environment's validation a task run of the flow (in a worker process)."""
    from prefect_runs import abstaingen, flow_runs, task_run_names

    (tmp_path / "config.toml").write_text('[dataset]\nname = "on-dask"\n[generation]\ndomains = ["travel", "banking"]\n'
                                          'variants_per_scenario = 1\n[sandbox]\nbackend = "local"\n'
                                          '[orchestration]\nkind = "dask"\nworkers = 2\n')
    run = abstaingen(prefect_api, tmp_path, "generate", "--config", "config.toml", "--seed", "3", "--output", "out", "-v")
    assert run.returncode == 0, run.stderr[-3000:]
    manifest = json.loads((tmp_path / "out" / "on-dask" / "v1" / "manifest.json").read_text())
    assert manifest["total_pairs"] == 16
    [flow_run] = flow_runs(prefect_api, "dataset:on-dask")
    assert {"validate travel", "validate banking"} <= set(task_run_names(prefect_api, flow_run["id"]))
    # each environment validated once (the equivalence with the loop path is the test above)
    assert run.stderr.count("candidate pairs in the local sandbox") == 2
