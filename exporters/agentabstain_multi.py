"""`environments/multi.py` of an AgentAbstain export: the harness's task server imports
`abstention_factory.environments.multi.build_multi_environment`, and with `AGENTABSTAIN_DATA` pointing at
the export this module is the one it finds. Copied verbatim by abstaingen.

It offers what the harness's own multi-environment facade offers (tools named `<env>.<tool>`, state as
`{env: state}`, one execution log in call order, breaking and hiding tools by namespaced name), and
finds environments itself: a package next to this file (`<env>/environment.py` holding
`<CamelName>Environment`) first, otherwise the harness's registry. The harness's registry imports its
own 42 environments when it is first imported, so an export that holds only its own never touches it.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any


def class_name(env_name: str) -> str:
    """`consumer_banking` -> `ConsumerBankingEnvironment`, the harness's naming rule."""
    return "".join(part.capitalize() for part in env_name.split("_")) + "Environment"


def get_environment_class(env_name: str) -> type:
    if (Path(__file__).parent / env_name / "environment.py").is_file():
        module = importlib.import_module(f"{__package__}.{env_name}.environment")
        return getattr(module, class_name(env_name))
    from abstention_factory.runtime.registry import get_environment_class as from_registry

    return from_registry(env_name)


class MultiEnvironment:
    """Sub-environments behind one facade: every tool is `<env>.<tool>`, the state is `{env: state}`."""

    def __init__(self, sub_envs: dict[str, Any], *, env_aliases: dict[str, str] | None = None) -> None:
        from fastmcp import FastMCP  # the harness's; imported here so that abstaingen can read `class_name`

        if not sub_envs:
            raise ValueError("MultiEnvironment needs at least one environment")
        aliases = dict(env_aliases or {})
        if set(aliases) - set(sub_envs) or len(set(aliases.values())) < len(aliases):
            raise ValueError(f"env_aliases must name known environments, each alias once: {aliases}")
        self._sub_envs = dict(sub_envs)
        self.env_name = "+".join(sorted(sub_envs))
        self.execution_log: list[dict[str, Any]] = []
        for name, env in self._sub_envs.items():
            env._log_tool_call = self._namespaced_logger(name, env._log_tool_call)
        self.mcp = FastMCP(self.env_name)
        for name, env in self._sub_envs.items():
            prefix = aliases.get(name, name)
            self.mcp.mount(env.mcp, tool_names={s["name"]: f"{prefix}.{s['name']}" for s in type(env).get_tool_schemas()})

    def _namespaced_logger(self, env_name: str, own_log: Any) -> Any:
        def log(tool_name: str, params: Any, result: Any, success: bool = True, error: str | None = None) -> None:
            own_log(tool_name, params, result, success=success, error=error)
            self.execution_log.append({"tool": f"{env_name}.{tool_name}", "params": params, "result": result,
                                       "success": success, "error": error})

        return log

    def _split(self, tool_name: str) -> tuple[Any, str]:
        env_name, _, tool = tool_name.partition(".")
        if not tool or env_name not in self._sub_envs:
            raise ValueError(f"{tool_name!r} is not <env>.<tool> for one of {sorted(self._sub_envs)}")
        return self._sub_envs[env_name], tool

    @property
    def state(self) -> dict[str, Any]:
        return {name: env.state for name, env in self._sub_envs.items()}

    def _union(self, attribute: str, namespaced: bool) -> set[str]:
        return {f"{name}.{item}" if namespaced else item for name, env in self._sub_envs.items()
                for item in getattr(type(env), attribute, set())}

    @property
    def always_skip_fields(self) -> set[str]:
        return self._union("always_skip_fields", namespaced=False)

    @property
    def mutation_tools(self) -> set[str]:
        return self._union("mutation_tools", namespaced=True)

    @property
    def mutation_id_fields(self) -> set[str]:
        return self._union("mutation_id_fields", namespaced=False)

    @property
    def tool_kinds(self) -> dict[str, str]:
        return {f"{name}.{tool}": kind for name, env in self._sub_envs.items()
                for tool, kind in type(env).tool_kinds.items()}

    @property
    def short_name(self) -> str:
        return " / ".join(getattr(type(self._sub_envs[name]), "short_name", None) or name
                          for name in sorted(self._sub_envs))

    def call_tool(self, tool_name: str, **params: Any) -> Any:
        env, tool = self._split(tool_name)
        return env.call_tool(tool, **params)

    def get_execution_log(self) -> list[dict[str, Any]]:
        return self.execution_log

    def get_tool_callable(self, tool_name: str) -> Any:
        env, tool = self._split(tool_name)
        return env.get_tool_callable(tool)

    def break_tool(self, tool_name: str, error_message: str = "Service unavailable") -> None:
        env, tool = self._split(tool_name)
        env.break_tool(tool, error_message)

    async def abreak_tool(self, tool_name: str, error_message: str = "Service unavailable") -> None:
        env, tool = self._split(tool_name)
        await env.abreak_tool(tool, error_message)

    def hide_tool(self, tool_name: str) -> None:
        env, tool = self._split(tool_name)
        env.hide_tool(tool)

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [{**schema, "name": f"{name}.{schema['name']}"} for name, env in self._sub_envs.items()
                for schema in type(env).get_tool_schemas()]

    def get_state_schema(self) -> dict[str, Any]:
        properties = {name: type(env).get_state_schema() for name, env in self._sub_envs.items()}
        return {"type": "object", "properties": properties, "required": sorted(properties),
                "additionalProperties": False}

    @property
    def sub_env_names(self) -> list[str]:
        return sorted(self._sub_envs)

    def sub_env(self, name: str) -> Any:
        return self._sub_envs[name]


def build_multi_environment(env_types: list[str], initial_states: dict[str, dict[str, Any]], *,
                            env_aliases: dict[str, str] | None = None) -> MultiEnvironment:
    """One facade over `env_types`, each started from its entry in `initial_states`."""
    if not env_types:
        raise ValueError("env_types must name at least one environment")
    missing = [name for name in env_types if name not in initial_states]
    if missing:
        raise ValueError(f"no initial state for {missing}; states given for {sorted(initial_states)}")
    return MultiEnvironment({name: get_environment_class(name)(initial_states[name]) for name in env_types},
                            env_aliases=env_aliases)
