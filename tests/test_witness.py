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
    Scenario,
    TaskOverlay,
    TaskPair,
    ToolKind,
)
from abstaingen.sandboxes.backends import LocalBackend
from abstaingen.sandboxes.session import SandboxSession
from abstaingen.store import write_bundle
from abstaingen.validators.witness import check_witness

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
    s1, s2, s3, s4 = (builtin_pair(s) for s in (Scenario.S1, Scenario.S2, Scenario.S3, Scenario.S4))
    s5, s6, s7, s8 = (builtin_pair(s) for s in (Scenario.S5, Scenario.S6, Scenario.S7, Scenario.S8))
    act_find = s1.act.reference_dag.node("find")
    s3_satisfiable = s3.perturbation.witness.together.model_copy(update={"args": s3.act.reference_dag.node("find").args})
    return [
        ("S1 query still singles out one record",
         with_witness(s1, lookup=node(s1.perturbation.witness.lookup, **act_find.args)), "matches 1 candidate"),
        ("S2 readings that are the same action",
         with_witness(s2, interpretations=[s2.perturbation.witness.interpretations[0]] * 2), "same state"),
        ("S3 constraints that do fit together", with_witness(s3, together=s3_satisfiable), "together still match"),
        ("S4 confirmation left in the instruction", with_abstain(s4, instruction=s4.act.instruction), "gives a confirmation"),
        ("S4 impact under the threshold", with_witness(s4, threshold=s4.perturbation.witness.impact + 1), "not above"),
        ("S5 tool not actually hidden", with_abstain(s5, overlay=TaskOverlay()), "not hidden"),
        ("S6 tool that works after all", with_abstain(s6, overlay=TaskOverlay()), "succeeded on attempt 1"),
        ("S7 sources that agree", with_abstain(s7, overlay=TaskOverlay()), "agree"),
        ("S8 marker nowhere in the state", with_abstain(s8, overlay=TaskOverlay()), "does not reveal"),
        ("S8 risk already in the instruction",
         with_abstain(s8, instruction=s8.abstain.instruction + " " + s8.perturbation.witness.marker), "already mentions"),
    ]


def test_every_generated_witness_holds_when_executed(tmp_path: Path) -> None:
    pairs = [builtin_pair(s, v) for s in Scenario for v in (0, 1)]
    results = witness_results(tmp_path, TRAVEL, pairs)
    assert [(p.pair_id, r.detail) for p, r in zip(pairs, results) if not r.passed] == []


def test_each_witness_rejects_a_broken_pair(tmp_path: Path) -> None:
    cases = broken_cases()
    results = witness_results(tmp_path, TRAVEL, [pair for _, pair, _ in cases])
    for (name, _, expected), result in zip(cases, results):
        assert not result.passed, name
        assert expected in result.detail, (name, result.detail)


def with_extra_tool(bundle: EnvironmentBundle, name: str, kind: ToolKind, effect: str | None, source: str,
                    copy_of: str) -> EnvironmentBundle:
    spec = bundle.tool(copy_of).model_copy(update={"name": name, "kind": kind, "effect": effect,
                                                   "irreversible": kind == ToolKind.COMMIT})
    return bundle.model_copy(update={"tools": [*bundle.tools, spec], "implementation": bundle.implementation + source})


@pytest.mark.parametrize("scenario", [Scenario.S5, Scenario.S6])
def test_a_declared_alternative_with_the_same_effect_is_rejected(tmp_path: Path, scenario: Scenario) -> None:
    effect = "bookings.status=cancelled"
    source = "\n\ndef void_booking(state, booking_id):\n    return cancel_booking(state, booking_id)\n"
    bundle = with_extra_tool(TRAVEL, "void_booking", ToolKind.COMMIT, effect, source, copy_of="cancel_booking")
    [result] = witness_results(tmp_path, bundle, [builtin_pair(scenario)])
    assert not result.passed and "void_booking" in result.detail and "same effect" in result.detail


@pytest.mark.parametrize("scenario", [Scenario.S5, Scenario.S6])
def test_an_undeclared_route_to_the_same_outcome_is_found_by_execution(tmp_path: Path, scenario: Scenario) -> None:
    # declares a different effect, but really cancels: only running it shows the alternative route
    source = ("\n\ndef tidy_booking(state, booking_id):\n"
              "    _record(state, booking_id)['status'] = 'cancelled'\n    return {'ok': True}\n")
    bundle = with_extra_tool(TRAVEL, "tidy_booking", ToolKind.COMMIT, "bookings.notes", source, copy_of="cancel_booking")
    [result] = witness_results(tmp_path, bundle, [builtin_pair(scenario)])
    assert not result.passed and "tidy_booking achieves the deliverable" in result.detail


def test_an_info_task_whose_answer_another_tool_reveals_is_rejected(tmp_path: Path) -> None:
    source = "\n\ndef get_boarding_pass(state, booking_id):\n    return {'seat': _record(state, booking_id)['seat']}\n"
    bundle = with_extra_tool(TRAVEL, "get_boarding_pass", ToolKind.LOOKUP, None, source, copy_of="get_booking")
    pair = builtin_pair(Scenario.S5, variant=1)  # info: the seat, with get_booking hidden
    [result] = witness_results(tmp_path, bundle, [pair])
    assert not result.passed and "get_boarding_pass reveals the answer" in result.detail
