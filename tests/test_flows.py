"""Both flows in this process, under Prefect's test harness (its temporary server and database): how a
run ends (its state, message and tags, degraded or not), its name, its task runs' names, its artifacts,
its logs of losses, its progress, and a resume. The CLI runs in
test_flow_end_to_end.py, test_ood_flow.py and test_operations.py check what only a process can show
(exit codes, output, signals, a killed run)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from prefect_runs import artifacts_in_order, artifacts_of, logs_of, task_run_names
from releases import published_pairs

from abstaingen.config import GenerateConfig
from abstaingen.flows.artifacts import OOD_ARTIFACTS, PAIRS_ARTIFACTS, ArtifactKeys
from abstaingen.model import Scenario
from abstaingen.progress import Progress, watching
from abstaingen.sandboxes.backends import RUN_OWNER_ENV
from abstaingen.sandboxes.session import SandboxError

pytestmark = pytest.mark.flow

DATASET = "abstaingen-builtin"
KEY = ArtifactKeys(dataset=DATASET, names=PAIRS_ARTIFACTS)
OOD_KEY = ArtifactKeys(dataset="abstaingen-ood", names=OOD_ARTIFACTS)
GENERATION_TASKS = {"capability", "environment travel", "task travel", "perturbation travel", "validate travel",
                    "dedup", "assemble release"}
GENERATION_ARTIFACTS = {KEY(name) for name in ("progress-environment", "progress-task", "progress-perturbation",
                                               "progress-validate", "stage-funnel", "baseline-gates", "shortcut-gate",
                                               "leakage-report", "cost", "release-summary")}


@pytest.fixture(scope="module")
def api() -> Iterator[str]:
    """Prefect's test harness for the module's runs; the API URL its server answers on."""
    from prefect.settings import PREFECT_API_URL
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=180):
        yield str(PREFECT_API_URL.value())


@contextlib.contextmanager
def run_label_restored() -> Iterator[None]:
    """A run marks its process as the owner of what it starts; here that process is the test session's,
    whose later CLI runs must carry labels of their own."""
    before = os.environ.get(RUN_OWNER_ENV)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(RUN_OWNER_ENV, None)
        else:
            os.environ[RUN_OWNER_ENV] = before


@pytest.fixture(autouse=True)
def own_run_label() -> Iterator[None]:
    with run_label_restored():
        yield


def builtin_config(output: Path, seed: int, domains: tuple[str, ...] = ("travel",)) -> GenerateConfig:
    return GenerateConfig.model_validate({"dataset": {"output_dir": str(output), "seed": seed},
                                          "generation": {"domains": list(domains)},
                                          "sandbox": {"backend": "local", "concurrency": 1}})


def flow_run(api: str, run_id: str | None) -> dict:
    import httpx

    assert run_id is not None
    return dict(httpx.get(f"{api}/flow_runs/{run_id}", timeout=30).raise_for_status().json())


@pytest.fixture(scope="module")
def published_then_refused(api: str, tmp_path_factory: pytest.TempPathFactory):
    """One run publishes v1 (what it tells of its progress is kept); the same seed again makes the same
    pairs, which the dedup against v1 drops."""
    from abstaingen.flows.generate import run_generate_flow

    output = tmp_path_factory.mktemp("in-process") / "out"
    told: list[Progress] = []
    with run_label_restored():
        with watching(told.append):
            first = run_generate_flow(builtin_config(output, 5))
        again = run_generate_flow(builtin_config(output, 5))
    return output / DATASET, first, again, told


def sandbox_fails_on(scenario: Scenario):
    """Every sandbox dies under the pairs of `scenario`: each is retried in a fresh one, which dies too, and the
    pair is lost to the infrastructure (validators.validate)."""
    from abstaingen.validators import validate

    real = validate._execute

    async def execute(session, pair, bundle):  # type: ignore[no-untyped-def]
        if pair.scenario == scenario:
            raise SandboxError("the sandbox stopped answering (simulated)")
        return await real(session, pair, bundle)

    return execute


@pytest.fixture(scope="module")
def degraded(api: str, tmp_path_factory: pytest.TempPathFactory):
    """A run whose sandboxes die on every S5 pair: both are lost to the infrastructure, S5 with them, and the
    release is published all the same (sandbox.allow_infrastructure_loss)."""
    from abstaingen.flows.generate import run_generate_flow
    from abstaingen.validators import validate

    config = builtin_config(tmp_path_factory.mktemp("degraded") / "out", 6)
    config = config.model_copy(update={"sandbox": config.sandbox.model_copy(update={"allow_infrastructure_loss": True})})
    with run_label_restored(), pytest.MonkeyPatch.context() as patch:
        patch.setattr(validate, "_execute", sandbox_fails_on(Scenario.S5))
        return run_generate_flow(config)


def flushed_logs(api: str, run_id: str | None) -> list[dict]:
    from prefect.logging.handlers import APILogWorker

    assert run_id is not None
    APILogWorker.drain_all()  # Prefect sends log lines in batches, from a worker of its own
    return logs_of(api, run_id)


def test_a_published_run_is_completed_with_a_task_run_per_stage_and_its_artifacts(api: str,
                                                                                   published_then_refused) -> None:
    dataset, first, _, _ = published_then_refused
    assert first.outcome == "published" and first.folder == dataset / "v1", first.refusal
    run = flow_run(api, first.flow_run_id)
    assert run["state"]["type"] == "COMPLETED" and run["name"] == f"{DATASET} seed 5"
    assert f"dataset:{DATASET}" in run["tags"]
    names = task_run_names(api, run["id"])
    assert set(names) >= GENERATION_TASKS, names
    artifacts = artifacts_of(api, run["id"])
    assert set(artifacts) >= GENERATION_ARTIFACTS, sorted(artifacts)
    funnel = json.loads(artifacts[KEY("stage-funnel")]["data"])
    assert funnel[-1]["passed"] == first.release.total_pairs > 0, funnel  # type: ignore[union-attr]


def test_a_run_that_lost_nothing_is_plainly_completed(api: str, published_then_refused) -> None:
    _, first, _, _ = published_then_refused
    run = flow_run(api, first.flow_run_id)
    assert run["state"]["type"] == "COMPLETED" and not run["state"]["message"], run["state"]
    assert "degraded" not in run["tags"] and first.degraded is None


def test_a_run_that_lost_pairs_to_the_infrastructure_is_completed_degraded(api: str, degraded) -> None:
    assert degraded.outcome == "published", degraded.refusal
    run = flow_run(api, degraded.flow_run_id)
    assert run["state"]["type"] == "COMPLETED" and "degraded" in run["tags"], (run["state"], run["tags"])
    assert run["state"]["message"] == degraded.degraded == \
        "degraded: 2 of 16 pairs lost to infrastructure; S5 0 pairs (floor 1)", run["state"]
    assert degraded.release is not None and "S5" not in degraded.release.counts["scenario"]


def test_every_loss_to_the_infrastructure_is_logged_as_a_warning(api: str, degraded) -> None:
    ours = [line for line in flushed_logs(api, degraded.flow_run_id)  # not Prefect's line of the final state
            if not line["message"].startswith("Finished in state")]
    losses = [line for line in ours if "infrastructure" in line["message"] or "sandbox failed" in line["message"]]
    assert all(line["level"] == logging.WARNING for line in losses), [(line["level"], line["message"]) for line in losses]
    by_task = [line["message"] for line in losses if line["task_run_id"]]
    assert len(by_task) == 1 and by_task[0].startswith("travel-"), by_task  # the validate task's, of its environment
    assert ": 2 of 16 pairs lost to infrastructure at replay (infrastructure 2); the sandbox failed on 2 attempts, " \
           "the last: the sandbox stopped answering (simulated)" in by_task[0]
    assert any(line["message"] == degraded.degraded and not line["task_run_id"] for line in losses), losses


def test_the_run_carries_its_readable_name_from_its_start(api: str, published_then_refused) -> None:
    _, first, _, _ = published_then_refused
    begun = [line["message"] for line in flushed_logs(api, first.flow_run_id)
             if line["message"].startswith("Beginning flow run")]
    assert begun == [f"Beginning flow run '{DATASET} seed 5' for flow 'generate-release'"]


def test_artifact_keys_are_the_datasets_in_pipeline_order_and_each_is_described(api: str, published_then_refused,
                                                                               ood_run) -> None:
    _, first, _, _ = published_then_refused
    pairs, ood = (artifacts_in_order(api, run_id) for run_id in (first.flow_run_id, ood_run.flow_run_id))
    for made, key in ((pairs, KEY), (ood, OOD_KEY)):
        keys = [artifact["key"] for artifact in made]
        assert keys == sorted(keys), keys  # made in the order of their keys: the pipeline's
        assert keys == [key(name) for name in key.names if key(name) in keys], keys
        assert all(artifact["description"] for artifact in made), [a["key"] for a in made if not a["description"]]
    assert [a["key"] for a in pairs][-1] == KEY("release-summary") and [a["key"] for a in ood][-1] == \
        OOD_KEY("release-summary")
    assert not {a["key"] for a in pairs} & {a["key"] for a in ood}


def test_the_validate_stage_tells_its_progress_pair_by_pair(published_then_refused) -> None:
    _, first, _, told = published_then_refused
    validate = [event for event in told if event.stage == "validate"]
    candidates = next(line for line in first.funnel if line.stage == "env_checks").received
    assert candidates == 16 and [event.total for event in validate] == [candidates] * (candidates + 1)
    assert [event.done for event in validate] == list(range(candidates + 1))
    assert validate[-1].accepted == first.release.total_pairs  # type: ignore[union-attr]


def test_a_refused_run_is_failed_with_the_reason_and_its_funnel(api: str, published_then_refused) -> None:
    dataset, _, again, _ = published_then_refused
    assert again.outcome == "refused" and not (dataset / "v2").exists()
    run = flow_run(api, again.flow_run_id)
    assert run["state"]["type"] == "FAILED" and "degraded" not in run["tags"]
    assert run["state"]["message"].startswith("release refused: no pair survived validation"), run["state"]
    artifacts = artifacts_of(api, run["id"])
    funnel = {row["stage"]: row for row in json.loads(artifacts[KEY("stage-funnel")]["data"])}
    assert funnel["dedup"]["passed"] == 0 and "seen_in_earlier_release" in funnel["dedup"]["rejected"]
    assert "release refused" in artifacts[KEY("release-summary")]["data"]


def test_bad_input_that_reaches_the_flow_fails_its_run_with_one_line(api: str, tmp_path: Path) -> None:
    """A scheduled run has no CLI to check its input first: the flow's own pre-flight fails the run."""
    from abstaingen.flows.generate import generate_release

    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text("this is not JSON\n")
    state = asyncio.run(generate_release(builtin_config(tmp_path / "out", 7), seeds, return_state=True))
    assert state.is_failed()
    assert state.message.startswith("bad input:") and "seeds.jsonl" in state.message, state.message
    assert "\n" not in state.message
    assert not (tmp_path / "out" / DATASET).exists() or not any((tmp_path / "out" / DATASET).glob("v*"))


@pytest.fixture(scope="module")
def ood_run(api: str, tmp_path_factory: pytest.TempPathFactory):
    from abstaingen.flows.ood import run_ood_flow

    config = GenerateConfig.model_validate({"dataset": {"output_dir": str(tmp_path_factory.mktemp("ood") / "out"),
                                                        "seed": 21}})
    with run_label_restored():
        return run_ood_flow(config)


def test_an_ood_run_is_completed_with_its_tasks_and_artifacts(api: str, ood_run) -> None:
    assert ood_run.outcome == "published", ood_run.refusal
    run = flow_run(api, ood_run.flow_run_id)
    assert run["state"]["type"] == "COMPLETED" and "dataset:abstaingen-ood" in run["tags"]
    assert run["name"] == "abstaingen-ood seed 21" and "degraded" not in run["tags"]
    names = set(task_run_names(api, run["id"]))
    assert {"load question bank", "write items appointment_booking", "dedup", "assemble release"} <= names, names
    assert {OOD_KEY(name) for name in ("stage-funnel", "ood-baselines", "ood-leakage", "release-summary")} <= \
        set(artifacts_of(api, run["id"]))


def test_a_run_that_failed_mid_validation_resumes_from_what_it_validated(api: str, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The second environment's validation fails: the run ends, the first environment's result stays as a
    checkpoint, and the next run of the same plan takes it instead of validating again. Its release is
    the one a run without the failure publishes. (test_operations.py kills a CLI run with SIGKILL.)"""
    from abstaingen.flows import generate
    from abstaingen.flows.generate import run_generate_flow

    real, validated = generate.validate_pairs_async, []

    async def second_fails(*args: object, **kwargs: object) -> object:
        validated.append(args[0])
        if len(validated) == 2:
            raise RuntimeError("the machine went away")
        return await real(*args, **kwargs)  # type: ignore[arg-type]

    domains = ("travel", "banking")
    monkeypatch.setattr(generate, "validate_pairs_async", second_fails)
    with pytest.raises(RuntimeError, match="the machine went away"):
        run_generate_flow(builtin_config(tmp_path / "out", 5, domains))
    dataset = tmp_path / "out" / DATASET
    assert len(list(dataset.glob(".checkpoints/*/validate-*.json"))) == 1 and not (dataset / "v1").exists()

    validated.clear()
    resumed = run_generate_flow(builtin_config(tmp_path / "out", 5, domains))
    assert resumed.outcome == "published" and len(validated) == 1  # only the environment that failed
    monkeypatch.setattr(generate, "validate_pairs_async", real)
    assert run_generate_flow(builtin_config(tmp_path / "again", 5, domains)).outcome == "published"
    assert published_pairs(dataset / "v1") == published_pairs(tmp_path / "again" / DATASET / "v1")
    assert not list(dataset.glob(".checkpoints/*/*.json"))  # cleared once published
