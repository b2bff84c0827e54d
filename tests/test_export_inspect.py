"""`abstaingen export inspect`: the task file runs under the `inspect eval` command with a scripted
policy (`--model abstaingen/always_act`, found by Inspect through our entry point), which reaches each
side's environment through `abstaingen env serve` and is scored by our scorer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from builtin_fixtures import builtin_bundle, builtin_pair

from abstaingen.flows import cli
from abstaingen.model import FunnelStage, Release, Scenario
from abstaingen.pipelines.pairs import stamped
from abstaingen.store import publish_release

pytestmark = pytest.mark.component

@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, list]:
    folder = tmp_path_factory.mktemp("inspect")
    pairs = [builtin_pair(s, 0, "travel") for s in Scenario] + [builtin_pair(Scenario.S7, 1, "travel")]
    draft = Release(name="demo", version="", created_by="test", config_fingerprint="f", sandbox="local", counts={},
                    total_pairs=0, canary="canary-x", funnel=[FunnelStage(stage="task", received=len(pairs),
                                                                          passed=len(pairs))])
    publish_release(folder / "releases", draft, stamped(pairs, "canary-x", "t", "f"), [builtin_bundle("travel")])
    out = folder / "export"
    assert cli.main(["export", "inspect", str(folder / "releases" / "demo" / "v1"), str(out)]) == 0
    env = {**os.environ, "HOME": str(folder / "home"), "XDG_DATA_HOME": str(folder / "xdg"),
           "INSPECT_DISPLAY": "plain"}
    run = subprocess.run([str(Path(sys.executable).parent / "inspect"), "eval", "abstaingen_task.py",
                          "--model", "abstaingen/always_act", "-T", "env_sandbox=local", "--log-dir",
                          str(folder / "logs"), "--log-format", "json"],
                         cwd=out, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    [log] = list((folder / "logs").glob("*.json"))
    return out, json.loads(log.read_text()), pairs


def test_the_task_runs_under_inspect_eval_and_every_sample_is_scored(evaluated) -> None:
    _, log, pairs = evaluated
    assert log["status"] == "success", log.get("error")
    assert len(log["samples"]) == 2 * len(pairs)
    assert all(not sample.get("error") for sample in log["samples"])


def test_our_scorer_passes_every_act_side_and_no_abstain_side_of_an_agent_that_always_acts(evaluated) -> None:
    _, log, pairs = evaluated
    for sample in log["samples"]:
        [score] = sample["scores"].values()
        side = sample["metadata"]["side"]
        assert score["value"] == ("C" if side == "act" else "I"), (sample["id"], score["explanation"])
        calls = [c for m in sample["messages"] if m["role"] == "assistant" for c in (m.get("tool_calls") or [])]
        assert calls or sample["metadata"]["scenario"] == "S4"  # tools reached the sandboxed environment
    metrics = {name: m["value"] for s in log["results"]["scores"] for name, m in s["metrics"].items()}
    assert metrics["accuracy"] == 0.5 and metrics["paired_accuracy"] == 0.0 and metrics["car"] == 0.0
    assert metrics["stderr"] > 0 and metrics["S1"] == 0.5  # grouped by scenario, with stderr
    assert all(sample["target"] for sample in log["samples"])
    assert log["eval"]["config"]["message_limit"] == 60


def test_the_export_holds_what_the_task_file_reads(evaluated) -> None:
    out, _, pairs = evaluated
    rows = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == [side.task_id for p in pairs for side in (p.act, p.abstain)]
    assert all(r["metadata"]["canary"] == "canary-x" for r in rows)
    assert (out / "environments" / pairs[0].act.env_id / "implementation.py").is_file()
    assert "inspect eval abstaingen_task.py" in (out / "README.md").read_text()


def _task_module(out: Path):
    sys.path.insert(0, str(out))
    try:
        import abstaingen_task  # the export's task file, as `inspect eval` imports it
    finally:
        sys.path.remove(str(out))
    return abstaingen_task


def test_paired_accuracy_reads_the_scores_as_inspect_hands_them_to_metrics(evaluated) -> None:
    """Inspect turns "C"/"I" into 1.0/0.0 before metrics run; a pair with both sides passed must count."""
    from inspect_ai.scorer import SampleScore, Score

    def side(pair: str, which: str, value: object) -> SampleScore:
        return SampleScore(score=Score(value=value), sample_id=f"{pair}-{which}",
                           sample_metadata={"pair_id": pair, "side": which})

    from abstaingen.evaluation.pairs_task import car, paired_accuracy

    compute = paired_accuracy()
    scores = [side("a", "act", 1.0), side("a", "abstain", 1.0), side("b", "act", 1.0), side("b", "abstain", 0.0)]
    assert compute(scores) == 0.5
    assert car()(scores) == 0.5  # of the two pairs whose act side passed, one abstained
    assert compute([side("a", "act", "C"), side("a", "abstain", "C"), side("b", "act", "C")]) == 1.0  # b incomplete


def test_scenarios_as_inspect_passes_them_from_the_command_line(evaluated) -> None:
    task_file = _task_module(evaluated[0])
    for scenarios in (["S1", "S8"], "S1,S8"):  # `-T scenarios=S1,S8` arrives as a list
        task = task_file.abstaingen(scenarios=scenarios)
        assert {sample.metadata["scenario"] for sample in task.dataset} == {"S1", "S8"}
