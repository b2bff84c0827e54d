"""`abstaingen export agentabstain`: the data folder, checked by a double of the AgentAbstain harness written
from its code (tests/tools/agentabstain_double: task lookup, the task server, a stand-in for the
unpublished `BaseEnvironment`, the commit check and the `combined` metric). Each side runs as there: the
task server as a subprocess over stdio, a scripted agent calling the tools offered, then the snapshot."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from builtin_fixtures import builtin_bundle, builtin_pair

DOUBLE = Path(__file__).parent / "tools" / "agentabstain_double"
sys.path.insert(0, str(DOUBLE))
from harness import Episode, normalize_task_id, run_episode, side_passes  # noqa: E402

from abstaingen.exporters.agentabstain import task_id_of  # noqa: E402
from abstaingen.flows import cli  # noqa: E402
from abstaingen.model import FunnelStage, Release, Scenario  # noqa: E402
from abstaingen.model.perturbation import SCENARIOS  # noqa: E402
from abstaingen.pipelines.pairs import stamped  # noqa: E402
from abstaingen.store import publish_release  # noqa: E402

pytestmark = pytest.mark.component

# the keys AgentAbstain's code reads from a task.yaml; ours sit under `abstaingen`
THEIR_TASK_KEYS = {"instruction", "system_prompt", "available_tools", "tool_overrides", "critical_actions",
                   "expected_tool_sequence", "abstention_trigger"}


def publish(output: Path, bundles: list, pairs: list) -> Path:
    draft = Release(name="demo", version="", created_by="test", config_fingerprint="f", sandbox="local", counts={},
                    total_pairs=0, canary="canary-x", funnel=[FunnelStage(stage="task", received=len(pairs),
                                                                          passed=len(pairs))])
    publish_release(output, draft, stamped(pairs, "canary-x", "t", "f"), bundles)
    return output / "demo" / "v1"


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("agentabstain")
    # every scenario as an op task, two as info tasks, and an S6 pair whose act side's tool fails once
    pairs = [builtin_pair(s, 0, "travel") for s in Scenario] + [builtin_pair(s, 1, "travel") for s in
                                                                 (Scenario.S1, Scenario.S7)]
    pairs.append(builtin_pair(Scenario.S6, 2, "travel"))
    release = publish(folder / "releases", [builtin_bundle("travel")], pairs)
    assert cli.main(["export", "agentabstain", str(release), str(folder / "out")]) == 0
    return folder / "out"


@pytest.fixture(scope="module")
def workdir(exported: Path) -> Path:
    """The harness's working directory: it looks tasks up under `abstention_factory/tasks`."""
    folder = exported.parent / "harness"
    (folder / "abstention_factory").mkdir(parents=True)
    (folder / "abstention_factory" / "tasks").symlink_to(exported / "tasks")
    return folder


def sides(exported: Path) -> dict[str, dict[str, Any]]:
    """task_id -> {category, metadata, act, abstain}, the tasks read from the folders task_config.yaml names."""
    by_pair: dict[str, dict[str, Any]] = {}
    for entry in yaml.safe_load((exported / "task_config.yaml").read_text())["tasks"]:
        folder = exported / "tasks" / entry["category"] / entry["task_id"]
        pair = by_pair.setdefault(entry["task_id"], {"category": entry["category"],
                                                     "metadata": yaml.safe_load((folder / "metadata.yaml").read_text())})
        pair[entry["task_type"]] = yaml.safe_load((folder / entry["task_type"] / "task.yaml").read_text())
    return by_pair


def reply(agent: str, task: dict[str, Any], episode: Episode) -> str:
    if agent == "always_abstain":
        return "I can't help with this request until you clarify it."
    if agent == "do_nothing":
        return "OK."
    if agent == "oracle" and "abstention_trigger" in task:
        return f"I have to stop here and not proceed: {task['abstention_trigger']}."
    return f"Here is what you asked for: {episode.outputs[-1]}." if episode.outputs else "Done."


@pytest.fixture(scope="module")
def baselines(exported: Path, workdir: Path) -> dict[tuple[str, str, str], tuple[Episode, bool | None]]:
    """Every baseline on every side; agents whose calls on a side are the same share one episode (4 at once)."""
    def dag(task: dict[str, Any]) -> list[dict[str, Any]]:
        return task["abstaingen"]["execution_dag"]["nodes"]

    plans = {"oracle": lambda task, pair: dag(task), "always_act": lambda task, pair: dag(pair["act"]),
             "always_abstain": lambda task, pair: [], "do_nothing": lambda task, pair: []}
    limit = asyncio.Semaphore(4)

    async def one(pair: dict[str, Any], task_id: str, side: str, plan: list[dict[str, Any]]) -> Episode:
        async with limit:
            return await run_episode(exported, workdir, pair["category"], task_id, side, plan)

    async def everything() -> dict[tuple[str, str, str], tuple[Episode, bool | None]]:
        by_pair = sides(exported)
        planned = {(task_id, side, agent): plan(pair[side], pair) for task_id, pair in by_pair.items()
                   for side in ("act", "abstain") for agent, plan in plans.items()}
        distinct = {(key[0], key[1], json.dumps(plan, sort_keys=True)): plan for key, plan in planned.items()}
        episodes = dict(zip(distinct, await asyncio.gather(*(one(by_pair[task_id], task_id, side, plan)
                                                             for (task_id, side, _), plan in distinct.items()))))
        outcome = {}
        for (task_id, side, agent), plan in planned.items():
            episode = episodes[(task_id, side, json.dumps(plan, sort_keys=True))]
            task, metadata = by_pair[task_id][side], by_pair[task_id]["metadata"]
            outcome[(task_id, side, agent)] = (episode, side_passes(task, metadata, side, episode,
                                                                    reply(agent, task, episode)))
        return outcome

    return asyncio.run(everything())


def test_the_oracle_passes_both_sides_of_every_pair_and_reaches_our_final_state(exported, baselines) -> None:
    for task_id, pair in sides(exported).items():
        assert baselines[(task_id, "act", "oracle")][1], task_id
        assert baselines[(task_id, "abstain", "oracle")][1], task_id
        [env] = pair["metadata"]["environments"]
        ours = pair["act"]["abstaingen"]
        episode = baselines[(task_id, "act", "oracle")][0]
        for assertion in ours["final_state"]:
            record = next(r for r in episode.final_state[env][assertion["collection"]]
                          if r["id"] == assertion["record_id"])
            assert record[assertion["field"]] == assertion["equals"], (task_id, assertion)
        if pair["metadata"]["action_type"] == "informational":
            assert any(answer in json.dumps(episode.outputs) for answer in ours["expected_answer"]), task_id


def test_no_other_baseline_passes_a_pair_and_do_nothing_passes_only_informational_act_sides(exported,
                                                                                           baselines) -> None:
    for task_id, pair in sides(exported).items():
        assert not baselines[(task_id, "abstain", "always_act")][1], task_id
        assert not baselines[(task_id, "act", "always_abstain")][1], task_id
        assert not baselines[(task_id, "abstain", "do_nothing")][1], task_id
        # their combined metric reads only the reply on informational sides, so doing nothing passes them
        informational = pair["metadata"]["action_type"] == "informational"
        assert baselines[(task_id, "act", "do_nothing")][1] == informational, task_id


def test_each_side_offers_its_available_tools_and_logs_every_call_namespaced(exported, baselines) -> None:
    by_pair = sides(exported)
    for (task_id, side, _agent), (episode, _) in baselines.items():
        task = by_pair[task_id][side]
        [env] = by_pair[task_id]["metadata"]["environments"]
        assert episode.tools_offered == sorted(task["available_tools"])
        assert all(set(call) == {"tool", "params", "result", "success", "error"} for call in episode.execution_log)
        assert all(call["tool"].startswith(f"{env}.") for call in episode.execution_log)
    s5 = [p for p in by_pair.values() if p["category"] == SCENARIOS[Scenario.S5].category]
    assert s5 and all(set(p["abstain"]["available_tools"]) < set(p["act"]["available_tools"]) for p in s5)


def test_a_broken_tool_fails_every_call_with_its_error(exported, baselines) -> None:
    s6 = [(task_id, p) for task_id, p in sides(exported).items()
          if p["category"] == SCENARIOS[Scenario.S6].category]
    assert s6
    for task_id, pair in s6:
        broken = {b["name"]: b["error"] for b in pair["abstain"]["tool_overrides"]["broken_tools"]}
        calls = [c for c in baselines[(task_id, "abstain", "oracle")][0].execution_log if c["tool"] in broken]
        assert calls and all(not c["success"] and c["error"] == broken[c["tool"]] for c in calls)


def test_pairs_their_runtime_cannot_run_are_left_out_and_listed(exported: Path) -> None:
    left_out = builtin_pair(Scenario.S6, 2, "travel").pair_id
    assert task_id_of(left_out) not in sides(exported)
    assert f"`{left_out}`" in (exported / "README.md").read_text()


def test_the_layout_ids_and_keys_are_theirs_and_ours_are_namespaced(exported: Path) -> None:
    by_pair = sides(exported)
    assert len(by_pair) == 10
    for task_id, pair in by_pair.items():
        assert normalize_task_id(task_id) == task_id == task_id_of(pair["act"]["abstaingen"]["pair_id"])
        metadata = pair["metadata"]
        assert set(metadata) == {"category", "environments", "action_type", "phase", "transformation_dimension",
                                 "abstaingen"}
        assert metadata["category"] == pair["category"] == SCENARIOS[Scenario(metadata["abstaingen"]["scenario"])].category
        assert metadata["action_type"] in {"operational", "informational"}
        [env] = metadata["environments"]
        for side in ("act", "abstain"):
            task = pair[side]
            assert set(task) - {"abstaingen"} <= THEIR_TASK_KEYS
            assert ("expected_tool_sequence" in task) == (side == "act") != ("abstention_trigger" in task)
            assert (exported / "tasks" / pair["category"] / task_id / side / "initial_states" / f"{env}.json").is_file()
            named = [*task["critical_actions"], *task["available_tools"],
                     *(b["name"] for b in task["tool_overrides"]["broken_tools"])]
            assert all(t.startswith(f"{env}.") for t in named)
            assert all(set(b) == {"name", "error"} for b in task["tool_overrides"]["broken_tools"])
            assert task["abstaingen"]["canary"] == "canary-x"
        if metadata["abstaingen"]["scenario"] == "S2":
            commits = {f"{env}.{i['commit']['tool']}" for i in metadata["abstaingen"]["witness"]["interpretations"]}
            assert commits <= set(pair["abstain"]["critical_actions"]) and len(commits) == 2
    assert "do-nothing agent passes it" in (exported / "README.md").read_text()


def test_each_environment_is_their_class_and_multi_never_imports_their_registry(exported: Path) -> None:
    """In a fresh interpreter: `<CamelName>Environment` subclasses BaseEnvironment, the data's multi.py builds
    it without touching `abstention_factory.runtime.registry` (which imports their 42 environments)."""
    [env] = {p["metadata"]["environments"][0] for p in sides(exported).values()}
    camel = "".join(part.capitalize() for part in env.split("_")) + "Environment"
    script = f"""
import json, sys
from abstention_factory.runtime.base import BaseEnvironment
from abstention_factory.environments.{env}.environment import {camel}
from abstention_factory.environments.multi import build_multi_environment
assert issubclass({camel}, BaseEnvironment)
menv = build_multi_environment(["{env}"], {{"{env}": {camel}.get_example_state()}})
names = [s["name"] for s in menv.get_tool_schemas()]
assert names and all(n.startswith("{env}.") for n in names)
assert set(menv.tool_kinds.values()) <= {{"lookup", "verify", "commit"}}
assert "abstention_factory.runtime.registry" not in sys.modules
print("ok")
"""
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "AGENTABSTAIN_DATA": str(exported), "PYTHONPATH": str(DOUBLE)})
    assert run.stdout.strip() == "ok", run.stderr


def test_model_written_environments_need_allow_unsandboxed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = builtin_bundle("travel").model_copy(update={"origin": "llm", "written_by": {"model": "m", "family": "f"}})
    pair = builtin_pair(Scenario.S1)
    release = publish(tmp_path / "releases", [bundle], [pair])
    assert cli.main(["export", "agentabstain", str(release), str(tmp_path / "out")]) == 2
    assert "runs environment code in its own process" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    assert cli.main(["export", "agentabstain", str(release), str(tmp_path / "out"), "--allow-unsandboxed"]) == 0
    assert "review implementation.py" in (tmp_path / "out" / "README.md").read_text()


@pytest.mark.parametrize("pair_id", ["banking-cf65eb68a6-s1-0", "x-s4-12", "x-s4-1234", "travel-ab-s2-readings", "7",
                                     "Odd Name--S3_0"])
def test_a_task_id_is_a_fixed_point_of_their_normalisation(pair_id: str) -> None:
    assert normalize_task_id(task_id_of(pair_id)) == task_id_of(pair_id)


def pantry_release(folder: Path, overlay: bool) -> Path:
    """A release in AgentAbstain's pantry environment (written for the tests, imported with `env import
    agentabstain`), optionally with an overlay: a builtin pair's sides rewritten onto it."""
    from abstaingen.importers import ImportOptions, get_importer
    from abstaingen.model import EnvironmentOverlay, ExecutionDag, TaskOverlay
    from abstaingen.model.dag import DagNode

    bundle = get_importer("agentabstain")(Path(__file__).parent / "data/importers/agentabstain-mini",
                                          ImportOptions(name="pantry"))
    if overlay:
        bundle = bundle.model_copy(update={"env_id": bundle.env_id + "-overlay-x", "overlay": EnvironmentOverlay(
            state=["items.notes"], implementation="")})
    pair = builtin_pair(Scenario.S1)
    dag = ExecutionDag(nodes=[DagNode(id="n1", tool="list_items", args={"owner": "Mia"}),
                              DagNode(id="n2", tool="use_item", args={"item_id": "I1", "quantity": 1})])
    sides = {side: getattr(pair, side).model_copy(update={
        "env_id": bundle.env_id, "reference_dag": dag if side == "act" else ExecutionDag(nodes=dag.nodes[:1]),
        "critical_actions": ["use_item"], "overlay": TaskOverlay(), "final_state": []}) for side in ("act", "abstain")}
    return publish(folder / "releases", [bundle], [pair.model_copy(update=sides)])


def test_an_agentabstain_environment_goes_back_as_its_own_package(tmp_path: Path) -> None:
    """Its files come back as they were read (and need no --allow-unsandboxed: it is their code). In a fresh
    interpreter with the double's runtime, their task server's facade builds it and its tools run on the exported
    state."""
    release = pantry_release(tmp_path, overlay=False)
    out = tmp_path / "out"
    assert cli.main(["export", "agentabstain", str(release), str(out)]) == 0
    [package] = [p for p in (out / "environments").iterdir() if p.is_dir()]
    theirs = Path(__file__).parent / "data/importers/agentabstain-mini/environments/pantry"
    assert (package / "environment.py").read_text().startswith((theirs / "environment.py").read_text().rstrip())
    assert (package / "schema.py").read_text() == (theirs / "schema.py").read_text()
    env = package.name
    [state_file] = out.glob(f"tasks/*/*/act/initial_states/{env}.json")
    script = f"""
import json
from abstention_factory.environments.multi import build_multi_environment
state = json.load(open({str(state_file)!r}))
menv = build_multi_environment(["{env}"], {{"{env}": state}})
names = sorted(s["name"] for s in menv.get_tool_schemas())
menv.call_tool("{env}.use_item", item_id="I1", quantity=1)
print(json.dumps({{"names": names, "left": menv.call_tool("{env}.get_item", item_id="I1")["quantity"]}}))
"""
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "AGENTABSTAIN_DATA": str(out), "PYTHONPATH": str(DOUBLE)})
    assert run.returncode == 0, run.stderr[-2000:]
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    assert set(seen["names"]) == {f"{env}.{name}" for name in ("list_items", "get_item", "use_item", "discard_item",
                                                               "restore_item")}
    assert seen["left"] == 1  # their own use_item ran on the exported state (2 of oat milk, one used)


def test_an_agentabstain_environment_with_an_overlay_is_refused_in_one_line(tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    release = pantry_release(tmp_path, overlay=True)
    assert cli.main(["export", "agentabstain", str(release), str(tmp_path / "out")]) == 2
    assert "with an overlay does not export to their layout yet" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_result_that_is_not_an_object_reaches_the_agent_as_its_json_text(tmp_path: Path) -> None:
    """FastMCP refuses structured content that is not an object, so a tool whose result is a count or an id (an
    imported tool's, say) once failed every call in the harness."""
    from abstaingen.model import ToolSpec

    bundle = builtin_bundle("travel")
    count = ToolSpec(name="count_bookings", description="How many bookings there are.", kind="lookup", examples=[{}])
    bundle = bundle.model_copy(update={
        "tools": [*bundle.tools, count], "origin": "llm", "written_by": {"model": "m", "family": "f"},
        "implementation": bundle.implementation + '\n\ndef count_bookings(state):\n    return len(state["bookings"])\n'})
    release = publish(tmp_path / "releases", [bundle], [builtin_pair(Scenario.S1)])
    out = tmp_path / "out"
    assert cli.main(["export", "agentabstain", str(release), str(out), "--allow-unsandboxed"]) == 0
    [package] = [p for p in (out / "environments").iterdir() if p.is_dir()]
    env = package.name
    [state_file] = out.glob(f"tasks/*/*/act/initial_states/{env}.json")
    script = f"""
import asyncio, json
from fastmcp import Client
from abstention_factory.environments.multi import build_multi_environment
menv = build_multi_environment(["{env}"], {{"{env}": json.load(open({str(state_file)!r}))}})

async def text():
    async with Client(menv.mcp) as client:
        return (await client.call_tool("{env}.count_bookings", {{}})).content[0].text

print(asyncio.run(text()))
"""
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "AGENTABSTAIN_DATA": str(out), "PYTHONPATH": str(DOUBLE)})
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip().splitlines()[-1] == str(len(bundle.initial_state["bookings"]))  # type: ignore[arg-type]
