"""Both flows in this process, under Prefect's test harness (its temporary server and database): how a
run ends (its state and message), its task runs' names, its artifacts, and a resume. The CLI runs in
test_flow_end_to_end.py, test_ood_flow.py and test_operations.py check what only a process can show
(exit codes, output, signals, a killed run)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from prefect_runs import artifacts_of, task_run_names
from releases import published_pairs

from abstaingen.config import GenerateConfig
from abstaingen.sandboxes.backends import RUN_OWNER_ENV

pytestmark = pytest.mark.flow

DATASET = "abstaingen-builtin"
GENERATION_TASKS = {"capability", "environment travel", "task travel", "perturbation travel", "validate travel",
                    "dedup", "assemble release"}
GENERATION_ARTIFACTS = {"stage-funnel", "baseline-gates", "shortcut-gate", "leakage-report", "cost",
                        "release-summary"}


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
    """One run publishes v1; the same seed again makes the same pairs, which the dedup against v1 drops."""
    from abstaingen.flows.generate import run_generate_flow

    output = tmp_path_factory.mktemp("in-process") / "out"
    with run_label_restored():
        first = run_generate_flow(builtin_config(output, 5))
        again = run_generate_flow(builtin_config(output, 5))
    return output / DATASET, first, again


def test_a_published_run_is_completed_with_a_task_run_per_stage_and_its_artifacts(api: str,
                                                                                   published_then_refused) -> None:
    dataset, first, _ = published_then_refused
    assert first.outcome == "published" and first.folder == dataset / "v1", first.refusal
    run = flow_run(api, first.flow_run_id)
    assert run["state"]["type"] == "COMPLETED" and run["name"] == f"{DATASET} seed 5"
    assert f"dataset:{DATASET}" in run["tags"]
    names = task_run_names(api, run["id"])
    assert set(names) >= GENERATION_TASKS, names
    artifacts = artifacts_of(api, run["id"])
    assert set(artifacts) >= GENERATION_ARTIFACTS
    funnel = json.loads(artifacts["stage-funnel"]["data"])
    assert funnel[-1]["passed"] == first.release.total_pairs > 0, funnel  # type: ignore[union-attr]


def test_a_refused_run_is_failed_with_the_reason_and_its_funnel(api: str, published_then_refused) -> None:
    dataset, _, again = published_then_refused
    assert again.outcome == "refused" and not (dataset / "v2").exists()
    run = flow_run(api, again.flow_run_id)
    assert run["state"]["type"] == "FAILED"
    assert run["state"]["message"].startswith("release refused: no pair survived validation"), run["state"]
    artifacts = artifacts_of(api, run["id"])
    funnel = {row["stage"]: row for row in json.loads(artifacts["stage-funnel"]["data"])}
    assert funnel["dedup"]["passed"] == 0 and "seen_in_earlier_release" in funnel["dedup"]["rejected"]
    assert "release refused" in artifacts["release-summary"]["data"]


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


def test_an_ood_run_is_completed_with_its_tasks_and_artifacts(api: str, tmp_path: Path) -> None:
    from abstaingen.flows.ood import run_ood_flow

    config = GenerateConfig.model_validate({"dataset": {"output_dir": str(tmp_path / "out"), "seed": 21}})
    result = run_ood_flow(config)
    assert result.outcome == "published", result.refusal
    run = flow_run(api, result.flow_run_id)
    assert run["state"]["type"] == "COMPLETED" and "dataset:abstaingen-ood" in run["tags"]
    names = set(task_run_names(api, run["id"]))
    assert {"load question bank", "write items appointment_booking", "dedup", "assemble release"} <= names, names
    assert {"stage-funnel", "ood-baselines", "ood-leakage"} <= set(artifacts_of(api, run["id"]))


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
