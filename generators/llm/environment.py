"""Environment synthesis by a model: the draft it fills, its conversion into an EnvironmentBundle, and
the checks a draft must pass before it is taken (the code gate, then the environment checks in an
isolating sandbox). Whatever fails goes back to the model through the repair loop."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Literal

from pydantic import Field, ValidationError

from abstaingen.generators.llm.needs import asked_for, missing_scenarios
from abstaingen.model import (
    AmountImpact,
    CapabilitySpec,
    ChoicePolicy,
    ConfirmationPolicy,
    CrossCheckPolicy,
    EnvironmentBundle,
    NotesPolicy,
    Policy,
    ToolSpec,
)
from abstaingen.model.common import content_hash
from abstaingen.model.environment import TODAY
from abstaingen.prompts import render
from abstaingen.providers.calls import Caller
from abstaingen.providers.drafts import Draft, parse_json, strict_schema
from abstaingen.providers.repair import RepairLog, draft
from abstaingen.sandboxes.backends import SandboxBackend
from abstaingen.validators.code_gate import FORBIDDEN_NAMES
from abstaingen.validators.validate import check_candidate_environment

STAGE = "environment"
_NAME = r"^[a-z][a-z0-9_]*$"


class ParameterDraft(Draft):
    name: str = Field(pattern=_NAME, max_length=40)
    type: Literal["string", "number", "integer", "boolean"]
    description: str = Field(min_length=3)
    required: bool


class ToolDraft(Draft):
    name: str = Field(pattern=_NAME, max_length=64)
    description: str = Field(min_length=10, description="what the tool does and what it returns, for the agent")
    kind: Literal["lookup", "verify", "commit"] = Field(
        description="lookup and verify read the state only; commit changes it")
    parameters: list[ParameterDraft]
    effect: str = Field(description="commit tools: 'collection.field' or 'collection.field=value' it changes; "
                                    "empty for the others")
    undone_by: str = Field(description="a reversible commit: the commit tool that undoes it; else empty")
    example_arguments_json: str = Field(description="one valid call's arguments, as a JSON object in a string")
    impact_category: str = Field(description="a commit that moves an amount (money, doses, seats): what moves, in "
                                             "the words a confirmation rule uses ('refund'); else empty")
    impact_argument: str = Field(description="with impact_category: the argument that holds the amount; else empty")


class RuleDraft(Draft):
    """One rule the assistant works under. A flat object (strict schemas take no unions): each kind
    fills its own fields and leaves the others empty ("" or 0 or [])."""

    kind: Literal["confirmation", "cross_check", "notes", "choice"] = Field(description=(
        "confirmation: above `threshold`, a `category` amount needs the user's explicit confirmation; "
        "cross_check: compare `collection`.`field` with `mirror_tool`'s copy, differences above `tolerance` mean "
        "stop; notes: read `collection`'s `field` notes before acting, a note that restricts the action means stop; "
        "choice: between the commit tools in `actions` the user decides"))
    statement: str = Field(min_length=20, description="the rule as the assistant's instructions state it")
    category: str
    threshold: float
    collection: str
    field: str
    mirror_tool: str
    tolerance: float
    actions: list[str]


MAX_TOOLS = 12  # the prompt says so: strict schemas carry no maxItems


class EnvironmentDraft(Draft):
    description: str = Field(min_length=10)
    tools: list[ToolDraft] = Field(min_length=3, max_length=MAX_TOOLS)
    rules: list[RuleDraft] = Field(max_length=8, description="the rules the assistant works under")
    initial_state_json: str = Field(description="the state as a JSON object in a string: collection name -> "
                                                "list of records, each with a unique string 'id'")
    implementation: str = Field(min_length=20, description="Python: one function per tool, def name(state, **args)")


def tool_spec(tool: ToolDraft, problems: list[str]) -> ToolSpec | None:
    """The tool card the draft describes; None, with what is wrong in `problems`, when it cannot be made."""
    example = _json_object(tool.example_arguments_json, f"{tool.name}.example_arguments_json", problems)
    schema = {"type": "object", "additionalProperties": False,
              "properties": {p.name: {"type": p.type, "description": p.description} for p in tool.parameters},
              "required": [p.name for p in tool.parameters if p.required]}
    impact = None
    if tool.impact_category or tool.impact_argument:
        if tool.impact_argument not in {p.name for p in tool.parameters} or not tool.impact_category:
            problems.append(f"conversion: tool {tool.name}: impact_argument must name one of its parameters, "
                            "with an impact_category")
        else:
            impact = AmountImpact(category=tool.impact_category, argument=tool.impact_argument)
    try:
        return ToolSpec(name=tool.name, description=tool.description, kind=tool.kind, input_schema=schema,
                        examples=[example] if example is not None else [], impact=impact,
                        effect=tool.effect or None, undone_by=tool.undone_by or None)
    except ValidationError as exc:
        problems += [f"conversion: tool {tool.name}: {_said(e['msg'])}" for e in exc.errors()]
        return None


def to_bundle(spec: CapabilitySpec, candidate: EnvironmentDraft) -> EnvironmentBundle:
    """The bundle the draft describes; ValueError lists what cannot be converted."""
    problems: list[str] = []
    state = _json_object(candidate.initial_state_json, "initial_state_json", problems)
    tools = [made for tool in candidate.tools if (made := tool_spec(tool, problems)) is not None]
    kinds = {t.name: t.kind for t in candidate.tools}
    moved = {t.impact_category for t in candidate.tools if t.impact_category}
    policies = [policy for rule in candidate.rules if (policy := to_policy(rule, kinds, moved, problems)) is not None]
    if problems:
        raise ValueError("; ".join(problems))
    body = {"domain": spec.domain, "description": candidate.description, "initial_state": state,
            "implementation": candidate.implementation, "policies": [p.model_dump(mode="json") for p in policies]}
    try:
        return EnvironmentBundle(env_id=f"{re.sub('[^a-z0-9]+', '-', spec.domain)}-{content_hash(body)[:10]}",
                                 tools=tools, origin="llm", **body)  # type: ignore[arg-type]
    except ValidationError as exc:
        raise ValueError("; ".join(f"conversion: {_said(e['msg'])}" for e in exc.errors())) from None


def to_policy(rule: RuleDraft, kinds: Mapping[str, str], moved: set[str], problems: list[str]) -> Policy | None:
    """The rule the draft describes, given the environment's tools (name -> kind) and the categories its commits
    move; None, with what is wrong in `problems`, when it names what the environment lacks."""
    found: list[str] = []
    if rule.kind == "confirmation":
        if rule.category not in moved:
            found.append(f"category {rule.category!r} is no commit's impact_category (they are: "
                         f"{', '.join(map(repr, sorted(moved))) or 'none'}): use one of those, or set it on the commit "
                         "that moves it")
        policy: Policy | None = ConfirmationPolicy(category=rule.category, threshold=rule.threshold,
                                                   statement=rule.statement) if not found else None
    elif rule.kind == "cross_check":
        if kinds.get(rule.mirror_tool, "commit") == "commit":
            lookups = ", ".join(name for name, kind in kinds.items() if kind != "commit")
            found.append(f"mirror_tool {rule.mirror_tool!r} is " + ("a commit tool" if rule.mirror_tool in kinds else
                                                                    "no tool") + f": name a lookup ({lookups})")
        policy = CrossCheckPolicy(collection=rule.collection, field=rule.field, mirror_tool=rule.mirror_tool,
                                  tolerance=rule.tolerance, statement=rule.statement) if not found else None
    elif rule.kind == "notes":
        policy = NotesPolicy(collection=rule.collection, field=rule.field or "notes", statement=rule.statement)
    else:
        if len(rule.actions) < 2 or any(kinds.get(a) != "commit" for a in rule.actions):
            commits = ", ".join(name for name, kind in kinds.items() if kind == "commit")
            found.append(f"actions {rule.actions} must be two or more commit tools (the commits: {commits})")
        policy = ChoicePolicy(actions=rule.actions, statement=rule.statement) if not found else None
    problems += [f"conversion: {rule.kind} rule: {problem}" for problem in found]
    return policy


def _said(message: str) -> str:
    """A model check's message in the draft's terms: without pydantic's prefix or an env_id no draft shows."""
    message = message.removeprefix("Value error, ")
    return re.sub(r"^(environment|tool) [\w-]+: ", "", message)


def _json_object(text: str, where: str, problems: list[str]) -> dict | None:
    known = len(problems)
    value = parse_json(text, where, problems)
    if isinstance(value, dict):
        return value
    if len(problems) == known:  # it parsed, as something else
        problems.append(f"conversion: {where} must be a JSON object")
    return None


async def synthesize_environment(caller: Caller, model_key: str, spec: CapabilitySpec, backend: SandboxBackend,
                                 max_rounds: int = 2, log: RepairLog | None = None,
                                 allow_unsandboxed: bool = False) -> EnvironmentBundle:
    """A bundle for `spec` that passed the code gate and the environment checks in `backend`."""

    async def checks(candidate: EnvironmentDraft) -> list[str]:
        try:
            bundle = to_bundle(spec, candidate)
        except ValueError as exc:
            return str(exc).split("; ")
        found = await check_candidate_environment(bundle, backend, allow_unsandboxed)
        return [f"{c.name}: {c.detail}" for c in found if not c.passed]

    async def scenarios(candidate: EnvironmentDraft) -> list[str]:
        """Scenarios the environment cannot carry: sent back while rounds remain; then the last draft that
        passed its checks is taken without them, and those scenarios' slots are lost at the task stage."""
        return missing_scenarios(to_bundle(spec, candidate))

    prompt = render(STAGE, schema=json.dumps(strict_schema(EnvironmentDraft)), domain=spec.domain,
                    summary=spec.summary, capabilities=spec.capabilities,
                    instructions=[spec.seed_instruction, *spec.other_instructions],
                    needs=asked_for(), today=TODAY.isoformat(), max_tools=MAX_TOOLS,
                    forbidden=sorted(n for n in FORBIDDEN_NAMES if not n.startswith("__")))
    accepted = await draft(caller, STAGE, model_key, prompt, EnvironmentDraft, checks, max_rounds, log,
                           wanted=scenarios)
    return to_bundle(spec, accepted)
