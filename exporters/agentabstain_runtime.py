"""One abstaingen environment as a Python class for the AgentAbstain harness: copied verbatim into every
environment package of an AgentAbstain export as `_runtime.py`, next to `environment.json` (tools,
initial state) and `implementation.py` (one function per tool over the JSON state).

It imports nothing from abstaingen: only the standard library and `fastmcp`. The package's
`Environment` class serves the tools through FastMCP and logs every call as
`{tool, params, result, success, error}`; `python -m <package> TASK_DIR [--log FILE]` serves one task
side over stdio (its `task.yaml` and `initial_states/<env>.json`).
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import json
import sys
from pathlib import Path
from typing import Any

_JSON_TYPES: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool, "array": list,
                               "object": dict}


class ToolCallError(Exception):
    """A call that failed: a broken tool, bad arguments, or the implementation refusing (ValueError)."""


class EnvironmentBase:
    """The environment of one package: the name, tools and handlers come from the package folder."""

    folder: Path

    def __init__(self, initial_state: dict[str, Any] | None = None, tool_overrides: dict[str, Any] | None = None,
                 available_tools: list[str] | None = None) -> None:
        spec = json.loads((self.folder / "environment.json").read_text(encoding="utf-8"))
        self.name: str = self.folder.name
        self.tools: dict[str, dict[str, Any]] = {t["name"]: t for t in spec["tools"]}
        self.handlers = _load_handlers(self.folder / "implementation.py", list(self.tools))
        self.state: dict[str, Any] = json.loads(json.dumps(spec["initial_state"] if initial_state is None
                                                           else initial_state))
        broken = (tool_overrides or {}).get("broken_tools", [])
        self.broken = {self._local(b["tool"]): b.get("error", "the tool failed") for b in broken}
        self.failures_left = {self._local(b["tool"]): b.get("failures") for b in broken}
        available = set(self.tools) if available_tools is None else {self._local(t) for t in available_tools}
        unknown = (available | set(self.broken)) - set(self.tools)
        if unknown:
            raise ValueError(f"{self.name}: no such tools: {sorted(unknown)}")
        self.available = [name for name in self.tools if name in available]
        self.call_log: list[dict[str, Any]] = []

    def _local(self, tool: str) -> str:
        """A tool's name without the `<env>.` prefix that tasks use."""
        return tool.removeprefix(f"{self.name}.")

    def call(self, tool: str, params: dict[str, Any]) -> Any:
        """Run one call, log it, and return its result; a failed call raises ToolCallError."""
        entry: dict[str, Any] = {"tool": f"{self.name}.{tool}", "params": params, "result": None, "success": False,
                                 "error": None}
        self.call_log.append(entry)
        try:
            entry["result"] = self._dispatch(tool, params)
            entry["success"] = True
            return entry["result"]
        except ToolCallError as exc:
            entry["error"] = str(exc)
            raise

    def _dispatch(self, tool: str, params: dict[str, Any]) -> Any:
        if tool not in self.available:
            raise ToolCallError(f"Unknown tool: {tool}")
        if tool in self.broken:
            left = self.failures_left[tool]
            if left is None or left > 0:
                if left is not None:
                    self.failures_left[tool] = left - 1
                raise ToolCallError(self.broken[tool])
        before = json.dumps(self.state)
        try:
            return json.loads(json.dumps(self.handlers[tool](self.state, **params)))
        except ValueError as exc:
            self.state = json.loads(before)  # a refused call changes nothing
            raise ToolCallError(str(exc)) from None
        except Exception as exc:  # noqa: BLE001 - a bug in the implementation is a failed call, not a crash
            self.state = json.loads(before)
            raise ToolCallError(f"Internal error in {tool}: {type(exc).__name__}: {exc}") from None

    def build_server(self) -> Any:
        """A FastMCP server offering the available tools, each call going through `call`."""
        from fastmcp import FastMCP
        from fastmcp.exceptions import ToolError

        server = FastMCP(self.name)
        for name in self.available:
            tool = self.tools[name]

            def handler(_tool: str = name, **params: Any) -> Any:
                try:
                    return self.call(_tool, {k: v for k, v in params.items() if v is not None})
                except ToolCallError as exc:
                    raise ToolError(str(exc)) from None

            signature = _signature(tool["input_schema"])
            handler.__signature__ = signature  # type: ignore[attr-defined]
            handler.__annotations__ = {p.name: p.annotation for p in signature.parameters.values()}
            handler.__name__ = name
            server.tool(handler, name=name, description=tool["description"], output_schema=None,
                        annotations={"readOnlyHint": tool["kind"] != "commit"})
        return server


def _signature(schema: dict[str, Any]) -> inspect.Signature:
    required = set(schema.get("required", []))
    parameters = []
    for name, property_schema in schema.get("properties", {}).items():
        kind = _JSON_TYPES.get(property_schema.get("type"), Any)
        if name in required:
            parameters.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=kind))
        else:
            parameters.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=kind | None,
                                                default=None))
    return inspect.Signature(parameters, return_annotation=Any)


def _load_handlers(path: Path, names: list[str]) -> dict[str, Any]:
    spec = importlib.util.spec_from_file_location(f"{path.parent.name}_implementation", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {name: getattr(module, name) for name in names}


def serve(environment_class: type[EnvironmentBase], argv: list[str] | None = None) -> None:
    """`python -m <package> TASK_DIR [--log FILE]`: serve one task side over stdio; with --log, the call log
    and the state are written to FILE (JSON) after every call."""
    import yaml

    parser = argparse.ArgumentParser(prog=environment_class.folder.name)
    parser.add_argument("task_dir", type=Path)
    parser.add_argument("--log", type=Path)
    options = parser.parse_args(argv)
    task = yaml.safe_load((options.task_dir / "task.yaml").read_text(encoding="utf-8"))
    name = environment_class.folder.name
    state = json.loads((options.task_dir / "initial_states" / f"{name}.json").read_text(encoding="utf-8"))
    environment = environment_class(state, task.get("tool_overrides"),
                                    [t for t in task["available_tools"] if t.startswith(f"{name}.")])
    if options.log is not None:
        call = environment.call

        def logged(tool: str, params: dict[str, Any]) -> Any:
            try:
                return call(tool, params)
            finally:
                options.log.write_text(json.dumps({"calls": environment.call_log, "state": environment.state}),
                                       encoding="utf-8")

        environment.call = logged  # type: ignore[method-assign]
    print(f"serving {name} for {options.task_dir} over stdio", file=sys.stderr)
    environment.build_server().run(transport="stdio", show_banner=False)
