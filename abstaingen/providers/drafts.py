"""What a model is asked to fill: drafts whose JSON schema a provider's strict structured-output
mode accepts (every object closed, every property required, no free-form objects, no defaults),
turned into the pipeline's contracts by code. Limits a strict schema cannot state (lengths, ranges,
patterns) stay in the draft's pydantic validation: the repair loop shows their errors to the model."""

from __future__ import annotations

import functools
import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from abstaingen.model import DagNode, ExecutionDag, OutputRef

# Keywords strict modes refuse or ignore; the draft's own validation checks them after parsing.
_DROPPED = {"default", "title", "minLength", "maxLength", "pattern", "format", "minimum", "maximum",
            "exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems", "uniqueItems"}


class Draft(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def parse_json(text: str, where: str, problems: list[str]) -> Any:
    """A JSON value a draft carries as a string (strict schemas allow no free-form objects); a
    problem for the repair loop, and None, when it does not parse."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        problems.append(f"conversion: {where} is not JSON: {exc}")
        return None


def path_of(keys: list[str]) -> list[str | int]:
    """A path a draft gives as strings (strict schemas take no unions): list positions are digits."""
    return [int(k) if k.isdigit() else k for k in keys]


@functools.cache
def strict_schema(draft: type[Draft]) -> dict[str, Any]:
    """The draft's JSON schema, made strict: closed objects, all properties required. Built once per
    draft (every call of a stage sends it); a request copies it, nothing may change it in place."""
    return _strict(draft.model_json_schema())


def _strict(node: Any) -> Any:
    if isinstance(node, list):
        return [_strict(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _strict(value) for key, value in node.items() if key not in _DROPPED}
    if out.get("type") == "object":
        if "properties" not in out:
            raise TypeError("a draft may not hold a free-form object: give every object its properties")
        out["additionalProperties"] = False
        out["required"] = list(out["properties"])
    return out


class BindingDraft(Draft):
    argument: str
    from_step: str = Field(description="the id of an earlier step")
    path: list[str] = Field(description="keys into that step's result; list positions as digits, e.g. ['0', 'id']")


class StepDraft(Draft):
    id: str = Field(pattern=r"^[a-z][a-z0-9_]{0,19}$")
    tool: str
    arguments_json: str = Field(description="the literal arguments, as a JSON object in a string")
    bindings: list[BindingDraft] = Field(description="arguments taken from earlier results")


def to_dag(steps: list[StepDraft], tools: set[str], problems: list[str]) -> ExecutionDag:
    """The calls the steps describe; what cannot be converted goes to `problems` (and the step is left out)."""
    nodes, ids = [], [s.id for s in steps]
    for index, step in enumerate(steps):
        if step.tool not in tools:
            problems.append(f"conversion: step {step.id} calls {step.tool!r}, which the environment does not have")
        args = parse_json(step.arguments_json, f"step {step.id} arguments_json", problems)
        bindings = {}
        for binding in step.bindings:
            if binding.from_step not in ids[:index]:
                problems.append(f"conversion: step {step.id} binds {binding.argument} to {binding.from_step!r}, "
                                "not an earlier step")
            bindings[binding.argument] = OutputRef(node=binding.from_step, path=path_of(binding.path))
        if isinstance(args, dict):
            try:
                nodes.append(DagNode(id=step.id, tool=step.tool, args=args, bindings=bindings))
            except ValidationError as exc:
                problems += [f"conversion: step {step.id}: {e['msg']}" for e in exc.errors()]
        else:
            problems.append(f"conversion: step {step.id} arguments_json must be a JSON object")
    try:
        return ExecutionDag(nodes=nodes)
    except ValidationError:
        problems.append(f"conversion: step ids repeat: {ids}")
        return ExecutionDag()


class CapabilityDraft(Draft):
    domain: str = Field(min_length=2, max_length=40, pattern=r"^[a-z][a-z0-9_]*$",
                        description="one lowercase word or snake_case name for the domain")
    summary: str = Field(min_length=10, max_length=300, description="one sentence: who the assistant serves")
    capabilities: list[str] = Field(min_length=2, max_length=12,
                                    description="what the assistant must be able to do, a short phrase each")
