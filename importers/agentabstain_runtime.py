"""Runs an AgentAbstain environment's own class over abstaingen's JSON state, inside the sandbox.

`abstaingen env import agentabstain` writes a bundle whose implementation is this file's text, then the
environment package's files (as strings: `environment.py` and the modules beside it, such as its `schema.py`),
then one handler per tool. It is never imported or run on the
host, and needs only the standard library. What the environment imports from AgentAbstain's runtime and from
FastMCP is stood in for by what environments are seen to use: `BaseEnvironment` (the constructor that loads
the state and registers the tools, `_log_tool_call`), `ToolError`, and `FastMCP(...).tool` in each of its
forms (`@mcp.tool()`, `@mcp.tool("name")`, `@mcp.tool(name=..., description=...)`, `mcp.tool(fn, name=...)`).

Each call builds the environment on a copy of the state, as AgentAbstain's runtime builds it on a task's
initial state, calls the tool with the raw arguments (a `ToolError` or any other exception fails the call),
and writes the environment's state back, as JSON, when it changed: environments may keep their records as
objects (`Profile(...)` with a `to_dict()`), which their `_load_state` builds from the JSON again.
"""

from __future__ import annotations

import copy
import dataclasses
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


def install(sources: dict[str, str]) -> None:
    """Stand in for AgentAbstain's runtime and FastMCP, then run the environment package's files (module name ->
    source, its other modules before `environment`) as the modules of that package."""
    _module("fastmcp", FastMCP=_FastMCP)
    _module("fastmcp.exceptions", ToolError=_ToolError)
    _module("abstention_factory.runtime.base", BaseEnvironment=_BaseEnvironment, ToolError=_ToolError)
    for name, source in sources.items():
        package = name.rpartition(".")[0]
        _module(package, __path__=[], __package__=package)  # `from .schema import ...` finds its sibling
        namespace = _module(name, __package__=package)
        exec(compile(source, name.replace(".", "/") + ".py", "exec"), namespace.__dict__)  # the sandbox's own process


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


def _plain(value: Any) -> Any:
    """A value of the environment's state or a tool's result as JSON: the objects environments keep their records
    in (with `to_dict()`, dataclasses, pydantic models) as the dicts they stand for."""
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_plain(item) for item in value]
    if callable(getattr(value, "to_dict", None)):
        return _plain(value.to_dict())
    if callable(getattr(value, "model_dump", None)):
        return _plain(value.model_dump(mode="json"))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _plain(dataclasses.asdict(value))
    return json.loads(json.dumps(value, default=str))


def theirs(state: dict[str, Any], known: dict[str, list[str] | None]) -> dict[str, Any]:
    """The part of abstaingen's state the environment knows: its own entries, with only the fields its records had
    when it was imported (an overlay's notes field or collection would break a class that builds strict objects)."""
    part: dict[str, Any] = {}
    for name, value in state.items():
        if name not in known:
            continue
        fields = known[name]
        if fields is not None and isinstance(value, list):
            part[name] = [{k: v for k, v in r.items() if k in fields} if isinstance(r, dict) else r for r in value]
        elif fields is not None and isinstance(value, dict):
            part[name] = {k: v for k, v in value.items() if k in fields}
        else:
            part[name] = value
    return part


def _with_additions(after: dict[str, Any], before: dict[str, Any], known: dict[str, list[str] | None]) -> dict[str, Any]:
    """The environment's new state, each record keeping the fields it did not know, and the entries it never saw."""
    merged = dict(before)
    for name, value in after.items():
        old, fields = before.get(name), known.get(name)
        if fields is not None and isinstance(value, list) and isinstance(old, list):
            keyed = all(isinstance(r, dict) and "id" in r for r in old)
            olds = {r["id"]: r for r in old} if keyed else dict(enumerate(old))
            merged[name] = [{**{k: v for k, v in olds.get(r.get("id") if keyed else i, {}).items() if k not in fields},
                             **r} if isinstance(r, dict) else r for i, r in enumerate(value)]
        elif fields is not None and isinstance(value, dict) and isinstance(old, dict):
            merged[name] = {**{k: v for k, v in old.items() if k not in fields}, **value}
        else:
            merged[name] = value
    return merged


def call(state: dict[str, Any], module: str, environment: str, tool: str, args: dict[str, Any],
         known: dict[str, list[str] | None]) -> Any:
    """Call `tool` of the environment class on the part of the state it knows; write the state back when it
    changed, keeping what the environment did not know."""
    before = theirs(state, known)
    try:
        instance = getattr(sys.modules[module], environment)(copy.deepcopy(before))
        result = instance.mcp.tools[tool](**args)
        if inspect.iscoroutine(result):
            result = _finished(result)
        after = _plain(instance.state)
    except Exception as exc:  # AgentAbstain's runtime answers a ToolError, or any failure, as the call's error
        raise ValueError(str(exc) or type(exc).__name__) from None
    if after != before:
        written = _with_additions(after, state, known)
        state.clear()
        state.update(written)
    return _plain(result)
