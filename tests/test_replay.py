"""Replay of reference DAGs through MCP, and the positive-replay validator on passing and failing runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from builtin_fixtures import builtin_bundle, builtin_pair

from abstaingen.model import DagNode, EnvironmentBundle, ExecutionDag, OutputRef, Scenario, StateAssertion
from abstaingen.sandboxes.backends import LocalBackend
from abstaingen.sandboxes.replay import replay_in_sandbox
from abstaingen.store import write_bundle
from abstaingen.validators.replay_check import check_positive_replay

pytestmark = pytest.mark.component


@pytest.fixture(scope="module")
def travel_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("env") / "travel"
    write_bundle(builtin_bundle("travel"), folder)
    return folder


def passed(checks) -> dict[str, bool]:
    return {c.name: c.passed for c in checks}


def test_replay_runs_every_step_and_is_deterministic_within_and_across_processes(travel_dir: Path) -> None:
    acts = [builtin_pair(s, variant).act for s in (Scenario.S1, Scenario.S4, Scenario.S7) for variant in (0, 1)]
    first = replay_in_sandbox(travel_dir, acts, LocalBackend(), runs=2)
    second = replay_in_sandbox(travel_dir, acts, LocalBackend(), runs=1)  # a fresh server process
    for act in acts:
        runs = first[act.task_id] + second[act.task_id]
        assert all(r.completed for r in runs)
        assert [c.tool for c in runs[0].trace.calls] == [n.tool for n in act.reference_dag.order()]
        assert len({r.trace.trace_hash for r in runs}) == 1
        assert all(passed(check_positive_replay(act, runs)).values())


def test_bindings_carry_earlier_outputs_into_later_calls(travel_dir: Path) -> None:
    act = builtin_pair(Scenario.S1).act
    [run] = replay_in_sandbox(travel_dir, [act], LocalBackend(), runs=1)[act.task_id]
    found = run.trace.calls[0].result["results"][0]["id"]
    assert {c.args.get("booking_id") for c in run.trace.calls[1:]} == {found}


def test_wrong_final_state_assertion_is_caught(travel_dir: Path) -> None:
    act = builtin_pair(Scenario.S2).act
    wrong = act.model_copy(update={"final_state": [act.final_state[0].model_copy(update={"equals": "no such status"})]})
    runs = replay_in_sandbox(travel_dir, [wrong], LocalBackend())[wrong.task_id]
    checks = passed(check_positive_replay(wrong, runs))
    assert checks == {"replay_steps": True, "replay_final_state": False, "replay_deterministic": True}


def test_a_failing_step_is_caught_and_replay_stops_there(travel_dir: Path) -> None:
    act = builtin_pair(Scenario.S2).act
    nodes = [n if n.id != "verify" else n.model_copy(update={"tool": act.critical_actions[0]})
             for n in act.reference_dag.nodes]
    # verify now commits, so the real commit afterwards finds the booking no longer active
    broken = act.model_copy(update={"reference_dag": ExecutionDag(nodes=nodes)})
    [run, _] = replay_in_sandbox(travel_dir, [broken], LocalBackend())[broken.task_id]
    assert run.failed_node == "commit" and "not active" in (run.failure or "")
    assert passed(check_positive_replay(broken, [run, _]))["replay_steps"] is False


def test_an_unresolvable_binding_is_a_failed_step(travel_dir: Path) -> None:
    act = builtin_pair(Scenario.S1).act
    nodes = [DagNode(id="find", tool="find_bookings", args={"passenger": "Nobody Atall"}),
             DagNode(id="read", tool="get_booking",
                     bindings={"booking_id": OutputRef(node="find", path=["results", 0, "id"])})]
    lost = act.model_copy(update={"reference_dag": ExecutionDag(nodes=nodes)})
    [run] = replay_in_sandbox(travel_dir, [lost], LocalBackend(), runs=1)[lost.task_id]
    assert run.failed_node == "read" and "no item 0 in a list of 0" in (run.failure or "")


def test_nondeterministic_tools_fail_the_determinism_check(tmp_path: Path, tiny_bundle: EnvironmentBundle) -> None:
    counting = '''
CALLS = []


def find_booking(state, booking_id):
    CALLS.append(booking_id)  # module state survives between episodes: not allowed, and caught
    return {"id": booking_id, "lookups_so_far": len(CALLS)}


def cancel_booking(state, booking_id):
    state["bookings"][0]["status"] = "cancelled"
    return {"id": booking_id}
'''
    bundle = tiny_bundle.model_copy(update={"implementation": counting})
    write_bundle(bundle, tmp_path / "tiny")
    act = builtin_pair(Scenario.S1).act.model_copy(update={
        "env_id": bundle.env_id,
        "reference_dag": ExecutionDag(nodes=[
            DagNode(id="find", tool="find_booking", args={"booking_id": "B1"}),
            DagNode(id="commit", tool="cancel_booking", args={"booking_id": "B1"}, after=["find"])]),
        "critical_actions": ["cancel_booking"],
        "final_state": [StateAssertion(collection="bookings", record_id="B1", field="status", equals="cancelled")],
    })
    runs = replay_in_sandbox(tmp_path / "tiny", [act], LocalBackend(), runs=2)[act.task_id]
    checks = passed(check_positive_replay(act, runs))
    assert checks == {"replay_steps": True, "replay_final_state": True, "replay_deterministic": False}


def test_an_act_side_that_does_not_single_out_its_record_fails(travel_dir: Path) -> None:
    act = builtin_pair(Scenario.S1).act
    owner = act.reference_dag.node("find").args["passenger"]
    nodes = [n.model_copy(update={"args": {"passenger": owner}}) if n.id == "find" else n
             for n in act.reference_dag.nodes]
    vague = act.model_copy(update={"reference_dag": ExecutionDag(nodes=nodes)})
    runs = replay_in_sandbox(travel_dir, [vague], LocalBackend())[vague.task_id]
    [steps] = [c for c in check_positive_replay(vague, runs) if c.name == "replay_steps"]
    assert not steps.passed and "takes the first of" in steps.detail
