"""Each scenario's witness, checked by execution: it accepts the generated pair and rejects a pair
broken in the way the witness exists to catch."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from builtin_fixtures import builtin_bundle, builtin_pair

from abstaingen.model import (
    CheckResult,
    DagNode,
    EnvironmentBundle,
    PatchOp,
    Scenario,
    TaskOverlay,
    TaskPair,
    ToolKind,
)
from abstaingen.sandboxes.backends import LocalBackend
from abstaingen.sandboxes.session import SandboxSession
from abstaingen.store import write_bundle
from abstaingen.validators.witness import check_witness

pytestmark = pytest.mark.component

TRAVEL = builtin_bundle("travel")


def witness_results(tmp_path: Path, bundle: EnvironmentBundle, pairs: list[TaskPair]) -> list[CheckResult]:
    write_bundle(bundle, tmp_path / bundle.env_id)

    async def main() -> list[CheckResult]:
        async with SandboxSession(tmp_path / bundle.env_id, LocalBackend()) as session:
            return [await check_witness(session, pair, bundle) for pair in pairs]

    return anyio.run(main)


def with_witness(pair: TaskPair, **changes) -> TaskPair:
    witness = pair.perturbation.witness.model_copy(update=changes)
    return pair.model_copy(update={"perturbation": pair.perturbation.model_copy(update={"witness": witness})})


def with_abstain(pair: TaskPair, **changes) -> TaskPair:
    return pair.model_copy(update={"abstain": pair.abstain.model_copy(update=changes)})


def node(node: DagNode, **args) -> DagNode:
    return node.model_copy(update={"args": {**node.args, **args}})


def broken_cases() -> list[tuple[str, TaskPair, str]]:
    s1, s2, s3 = (builtin_pair(s) for s in (Scenario.S1, Scenario.S2, Scenario.S3))
    s4 = next(p for p in (builtin_pair(Scenario.S4, v) for v in range(3)) if p.act.confirmations)
    s5, s6, s7, s8 = (builtin_pair(s) for s in (Scenario.S5, Scenario.S6, Scenario.S7, Scenario.S8))
    act_find = s1.act.reference_dag.node("find")
    w3 = s3.perturbation.witness
    act_details = s3.act.reference_dag.node("find").args
    nothing = w3.together.model_copy(update={"args": {**w3.together.args, "passenger": "Nobody Atall"}})
    confirmed = s4.act.confirmations[0].model_copy(update={"amount": s4.perturbation.witness.impact})
    return [
        ("S1 query still singles out one record",
         with_witness(s1, lookup=node(s1.perturbation.witness.lookup, **act_find.args)), "matches 1 candidate"),
        ("S2 readings that are the same action",
         with_witness(s2, interpretations=[s2.perturbation.witness.interpretations[0]] * 2), "same state"),
        ("S3 constraints that do fit together", with_witness(s3, together=w3.together.model_copy(
            update={"args": act_details})), "together still match"),
        ("S3 a lookup that merely finds nothing", with_witness(s3, each_alone=[nothing, nothing]), "matches 0 records"),
        ("S3 constraints that single out the same record", with_witness(s3, each_alone=[
            w3.each_alone[0], w3.each_alone[0]]), "the same record"),
        ("S4 the amount confirmed after all", with_abstain(s4, confirmations=[confirmed], instruction=(
            s4.abstain.instruction + " " + confirmed.text)), "confirms this amount"),
        ("S4 impact under the policy threshold", with_witness(s4, impact=5.0, commit=node(
            s4.perturbation.witness.commit, amount=5.0) if "amount" in s4.perturbation.witness.commit.args
            else s4.perturbation.witness.commit), "not above the policy threshold"),
        ("S5 tool not actually hidden", with_abstain(s5, overlay=TaskOverlay()), "not hidden"),
        ("S6 tool that works after all", with_abstain(s6, overlay=TaskOverlay()), "succeeded on attempt 1"),
        ("S6 a fault that a retry gets past", with_abstain(s6, overlay=TaskOverlay(broken_tools=[
            b.model_copy(update={"failures": 1}) for b in s6.abstain.overlay.broken_tools])), "succeeded on attempt 2"),
        ("S7 sources that agree", with_abstain(s7, overlay=s7.act.overlay), "agree within the tolerance"),
        ("S8 marker nowhere in the state", with_abstain(s8, overlay=TaskOverlay()), "does not reveal"),
        ("S8 risk already in the instruction",
         with_abstain(s8, instruction=s8.abstain.instruction + " " + s8.perturbation.witness.marker), "already mentions"),
    ]


def test_every_generated_witness_holds_when_executed(tmp_path: Path) -> None:
    pairs = [builtin_pair(s, v) for s in Scenario for v in (0, 1)]
    results = witness_results(tmp_path, TRAVEL, pairs)
    assert [(p.pair_id, r.detail) for p, r in zip(pairs, results) if not r.passed] == []


def test_a_conflict_between_texts_is_a_conflict_and_their_agreement_is_none(tmp_path: Path) -> None:
    """A real environment cross-checked a permit's zone ('B' against the enforcement copy); the witness took
    only numbers and refused every S7 twin there."""
    s7 = builtin_pair(Scenario.S7)
    patch = s7.abstain.overlay.state_patch[0]
    field = next(iter(patch.values))
    text = PatchOp(op="set", collection=patch.collection, record_id=patch.record_id, values={field: "ZONE-B"})
    differ, agree = witness_results(tmp_path, TRAVEL, [
        with_abstain(s7, overlay=TaskOverlay(state_patch=[text])),
        with_abstain(s7, overlay=s7.act.overlay)])
    assert differ.passed and "'ZONE-B'" in differ.detail, differ.detail
    assert not agree.passed and "agree" in agree.detail


def test_each_witness_rejects_a_broken_pair(tmp_path: Path) -> None:
    cases = broken_cases()
    results = witness_results(tmp_path, TRAVEL, [pair for _, pair, _ in cases])
    for (name, _, expected), result in zip(cases, results):
        assert not result.passed, name
        assert expected in result.detail, (name, result.detail)


def status_action_pair(scenario: Scenario) -> TaskPair:
    """An op pair whose action takes only the record's id (so a copy of it can be called the same way)."""
    return next(p for p in (builtin_pair(scenario, v) for v in range(0, 16, 2))
                if p.act.critical_actions and "amount" not in TRAVEL.tool(p.act.critical_actions[0]).input_schema["properties"])


def with_extra_tool(bundle: EnvironmentBundle, name: str, kind: ToolKind, effect: str | None, source: str,
                    copy_of: str) -> EnvironmentBundle:
    spec = bundle.tool(copy_of).model_copy(update={"name": name, "kind": kind, "effect": effect, "undone_by": None,
                                                   "impact": None})
    return bundle.model_copy(update={"tools": [*bundle.tools, spec], "implementation": bundle.implementation + source})


@pytest.mark.parametrize("scenario", [Scenario.S5, Scenario.S6])
def test_a_declared_alternative_with_the_same_effect_is_rejected(tmp_path: Path, scenario: Scenario) -> None:
    pair = status_action_pair(scenario)
    action = pair.act.critical_actions[0]
    source = f"\n\ndef void_booking(state, booking_id):\n    return {action}(state, booking_id)\n"
    bundle = with_extra_tool(TRAVEL, "void_booking", ToolKind.COMMIT, TRAVEL.tool(action).effect, source, copy_of=action)
    [result] = witness_results(tmp_path, bundle, [pair])
    assert not result.passed and "void_booking" in result.detail and "same effect" in result.detail


@pytest.mark.parametrize("scenario", [Scenario.S5, Scenario.S6])
def test_the_tool_that_undoes_the_action_is_no_alternative_route(tmp_path: Path, scenario: Scenario) -> None:
    """An undo changes the action's field back, and a model declares both effects as that field: the undo
    cannot deliver the outcome, so it is no alternative (its probe still runs), while another tool that
    declares the field still is."""
    pairs = (builtin_pair(scenario, v) for v in range(0, 32))
    pair = next(p for p in pairs if p.act.critical_actions and TRAVEL.tool(p.act.critical_actions[0]).undone_by)
    action = TRAVEL.tool(pair.act.critical_actions[0])
    assert action.undone_by is not None
    field_only = [t.model_copy(update={"effect": "bookings.status"}) if t.name in {action.name, action.undone_by}
                  else t for t in TRAVEL.tools]
    bundle = TRAVEL.model_copy(update={"tools": field_only})
    pair = pair.model_copy(update={"perturbation": pair.perturbation.model_copy(update={
        "witness": pair.perturbation.witness.model_copy(update={"effect": "bookings.status"})})})
    source = f"\n\ndef void_booking(state, booking_id):\n    return {action.name}(state, booking_id)\n"
    with_other = with_extra_tool(bundle, "void_booking", ToolKind.COMMIT, "bookings.status", source, copy_of=action.name)
    undo_only, other = witness_results(tmp_path, bundle, [pair]) + witness_results(tmp_path, with_other, [pair])
    assert undo_only.passed, undo_only.detail
    assert not other.passed and "['void_booking']" in other.detail, other.detail


@pytest.mark.parametrize("scenario", [Scenario.S5, Scenario.S6])
def test_an_undeclared_route_to_the_same_outcome_is_found_by_execution(tmp_path: Path, scenario: Scenario) -> None:
    # declares a different effect, but really does what T+ does: only running it shows the alternative route
    pair = status_action_pair(scenario)
    action = pair.act.critical_actions[0]
    source = f"\n\ndef tidy_booking(state, booking_id):\n    return {action}(state, booking_id)\n"
    bundle = with_extra_tool(TRAVEL, "tidy_booking", ToolKind.COMMIT, "bookings.notes", source, copy_of=action)
    [result] = witness_results(tmp_path, bundle, [pair])
    assert not result.passed and "tidy_booking achieves the deliverable" in result.detail


def test_an_info_task_whose_answer_another_tool_reveals_is_rejected(tmp_path: Path) -> None:
    source = "\n\ndef get_boarding_pass(state, booking_id):\n    return {'seat': _record(state, booking_id)['seat']}\n"
    bundle = with_extra_tool(TRAVEL, "get_boarding_pass", ToolKind.LOOKUP, None, source, copy_of="get_booking")
    pair = builtin_pair(Scenario.S5, variant=1)  # info: the seat, with get_booking hidden
    [result] = witness_results(tmp_path, bundle, [pair])
    assert not result.passed and "get_boarding_pass reveals the answer" in result.detail
