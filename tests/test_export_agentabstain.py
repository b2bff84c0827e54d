"""`abstaingen export agentabstain`: the data folder, checked clean-room by a double of the harness
(tests/tools/agentabstain_double.py) that serves each environment package over stdio and replays our
scripted baselines under AgentAbstain's rules."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from builtin_fixtures import builtin_bundle, builtin_pair

sys.path.insert(0, str(Path(__file__).parent / "tools"))
from agentabstain_double import Episode, passes, run_episode  # noqa: E402

from abstaingen.exporters.agentabstain import identifier  # noqa: E402
from abstaingen.flows import cli  # noqa: E402
from abstaingen.model import FunnelStage, Release, Scenario  # noqa: E402
from abstaingen.model.perturbation import SCENARIOS  # noqa: E402
from abstaingen.pipelines.pairs import stamped  # noqa: E402
from abstaingen.store import publish_release  # noqa: E402

pytestmark = pytest.mark.component

NO_CALLS: dict[str, Any] = {"nodes": []}


def publish(output: Path, bundles: list, pairs: list) -> Path:
    draft = Release(name="demo", version="", created_by="test", config_fingerprint="f", sandbox="local", counts={},
                    total_pairs=0, canary="canary-x", funnel=[FunnelStage(stage="task", received=len(pairs),
                                                                          passed=len(pairs))])
    publish_release(output, draft, stamped(pairs, "canary-x", "t", "f"), bundles)
    return output / "demo" / "v1"


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("agentabstain")
    # every scenario as an op task, and two as info tasks (odd variants are info where the scenario allows)
    pairs = [builtin_pair(s, 0, "travel") for s in Scenario] + [builtin_pair(s, 1, "travel") for s in
                                                                 (Scenario.S1, Scenario.S7)]
    release = publish(folder / "releases", [builtin_bundle("travel")], pairs)
    assert cli.main(["export", "agentabstain", str(release), str(folder / "out")]) == 0
    return folder / "out"


def tasks(exported: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (exported / "tasks.jsonl").read_text().splitlines()]


def sides(exported: Path) -> dict[str, dict[str, dict[str, Any]]]:
    by_pair: dict[str, dict[str, dict[str, Any]]] = {}
    for task in tasks(exported):
        by_pair.setdefault(task["task_id"], {})[task["task_type"]] = task
    return by_pair


def reply(agent: str, task: dict[str, Any], episode: Episode) -> str:
    if agent == "always_abstain":
        return "I can't help with this request until you clarify it."
    if agent == "do_nothing":
        return "OK."
    if agent == "oracle" and task["task_type"] == "abstain":
        return f"I have to stop here and not proceed: {task['abstention_trigger']}."
    return f"Here is what you asked for: {episode.outputs[-1]}." if episode.outputs else "Done."


@pytest.fixture(scope="module")
def baselines(exported: Path) -> dict[tuple[str, str, str], tuple[Episode, bool]]:
    """Every baseline on every side; agents whose calls on a side are the same share one episode, each
    served over stdio (4 at once)."""
    plans = {"oracle": lambda task, pair: task["execution_dag"], "always_act": lambda task, pair: pair["act"][
        "execution_dag"], "always_abstain": lambda task, pair: NO_CALLS, "do_nothing": lambda task, pair: NO_CALLS}
    limit = asyncio.Semaphore(4)

    async def one(task: dict[str, Any], plan: dict[str, Any]) -> Episode:
        async with limit:
            return await run_episode(exported, task, plan)

    async def everything() -> dict[tuple[str, str, str], tuple[Episode, bool]]:
        by_pair = sides(exported)
        planned = {(task_id, side, agent): (task, plan(task, pair)) for task_id, pair in by_pair.items()
                   for side, task in pair.items() for agent, plan in plans.items()}
        distinct = {(key[0], key[1], json.dumps(dag, sort_keys=True)): (task, dag) for key, (task, dag) in planned.items()}
        episodes = dict(zip(distinct, await asyncio.gather(*(one(task, dag) for task, dag in distinct.values()))))
        outcome = {}
        for key, (task, dag) in planned.items():
            episode = episodes[(key[0], key[1], json.dumps(dag, sort_keys=True))]
            outcome[key] = (episode, passes(task, episode, reply(key[2], task, episode)))
        return outcome

    return asyncio.run(everything())


def test_the_oracle_passes_both_sides_of_every_pair_and_reaches_our_final_state(exported, baselines) -> None:
    for task_id, pair in sides(exported).items():
        assert baselines[(task_id, "act", "oracle")][1], task_id
        assert baselines[(task_id, "abstain", "oracle")][1], task_id
        act = pair["act"]
        episode = baselines[(task_id, "act", "oracle")][0]
        for assertion in act["final_state"]:
            record = next(r for r in episode.state[assertion["collection"]] if r["id"] == assertion["record_id"])
            assert record[assertion["field"]] == assertion["equals"], (task_id, assertion)
        if act["action_type"] == "info":
            assert any(answer in json.dumps(episode.outputs) for answer in act["expected_answer"]), task_id


def test_no_other_baseline_passes_a_pair_and_do_nothing_passes_only_info_act_sides(exported, baselines) -> None:
    for task_id, pair in sides(exported).items():
        assert not baselines[(task_id, "abstain", "always_act")][1], task_id
        assert not baselines[(task_id, "act", "always_abstain")][1], task_id
        assert not baselines[(task_id, "abstain", "do_nothing")][1], task_id
        # AgentAbstain checks commits: an info act side has none, so doing nothing passes it
        assert baselines[(task_id, "act", "do_nothing")][1] == (pair["act"]["action_type"] == "info"), task_id


def test_each_side_offers_its_available_tools_and_logs_every_call(exported, baselines) -> None:
    for (task_id, side, _agent), (episode, _) in baselines.items():
        task = sides(exported)[task_id][side]
        assert episode.tools_offered == sorted(task["available_tools"])
        assert all(set(call) == {"tool", "params", "result", "success", "error"} for call in episode.calls)
    s5 = [p for p in sides(exported).values() if p["act"]["scenario"] == "S5"]
    assert s5 and all(set(p["abstain"]["available_tools"]) < set(p["act"]["available_tools"]) for p in s5)


def test_the_layout_ids_and_critical_actions(exported: Path) -> None:
    lines = tasks(exported)
    assert len(lines) == 2 * len(sides(exported)) == 20
    for task in lines:
        assert task["task_id"] == identifier(task["task_id"]) == identifier(task["pair_id"])
        assert task["category"] == SCENARIOS[Scenario(task["scenario"])].category
        folder = exported / task["path"]
        assert folder.parent.parent.name == task["category"] and folder.parent.name == task["task_id"]
        on_disk = yaml.safe_load((folder / "task.yaml").read_text())
        assert on_disk == {k: v for k, v in task.items() if k != "path"}
        [env] = task["environments"]
        assert (folder / "initial_states" / f"{env}.json").is_file()
        assert all(t.startswith(f"{env}.") for t in [*task["critical_actions"], *task["available_tools"]])
        assert all(node["tool"].startswith(f"{env}.") for node in task["execution_dag"]["nodes"])
        assert task["canary"] == "canary-x"
    for pair in sides(exported).values():
        if pair["abstain"]["scenario"] == "S2":
            readings = yaml.safe_load((exported / pair["abstain"]["path"]).parent.joinpath("metadata.yaml").read_text())
            commits = {f"{pair['abstain']['environments'][0]}.{i['commit']['tool']}"
                       for i in readings["witness"]["interpretations"]}
            assert commits <= set(pair["abstain"]["critical_actions"]) and len(commits) == 2
    assert "do-nothing agent passes it" in (exported / "README.md").read_text()


def test_the_environment_class_runs_in_process_with_its_overrides(exported: Path) -> None:
    sys.path.insert(0, str(exported / "environments"))
    try:
        s6 = next(p for p in sides(exported).values() if p["abstain"]["scenario"] == "S6")["abstain"]
        [env] = s6["environments"]
        package = __import__(env)
        state = json.loads((exported / s6["path"] / "initial_states" / f"{env}.json").read_text())
        environment = package.Environment(state, s6["tool_overrides"], s6["available_tools"])
        broken = s6["tool_overrides"]["broken_tools"][0]
        with pytest.raises(package.ToolCallError):
            environment.call(broken["tool"].removeprefix(f"{env}."), {})
        assert environment.call_log[-1]["success"] is False and environment.call_log[-1]["error"] == broken["error"]
    finally:
        sys.path.remove(str(exported / "environments"))


def test_model_written_environments_need_allow_unsandboxed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = builtin_bundle("travel").model_copy(update={"origin": "llm", "written_by": {"model": "m", "family": "f"}})
    pair = builtin_pair(Scenario.S1)
    release = publish(tmp_path / "releases", [bundle], [pair])
    assert cli.main(["export", "agentabstain", str(release), str(tmp_path / "out")]) == 2
    assert "runs environment code in its own process" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    assert cli.main(["export", "agentabstain", str(release), str(tmp_path / "out"), "--allow-unsandboxed"]) == 0
    assert "review implementation.py" in (tmp_path / "out" / "README.md").read_text()
