"""An overlay on an imported environment, written by the model that writes environments: the rules, amounts,
fields and tools the scenarios need and the source does not state (a choice between two commits, a
confirmation threshold, a notes field, a second system's copy of a value, a lookup that filters on several
fields). It is added beside the imported code, never in it: its tools are handlers of our form, held to the
code gate, and its `extend_state(state)` may only add fields to records and collections of its own, which is
checked on the state it returns. It runs in the isolating sandbox, after the imported code."""

from __future__ import annotations

import ast
import json
from typing import Any

from pydantic import Field

from abstaingen.generators.llm.environment import RuleDraft, ToolDraft, to_policy, tool_spec
from abstaingen.generators.llm.needs import NEEDS, missing_scenarios
from abstaingen.generators.llm.positive import state_json, tool_cards, tried_examples
from abstaingen.model import (
    AmountImpact,
    EnvironmentBundle,
    EnvironmentOverlay,
    JsonValue,
    TaskOverlay,
    ToolKind,
    ToolSpec,
)
from abstaingen.model.common import content_hash
from abstaingen.model.environment import TODAY
from abstaingen.model.perturbation import SCENARIOS
from abstaingen.prompts import render
from abstaingen.providers.calls import Caller
from abstaingen.providers.drafts import Draft, strict_schema
from abstaingen.providers.repair import RepairLog, draft
from abstaingen.sandboxes.backends import SandboxBackend
from abstaingen.sandboxes.kept import KeptSessions
from abstaingen.sandboxes.session import SandboxError, SandboxSession, calling, run_episodes
from abstaingen.store import bundle_in_scratch
from abstaingen.validators.code_gate import FORBIDDEN_NAMES, inspect_source
from abstaingen.validators.validate import check_candidate_environment

STAGE = "overlay"
EXTEND = "extend_state"  # the overlay's function that adds to the imported state
MAX_TOOLS = 6


class ImpactDraft(Draft):
    tool: str = Field(description="an imported commit tool that moves an amount")
    impact_category: str = Field(description="what it moves, in the words a confirmation rule uses ('refund')")
    impact_argument: str = Field(description="its argument that holds the amount")


class OverlayDraft(Draft):
    tools: list[ToolDraft] = Field(max_length=MAX_TOOLS, description="tools to add beside the imported ones")
    impacts: list[ImpactDraft] = Field(max_length=4, description="amounts imported commits move")
    rules: list[RuleDraft] = Field(max_length=8, description="the rules to add to what the assistant works under")
    implementation: str = Field(description=f"Python: one function per added tool, def name(state, **args), and "
                                            f"def {EXTEND}(state) that adds to the imported state in place")


def _top_level_names(source: str) -> set[str]:
    """What a module's top level binds, read without running it."""
    names: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    return names


def additions(before: dict[str, JsonValue], after: dict[str, JsonValue]) -> tuple[list[str], list[str]]:
    """What `extend_state` added (`collection.field`, `collection`), and what it did besides adding (problems)."""
    added: list[str] = []
    problems: list[str] = []
    for name, value in before.items():
        new = after.get(name)
        if name not in after:
            problems.append(f"{EXTEND} removed the collection {name!r}")
        elif isinstance(value, list) and isinstance(new, list) and len(value) == len(new):
            fields: dict[str, None] = {}
            for old_record, new_record in zip(value, new, strict=True):
                if isinstance(old_record, dict) and isinstance(new_record, dict):
                    changed = [k for k, v in old_record.items() if k not in new_record or new_record[k] != v]
                    if changed:
                        problems.append(f"{EXTEND} changed {name} {old_record.get('id')!r}'s {changed[0]}: it may only "
                                        "add fields")
                        break
                    fields.update(dict.fromkeys(k for k in new_record if k not in old_record))
                elif old_record != new_record:
                    problems.append(f"{EXTEND} changed a record of {name!r}")
                    break
            added += [f"{name}.{field}" for field in fields]
        elif new != value:
            problems.append(f"{EXTEND} changed the collection {name!r} otherwise than by adding fields to its records")
    added += [name for name in after if name not in before]
    return added, problems


async def extended_state(bundle: EnvironmentBundle, code: str, backend: SandboxBackend) -> dict[str, JsonValue]:
    """The imported state after the overlay's `extend_state`, called once in the sandbox beside the imported code."""
    probe = ToolSpec(name=EXTEND, description="adds the overlay's fields and collections", kind=ToolKind.COMMIT,
                     examples=[{}])
    trial = bundle.model_copy(update={"tools": [*bundle.tools, probe], "overlay": None,
                                      "implementation": f"{bundle.implementation}\n\n\n{code}\n"})
    with bundle_in_scratch(trial) as folder:
        async with SandboxSession(folder, backend) as session:
            [(trace, outcome)] = await run_episodes(session, bundle.env_id, [(TaskOverlay(), calling(session, EXTEND, {}))])
    if not outcome.ok:
        raise ValueError(f"{EXTEND} failed: {outcome.error}")
    return trace.final_state


async def apply_overlay(bundle: EnvironmentBundle, candidate: OverlayDraft, backend: SandboxBackend,
                        written_by: dict[str, str] | None = None) -> EnvironmentBundle:
    """The imported bundle with the overlay added; ValueError lists what cannot be added."""
    problems: list[str] = []
    imported = {t.name: t for t in bundle.tools}
    tools = []
    for tool in candidate.tools:
        if tool.name in imported or tool.name == EXTEND:
            problems.append(f"conversion: tool {tool.name}: the environment has a tool of that name; name yours "
                            "otherwise (imported tools stay as they are)")
        elif (made := tool_spec(tool, problems)) is not None:
            tools.append(made)
    impacts: dict[str, AmountImpact] = {}
    for impact in candidate.impacts:
        commit = imported.get(impact.tool)
        arguments = commit.input_schema.get("properties") if commit is not None else None
        if commit is None or commit.kind != ToolKind.COMMIT or not isinstance(arguments, dict) or \
                impact.impact_argument not in arguments:
            problems.append(f"conversion: impact on {impact.tool!r}: name an imported commit tool and one of its "
                            "arguments that holds the amount (a tool you add declares its own impact instead)")
        else:
            impacts[impact.tool] = AmountImpact(category=impact.impact_category, argument=impact.impact_argument)
    kinds = {**{name: t.kind.value for name, t in imported.items()}, **{t.name: t.kind.value for t in tools}}
    moved = {i.category for i in impacts.values()} | {t.impact.category for t in [*bundle.tools, *tools] if t.impact}
    policies = [p for rule in candidate.rules if (p := to_policy(rule, kinds, moved, problems)) is not None]
    gate = inspect_source(candidate.implementation, [t.name for t in candidate.tools])
    problems += [f"implementation: {p}" for p in gate]
    if not gate:
        taken = _top_level_names(candidate.implementation) & (set(imported) | _top_level_names(bundle.implementation))
        problems += [f"implementation: {name!r} is a name the imported code defines: name yours otherwise"
                     for name in sorted(taken)]
    if problems:
        raise ValueError("; ".join(problems))
    state = bundle.initial_state
    added: list[str] = []
    if EXTEND in _top_level_names(candidate.implementation):
        try:
            state = await extended_state(bundle, candidate.implementation, backend)
        except SandboxError as exc:
            raise ValueError(f"{EXTEND}: the sandbox failed: {exc}") from None
        added, problems = additions(bundle.initial_state, state)
        if problems:
            raise ValueError("; ".join(problems))
    overlay = EnvironmentOverlay(tools=[t.name for t in tools], impacts=list(impacts), policies=policies, state=added,
                                 implementation=candidate.implementation, written_by=written_by or {})
    return bundle.model_copy(update={
        "env_id": f"{bundle.env_id}-overlay-{content_hash(overlay)[:8]}",
        "tools": [t.model_copy(update={"impact": impacts[t.name]}) if t.name in impacts else t
                  for t in bundle.tools] + tools,
        "policies": [*bundle.policies, *policies], "initial_state": state, "overlay": overlay,
        "implementation": f"{bundle.implementation}\n\n\n# abstaingen's overlay: the tools and {EXTEND} it added\n"
                          f"{candidate.implementation}\n"})


def needed(bundle: EnvironmentBundle) -> dict[str, str]:
    """The scenarios the bundle cannot carry, each with what it needs (the environment prompt's words)."""
    return {f"{s.value} ({SCENARIOS[s].name})": n.environment for s, n in NEEDS.items() if n.missing(bundle)}


async def extend_environment(caller: Caller, model_key: str, bundle: EnvironmentBundle, backend: SandboxBackend,
                             sessions: KeptSessions, max_rounds: int = 2, log: RepairLog | None = None,
                             written_by: dict[str, str] | None = None) -> EnvironmentBundle:
    """The imported bundle with an overlay that passed the code gate and the environment checks in `backend`,
    carrying as many of the scenarios it could not carry as the model managed; the bundle itself when it
    already carries them all."""
    if not missing_scenarios(bundle):
        return bundle
    applied: dict[str, EnvironmentBundle] = {}

    async def checks(candidate: OverlayDraft) -> list[str]:
        try:
            extended = await apply_overlay(bundle, candidate, backend, written_by)
        except ValueError as exc:
            return str(exc).split("; ")
        applied[candidate.model_dump_json()] = extended
        found = await check_candidate_environment(extended, backend)
        return [f"{c.name}: {c.detail}" for c in found if not c.passed]

    async def scenarios(candidate: OverlayDraft) -> list[str]:
        return missing_scenarios(applied[candidate.model_dump_json()])

    tried = await tried_examples(bundle, sessions)  # {} when the sandbox fails: the prompt shows the tools without
    prompt = render(STAGE, schema=json.dumps(strict_schema(OverlayDraft)), needs=needed(bundle),
                    lacking=missing_scenarios(bundle), today=TODAY.isoformat(), max_tools=MAX_TOOLS, extend=EXTEND,
                    forbidden=sorted(n for n in FORBIDDEN_NAMES if not n.startswith("__")), domain=bundle.domain,
                    description=bundle.description, tools=tool_cards(bundle, tried), state=state_json(bundle),
                    collections=_collections(bundle))
    accepted = await draft(caller, STAGE, model_key, prompt, OverlayDraft, checks, max_rounds, log, wanted=scenarios)
    return applied.get(accepted.model_dump_json()) or await apply_overlay(bundle, accepted, backend, written_by)


def _collections(bundle: EnvironmentBundle) -> dict[str, Any]:
    """Per collection: how many records, and the fields its records hold (the state shown may be cut)."""
    summary: dict[str, Any] = {}
    for name, value in bundle.initial_state.items():
        if isinstance(value, list):
            fields = list(dict.fromkeys(k for r in value if isinstance(r, dict) for k in r))
            summary[name] = f"{len(value)} records; fields: {', '.join(fields)}"
    return summary
