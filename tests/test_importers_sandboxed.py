"""Imported environments in the isolating sandboxes: the environment checks pass on the small environments
written for the tests, and a tau2 domain's own code reads and writes abstaingen's state."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from sandbox_backends import ISOLATED

from abstaingen.importers import ImportOptions, get_importer
from abstaingen.importers.effects import derive, with_derived
from abstaingen.model import TaskOverlay
from abstaingen.sandboxes.backends import get_backend
from abstaingen.sandboxes.session import SandboxSession, run_episodes
from abstaingen.store import write_bundle
from abstaingen.validators.validate import check_candidate_environment

pytestmark = pytest.mark.component

DATA = Path(__file__).parent / "data" / "importers"
SOURCES = {"tau2": (DATA / "tau2-mini", "shop"), "plain": (DATA / "plain-mini", None),
           "agentabstain": (DATA / "agentabstain-mini", "pantry")}


@pytest.mark.parametrize("backend", ISOLATED)
@pytest.mark.parametrize("kind", list(SOURCES))
def test_an_imported_environment_passes_the_environment_checks(kind: str, backend: str) -> None:
    root, name = SOURCES[kind]
    bundle = get_importer(kind)(root, ImportOptions(name=name))
    bundle = with_derived(bundle, anyio.run(derive, bundle, get_backend(backend)))  # as `env import` does
    checks = anyio.run(check_candidate_environment, bundle, get_backend(backend))
    assert [(c.name, c.passed) for c in checks if not c.passed] == [], [c.detail for c in checks]
    assert {c.name for c in checks} >= {"sandbox_policy", "code_gate", "env_callable", "env_read_only",
                                        "env_commit_changes", "env_deterministic", "env_reversibility"}


def test_imported_code_does_not_run_unsandboxed() -> None:
    root, name = SOURCES["tau2"]
    bundle = get_importer("tau2")(root, ImportOptions(name=name))
    checks = anyio.run(check_candidate_environment, bundle, get_backend("local"))
    assert [(c.name, c.passed) for c in checks] == [("sandbox_policy", False), ("code_gate", True)]


@pytest.mark.parametrize("backend", ISOLATED)
def test_a_tau2_domains_code_reads_and_writes_the_state_in_abstaingens_form(tmp_path: Path, backend: str) -> None:
    root, name = SOURCES["tau2"]
    bundle = get_importer("tau2")(root, ImportOptions(name=name))
    state = json.loads(json.dumps(bundle.initial_state))  # a notes field abstaingen's rules add, which the domain's
    state["customers"][1]["notes"] = "moving soon"  # models do not know (Customer forbids unknown fields)
    state["orders"][1]["notes"] = "gift"
    bundle = bundle.model_copy(update={"initial_state": state})
    write_bundle(bundle, tmp_path / "shop")

    async def episode():
        async with SandboxSession(tmp_path / "shop", get_backend(backend)) as session:
            async def calls():
                return [await session.call("list_orders", {"customer_id": "C1", "statuses": ["pending"]}),
                        await session.call("change_address", {"customer_id": "C2", "street": "3 Ash Ct",
                                                              "city": "Reno", "state": "NV"}),
                        await session.call("cancel_order", {"order_id": "O2", "reason": "late"})]
            return await run_episodes(session, bundle.env_id, [(TaskOverlay(), calls)])

    [(trace, (listed, changed, refused))] = anyio.run(episode)
    assert listed.ok and [order["order_id"] for order in listed.result] == ["O1"]  # type: ignore[index,union-attr]
    assert changed.ok and changed.result == "address changed"  # a tool argument named `state` reaches the tool
    assert not refused.ok and "Only a pending order can be cancelled" in str(refused.error)
    customers = trace.final_state["customers"]  # type: ignore[index]
    assert customers[1] == {"id": "C2", "customer_id": "C2", "name": "Ben Ruiz", "orders": ["O3"], "notes": "moving soon",
                            "address": {"street": "3 Ash Ct", "city": "Reno", "state": "NV"}}
    assert trace.final_state["orders"] == bundle.initial_state["orders"]  # a failed call leaves nothing behind


@pytest.mark.parametrize("backend", ISOLATED)
def test_env_import_finds_what_each_commit_changes_by_calling_it(tmp_path: Path, backend: str, capsys) -> None:
    from abstaingen.flows.cli import main
    from abstaingen.store import read_bundle

    root, name = SOURCES["tau2"]
    assert main(["env", "import", "tau2", str(root), str(tmp_path / "shop"), "--name", name, "--sandbox", backend]) == 0
    assert f"cancel_order changes orders.status=cancelled (found by calling it in {backend})" in capsys.readouterr().out
    effects = {tool.name: tool.effect for tool in read_bundle(tmp_path / "shop").tools}
    assert effects == {"get_order": None, "list_orders": None, "cancel_order": "orders.status=cancelled",
                       "change_address": "customers.address", "add": None}



@pytest.mark.parametrize("backend", ISOLATED)
def test_an_agentabstain_environments_own_class_serves_the_calls(tmp_path: Path, backend: str, capsys) -> None:
    from abstaingen.flows.cli import main
    from abstaingen.store import read_bundle

    root, name = SOURCES["agentabstain"]
    assert main(["env", "import", "agentabstain", str(root), str(tmp_path / "pantry"), "--name", str(name),
                 "--sandbox", backend]) == 0
    out = capsys.readouterr().out
    assert f"discard_item is undone by restore_item (found by calling one after the other in {backend})" in out
    bundle = read_bundle(tmp_path / "pantry")
    assert {t.name: (t.effect, t.undone_by) for t in bundle.tools if t.kind == "commit"} == {
        "use_item": ("items.quantity", None), "discard_item": ("items.status=discarded", "restore_item"),
        "restore_item": (None, None)}

    async def episode():
        async with SandboxSession(tmp_path / "pantry", get_backend(backend)) as session:
            async def calls():
                return [await session.call("get_item", {"item_id": "I2"}),  # an async tool
                        await session.call("use_item", {"item_id": "I1", "quantity": 2}),
                        await session.call("use_item", {"item_id": "I1"})]  # a ToolError
            return await run_episodes(session, bundle.env_id, [(TaskOverlay(), calls)])

    [(trace, (read, used, refused))] = anyio.run(episode)
    assert read.ok and read.result["name"] == "Basmati rice"  # type: ignore[index]
    assert used.ok and not refused.ok and refused.error == "Not enough of I1 left"
    assert trace.final_state["items"][0]["quantity"] == 0  # type: ignore[index]


@pytest.mark.parametrize("backend", ISOLATED)
def test_an_agentabstain_class_sees_only_the_fields_it_knows_and_the_others_survive(tmp_path: Path,
                                                                                   backend: str) -> None:
    """The pantry builds a strict object per item (`Item(**item)`), which an overlay's notes field would break: the
    class gets the fields its items had when imported, and the notes and the overlay's own collection stay."""
    root, name = SOURCES["agentabstain"]
    bundle = get_importer("agentabstain")(root, ImportOptions(name=name))
    state = json.loads(json.dumps(bundle.initial_state))
    for item in state["items"]:
        item["notes"] = "keep for Friday" if item["id"] == "I1" else ""
    state["ledger"] = [{"id": "L1", "item_id": "I1"}]
    bundle = bundle.model_copy(update={"initial_state": state})
    write_bundle(bundle, tmp_path / "pantry")

    async def episode():
        async with SandboxSession(tmp_path / "pantry", get_backend(backend)) as session:
            async def calls():
                return [await session.call("use_item", {"item_id": "I1", "quantity": 1}),
                        await session.call("get_item", {"item_id": "I1"})]
            return await run_episodes(session, bundle.env_id, [(TaskOverlay(), calls)])

    [(trace, (used, read))] = anyio.run(episode)
    assert used.ok and read.ok, (used.error, read.error)
    assert "notes" not in read.result  # type: ignore[operator]  # their tool shows what their class knows
    items = trace.final_state["items"]  # type: ignore[index]
    assert items[0] == {**state["items"][0], "quantity": 1} and items[1] == state["items"][1]
    assert trace.final_state["ledger"] == state["ledger"]
