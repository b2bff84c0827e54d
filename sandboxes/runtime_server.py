"""Serve one environment bundle as an MCP server over stdio.

This file is the only abstaingen code that runs inside a sandbox, next to the untrusted tool
implementation. It therefore imports nothing from abstaingen: only the standard library, `mcp`
and `jsonschema` (an `mcp` dependency), so it can be copied as-is into a container image.

    python runtime_server.py BUNDLE_DIR [--overlay OVERLAY.json] [--record DIR]

BUNDLE_DIR holds `environment.json` (tools, initial state) and `implementation.py`.

Agents see the bundle's tools, minus hidden ones; broken tools return their error (on every call, or
on their first `failures` calls). Graders additionally reach two control tools that are never listed and only answer when called with the
token the grader put in ABSTAINGEN_CONTROL_TOKEN when it started the server:
`_control_reset {token, overlay}` restores the initial state and applies a task overlay, and
`_control_snapshot {token, then_reset?}` returns the execution log and the current state, then
starts the next episode if `then_reset` holds its overlay (one round trip between episodes). With `--record DIR`
the log and state are also written to DIR after every call, for graders of external clients.
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__" and sys.flags.hash_randomization:
    # Hashes of str and bytes, and with them the order of sets, must be the same in every sandbox: a
    # handler whose result followed them would pass replay in one sandbox and fail it in the next. `-I`
    # ignores PYTHONHASHSEED, so the server starts again with it set and the rest of that isolation
    # (-P -s, and no other PYTHON* variable), before anything else is imported.
    os.execve(sys.executable, [sys.executable, "-P", "-s", os.path.abspath(__file__), *sys.argv[1:]],
              {**{k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}, "PYTHONHASHSEED": "0"})

import argparse
import asyncio
import datetime
import hashlib
import io
import json
import resource
import secrets
import selectors
import signal
import time
from pathlib import Path
from typing import Any, BinaryIO, cast

import anyio
import jsonschema
import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server

OVERLAY_ENV = "ABSTAINGEN_OVERLAY"  # a task overlay (JSON) to apply at start, as --overlay does
RESET_TOOL = "_control_reset"
SNAPSHOT_TOOL = "_control_snapshot"


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def apply_patch(state: dict, patch: list[dict]) -> None:
    for op in patch:
        records = state.setdefault(op["collection"], [])
        index = next((i for i, r in enumerate(records) if r.get("id") == op["record_id"]), None)
        if op["op"] == "add":
            if index is not None:
                raise ValueError(f"patch adds {op['collection']}/{op['record_id']}, which exists")
            records.append({"id": op["record_id"], **op.get("values", {})})
        elif index is None:
            raise ValueError(f"patch targets {op['collection']}/{op['record_id']}, which does not exist")
        elif op["op"] == "set":
            records[index].update(op.get("values", {}))
        elif op["op"] == "remove":
            del records[index]
        else:
            raise ValueError(f"unknown patch op {op['op']!r}")


class ResultTooLarge(Exception):
    pass


# The wall clock every handler sees: a result that depended on when it ran would pass replay today and
# fail it tomorrow. Monotonic clocks (timeouts) keep running.
FROZEN_CLOCK = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)


def freeze_clock() -> None:
    """Make `time` and `datetime` tell FROZEN_CLOCK, for code loaded after this call."""
    frozen = FROZEN_CLOCK.timestamp()

    class FrozenDate(datetime.date):
        @classmethod
        def today(cls) -> Any:
            return cls.fromordinal(FROZEN_CLOCK.toordinal())

    class FrozenDateTime(datetime.datetime):
        @classmethod
        def now(cls, tz: Any = None) -> Any:
            moment = FROZEN_CLOCK if tz is not None else FROZEN_CLOCK.replace(tzinfo=None)
            return cls.fromtimestamp(frozen, tz) if tz is not None else cls(*moment.timetuple()[:6])

        @classmethod
        def utcnow(cls) -> Any:
            return cls(*FROZEN_CLOCK.timetuple()[:6])

        @classmethod
        def today(cls) -> Any:
            return cls.utcnow()

    datetime.date, datetime.datetime = FrozenDate, FrozenDateTime  # type: ignore[misc]
    time.time, time.time_ns = (lambda: frozen), (lambda: int(frozen) * 10**9)  # type: ignore[assignment]
    now = _gmtime(frozen)
    time.localtime = time.gmtime = lambda seconds=None: now if seconds is None else _gmtime(seconds)  # type: ignore[assignment]
    time.strftime = lambda form, moment=None: _strftime(form, now if moment is None else moment)  # type: ignore[assignment]
    time.ctime = lambda seconds=None: _asctime(now if seconds is None else _gmtime(seconds))  # type: ignore[assignment]
    time.asctime = lambda moment=None: _asctime(now if moment is None else moment)  # type: ignore[assignment]


_gmtime, _strftime, _asctime = time.gmtime, time.strftime, time.asctime


class Environment:
    """The bundle's tools over a JSON state, with a task overlay and an execution log."""

    def __init__(self, bundle_dir: Path):
        spec = json.loads((bundle_dir / "environment.json").read_text())
        self.tools: dict[str, dict] = {t["name"]: t for t in spec["tools"]}
        self.undos = {t["undone_by"] for t in spec["tools"] if t.get("undone_by")}  # reversible: not destructive
        self.validators = {name: jsonschema.Draft202012Validator(t["input_schema"]) for name, t in self.tools.items()}
        self.initial_json = canonical(spec["initial_state"])
        self.handlers = self._load(bundle_dir / "implementation.py")
        missing = sorted(set(self.tools) - set(self.handlers))
        if missing:
            raise SystemExit(f"implementation.py defines no handler for tools: {missing}")
        self.reset({})

    def _load(self, path: Path) -> dict:
        namespace: dict[str, Any] = {"__name__": "implementation"}
        exec(compile(path.read_text(), str(path), "exec"), namespace)  # inside the sandbox only
        return {name: fn for name, fn in namespace.items() if callable(fn) and name in self.tools}

    def reset(self, overlay: dict) -> None:
        """Start a new episode; on a bad overlay, raise and keep the current episode."""
        unknown = set(overlay.get("hidden_tools", [])) | {b["name"] for b in overlay.get("broken_tools", [])}
        unknown -= set(self.tools)
        if unknown:
            raise ValueError(f"overlay names tools the environment does not have: {sorted(unknown)}")
        state = json.loads(self.initial_json)
        apply_patch(state, overlay.get("state_patch", []))
        self.state = state
        self.state_json = canonical(state)
        self.hidden = set(overlay.get("hidden_tools", []))
        self.broken = {b["name"]: b["error"] for b in overlay.get("broken_tools", [])}
        # a transient fault fails its first `failures` calls, then the tool works; None: it never works
        self.failures_left = {b["name"]: b.get("failures") for b in overlay.get("broken_tools", [])}
        self.log: list[dict] = []
        self.initial_hash = self.state_hash()

    def visible_tools(self) -> list[dict]:
        return [t for name, t in self.tools.items() if name not in self.hidden]

    def call(self, name: str, args: dict) -> tuple[bool, Any]:
        """Run one agent call; returns (ok, result or error message) and logs it."""
        ok, value = self._dispatch(name, args)
        self.log.append(
            {
                "step": len(self.log),
                "tool": name,
                "args": args,
                "ok": ok,
                "result": value if ok else None,
                "error": None if ok else value,
                "state_hash_after": self.state_hash(),
            }
        )
        return ok, value

    def _dispatch(self, name: str, args: dict) -> tuple[bool, Any]:
        if name not in self.tools or name in self.hidden:
            return False, f"Unknown tool: {name}"
        if name in self.broken:
            left = self.failures_left[name]
            if left is None or left > 0:
                if left is not None:
                    self.failures_left[name] = left - 1
                return False, self.broken[name]
        error = jsonschema.exceptions.best_match(self.validators[name].iter_errors(args))
        if error is not None:
            return False, f"Invalid arguments for {name}: {error.message}"
        try:
            result = self.handlers[name](self.state, **args)
            if len(canonical(result)) > MAX_RESULT_BYTES:  # also checks that the result is JSON
                raise ResultTooLarge(f"{name} returned more than {MAX_RESULT_BYTES} bytes")
            state_json = canonical(self.state)
            if len(state_json) > MAX_STATE_BYTES:  # every snapshot carries the state: keep it bounded
                raise ResultTooLarge(f"{name} grew the state beyond {MAX_STATE_BYTES} bytes")
            self.state_json = state_json
        except (ValueError, ResultTooLarge) as exc:
            self.state = json.loads(self.state_json)  # roll back to the state before the call
            return False, str(exc)
        except Exception as exc:  # a bug in the implementation: roll back, report, keep serving
            self.state = json.loads(self.state_json)
            return False, f"Internal error in {name}: {type(exc).__name__}: {exc}"
        return True, result

    def state_hash(self) -> str:
        return hashlib.sha256(self.state_json.encode()).hexdigest()

    def snapshot(self) -> dict:
        return {
            "log": self.log,
            "initial_state_hash": self.initial_hash,
            "final_state_hash": self.state_hash(),
            "final_state": self.state,
        }


def text_result(value: Any, is_error: bool = False) -> types.CallToolResult:
    text = value if is_error else canonical(value)
    structured = None if is_error else (value if isinstance(value, dict) else {"result": value})
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=structured, is_error=is_error
    )


def control_result(value: dict) -> types.CallToolResult:
    """Grader-only results travel as text alone: they can be large, and no agent reads them."""
    return types.CallToolResult(content=[types.TextContent(type="text", text=canonical(value))])


def build_server(env: Environment, control_token: str, record_dir: Path | None,
                 call_timeout_s: float = 0.0) -> Server:
    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=t["name"],
                    description=t["description"],
                    input_schema=t["input_schema"],
                    annotations=types.ToolAnnotations(
                        read_only_hint=t["kind"] != "commit",
                        destructive_hint=(t["kind"] == "commit" and not t.get("undone_by") and t["name"] not in env.undos)
                        if t["kind"] == "commit" else None,
                    ),
                )
                for t in env.visible_tools()
            ]
        )

    async def call_tool(ctx, params) -> types.CallToolResult:
        args = dict(params.arguments or {})
        if params.name in (RESET_TOOL, SNAPSHOT_TOOL) and secrets.compare_digest(
            str(args.pop("token", "")), control_token
        ):
            snapshot = env.snapshot() if params.name == SNAPSHOT_TOOL else None
            overlay = args.get("overlay") if params.name == RESET_TOOL else args.get("then_reset")
            if overlay is not None:
                try:
                    env.reset(overlay)
                except ValueError as exc:
                    return text_result(str(exc), is_error=True)
            return control_result(snapshot or {"initial_state_hash": env.initial_hash})
        if call_timeout_s:  # past it, SIGALRM's default action ends the server: no client waits forever
            signal.setitimer(signal.ITIMER_REAL, call_timeout_s)
        try:
            ok, value = env.call(params.name, args)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        if record_dir is not None:
            (record_dir / "snapshot.json").write_text(canonical(env.snapshot()))
        return text_result(value, is_error=not ok)

    server = Server("abstaingen-environment", on_list_tools=list_tools, on_call_tool=call_tool)
    server.middleware = []  # no OpenTelemetry spans: nothing in a sandbox could export them
    return server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundle_dir", type=Path)
    parser.add_argument("--overlay", type=Path, help="task overlay JSON to apply at start")
    parser.add_argument("--record", type=Path, help="write the execution log and state here after each call")
    parser.add_argument("--memory-mb", type=int, default=1024, help="address-space limit of this process")
    parser.add_argument("--call-timeout-s", type=float, default=0.0,
                        help="a tool call that takes longer ends the server (0: no deadline)")
    options = parser.parse_args(argv)

    limit_resources(options.memory_mb)
    freeze_clock()  # here, not in Environment: a test that loads a bundle in its own process keeps its clock
    try:
        env = Environment(options.bundle_dir)
        overlay = os.environ.pop(OVERLAY_ENV, None) or (options.overlay.read_text() if options.overlay else None)
        if overlay:
            env.reset(json.loads(overlay))
    except (OSError, ValueError, KeyError) as exc:  # a bad bundle or overlay: one line, no traceback
        raise SystemExit(f"cannot serve {options.bundle_dir}: {type(exc).__name__}: {exc}") from None
    if options.record:
        options.record.mkdir(parents=True, exist_ok=True)
    # Without a token from the grader, nobody can reach the control tools.
    token = os.environ.pop("ABSTAINGEN_CONTROL_TOKEN", "") or secrets.token_hex(16)
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    server = build_server(env, token, options.record, options.call_timeout_s)

    try:
        wire_in, wire_out = claim_stdio()
    except OSError as exc:  # started with stdin or stdout closed
        raise SystemExit(f"cannot serve {options.bundle_dir}: stdin and stdout carry the MCP messages, "
                         f"but one is closed ({exc.strerror})") from None

    async def serve() -> None:
        lines: WireLines | FileLines
        if pollable(wire_in):
            reader = asyncio.StreamReader(limit=MAX_MESSAGE_BYTES)
            await asyncio.get_running_loop().connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), wire_in)
            lines = WireLines(reader)
        else:  # stdin is /dev/null or a file of requests: the event loop cannot watch those
            lines = FileLines(wire_in)
        # WireLines and WireWriter do what the SDK's AsyncFile wrappers do, on the event loop
        async with stdio_server(stdin=lines, stdout=WireWriter(wire_out)) as (  # type: ignore[arg-type]
                read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(serve)


MAX_MESSAGE_BYTES = 64 * 2**20
MAX_RESULT_BYTES = 2**20
MAX_STATE_BYTES = 8 * 2**20


def limit_resources(memory_mb: int) -> None:
    """Limits the tool code cannot lift, set before it is loaded. Docker adds cgroup limits on top;
    under bwrap and a plain subprocess these are the only ones."""
    memory = memory_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_FSIZE, (2**20, 2**20))  # no large files, even in scratch
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def claim_stdio() -> tuple[BinaryIO, BinaryIO]:
    """Keep the real stdin/stdout for the MCP wire; point fd 0 at /dev/null and fd 1 at stderr, so
    whatever the tool code reads or prints cannot touch the protocol stream."""
    wire_in = os.fdopen(os.dup(0), "rb", buffering=0)
    wire_out = os.fdopen(os.dup(1), "wb", buffering=0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    return wire_in, wire_out


class WireLines:
    """The incoming JSON-RPC lines, read on the event loop (the SDK's default reads in a thread per
    line, which doubled the cost of a round trip)."""

    def __init__(self, reader: asyncio.StreamReader):
        self.reader = reader

    def __aiter__(self) -> WireLines:
        return self

    async def __anext__(self) -> str:
        line = await self.reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


def pollable(wire: BinaryIO) -> bool:
    """Whether the event loop can wait on this stream (a pipe, socket or terminal can be; /dev/null and
    regular files cannot: epoll refuses them, and asyncio then neither raises nor ever reads)."""
    with selectors.DefaultSelector() as selector:
        try:
            selector.register(wire.fileno(), selectors.EVENT_READ)
        except (OSError, ValueError):
            return False
    return True


class FileLines:
    """The incoming lines from a stream that is always readable (/dev/null, a file), read in a worker
    thread; at its end the server stops, as it does when a client closes the pipe."""

    def __init__(self, wire: BinaryIO):
        # claim_stdio's wire is a raw FileIO; buffering it reads a line without a system call per byte
        self.wire = io.BufferedReader(cast(io.RawIOBase, wire))

    def __aiter__(self) -> FileLines:
        return self

    async def __anext__(self) -> str:
        line = await anyio.to_thread.run_sync(self.wire.readline, MAX_MESSAGE_BYTES)
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


class WireWriter:
    def __init__(self, wire: BinaryIO):
        self.wire = wire

    async def write(self, text: str) -> None:
        data = memoryview(text.encode("utf-8"))
        while data:
            data = data[self.wire.write(data) or 0:]

    async def flush(self) -> None:
        pass


if __name__ == "__main__":
    main()
