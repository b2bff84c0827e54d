"""A stand-in for AgentAbstain's `abstention_factory/runtime/base.py`, whose source is not public in the
code store we read. It offers exactly what their code is seen to use, and nothing more:

- their environment files: `class XEnvironment(BaseEnvironment)` with class attributes `env_name`,
  `short_name`, `tool_kinds`, `mutation_tools`, `mutation_id_fields`, and `_load_state(initial_state)`,
  `_register_tools()` registering tools on `self.mcp` with `@self.mcp.tool()`, each tool calling
  `self._log_tool_call(name, params, result[, success=False, error=msg])` and raising `ToolError`;
- their multi-environment facade: `cls(initial_state)`, classmethods `get_tool_schemas()` (dicts with
  `name`, and a `kind`) and `get_state_schema()`, `.mcp` mounted into a composite server, `.state`,
  `call_tool`, `get_tool_callable`, `break_tool`, `abreak_tool`, `hide_tool`, and `_log_tool_call`
  replaced on the instance by a hook (so tools must look it up on `self` at call time).

A broken tool keeps its schema and fails every call with the given message, logged as a failed call.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
from typing import Any

from fastmcp import FastMCP
from fastmcp.exceptions import ToolError as _McpToolError


class ToolError(_McpToolError):
    """A tool refusing a call: the agent sees the message as the call's error."""


def _run_sync(coroutine: Any) -> Any:
    """Run a coroutine to its end from sync code, also when an event loop is running (the task server
    builds its environments inside one)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


class BaseEnvironment:
    env_name: str = ""
    short_name: str = ""
    tool_kinds: dict[str, str] = {}
    mutation_tools: set[str] = set()
    mutation_id_fields: set[str] = set()
    always_skip_fields: set[str] = set()

    def __init__(self, initial_state: dict[str, Any]) -> None:
        self.mcp = FastMCP(self.env_name or type(self).__name__)
        self.state = self._load_state(initial_state)
        self.execution_log: list[dict[str, Any]] = []
        self._register_tools()

    def _load_state(self, initial_state: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def _register_tools(self) -> None:
        raise NotImplementedError

    def _log_tool_call(self, tool_name: str, params: Any, result: Any, success: bool = True,
                       error: str | None = None) -> None:
        self.execution_log.append({"tool": tool_name, "params": params, "result": result, "success": success,
                                   "error": error})

    @classmethod
    def get_example_state(cls) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def get_state_schema(cls) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def get_tool_schemas(cls) -> list[dict[str, Any]]:
        tools = _run_sync(cls(cls.get_example_state()).mcp.list_tools())
        return [{"name": t.name, "description": t.description, "input_schema": t.parameters,
                 "kind": cls.tool_kinds.get(t.name)} for t in tools]

    def call_tool(self, tool_name: str, **params: Any) -> Any:
        return _run_sync(self.mcp.call_tool(tool_name, params)).structured_content

    def get_tool_callable(self, tool_name: str) -> Any:
        return _run_sync(self.mcp.get_tool(tool_name)).fn

    async def abreak_tool(self, tool_name: str, error_message: str = "Service unavailable") -> None:
        original = await self.mcp.get_tool(tool_name)

        def broken(**params: Any) -> Any:
            self._log_tool_call(tool_name, params, None, success=False, error=error_message)
            raise ToolError(error_message)

        broken.__signature__ = inspect.signature(original.fn)  # type: ignore[attr-defined]
        broken.__annotations__ = dict(original.fn.__annotations__)
        self.mcp.local_provider.remove_tool(tool_name)
        self.mcp.tool(broken, name=tool_name, description=original.description)

    def break_tool(self, tool_name: str, error_message: str = "Service unavailable") -> None:
        _run_sync(self.abreak_tool(tool_name, error_message))

    def hide_tool(self, tool_name: str) -> None:
        self.mcp.local_provider.remove_tool(tool_name)
