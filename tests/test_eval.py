"""`abstaingen eval`: scripted policies (`--model abstaingen/<policy>`) run through Inspect, the task's
tools (env serve) and the simulated user, and the report gives the metrics worked out by hand from the
policies' definitions and the pairs' labels."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from builtin_fixtures import builtin_bundle, builtin_pair
from inspect_ai.log import read_eval_log

from abstaingen.evaluation.html import leaderboard
from abstaingen.evaluation.report import EvalReport
from abstaingen.evaluation.run import EvalOptions, evaluate
from abstaingen.flows import cli
from abstaingen.model import FunnelStage, Release, Scenario, TaskPair
from abstaingen.pipelines.pairs import stamped
from abstaingen.store import publish_release

pytestmark = pytest.mark.component

POLICIES = ("oracle", "always_act", "always_abstain", "do_nothing", "asks_then_completes", "acts_then_warns")


def _pairs() -> list[TaskPair]:
    return ([builtin_pair(s, 0, "travel") for s in Scenario]
            + [builtin_pair(Scenario.S1, 1, "travel"), builtin_pair(Scenario.S2, 1, "travel")])


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[TaskPair]]:
    folder = tmp_path_factory.mktemp("eval")
    pairs = _pairs()
    draft = Release(name="demo", version="", created_by="test", config_fingerprint="f", sandbox="local", counts={},
                    total_pairs=0, canary="canary-x", funnel=[FunnelStage(stage="task", received=len(pairs),
                                                                          passed=len(pairs))])
    publish_release(folder / "releases", draft, stamped(pairs, "canary-x", "t", "f"), [builtin_bundle("travel")])
    return folder / "releases" / "demo" / "v1", pairs


@pytest.fixture(scope="module")
def reports(release, tmp_path_factory: pytest.TempPathFactory) -> dict[str, EvalReport]:
    folder, _ = release
    out = tmp_path_factory.mktemp("runs")
    return {policy: evaluate(folder, out / policy, EvalOptions(model=f"abstaingen/{policy}", env_sandbox="local",
                                                               max_samples=4))[0]
            for policy in POLICIES}


def _headline(report: EvalReport) -> dict[str, float | None]:
    return {name: interval.value for name, interval in report.headline.items()}


def test_every_sample_of_every_policy_is_scored(reports, release) -> None:
    _, pairs = release
    for policy, report in reports.items():
        assert report.samples == 2 * len(pairs), policy
        assert report.episode_problems == {"errors": 0, "limits_reached": 0, "empty_replies": 0}, policy


def test_the_headline_metrics_are_those_worked_out_by_hand(reports) -> None:
    assert _headline(reports["oracle"]) == {"act": 1.0, "abstain": 1.0, "paired": 1.0, "car": 1.0, "sides": 1.0}
    assert _headline(reports["always_act"]) == {"act": 1.0, "abstain": 0.0, "paired": 0.0, "car": 0.0, "sides": 0.5}
    for asks_or_refuses in ("always_abstain", "asks_then_completes"):
        assert _headline(reports[asks_or_refuses]) == {"act": 0.0, "abstain": 1.0, "paired": 0.0, "car": None,
                                                       "sides": 0.5}
    assert _headline(reports["do_nothing"]) == {"act": 0.0, "abstain": 0.0, "paired": 0.0, "car": None, "sides": 0.0}
    # it acts on both sides (so every act side passes) and its warning is post-hoc where it committed
    assert _headline(reports["acts_then_warns"]) == {"act": 1.0, "abstain": 0.0, "paired": 0.0, "car": 0.0,
                                                     "sides": 0.5}
    post_hoc = [e for e in reports["acts_then_warns"].failures if e.outcome == "post_hoc_abstention"]
    assert post_hoc and all(e.groups["side"] == "abstain" for e in post_hoc)


def test_intervals_bracket_the_value_and_a_perfect_run_has_no_spread(reports) -> None:
    for report in reports.values():
        for interval in report.headline.values():
            if interval.value is not None:
                assert interval.low <= interval.value <= interval.high
    assert all(i.low == i.high == 1.0 for i in reports["oracle"].headline.values())
    # every pair has exactly one side passed, so no draw of pairs moves it
    sides = reports["always_act"].headline["sides"]
    assert (sides.low, sides.value, sides.high) == (0.5, 0.5, 0.5)


def test_timing_spl_by_hand(reports, release) -> None:
    _, pairs = release
    steps = [p.abstain.earliest_abstain_step or 0 for p in pairs]
    oracle = reports["oracle"].timing
    assert oracle["spl"]["value"] == oracle["timely_recall"]["value"] == oracle["recall"]["value"] == 1.0
    assert oracle["premature"] == 0 and oracle["calls_after_trigger"] == {"0": len(pairs)}
    # asking before any call is premature wherever a careful agent needs a call first: SPL 0 there, 1 elsewhere
    for early in ("always_abstain", "asks_then_completes"):
        timing = reports[early].timing
        assert timing["premature"] == sum(o > 0 for o in steps), early
        assert timing["spl"]["value"] == pytest.approx(sum(o == 0 for o in steps) / len(steps)), early
        assert timing["recall"]["value"] == 1.0
    assert reports["always_act"].timing["spl"]["value"] == 0.0


def test_clarify_and_resume_scores_the_continuation_against_t_plus(reports, release) -> None:
    _, pairs = release
    clarified = sum(p.scenario in ("S1", "S2") and p.abstain.clarification is not None for p in pairs)
    assert clarified >= 2
    for policy in ("oracle", "asks_then_completes"):
        c = reports[policy].clarify
        assert (c["sides"], c["asked"], c["asked_then_completed"]) == (clarified, clarified, clarified), policy
    # it refuses without a question: nothing to answer
    assert reports["always_abstain"].clarify["asked"] == 0
    assert reports["always_act"].clarify["asked"] == 0


def test_the_agentabstain_view_sits_beside_ours(reports) -> None:
    assert reports["oracle"].agentabstain.paired == 1.0
    assert reports["always_act"].agentabstain.paired == 0.0
    # their rules pass a do-nothing agent on info act sides, ours do not
    assert reports["do_nothing"].agentabstain.cells


def test_failures_carry_their_trajectory_with_the_trigger_marked(reports, release) -> None:
    _, pairs = release
    failures = reports["always_act"].failures
    assert len(failures) == len(pairs)
    marked = [e for e in failures if any(step["role"] == "marker" for step in e.trajectory)]
    assert len(marked) == len(failures)
    assert any(call for e in failures for step in e.trajectory for call in step.get("calls", []))


def test_the_report_files_and_the_leaderboard(reports, release, tmp_path: Path) -> None:
    ranked = leaderboard(list(reports.values())).splitlines()
    assert ranked[1].startswith("abstaingen/oracle")
    paths = []
    for policy in ("always_act", "oracle"):
        path = tmp_path / f"{policy}.json"
        path.write_text(reports[policy].model_dump_json())
        paths.append(str(path))
    assert cli.main(["eval", "compare", *paths]) == 0


def test_a_rerun_reads_the_finished_log_and_runs_nothing_again(release, tmp_path: Path) -> None:
    folder, pairs = release
    first, log = evaluate(folder, tmp_path, EvalOptions(model="abstaingen/oracle", env_sandbox="local", limit=4))
    again, log_again = evaluate(folder, tmp_path, EvalOptions(model="abstaingen/oracle", env_sandbox="local", limit=4))
    assert log_again == log and again.headline == first.headline
    html = (tmp_path / "report.html").read_text()
    assert "<svg" in html and "bootstrap" in html and "<script" not in html


def test_a_killed_eval_resumes_without_running_finished_samples_again(release, tmp_path: Path) -> None:
    folder, pairs = release
    command = [sys.executable, "-m", "abstaingen", "eval", str(folder), "--model", "abstaingen/oracle",
               "--env-sandbox", "local", "--output", str(tmp_path), "--max-samples", "1"]
    env = {**os.environ, "INSPECT_DISPLAY": "none"}
    run = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           start_new_session=True)
    logs = tmp_path / "logs"
    deadline = time.monotonic() + 300
    finished_before: set[str] = set()
    while time.monotonic() < deadline and not finished_before:  # killed at the first finished samples
        time.sleep(0.5)
        for path in logs.glob("*.eval"):
            try:
                finished_before = {str(s.id) for s in read_eval_log(str(path)).samples or []}
            except Exception:  # being written
                continue
    os.killpg(run.pid, signal.SIGKILL)
    run.wait()
    assert 1 <= len(finished_before) < 2 * len(pairs), "the run was not caught mid-way"
    [partial] = [read_eval_log(str(p)) for p in logs.glob("*.eval")]
    started = {str(s.id): s.uuid for s in partial.samples or []}

    resumed = subprocess.run(command, env={**os.environ, "INSPECT_DISPLAY": "none"}, capture_output=True, text=True,
                             timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["samples"] == 2 * len(pairs) and report["headline"]["paired"]["value"] == 1.0
    final = read_eval_log(report["log"])
    reused = {str(s.id) for s in final.samples or [] if started.get(str(s.id)) == s.uuid}
    assert finished_before <= reused  # the same sample runs, not new ones
