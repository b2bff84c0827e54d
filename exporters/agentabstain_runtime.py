"""An abstaingen environment behind AgentAbstain's environment contract: copied verbatim into every
environment package of an AgentAbstain export as `_tools.py`, next to `environment.json` (tools, kinds,
state schema, initial state) and `implementation.py` (one function per tool over the JSON state).

The package's `environment.py` subclasses the harness's own `BaseEnvironment` and hands this module its
`_load_state`, `_register_tools` and class attributes, so the harness's base class does the rest
(breaking and hiding tools, the MCP server, the execution log). Each call is logged through the
instance's `_log_tool_call`, which the harness's multi-environment facade hooks to namespace the entry.

It imports nothing from abstaingen: only the standard library (and FastMCP through the harness).
"""

from __future__ import annotations

import importlib.util
import inspect
import json
from pathlib import Path
from typing import Any

_JSON_TYPES: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool, "array": list,
                               "object": dict}


class EnvironmentSpec:
    """One environment package's tools and state, read from its folder."""

    def __init__(self, folder: Path) -> None:
        spec = json.loads((folder / "environment.json").read_text(encoding="utf-8"))
        self.folder = folder
        self.tools: dict[str, dict[str, Any]] = {t["name"]: t for t in spec["tools"]}
        self.state_schema: dict[str, Any] = spec["state_schema"]
        self._initial_state: dict[str, Any] = spec["initial_state"]
        self.tool_kinds = {name: tool["kind"] for name, tool in self.tools.items()}
        self._handlers: dict[str, Any] | None = None

    def load_state(self, initial_state: dict[str, Any]) -> dict[str, Any]:
        return _copy(initial_state)

    def example_state(self) -> dict[str, Any]:
        return _copy(self._initial_state)

    def empty_state(self) -> dict[str, Any]:
        """Every collection of the example state, emptied."""
        return {key: type(value)() if isinstance(value, (list, dict)) else value
                for key, value in self._initial_state.items()}

    def handlers(self) -> dict[str, Any]:
        if self._handlers is None:
            path = self.folder / "implementation.py"
            loader_spec = importlib.util.spec_from_file_location(f"{self.folder.name}_implementation", path)
            assert loader_spec is not None and loader_spec.loader is not None
            module = importlib.util.module_from_spec(loader_spec)
            loader_spec.loader.exec_module(module)
            self._handlers = {name: getattr(module, name) for name in self.tools}
        return self._handlers

    def register_tools(self, environment: Any, tool_error: type[Exception]) -> None:
        """Register every tool on `environment.mcp`; a call runs the implementation on `environment.state`,
        is logged through `environment._log_tool_call`, and a refused or broken call raises `tool_error`
        and changes nothing."""
        handlers = self.handlers()
        for name, tool in self.tools.items():

            def call(_name: str = name, **params: Any) -> Any:
                params = {key: value for key, value in params.items() if value is not None}
                before = _copy(environment.state)
                try:
                    result = _copy(handlers[_name](environment.state, **params))
                except Exception as exc:  # noqa: BLE001 - a refusal (ValueError) or a bug: a failed call either way
                    environment.state.clear()
                    environment.state.update(before)
                    message = str(exc) if isinstance(exc, ValueError) else \
                        f"Internal error in {_name}: {type(exc).__name__}: {exc}"
                    environment._log_tool_call(_name, params, None, success=False, error=message)
                    raise tool_error(message) from None
                environment._log_tool_call(_name, params, result)
                # an object is the call's structured content; any other value (an imported tool's id, a list) is
                # its JSON text, as abstaingen's own server sends every result
                return result if isinstance(result, dict) else json.dumps(result, ensure_ascii=False)

            signature = _signature(tool["input_schema"])
            call.__signature__ = signature  # type: ignore[attr-defined]
            call.__annotations__ = {p.name: p.annotation for p in signature.parameters.values()}
            call.__name__ = name
            environment.mcp.tool(call, name=name, description=tool["description"],
                                 annotations={"readOnlyHint": tool["kind"] != "commit"})


def _copy(value: Any) -> Any:
    return json.loads(json.dumps(value))


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
