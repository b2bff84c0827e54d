"""The environment runtime, exercised through a real MCP client over stdio."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from builtin_fixtures import builtin_bundle, builtin_pair
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from abstaingen.model import BrokenTool, EnvironmentBundle, PatchOp, Scenario, TaskOverlay, ToolKind
from abstaingen.sandboxes.backends import RUNTIME_SERVER, LocalBackend
from abstaingen.sandboxes.session import SandboxSession
from abstaingen.store import write_bundle

pytestmark = pytest.mark.component


@pytest.fixture
def travel_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "travel"
    write_bundle(builtin_bundle("travel"), folder)
    return folder


def first_booking(bundle: EnvironmentBundle) -> dict:
    return bundle.initial_state["bookings"][0]  # type: ignore[index]


def run_in_session(bundle_dir: Path, episode):
    async def main():
        async with SandboxSession(bundle_dir, LocalBackend()) as session:
            return await episode(session)

    return anyio.run(main)


def test_tools_are_served_with_annotations_from_their_kind(travel_dir: Path) -> None:
    bundle = builtin_bundle("travel")

    async def episode(session: SandboxSession):
        return await session.list_tools()

    tools = {t.name: t for t in run_in_session(travel_dir, episode)}
    assert set(tools) == {t.name for t in bundle.tools}
    assert tools["get_booking"].annotations.read_only_hint is True
    assert tools["cancel_with_refund"].annotations.read_only_hint is False
    assert tools["cancel_with_refund"].annotations.destructive_hint is True
    # a hold can be released, and a release undoes a hold: neither is destructive
    assert tools["hold_booking"].annotations.destructive_hint is False
    assert tools["release_hold"].annotations.destructive_hint is False
    assert not any(name.startswith("_control") for name in tools)


def test_hidden_tools_are_neither_listed_nor_callable(travel_dir: Path) -> None:
    booking = first_booking(builtin_bundle("travel"))

    async def episode(session: SandboxSession):
        await session.reset(TaskOverlay(hidden_tools=["cancel_with_refund"]))
        names = {t.name for t in await session.list_tools()}
        outcome = await session.call("cancel_with_refund", {"booking_id": booking["id"]})
        return names, outcome, await session.snapshot("travel")

    names, outcome, trace = run_in_session(travel_dir, episode)
    assert "cancel_with_refund" not in names and "get_booking" in names
    assert not outcome.ok and "Unknown tool" in (outcome.error or "")
    assert trace.final_state_hash == trace.initial_state_hash


def test_broken_tool_always_returns_its_error_and_changes_nothing(travel_dir: Path) -> None:
    booking = first_booking(builtin_bundle("travel"))
    error = "503 Service Unavailable: reservation system is down"

    async def episode(session: SandboxSession):
        await session.reset(TaskOverlay(broken_tools=[BrokenTool(name="cancel_with_refund", error=error)]))
        outcomes = [await session.call("cancel_with_refund", {"booking_id": booking["id"]}) for _ in range(3)]
        return outcomes, await session.snapshot("travel")

    outcomes, trace = run_in_session(travel_dir, episode)
    assert all(not o.ok and o.error == error for o in outcomes)
    assert trace.final_state_hash == trace.initial_state_hash
    assert [c.ok for c in trace.calls] == [False, False, False]


def test_a_transient_fault_fails_its_first_calls_then_the_tool_works(travel_dir: Path) -> None:
    booking = first_booking(builtin_bundle("travel"))
    fault = BrokenTool(name="get_booking", error="504 Gateway Timeout", failures=2)

    async def episode(session: SandboxSession):
        await session.reset(TaskOverlay(broken_tools=[fault]))
        outcomes = [await session.call("get_booking", {"booking_id": booking["id"]}) for _ in range(3)]
        await session.reset(TaskOverlay(broken_tools=[fault]))  # a new episode starts the count again
        return outcomes, await session.call("get_booking", {"booking_id": booking["id"]})

    outcomes, after_reset = run_in_session(travel_dir, episode)
    assert [o.ok for o in outcomes] == [False, False, True]
    assert not after_reset.ok


def test_state_patch_is_visible_to_the_agent_and_reset_removes_it(travel_dir: Path) -> None:
    booking = first_booking(builtin_bundle("travel"))
    patch = PatchOp(op="set", collection="bookings", record_id=booking["id"], values={"notes": "FRAUD REVIEW"})

    async def episode(session: SandboxSession):
        await session.reset(TaskOverlay(state_patch=[patch]))
        patched = await session.call("get_booking", {"booking_id": booking["id"]})
        await session.reset()
        clean = await session.call("get_booking", {"booking_id": booking["id"]})
        return patched, clean

    patched, clean = run_in_session(travel_dir, episode)
    assert patched.ok and patched.result["notes"] == "FRAUD REVIEW"
    assert clean.ok and clean.result["notes"] == booking["notes"]


def test_a_bad_overlay_is_refused_and_the_episode_kept(travel_dir: Path) -> None:
    from abstaingen.sandboxes.session import SandboxError

    async def episode(session: SandboxSession):
        with pytest.raises(SandboxError, match="does not exist"):
            await session.reset(TaskOverlay(state_patch=[
                PatchOp(op="set", collection="bookings", record_id="BK-0", values={"notes": "x"})]))
        with pytest.raises(SandboxError, match="does not have"):
            await session.reset(TaskOverlay(hidden_tools=["teleport"]))
        return await session.call("find_bookings", {})

    assert run_in_session(travel_dir, episode).ok


def test_log_and_state_hashes_follow_reads_and_commits(travel_dir: Path) -> None:
    booking = first_booking(builtin_bundle("travel"))

    async def episode(session: SandboxSession):
        await session.reset()
        await session.call("get_booking", {"booking_id": booking["id"]})
        await session.call("check_booking", {"booking_id": booking["id"]})
        await session.call("cancel_with_refund", {"booking_id": booking["id"]})
        await session.call("cancel_with_refund", {"booking_id": booking["id"]})  # already cancelled: refused
        return await session.snapshot("travel")

    trace = run_in_session(travel_dir, episode)
    read, verify, commit, again = trace.calls
    assert read.state_hash_after == verify.state_hash_after == trace.initial_state_hash
    assert commit.ok and commit.state_hash_after != trace.initial_state_hash
    assert not again.ok and "cancelled" in (again.error or "")
    assert again.state_hash_after == commit.state_hash_after == trace.final_state_hash
    cancelled = next(b for b in trace.final_state["bookings"] if b["id"] == booking["id"])
    assert cancelled["status"] == "cancelled"


def test_arguments_are_checked_against_the_input_schema(travel_dir: Path) -> None:
    async def episode(session: SandboxSession):
        await session.reset()
        return (await session.call("get_booking", {}),
                await session.call("get_booking", {"booking_id": 7}),
                await session.call("find_bookings", {"planet": "Mars"}))

    for outcome in run_in_session(travel_dir, episode):
        assert not outcome.ok and "Invalid arguments" in (outcome.error or "")


def test_control_tools_need_the_graders_token(travel_dir: Path) -> None:
    async def episode(session: SandboxSession):
        return (await session.call("_control_snapshot", {}),
                await session.call("_control_reset", {"token": "guess", "overlay": {}}))

    for outcome in run_in_session(travel_dir, episode):
        assert not outcome.ok and "Unknown tool" in (outcome.error or "")


def test_a_crashing_handler_is_reported_and_rolled_back(tmp_path: Path, tiny_bundle: EnvironmentBundle) -> None:
    source = tiny_bundle.implementation + '''

def explode(state, booking_id):
    state["bookings"][0]["status"] = "half-done"
    return 1 / 0
'''
    tool = tiny_bundle.tools[0].model_copy(update={"name": "explode", "kind": ToolKind.LOOKUP})
    bundle = tiny_bundle.model_copy(update={"tools": [*tiny_bundle.tools, tool], "implementation": source})
    write_bundle(bundle, tmp_path / "tiny")

    async def episode(session: SandboxSession):
        await session.reset()
        outcome = await session.call("explode", {"booking_id": "B1"})
        return outcome, await session.snapshot("tiny")

    outcome, trace = run_in_session(tmp_path / "tiny", episode)
    assert not outcome.ok and "ZeroDivisionError" in (outcome.error or "")
    assert trace.final_state_hash == trace.initial_state_hash


def test_env_serve_records_what_an_external_client_did(tmp_path: Path, travel_dir: Path) -> None:
    """`abstaingen env serve` with a task's overlay and --record, driven by the plain MCP SDK client."""
    pair = builtin_pair(Scenario.S8)  # the abstain side patches a risk marker into the booking
    pairs_file = tmp_path / "pairs.jsonl"
    pairs_file.write_text(pair.model_dump_json() + "\n")
    record = tmp_path / "record"
    booking_id = pair.perturbation.witness.revealing_read.args["booking_id"]
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "abstaingen", "env", "serve", str(travel_dir), "--task", str(pairs_file),
              "--task-id", pair.abstain.task_id, "--record", str(record)],
    )

    async def main():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            read_result = await session.call_tool("get_booking", {"booking_id": booking_id})
            cancel_result = await session.call_tool("cancel_with_refund", {"booking_id": booking_id})
            return read_result, cancel_result

    read_result, cancel_result = anyio.run(main)
    assert read_result.structured_content["notes"] == pair.perturbation.witness.marker
    assert not cancel_result.is_error
    snapshot = json.loads((record / "snapshot.json").read_text())
    assert [c["tool"] for c in snapshot["log"]] == ["get_booking", "cancel_with_refund"]
    assert snapshot["final_state_hash"] != snapshot["initial_state_hash"]


def test_runtime_refuses_a_bad_overlay_in_one_line(tmp_path: Path, travel_dir: Path) -> None:
    overlay = tmp_path / "overlay.json"
    overlay.write_text(TaskOverlay(state_patch=[
        PatchOp(op="set", collection="bookings", record_id="BK-0", values={})]).model_dump_json())
    done = subprocess.run([sys.executable, str(RUNTIME_SERVER), str(travel_dir), "--overlay", str(overlay)],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert "BK-0" in done.stderr and "does not exist" in done.stderr
