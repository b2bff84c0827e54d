"""The tau2 export: a pair written in a tau2 domain becomes two tau2 tasks (the shop domain written for the
tests, a builtin pair's sides rewritten onto it), and what tau2 cannot pose as written is left out with its
reason. A run through tau2's own evaluator is in the README's "Bring your own environment"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from builtin_fixtures import builtin_bundle, builtin_pair
from sandbox_backends import ISOLATED

from abstaingen.exporters.tau2 import database_update, left_out_because, reference_calls, side_task
from abstaingen.importers import ImportOptions, get_importer
from abstaingen.model import (
    BrokenTool,
    Deliverable,
    EnvironmentBundle,
    EnvironmentOverlay,
    ExecutionDag,
    PatchOp,
    Scenario,
    TaskOverlay,
    TaskPair,
)
from abstaingen.model.dag import DagNode

SHOP = Path(__file__).parent / "data" / "importers" / "tau2-mini"


def shop() -> EnvironmentBundle:
    return get_importer("tau2")(SHOP, ImportOptions(name="shop"))


def on_shop(patch: list[PatchOp] | None = None, abstain: TaskOverlay | None = None) -> TaskPair:
    """A builtin S1 pair whose sides ask to cancel one of Ada's orders in the shop."""
    pair = builtin_pair(Scenario.S1)
    dag = ExecutionDag(nodes=[DagNode(id="n1", tool="list_orders", args={"customer_id": "C1"}),
                              DagNode(id="n2", tool="cancel_order", args={"order_id": "O1", "reason": "late"})])
    act = pair.act.model_copy(update={"env_id": shop().env_id, "instruction": "Cancel my pending order O1, it is late.",
                                      "deliverable": Deliverable.OP, "reference_dag": dag,
                                      "critical_actions": ["cancel_order"], "overlay": TaskOverlay(state_patch=patch or [])})
    twin = pair.abstain.model_copy(update={"env_id": shop().env_id, "instruction": "Cancel my order, it is late.",
                                           "reference_dag": ExecutionDag(nodes=dag.nodes[:1]),
                                           "overlay": abstain or TaskOverlay(state_patch=patch or [])})
    return pair.model_copy(update={"act": act, "abstain": twin})


def test_a_pair_becomes_two_tau2_tasks_with_the_reference_calls_as_actions() -> None:
    pair, bundle = on_shop(), shop()
    calls = [("list_orders", {"customer_id": "C1"}), ("cancel_order", {"order_id": "O1", "reason": "late"})]
    act, abstain = side_task(pair, pair.act, bundle, calls), side_task(pair, pair.abstain, bundle, [])
    assert act["id"] == f"{pair.pair_id}-act" and abstain["id"] == f"{pair.pair_id}-abstain"
    assert [a["name"] for a in act["evaluation_criteria"]["actions"]] == ["list_orders", "cancel_order"]
    assert act["evaluation_criteria"]["actions"][1]["arguments"] == {"order_id": "O1", "reason": "late"}
    assert act["evaluation_criteria"]["reward_basis"] == ["DB"]
    assert abstain["evaluation_criteria"]["actions"] == []  # the database must stay as it starts
    assert abstain["evaluation_criteria"]["reward_basis"] == ["DB", "NL_ASSERTION"]
    instructions = abstain["user_scenario"]["instructions"]
    assert instructions["domain"] == "shop" and instructions["reason_for_call"] == "Cancel my order, it is late."
    assert "you know nothing more" in instructions["task_instructions"]
    assert json.loads(act["description"]["notes"])["scenario"] == "S1"
    assert act["initial_state"] is None  # the domain's database as it is


def test_a_sides_state_becomes_a_database_update_in_the_domains_form() -> None:
    bundle = shop()
    pair = on_shop([PatchOp(op="set", collection="orders", record_id="O2", values={"status": "pending"})])
    update, reason = database_update(bundle, pair.act)
    assert reason is None
    assert update == {"orders": {"O2": {"order_id": "O2", "customer_id": "C1", "status": "pending", "total": 12.0}}}
    task = side_task(pair, pair.act, bundle, [])
    assert task["initial_state"] == {"initialization_data": {"agent_data": update}}


def test_what_tau2_cannot_pose_is_left_out_with_its_reason() -> None:
    bundle = shop()
    assert left_out_because(on_shop(), bundle) is None
    assert left_out_because(on_shop(), builtin_bundle()) == "its environment is not a tau2 domain"
    broken = TaskOverlay(broken_tools=[BrokenTool(name="cancel_order", error="down")])
    assert left_out_because(on_shop(abstain=broken), bundle) == "its abstain side hides or breaks tools"
    removed = [PatchOp(op="remove", collection="orders", record_id="O2")]
    assert left_out_because(on_shop(removed), bundle) == "its act side: it adds or removes records of orders"
    overlaid = bundle.model_copy(update={"overlay": EnvironmentOverlay(
        tools=["cancel_order"], state=["orders.notes"], implementation="")})
    assert left_out_because(on_shop(), overlaid) == "its act side depends on cancel_order, a tool the overlay added"
    read_only = bundle.model_copy(update={"overlay": EnvironmentOverlay(tools=["list_orders"], implementation="")})
    assert left_out_because(on_shop(), read_only) is None  # a lookup nothing depends on: left out of the actions
    noted = bundle.model_copy(update={"overlay": EnvironmentOverlay(state=["orders.notes"], implementation="")})
    patch = [PatchOp(op="set", collection="orders", record_id="O1", values={"notes": "do not cancel"})]
    assert left_out_because(on_shop(patch), noted) == ("its act side: it changes orders.notes, a field the overlay "
                                                      "added")


@pytest.mark.component
@pytest.mark.parametrize("backend", ISOLATED[:1])
def test_the_reference_calls_are_replayed_in_the_sandbox(backend: str) -> None:
    pair = on_shop()
    calls = reference_calls(shop(), [pair.act], backend, allow_unsandboxed=False)
    assert calls[pair.act.task_id] == [("list_orders", {"customer_id": "C1"}),
                                       ("cancel_order", {"order_id": "O1", "reason": "late"})]
    read_only = shop().model_copy(update={"overlay": EnvironmentOverlay(tools=["list_orders"], implementation="")})
    calls = reference_calls(read_only, [pair.act], backend, allow_unsandboxed=False)
    assert calls[pair.act.task_id] == [("cancel_order", {"order_id": "O1", "reason": "late"})]  # the overlay's lookup
