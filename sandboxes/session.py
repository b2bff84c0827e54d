"""The grader's side of a sandbox: an MCP client session to one environment's runtime server."""

from __future__ import annotations

import json
import secrets
import tempfile
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import AsyncExitStack, contextmanager
from pathlib import Path
from typing import Any, TypeVar

import anyio
import mcp_types as types
from mcp import ClientSession
from mcp.shared.exceptions import MCPError

from abstaingen.errors import AbstaingenError
from abstaingen.model import EnvironmentBundle, JsonValue, TaskOverlay, ToolCallRecord, Trace
from abstaingen.model.common import Model, content_hash
from abstaingen.model.task import apply_state_patch
from abstaingen.sandboxes.backends import SandboxBackend

T = TypeVar("T")
RESET_TOOL = "_control_reset"
SNAPSHOT_TOOL = "_control_snapshot"


class CallOutcome(Model):
    ok: bool
    result: JsonValue = None
    error: str | None = None


class SandboxError(AbstaingenError):
    """The sandbox could not start or stopped answering."""


class SandboxSession:
    """One running environment server. Many episodes can run in it: `reset` starts a fresh one.

    The control token never leaves this object, so only the grader can reset or snapshot.
    """

    def __init__(self, bundle_dir: Path, backend: SandboxBackend, start_timeout_s: float = 60.0):
        self.bundle_dir = bundle_dir
        self.backend = backend
        self.call_timeout_s = backend.limits.call_timeout_s
        self.start_timeout_s = start_timeout_s
        self._token = secrets.token_hex(16)
        self._stack = AsyncExitStack()
        self._session: ClientSession | None = None
        self._errlog = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 - closed in __aexit__

    async def __aenter__(self) -> SandboxSession:
        server = self.backend.connect(self.bundle_dir, {"ABSTAINGEN_CONTROL_TOKEN": self._token}, self._errlog)
        try:
            read, write = await self._stack.enter_async_context(server)
            self._session = await self._stack.enter_async_context(ClientSession(read, write))
            with anyio.fail_after(self.start_timeout_s):
                await self._session.initialize()
                await self._session.list_tools()  # warms the client's tool cache used to check results
        except Exception as exc:
            await self._stack.aclose()
            raise SandboxError(f"sandbox for {self.bundle_dir.name} did not start: {exc}{self._stderr_tail()}") from exc
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self._stack.aclose()
        self._errlog.close()

    def _stderr_tail(self) -> str:
        self._errlog.seek(0)
        tail = self._errlog.read()[-2000:].strip()
        return f"\nserver stderr:\n{tail}" if tail else ""

    @property
    def session(self) -> ClientSession:
        if self._session is None:
            raise RuntimeError("SandboxSession used outside 'async with'")
        return self._session

    async def list_tools(self) -> list[types.Tool]:
        return (await self.session.list_tools()).tools

    async def call(self, tool: str, args: dict[str, JsonValue]) -> CallOutcome:
        with self._deadline(tool):
            return self._outcome(await self.session.call_tool(tool, args))

    @contextmanager
    def _deadline(self, what: str) -> Iterator[None]:
        """A call that does not answer in time leaves the server unusable: the caller must drop
        this session (leaving `async with` kills the process) and start a new one."""
        try:
            with anyio.fail_after(self.call_timeout_s):
                yield
        except TimeoutError:
            raise SandboxError(f"{what} did not answer within {self.call_timeout_s:g} s") from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, MCPError) as exc:
            raise SandboxError(f"{what}: the sandbox stopped answering ({exc}){self._stderr_tail()}") from None

    async def _control(self, tool: str, args: dict[str, JsonValue]) -> CallOutcome:
        """A grader-only call. Sent as a raw request: the tool is unlisted, so the client's result
        check (which re-lists tools and warns for unknown names) does not apply."""
        request = types.CallToolRequest(params=types.CallToolRequestParams(
            name=tool, arguments={"token": self._token, **args}))
        with self._deadline(tool):
            return self._outcome(await self.session.send_request(request, types.CallToolResult))

    @staticmethod
    def _outcome(result: types.CallToolResult) -> CallOutcome:
        text = "".join(c.text for c in result.content if isinstance(c, types.TextContent))
        if result.is_error:
            return CallOutcome(ok=False, error=text)
        return CallOutcome(ok=True, result=json.loads(text))

    async def reset(self, overlay: TaskOverlay | None = None) -> None:
        overlay_json = (overlay or TaskOverlay()).model_dump(mode="json")
        outcome = await self._control(RESET_TOOL, {"overlay": overlay_json})
        if not outcome.ok:
            raise SandboxError(f"could not apply task overlay in {self.bundle_dir.name}: {outcome.error}")

    async def snapshot(self, env_id: str, then_reset: TaskOverlay | None = None) -> Trace:
        """The episode's log and final state; with `then_reset`, the next episode starts in the same trip."""
        args: dict[str, JsonValue] = {} if then_reset is None else {"then_reset": then_reset.model_dump(mode="json")}
        outcome = await self._control(SNAPSHOT_TOOL, args)
        if not outcome.ok or not isinstance(outcome.result, dict):
            raise SandboxError(f"no snapshot from {self.bundle_dir.name}: {outcome.error}")
        return trace_from_snapshot(env_id, outcome.result)


def trace_from_snapshot(env_id: str, snap: dict[str, Any]) -> Trace:
    """A Trace from the runtime server's snapshot (the control tool's answer, or --record's snapshot.json)."""
    log = snap.get("log")
    return Trace(
        env_id=env_id,
        calls=[ToolCallRecord.model_validate(c) for c in (log if isinstance(log, list) else [])],
        initial_state_hash=snap["initial_state_hash"],
        final_state_hash=snap["final_state_hash"],
        final_state=snap["final_state"],
    )


def recorded_trace(record_dir: Path, bundle: EnvironmentBundle, overlay: TaskOverlay) -> Trace:
    """The episode an external client ran against `env serve --record DIR`: its last snapshot, or, when
    the client made no call (nothing was recorded), the untouched starting state."""
    snapshot = record_dir / "snapshot.json"
    if snapshot.is_file():
        return trace_from_snapshot(bundle.env_id, json.loads(snapshot.read_text(encoding="utf-8")))
    start = apply_state_patch(bundle.initial_state, overlay.state_patch)
    return Trace(env_id=bundle.env_id, initial_state_hash=content_hash(start), final_state_hash=content_hash(start),
                 final_state=start)


def calling(session: SandboxSession, tool: str, args: dict[str, JsonValue]) -> Callable[[], Awaitable[CallOutcome]]:
    """An episode's body (`run_episodes`) that makes one call."""
    async def call() -> CallOutcome:
        return await session.call(tool, args)
    return call


async def run_episodes(
    session: SandboxSession, env_id: str, episodes: Sequence[tuple[TaskOverlay, Callable[[], Awaitable[T]]]]
) -> list[tuple[Trace, T]]:
    """Run each (overlay, body) as a fresh episode and return its trace with the body's result.

    Consecutive episodes cost one control round trip between them: the snapshot of one also
    resets the sandbox for the next.
    """
    results: list[tuple[Trace, T]] = []
    if not episodes:
        return results
    await session.reset(episodes[0][0])
    limit = session.backend.limits.episode_timeout_s
    for index, (_, body) in enumerate(episodes):
        try:
            with anyio.fail_after(limit):
                value = await body()
        except TimeoutError:
            raise SandboxError(f"an episode in {session.bundle_dir.name} did not finish within {limit:g} s") from None
        following = episodes[index + 1][0] if index + 1 < len(episodes) else None
        results.append((await session.snapshot(env_id, then_reset=following), value))
    return results
