"""`abstaingen eval` on an OOD release (scripted policies, both readings of every reply), and evaluation
as the Prefect flow `evaluate`, whose report is an artifact."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from builtin_fixtures import builtin_bundle, builtin_pair
from prefect_runs import abstaingen, artifacts_of

from abstaingen.evaluation.run import EvalOptions, evaluate
from abstaingen.model import FunnelStage, Release, Scenario
from abstaingen.pipelines.pairs import stamped
from abstaingen.store import publish_release

pytestmark = [pytest.mark.flow, pytest.mark.usefixtures("prefect_api")]


@pytest.fixture(scope="module")
def ood_release(tmp_path_factory: pytest.TempPathFactory, prefect_api: str) -> Path:
    folder = tmp_path_factory.mktemp("ood")
    run = abstaingen(prefect_api, folder, "ood", "--seed", "5", "--roles", "appointment_booking,retail_banking",
                     "--id-per-role", "2", "--ood-per-role", "2",
                     "--output", str(folder / "out"), "-q")
    assert run.returncode == 0, run.stderr[-2000:]
    [release] = list((folder / "out").glob("*/v1"))
    return release


@pytest.mark.parametrize("policy, expected", [("oracle", (1.0, 1.0, 1.0, 1.0)), ("answer_all", (1.0, 0.0, 0.0, 0.0)),
                                              ("refuse_all", (0.0, 1.0, 1.0, 0.0))])
def test_ood_policies_score_as_worked_out_by_hand_under_both_readings(ood_release: Path, tmp_path: Path, policy: str,
                                                                      expected: tuple[float, ...]) -> None:
    report, _ = evaluate(ood_release, tmp_path, EvalOptions(model=f"abstaingen/{policy}",
                                                            suffixes=["plain", "p_ground", "offtopiceval"]))
    got = tuple(report.headline[m].value for m in ("ar_id", "rr_direct", "rr_laundered", "os"))
    assert got == expected
    assert report.episode_problems["errors"] == 0 and report.offtopiceval["unparsed_ours"] == 0
    theirs = report.offtopiceval["by_suffix"]["p_ground"]["offtopiceval_macro_over_roles"]
    assert (theirs["ar_id"], theirs["rr_direct"], theirs["rr_laundered"], theirs["os"]) == expected
    assert set(report.by["language"]) == {"en", "zh", "hi"} and set(report.by["suffix"]) == {"plain", "p_ground",
                                                                                               "offtopiceval"}
    if policy == "oracle":
        assert report.headline["id_accuracy"].value == 1.0


def test_evaluation_runs_as_a_flow_with_its_report_as_an_artifact(tmp_path: Path, prefect_api: str) -> None:
    pairs = [builtin_pair(Scenario.S1, 0, "travel"), builtin_pair(Scenario.S8, 0, "travel")]
    draft = Release(name="demo", version="", created_by="test", config_fingerprint="f", sandbox="local", counts={},
                    total_pairs=0, canary="canary-x", funnel=[FunnelStage(stage="task", received=2, passed=2)])
    publish_release(tmp_path / "releases", draft, stamped(pairs, "canary-x", "t", "f"), [builtin_bundle("travel")])
    release = tmp_path / "releases" / "demo" / "v1"
    run = abstaingen(prefect_api, tmp_path, "eval", str(release), "--model", "abstaingen/oracle", "--env-sandbox",
                     "local", "--output", str(tmp_path / "eval"), "--flow")
    assert run.returncode == 0, run.stderr[-2000:]
    report = json.loads((tmp_path / "eval" / "report.json").read_text())
    assert report["headline"]["paired"]["value"] == 1.0
    body = {"flows": {"name": {"any_": ["evaluate"]}}, "sort": "START_TIME_DESC", "limit": 5}
    [flow_run, *_] = httpx.post(f"{prefect_api}/flow_runs/filter", json=body, timeout=30).raise_for_status().json()
    assert flow_run["state_type"] == "COMPLETED"
    artifacts = artifacts_of(prefect_api, flow_run["id"])
    [key] = [k for k in artifacts if k.startswith("eval-")]
    assert "paired 100.0" in artifacts[key]["data"]
