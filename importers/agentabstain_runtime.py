"""Runs an AgentAbstain environment's own class over abstaingen's JSON state, inside the sandbox.

`abstaingen env import agentabstain` writes a bundle whose implementation is this file's text, then the
environment's `environment.py` (as a string), then one handler per tool. It is never imported or run on the
host, and needs only the standard library. What the environment imports from AgentAbstain's runtime and from
FastMCP is stood in for by what environments are seen to use: `BaseEnvironment` (the constructor that loads
the state and registers the tools, `_log_tool_call`), `ToolError`, and `FastMCP(...).tool` in each of its
forms (`@mcp.tool()`, `@mcp.tool("name")`, `@mcp.tool(name=..., description=...)`, `mcp.tool(fn, name=...)`).

Each call builds the environment on a copy of the state, as AgentAbstain's runtime builds it on a task's
initial state, calls the tool with the raw arguments (a `ToolError` or any other exception fails the call),
and writes the environment's state back when it changed.
"""

from __future__ import annotations

import copy
import inspect
import json
import sys
import types
from typing import Any


def _module(name: str, **names: Any) -> types.ModuleType:
    module = sys.modules.get(name) or types.ModuleType(name)
    module.__dict__.update(names)
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(_module(parent), child, module)
    return module


class _ToolError(Exception):
    pass


class _FastMCP:
    def __init__(self, name: str = "", *args: Any, **kwargs: Any) -> None:
        self.name = name
        self.tools: dict[str, Any] = {}

    def tool(self, fn: Any = None, *args: Any, name: str | None = None, **kwargs: Any) -> Any:
        if isinstance(fn, str):  # @mcp.tool("name")
            fn, name = None, fn

        def register(function: Any) -> Any:
            self.tools[name or function.__name__] = function
            return function
        return register(fn) if callable(fn) else register


class _BaseEnvironment:
    env_name = ""
    short_name = ""
    tool_kinds: dict[str, str] = {}
    mutation_tools: set[str] = set()
    mutation_id_fields: set[str] = set()
    always_skip_fields: set[str] = set()

    def __init__(self, initial_state: dict[str, Any]) -> None:
        self.mcp = _FastMCP(self.env_name or type(self).__name__)
        self.state = self._load_state(initial_state)
        self.execution_log: list[dict[str, Any]] = []
        self._register_tools()

    def _load_state(self, initial_state: dict[str, Any]) -> dict[str, Any]:
        return initial_state

    def _register_tools(self) -> None:
        raise NotImplementedError

    def _log_tool_call(self, tool_name: str, params: Any, result: Any, success: bool = True,
                       error: str | None = None) -> None:
        self.execution_log.append({"tool": tool_name, "params": params, "result": result, "success": success,
                                   "error": error})


def install(module: str, source: str) -> None:
    """Stand in for AgentAbstain's runtime and FastMCP, then run the environment's file as `module`."""
    _module("fastmcp", FastMCP=_FastMCP)
    _module("fastmcp.exceptions", ToolError=_ToolError)
    _module("abstention_factory.runtime.base", BaseEnvironment=_BaseEnvironment, ToolError=_ToolError)
    namespace = _module(module)
    exec(compile(source, module.replace(".", "/") + ".py", "exec"), namespace.__dict__)  # the sandbox's own process


def _finished(coroutine: Any) -> Any:
    """An async tool's result: its coroutine run to its end here (the sandbox's server is already in an event
    loop). A tool over a JSON state awaits nothing that waits; one that does fails the call."""
    for _ in range(10_000):
        try:
            coroutine.send(None)
        except StopIteration as done:
            return done.value
    coroutine.close()
    raise RuntimeError("the tool waited on something outside the environment")


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def call(state: dict[str, Any], module: str, environment: str, tool: str, args: dict[str, Any]) -> Any:
    """Call `tool` of the environment class on the state; write the state back when it changed."""
    before = copy.deepcopy(state)
    try:
        instance = getattr(sys.modules[module], environment)(copy.deepcopy(state))
        result = instance.mcp.tools[tool](**args)
        if inspect.iscoroutine(result):
            result = _finished(result)
        after = _jsonable(instance.state)
    except Exception as exc:  # AgentAbstain's runtime answers a ToolError, or any failure, as the call's error
        raise ValueError(str(exc) or type(exc).__name__) from None
    if after != before:
        state.clear()
        state.update(after)
    return _jsonable(result)
