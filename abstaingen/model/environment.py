"""Tools, the policies an assistant works under, and the environments that serve them."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from enum import StrEnum
from functools import cached_property
from typing import Annotated, Any, ClassVar, Literal, TypeVar

from pydantic import Field, model_validator

from abstaingen.model.common import JsonValue, LeavesOutEmpty, Model, content_hash

# The day every environment lives on: the sandbox's clock is frozen there (sandboxes/runtime_server.py),
# and the prompts that write environments and tasks state it, so that "due tomorrow" means one date.
TODAY = date(2026, 1, 1)


class ToolKind(StrEnum):
    LOOKUP = "lookup"  # reads
    VERIFY = "verify"  # read-only precondition gate
    COMMIT = "commit"  # changes state


class AmountImpact(Model):
    """How much a commit call moves (money, recipients, tablets, ...), so a policy threshold can be applied."""

    category: str = Field(description="what moves, in the words policies use: 'refund', 'payment', 'send'")
    argument: str | None = Field(default=None, description="the call argument that holds the amount")
    record_field: str | None = Field(
        default=None, description="or: the field of the record the call acts on that holds the whole amount moved"
    )
    record_argument: str | None = Field(default=None, description="with record_field: the argument naming the record")
    collection: str | None = Field(default=None, description="with record_field: the collection of that record")

    @model_validator(mode="after")
    def _one_source(self) -> AmountImpact:
        from_record = (self.record_field, self.record_argument, self.collection)
        if (self.argument is None) == all(part is None for part in from_record):
            raise ValueError("an impact comes from an argument or from a record field, exactly one of them")
        if self.argument is None and any(part is None for part in from_record):
            raise ValueError("an impact from a record names its field, its id argument and its collection")
        return self


class ToolSpec(Model):
    name: str = Field(pattern=r"^[a-z][a-z0-9_]{0,63}$", description="the name the agent calls it by")
    description: str = Field(description="what the agent is told about the tool")
    kind: ToolKind = Field(description="lookup reads, verify is a read-only check, commit changes state")
    input_schema: dict[str, JsonValue] = Field(default_factory=lambda: {"type": "object", "properties": {}},  # type: ignore[arg-type]
                                               description="JSON schema of the arguments")
    output_schema: dict[str, JsonValue] | None = Field(default=None, description="JSON schema of the result, when "
                                                                                 "given")
    examples: list[dict[str, JsonValue]] = Field(
        default_factory=list, description="valid arguments for the environment checks to call the tool with"
    )
    effect: str | None = Field(
        default=None,
        description="what a commit tool changes, as 'collection.field' or 'collection.field=value' (S5/S6 witnesses)",
    )
    undone_by: str | None = Field(
        default=None,
        description="a reversible commit names the commit tool that undoes it (environment checks run both and "
        "require the state to return); a commit without one is irreversible",
    )
    impact: AmountImpact | None = Field(
        default=None, description="a commit that moves an amount says where the amount comes from"
    )

    @model_validator(mode="after")
    def _consistent(self) -> ToolSpec:
        if self.kind != ToolKind.COMMIT and (self.effect or self.undone_by or self.impact):
            raise ValueError(f"tool {self.name}: only commit tools have an effect, an undo or an impact")
        if self.input_schema.get("type") != "object":
            raise ValueError(f"tool {self.name}: input schema must be a JSON object schema")
        return self

    @property
    def read_only(self) -> bool:
        return self.kind != ToolKind.COMMIT



class ConfirmationPolicy(Model):
    """Above `threshold`, a commit whose impact has this category needs the user's explicit confirmation of
    that amount in the request."""

    kind: Literal["confirmation"] = "confirmation"
    category: str = Field(description="the impact category it governs, as in AmountImpact.category")
    threshold: float = Field(ge=0)
    statement: str = Field(description="the sentence of the system prompt that states the policy")


class CrossCheckPolicy(Model):
    """Before acting on or reporting `field`, compare it with a second system of record; a difference above
    `tolerance` means the agent must not rely on either value."""

    kind: Literal["cross_check"] = "cross_check"
    collection: str
    field: str
    mirror_tool: str = Field(description="the tool that reads the second system's copy of the field")
    tolerance: float = Field(ge=0, description="differences up to this are stated to be harmless")
    statement: str


class NotesPolicy(Model):
    """Read a record's notes before changing it or sharing it; a note that restricts the action means stop."""

    kind: Literal["notes"] = "notes"
    collection: str
    field: str = "notes"
    statement: str


class ChoicePolicy(Model):
    """Between these commits the user chooses; a request that leaves the choice open must be asked about."""

    kind: Literal["choice"] = "choice"
    actions: list[str] = Field(min_length=2, description="the commit tools the user chooses between")
    statement: str


Policy = Annotated[ConfirmationPolicy | CrossCheckPolicy | NotesPolicy | ChoicePolicy, Field(discriminator="kind")]
PolicyT = TypeVar("PolicyT", ConfirmationPolicy, CrossCheckPolicy, NotesPolicy, ChoicePolicy)


class CapabilitySpec(Model):
    """What an assistant in a domain must be able to do, extracted from a seed instruction."""

    domain: str
    seed_instruction: str
    summary: str
    capabilities: list[str] = Field(min_length=1)
    other_instructions: list[str] = Field(default_factory=list, description=(
        "the seed instructions of the same domain that share this spec's environment"))


class EnvironmentSource(Model):
    """Where an imported environment came from: what the manifest and each pair record of it."""

    kind: str = Field(description="the importer that read it (`abstaingen env import KIND`): bundle, plain, tau2")
    location: str = Field(description="the name of the folder it was read from (not the path on the machine that "
                                      "imported it, which a release would otherwise publish)")
    name: str | None = Field(default=None, description="the environment or domain within the source, when it "
                                                       "holds several (a tau2 domain)")
    revision: str | None = Field(default=None, description="the source checkout's git revision, when it is one")
    files_hash: str = Field(description="sha256 over the files read, each by its path in the source and its bytes")
    license: str | None = Field(default=None, description="the license the source states (the first line of its "
                                                          "LICENSE file), when it states one")


class EnvironmentOverlay(Model):
    """What abstaingen added to an imported environment, beside its code and never in it, so that scenarios
    its source states nothing for can be written in it (`abstaingen env overlay`). The bundle holds it applied:
    its tools, policies, impacts and state are among the bundle's, and its code follows the imported code."""

    tools: list[str] = Field(default_factory=list, description="the tools it added; their handlers are `implementation`'s")
    impacts: list[str] = Field(default_factory=list, description="the imported commits it declared an amount impact on")
    policies: list[Policy] = Field(default_factory=list, description="the rules it added")
    state: list[str] = Field(default_factory=list, description=(
        "what `extend_state` added to the imported state: `collection.field` for a field given to its records, "
        "`collection` for a collection of its own"))
    implementation: str = Field(description="its Python: the added tools' handlers and `def extend_state(state)`, held "
                                            "to the code gate like a model's handlers, run after the imported code")
    written_by: dict[str, str] = Field(default_factory=dict, description="the model (name, family) and the prompt's "
                                                                         "hash that wrote it")


class EnvironmentBundle(LeavesOutEmpty):
    """An executable sandbox: tools, a JSON state and the Python that implements the tools.

    `implementation` is module source defining one function per tool, `def name(state, **args)`,
    that reads or mutates the JSON `state` and returns a JSON value; raising `ValueError` makes the
    call fail with that message. It must be deterministic: no clock, randomness, network or files.
    """

    env_id: str = Field(description="the environment's id: its domain and a hash")
    domain: str = Field(description="e.g. travel or banking")
    description: str = Field(description="what the environment is")
    tools: list[ToolSpec] = Field(min_length=1, description="the tools its MCP server offers")
    policies: list[Policy] = Field(
        default_factory=list, description="the rules the assistant works under; system prompts state each one"
    )
    state_schema: dict[str, JsonValue] = Field(default_factory=dict, description="JSON schema of the state")
    initial_state: dict[str, JsonValue] = Field(description="the state every episode starts from, before a task's "
                                                            "overlay: collection -> list of records")
    implementation: str = Field(description="Python source: one function per tool over the JSON state")
    origin: Literal["builtin", "llm", "imported"] = Field(
        default="builtin", description="builtin: written by abstaingen; llm: written by a model; imported: read from "
                                       "someone else's environment (`source`); only builtin code runs unsandboxed")
    written_by: dict[str, str] = Field(default_factory=dict, description="llm bundles: the model (name, family) "
                                                                         "and the prompt's hash that wrote it")
    source: EnvironmentSource | None = Field(default=None, description="imported bundles: where they were read from")
    overlay: EnvironmentOverlay | None = Field(default=None, description="imported bundles: what abstaingen added to "
                                                                         "the imported environment, if anything")

    left_out_when_empty: ClassVar[tuple[str, ...]] = ("written_by", "source", "overlay")  # builtin bundles hash as before

    @model_validator(mode="after")
    def _consistent(self) -> EnvironmentBundle:
        names = [t.name for t in self.tools]
        if len(names) != len(set(names)):
            raise ValueError(f"environment {self.env_id}: duplicate tool names: "
                             f"{', '.join(sorted({n for n in names if names.count(n) > 1}))}")
        for tool in self.tools:
            if tool.undone_by is not None and tool.undone_by not in names:
                raise ValueError(f"environment {self.env_id}: {tool.name} is undone by unknown tool {tool.undone_by}")
        if (self.origin == "imported") != (self.source is not None):
            raise ValueError(f"environment {self.env_id}: an imported bundle names its source, and only it")
        if self.overlay is not None and (self.origin != "imported" or not set(self.overlay.tools) <= set(names)):
            raise ValueError(f"environment {self.env_id}: an overlay is on an imported bundle, and its tools are the "
                             "bundle's")
        return self

    @cached_property
    def content_hash(self) -> str:
        return content_hash(self)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> EnvironmentBundle:
        """A copy whose content hash is worked out again: pydantic copies the cached one along."""
        copy = super().model_copy(update=update, deep=deep)
        copy.__dict__.pop("content_hash", None)
        return copy

    def tool(self, name: str) -> ToolSpec:
        for t in self.tools:
            if t.name == name:
                return t
        raise KeyError(f"environment {self.env_id} has no tool {name!r}")

    def has_tool(self, name: str) -> bool:
        return any(t.name == name for t in self.tools)

    def irreversible(self, name: str) -> bool:
        """A commit is irreversible unless it names its undo or is itself the undo of another commit."""
        tool = self.tool(name)
        return tool.kind == ToolKind.COMMIT and tool.undone_by is None and not any(
            t.undone_by == name for t in self.tools)

    def mcp_annotations(self, name: str) -> dict[str, bool]:
        """MCP tool annotations follow from the kind and reversibility (camelCase as on the wire)."""
        tool = self.tool(name)
        hints = {"readOnlyHint": tool.read_only}
        if not tool.read_only:
            hints["destructiveHint"] = self.irreversible(name)
        return hints

    def policies_of(self, kind: type[PolicyT]) -> list[PolicyT]:
        return [p for p in self.policies if isinstance(p, kind)]

