"""Tools and the environments that serve them."""

from __future__ import annotations

from enum import StrEnum
from functools import cached_property
from typing import Literal

from pydantic import Field, model_validator

from abstaingen.model.common import JsonValue, Model, content_hash


class ToolKind(StrEnum):
    LOOKUP = "lookup"  # reads
    VERIFY = "verify"  # read-only precondition gate
    COMMIT = "commit"  # changes state


class ToolSpec(Model):
    name: str = Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")
    description: str
    kind: ToolKind
    input_schema: dict[str, JsonValue] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    output_schema: dict[str, JsonValue] | None = None
    irreversible: bool = False
    examples: list[dict[str, JsonValue]] = Field(
        default_factory=list, description="valid arguments for the environment checks to call the tool with"
    )
    effect: str | None = Field(
        default=None,
        description="what a commit tool changes, as 'collection.field' (used by S5/S6 witnesses)",
    )

    @model_validator(mode="after")
    def _consistent(self) -> ToolSpec:
        if self.kind != ToolKind.COMMIT and (self.irreversible or self.effect):
            raise ValueError(f"tool {self.name}: only commit tools can be irreversible or have an effect")
        if self.input_schema.get("type") != "object":
            raise ValueError(f"tool {self.name}: input schema must be a JSON object schema")
        return self

    @property
    def read_only(self) -> bool:
        return self.kind != ToolKind.COMMIT

    def mcp_annotations(self) -> dict[str, bool]:
        """MCP tool annotations follow from the kind (camelCase as on the wire)."""
        hints = {"readOnlyHint": self.read_only}
        if not self.read_only:
            hints["destructiveHint"] = self.irreversible
        return hints


class CapabilitySpec(Model):
    """What an assistant in a domain must be able to do, extracted from a seed instruction."""

    domain: str
    seed_instruction: str
    summary: str
    capabilities: list[str] = Field(min_length=1)


class EnvironmentBundle(Model):
    """An executable sandbox: tools, a JSON state and the Python that implements the tools.

    `implementation` is module source defining one function per tool, `def name(state, **args)`,
    that reads or mutates the JSON `state` and returns a JSON value; raising `ValueError` makes the
    call fail with that message. It must be deterministic: no clock, randomness, network or files.
    """

    env_id: str
    domain: str
    description: str
    tools: list[ToolSpec] = Field(min_length=1)
    state_schema: dict[str, JsonValue] = Field(default_factory=dict)
    initial_state: dict[str, JsonValue]
    implementation: str
    origin: Literal["builtin", "llm"] = "builtin"

    @model_validator(mode="after")
    def _unique_tools(self) -> EnvironmentBundle:
        names = [t.name for t in self.tools]
        if len(names) != len(set(names)):
            raise ValueError(f"environment {self.env_id}: duplicate tool names")
        return self

    @cached_property
    def content_hash(self) -> str:
        return content_hash(self)

    def tool(self, name: str) -> ToolSpec:
        for t in self.tools:
            if t.name == name:
                return t
        raise KeyError(f"environment {self.env_id} has no tool {name!r}")

    def has_tool(self, name: str) -> bool:
        return any(t.name == name for t in self.tools)
