"""Someone else's environment read into a bundle (importers/): each layout from a small environment written
for these tests in that layout, never a copy of the original projects' files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from builtin_fixtures import builtin_bundle

from abstaingen.errors import AbstaingenError
from abstaingen.importers import ImportOptions, get_importer, importer_kinds
from abstaingen.model import EnvironmentBundle, ToolKind
from abstaingen.sandboxes.trust import untrusted
from abstaingen.store import read_bundle, write_bundle
from abstaingen.validators.code_gate import check_code

DATA = Path(__file__).parent / "data" / "importers"
TAU2, PLAIN, AGENTABSTAIN = DATA / "tau2-mini", DATA / "plain-mini", DATA / "agentabstain-mini"


def tau2(root: Path = TAU2, name: str | None = "shop") -> EnvironmentBundle:
    return get_importer("tau2")(root, ImportOptions(name=name))


def test_the_importers_are_registered_by_kind() -> None:
    assert importer_kinds() == ["agentabstain", "bundle", "plain", "tau2"]
    with pytest.raises(AbstaingenError, match=r"unknown environment importer 'mcp' \(known: agentabstain, bundle, plain, "
                                              r"tau2\)"):
        get_importer("mcp")


def test_an_agentabstain_environment_becomes_the_tools_its_class_registers() -> None:
    bundle = get_importer("agentabstain")(AGENTABSTAIN, ImportOptions(name="pantry"))
    tools = {tool.name: tool for tool in bundle.tools}
    assert {name: tool.kind for name, tool in tools.items()} == {  # registered name, not the function's (get_item)
        "list_items": ToolKind.LOOKUP, "get_item": ToolKind.LOOKUP, "use_item": ToolKind.COMMIT,
        "discard_item": ToolKind.COMMIT, "restore_item": ToolKind.COMMIT}
    assert tools["list_items"].input_schema["properties"] == {"owner": {"type": "string",
                                                                       "description": "whose items, e.g. Mia"}}
    assert tools["get_item"].description == "Get one item."  # the docstring's summary; its Args describe item_id
    assert tools["get_item"].input_schema["properties"] == {"item_id": {"type": "string",
                                                                       "description": "the item's id, e.g. I1"}}
    assert tools["use_item"].description == "Use some of an item; the quantity left goes down."  # the decorator's
    assert tools["use_item"].input_schema["required"] == ["item_id"]  # quantity has a default
    assert tools["use_item"].examples == [{"item_id": "I1"}]
    assert bundle.initial_state["items"][0]["quantity"] == 2  # the act side's state, not the abstain side's (0)
    assert bundle.description.startswith("The pantry of a shared flat")
    assert bundle.source is not None and (bundle.source.kind, bundle.source.name) == ("agentabstain", "pantry")
    assert "SOURCES = " in bundle.implementation and check_code(bundle).passed  # left to the sandbox


def test_an_agentabstain_source_without_the_environment_or_its_state_is_one_line(tmp_path: Path) -> None:
    shutil.copytree(AGENTABSTAIN, tmp_path / "data")
    with pytest.raises(AbstaingenError, match=r"name the environment with --name \(in .*: pantry\)"):
        get_importer("agentabstain")(tmp_path / "data", ImportOptions())
    for state in (tmp_path / "data").glob("tasks/**/pantry.json"):
        state.unlink()
    bundle = get_importer("agentabstain")(tmp_path / "data", ImportOptions(name="pantry"))
    assert [i["id"] for i in bundle.initial_state["items"]] == ["I9"]  # type: ignore[union-attr,index]  # the example
    code = tmp_path / "data/environments/pantry/environment.py"
    code.write_text(code.read_text().replace("def get_example_state", "def example_state"))
    with pytest.raises(AbstaingenError, match=r"no task holds initial_states/pantry.json, and .* has no "
                                              r"get_example_state returning a literal"):
        get_importer("agentabstain")(tmp_path / "data", ImportOptions(name="pantry"))
    code.write_text("class Pantry:\n    pass\n")
    with pytest.raises(AbstaingenError, match=r"no class derived from BaseEnvironment"):
        get_importer("agentabstain")(tmp_path / "data", ImportOptions(name="pantry"))


def test_a_tau2_domain_becomes_tools_with_kinds_schemas_and_examples() -> None:
    bundle = tau2()
    tools = {tool.name: tool for tool in bundle.tools}
    assert list(tools) == ["get_order", "list_orders", "cancel_order", "change_address", "add"]  # not `not_a_tool`
    assert {name: tool.kind for name, tool in tools.items()} == {
        "get_order": ToolKind.LOOKUP, "list_orders": ToolKind.LOOKUP, "cancel_order": ToolKind.COMMIT,
        "change_address": ToolKind.COMMIT, "add": ToolKind.LOOKUP}
    listed = tools["list_orders"].input_schema
    assert listed["properties"] == {"customer_id": {"type": "string", "description": "The customer's id."},
                                    "statuses": {"type": "array", "items": {"type": "string"},
                                                 "description": "Only orders in these statuses."}}
    assert listed["required"] == ["customer_id"]
    assert tools["get_order"].description == "Get an order."
    assert bundle.description.startswith("# Shop agent policy\n\nAs a shop agent")  # tau2 gives its agent the policy
    assert tools["add"].input_schema["properties"]["a"]["type"] == "number"
    # the first reference action that calls the tool with what it takes, on the domain's own database: task 0
    # changes the database first, and get_order's first action passes an argument it does not take
    assert tools["cancel_order"].examples == [{"order_id": "O1", "reason": "changed my mind"}]
    assert tools["get_order"].examples == [{"order_id": "O3"}]


def test_a_tool_no_task_calls_gets_its_example_from_the_database(tmp_path: Path) -> None:
    root = tmp_path / "checkout"
    shutil.copytree(TAU2, root)
    (root / "data/tau2/domains/shop/tasks.json").unlink()
    tools = {tool.name: tool.examples for tool in tau2(root).tools}
    # each required argument that names a field: that field's value in the first record holding it
    assert tools == {"get_order": [{"order_id": "O1"}], "list_orders": [{"customer_id": "C1"}], "cancel_order": [],
                     "change_address": [], "add": []}


def test_a_tau2_database_keyed_by_id_becomes_records_with_an_id() -> None:
    bundle = tau2()
    orders = bundle.initial_state["orders"]
    assert isinstance(orders, list)
    assert [order["id"] for order in orders if isinstance(order, dict)] == ["O1", "O2", "O3"]
    assert orders[0] == {"id": "O1", "order_id": "O1", "customer_id": "C1", "status": "pending", "total": 40.5}
    assert "KEYED = {'customers': False, 'orders': False}" in bundle.implementation  # the ids go back out in the sandbox


def test_an_imported_bundle_says_where_it_came_from_and_is_untrusted(tmp_path: Path) -> None:
    bundle = tau2()
    assert bundle.origin == "imported" and bundle.source is not None
    assert (bundle.source.kind, bundle.source.name, bundle.source.license) == (
        "tau2", "shop", "Test License 1.0 (written for abstaingen's tests)")
    assert bundle.env_id == f"shop-imported-{bundle.source.files_hash[:10]}"
    assert bundle.source.location == "tau2-mini"  # the folder's name: a release does not publish the importer's paths
    assert bundle.source.revision is None  # it lies inside abstaingen's checkout, not at the top of one of its own
    assert untrusted([bundle]) == [bundle.env_id]
    write_bundle(bundle, tmp_path / "shop")
    assert read_bundle(tmp_path / "shop").source == bundle.source
    # another byte in a file read is another source
    copy = tmp_path / "copy"
    shutil.copytree(TAU2, copy)
    (copy / "data/tau2/domains/shop/policy.md").write_text("# Shop\n\nAnother policy.\n")
    assert tau2(copy).source.files_hash != bundle.source.files_hash  # type: ignore[union-attr]


def test_the_code_gate_leaves_imported_code_to_the_sandbox_and_still_gates_model_code() -> None:
    imported = tau2()
    assert check_code(imported).passed  # imports, classes, exec: someone else's Python
    written = imported.model_copy(update={"origin": "llm", "source": None})
    assert not check_code(written).passed


def test_an_imported_bundle_names_its_source_and_only_it_does() -> None:
    bundle = tau2()
    with pytest.raises(ValueError, match="names its source"):
        EnvironmentBundle.model_validate({**bundle.model_dump(), "source": None})
    with pytest.raises(ValueError, match="names its source"):
        EnvironmentBundle.model_validate({**bundle.model_dump(), "origin": "llm"})
    assert "source" not in builtin_bundle("travel").model_dump()  # builtin bundles hash as before


def test_a_plain_environment_is_read_as_described() -> None:
    bundle = get_importer("plain")(PLAIN, ImportOptions(license="CC0-1.0"))
    assert (bundle.domain, bundle.origin, bundle.source.license if bundle.source else None) == (
        "library", "imported", "CC0-1.0")
    assert [tool.name for tool in bundle.tools] == ["get_loan", "renew_loan", "unrenew_loan"]
    assert bundle.tool("renew_loan").undone_by == "unrenew_loan"
    assert bundle.initial_state["loans"][0]["id"] == "L1"  # type: ignore[index]


def test_our_own_bundle_format_comes_in_as_imported_whatever_it_says(tmp_path: Path) -> None:
    builtin = builtin_bundle("travel")
    write_bundle(builtin, tmp_path / "travel")
    bundle = get_importer("bundle")(tmp_path / "travel", ImportOptions())
    assert (bundle.origin, bundle.tools, bundle.implementation) == ("imported", builtin.tools, builtin.implementation)
    assert bundle.source is not None and bundle.source.kind == "bundle"
    assert untrusted([builtin]) == [] and untrusted([bundle]) == [bundle.env_id]


@pytest.mark.parametrize(("change", "message"), [
    (lambda root: (root / "tools.json").write_text("{}"), r"tools\.json: expected a non-empty JSON list of tools"),
    (lambda root: (root / "tools.json").write_text("[{\"name\": \"x\"}]"), r"tools\.json: tool 1: description: Field required"),
    (lambda root: (root / "state.json").write_text("{\"loans\": {}}"), r"state\.json: expected a JSON object of collections"),
    (lambda root: (root / "handlers.py").unlink(), r"handlers\.py: no such file"),
    (lambda root: (root / "state.json").write_text("{"), r"state\.json: not readable JSON"),
])
def test_a_bad_plain_environment_is_one_line(tmp_path: Path, change, message: str) -> None:
    root = tmp_path / "plain"
    shutil.copytree(PLAIN, root)
    change(root)
    with pytest.raises(AbstaingenError, match=message) as caught:
        get_importer("plain")(root, ImportOptions())
    assert "\n" not in str(caught.value)


def test_a_tau2_import_names_what_is_missing(tmp_path: Path) -> None:
    with pytest.raises(AbstaingenError, match=r"name the domain with --name \(in .*: shop\)"):
        tau2(name=None)
    root = tmp_path / "checkout"
    shutil.copytree(TAU2, root)
    (root / "src/tau2/domains/shop/tools.py").write_text("def helper():\n    return 1\n")
    with pytest.raises(AbstaingenError, match=r"no class with @is_tool methods"):
        tau2(root, "shop")
    (root / "data/tau2/domains/shop/db.json").unlink()
    with pytest.raises(AbstaingenError, match="no db.json or db.toml"):
        tau2(root)


def test_env_import_writes_a_bundle_folder_and_says_what_is_missing(tmp_path: Path, capsys) -> None:
    from abstaingen.flows.cli import main

    root = tmp_path / "checkout"
    shutil.copytree(TAU2, root)
    tasks = root / "data/tau2/domains/shop/tasks.json"
    tasks.write_text(json.dumps([task for task in json.loads(tasks.read_text()) if task["id"] == "0"]))
    assert main(["env", "import", "tau2", str(root), str(tmp_path / "out"), "--name", "shop", "--sandbox", "local"]) == 0
    said = capsys.readouterr().out
    assert "the commits' effects and undos were not found: imported code runs only in docker or bwrap, not local" in said
    assert "5 tools (2 commit), 2 collections (5 records)" in said
    assert "3 tools have no example call, which the environment checks need: cancel_order, change_address, add" in said and "next: abstaingen env check" in said
    assert read_bundle(tmp_path / "out").origin == "imported"
    assert main(["env", "import", "tau2", str(root), str(tmp_path / "out"), "--name", "shop", "--sandbox", "local"]) == 2
    assert "already holds a bundle" in capsys.readouterr().err


def test_a_config_may_name_only_environments_abstaingen_env_import_wrote(tmp_path: Path) -> None:
    from abstaingen.config import load_config
    from abstaingen.pipelines.pairs import plan_run

    write_bundle(builtin_bundle("travel"), tmp_path / "theirs")
    config = tmp_path / "c.toml"
    config.write_text('[generation]\nenvironments = ["theirs"]\n[backends]\ndefault = "llm"\n')
    with pytest.raises(AbstaingenError, match=r"theirs is not an imported environment \(origin builtin\); bring it in"):
        plan_run(load_config(config), None)
    config.write_text('[generation]\nenvironments = ["theirs"]\n')
    with pytest.raises(AbstaingenError, match=r"generation.environments: tasks in an imported environment are written "
                                              r"by the llm backend"):
        load_config(config)


def test_an_effect_is_the_field_a_call_changed_and_the_value_it_wrote_unasked() -> None:
    from abstaingen.importers.effects import effect_of

    before = {"orders": [{"id": "O1", "status": "pending", "note": None}, {"id": "O2", "status": "pending"}],
              "users": [{"id": "U1", "name": "Ada"}]}
    cancelled = {**before, "orders": [{"id": "O1", "status": "cancelled", "note": "late"}, before["orders"][1]]}
    assert effect_of(before, cancelled, {"order_id": "O1", "reason": "late"}) == "orders.status=cancelled"
    renamed = {**before, "users": [{"id": "U1", "name": "Bea"}]}
    assert effect_of(before, renamed, {"user_id": "U1", "name": "Bea"}) == "users.name"  # the value was given
    assert effect_of(before, before, {}) is None
    both = {**cancelled, "users": renamed["users"]}
    assert effect_of(before, both, {}) is None  # two collections: no one effect
    added = {**before, "orders": [*before["orders"], {"id": "O3", "status": "pending"}]}
    assert effect_of(before, added, {}) is None



def test_a_state_too_large_for_a_prompt_shows_the_tasks_records_and_those_linked_to_them() -> None:
    from abstaingen.generators.llm.positive import STATE_CHARS, state_json

    users = [{"id": f"u{n}", "name": f"User {n}", "zip": f"{10000 + n}", "note": "y" * 300} for n in range(500)]
    orders = [{"id": f"#O{n}", "user_id": f"u{n % 500}", "status": "delivered", "items": ["x" * 40] * 8}
              for n in range(1500)]
    bundle = tau2().model_copy(update={"initial_state": {"users": users, "orders": orders, "day": "2026-01-01"}})
    text = state_json(bundle, [("orders", "#O1234")])
    shown = json.loads(text[:text.rindex(" [")])
    assert len(text) <= STATE_CHARS + 300 and "records shown: the state is larger than a prompt holds" in text
    assert {"id": "u234", "name": "User 234", "zip": "10234", "note": "y" * 300} in shown["users"]  # its customer
    assert {o["id"] for o in shown["orders"]} >= {"#O234", "#O734", "#O1234"}  # and the customer's other orders
    assert shown["day"] == "2026-01-01" and shown["users"][0]["id"] == "u0"  # then the first of each collection
    every = state_json(bundle, [("orders", f"#O{n}") for n in range(1234, 1500)])  # many named: the first come whole
    assert "u234" in {user["id"] for user in json.loads(every[:every.rindex(" [")])["users"]}
    small = tau2()
    assert json.loads(state_json(small, [("orders", "O1")])) == small.initial_state  # a state that fits is whole


def test_a_checkouts_revision_is_read_from_its_own_git(tmp_path: Path) -> None:
    import subprocess

    root = tmp_path / "checkout"
    shutil.copytree(TAU2, root)
    for command in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"]):
        subprocess.run(["git", "-C", str(root), *command], check=True, capture_output=True)
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert tau2(root).source.revision == head  # type: ignore[union-attr]



def test_an_example_call_comes_from_an_object_the_state_holds_and_a_tool_that_requires_nothing_gets_none() -> None:
    from abstaingen.importers.python_source import examples_from_state
    from abstaingen.model import ToolSpec

    def tool(name: str, required: list[str]) -> ToolSpec:
        return ToolSpec(name=name, description=name, kind="lookup", input_schema={
            "type": "object", "properties": {r: {"type": "string"} for r in required}, "required": required})

    state = {"emergency_contact": {"full_name": "Maria Rivera", "relationship": "sister"}, "notes": ["x"]}
    found = examples_from_state([tool("read_all", []), tool("relabel", ["relationship"]), tool("find", ["zip"])], state)
    assert found == {"read_all": {}, "relabel": {"relationship": "sister"}}  # no field named zip: left to the user
