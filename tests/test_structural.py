"""Each structural check on a passing pair and on a pair broken in the way the check exists to catch."""

from __future__ import annotations

import pytest
from builtin_fixtures import builtin_bundle, builtin_pair

from abstaingen.model import (
    DagNode,
    Deliverable,
    ExecutionDag,
    PatchOp,
    Scenario,
    TaskOverlay,
    TaskPair,
)
from abstaingen.validators import structural

BUNDLE = builtin_bundle("travel")


def with_act(pair: TaskPair, **changes) -> TaskPair:
    return pair.model_copy(update={"act": pair.act.model_copy(update=changes)})


def with_abstain(pair: TaskPair, **changes) -> TaskPair:
    return pair.model_copy(update={"abstain": pair.abstain.model_copy(update=changes)})


@pytest.mark.parametrize("scenario", list(Scenario))
@pytest.mark.parametrize("variant", [0, 1])
def test_builtin_pairs_pass_every_structural_check(scenario: Scenario, variant: int) -> None:
    checks = structural.structural_checks(builtin_pair(scenario, variant), BUNDLE)
    assert [c.name for c in checks if not c.passed] == []


def test_a_cycle_in_the_dag_is_rejected() -> None:
    pair = builtin_pair(Scenario.S1)
    nodes = [n.model_copy(update={"after": ["commit"]}) if n.id == "find" else n for n in pair.act.reference_dag.nodes]
    check = structural.check_dag_acyclic(with_act(pair, reference_dag=ExecutionDag(nodes=nodes)))
    assert not check.passed and "cycle" in check.detail


def test_a_dependency_on_a_missing_node_is_rejected() -> None:
    pair = builtin_pair(Scenario.S1)
    dag = ExecutionDag(nodes=[DagNode(id="a", tool="get_booking", args={"booking_id": "x"}, after=["ghost"])])
    check = structural.check_dag_acyclic(with_act(pair, reference_dag=dag))
    assert not check.passed and "ghost" in check.detail


@pytest.mark.parametrize(
    ("node", "expected"),
    [
        (DagNode(id="n", tool="teleport", args={}), "unknown tool teleport"),
        (DagNode(id="n", tool="get_booking", args={"booking_id": 42}), "is not of type 'string'"),
        (DagNode(id="n", tool="get_booking", args={}), "'booking_id' is a required property"),
        (DagNode(id="n", tool="find_bookings", args={"planet": "Mars"}), "Additional properties"),
    ],
)
def test_bad_tool_references_and_arguments_are_rejected(node: DagNode, expected: str) -> None:
    pair = builtin_pair(Scenario.S1)
    check = structural.check_tool_arguments(with_act(pair, reference_dag=ExecutionDag(nodes=[node])), BUNDLE)
    assert not check.passed and expected in check.detail


def test_critical_actions_must_be_commit_tools_in_the_act_dag() -> None:
    pair = builtin_pair(Scenario.S1)
    lookup = structural.check_critical_actions(with_act(pair, critical_actions=["get_booking"]), BUNDLE)
    assert not lookup.passed and "is a lookup tool" in lookup.detail
    absent = structural.check_critical_actions(with_act(pair, critical_actions=["convert_to_credit"]), BUNDLE)
    assert not absent.passed and "not in the reference DAG" in absent.detail


def test_info_tasks_commit_nothing_and_op_tasks_assert_a_final_state() -> None:
    info = builtin_pair(Scenario.S7, variant=1)
    assert info.act.deliverable == Deliverable.INFO
    op_dag = builtin_pair(Scenario.S1, variant=0).act.reference_dag
    check = structural.check_deliverable(with_act(info, reference_dag=op_dag), BUNDLE)
    assert not check.passed and "info task calls commit tools" in check.detail

    op = builtin_pair(Scenario.S1, variant=0)
    check = structural.check_deliverable(with_act(op, final_state=[]), BUNDLE)
    assert not check.passed and "final-state assertions" in check.detail


def test_twins_must_differ_in_exactly_the_scenarios_dimension() -> None:
    s7 = builtin_pair(Scenario.S7)  # perturbs env_state only
    reworded = structural.check_single_perturbation(with_abstain(s7, instruction=s7.act.instruction + " Thanks!"))
    assert not reworded.passed and "instruction" in reworded.detail

    identical = structural.check_single_perturbation(with_abstain(s7, overlay=s7.act.overlay))
    assert not identical.passed and "nothing" in identical.detail

    s1 = builtin_pair(Scenario.S1)
    patch = PatchOp(op="set", collection="bookings", record_id="x", values={"notes": "!"})
    two = structural.check_single_perturbation(with_abstain(s1, overlay=TaskOverlay(state_patch=[patch])))
    assert not two.passed and "the records (a note" in two.detail


def test_the_witness_must_match_the_scenario() -> None:
    s1, s8 = builtin_pair(Scenario.S1), builtin_pair(Scenario.S8)
    swapped = s1.model_copy(update={"perturbation": s1.perturbation.model_copy(
        update={"witness": s8.perturbation.witness})})
    check = structural.check_single_perturbation(swapped)
    assert not check.passed and "multiple_candidates witness" in check.detail


def test_abstain_timing_and_clarification_labels_are_checked() -> None:
    s8 = builtin_pair(Scenario.S8)
    late = structural.check_abstain_labels(with_abstain(s8, earliest_abstain_step=4))
    assert not late.passed and "the reference makes 2 calls" in late.detail

    s1 = builtin_pair(Scenario.S1)  # the problem shows in the lookup's result, not in the words
    assert structural.check_abstain_labels(s1).passed and s1.abstain.earliest_abstain_step == 1
    early = structural.check_abstain_labels(with_abstain(s1, earliest_abstain_step=0))
    assert not early.passed and "the reference makes 1 calls" in early.detail
    blind = structural.check_abstain_labels(with_abstain(s8, reference_dag=ExecutionDag(), earliest_abstain_step=0))
    assert not blind.passed and "runtime scenario whose reference makes no call" in blind.detail
    unanswered = structural.check_abstain_labels(with_abstain(s1, clarification=None))
    assert not unanswered.passed and "clarification" in unanswered.detail
