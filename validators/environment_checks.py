"""Layer 2: environment checks, by execution in the sandbox.

Every tool is called with each of its examples, twice, each time in a fresh episode: the call must
succeed, a lookup or verify tool must leave the state hash as it was, a commit tool must change it,
and the two calls must return the same result and leave the same state. An undo tool is called right
after the action it undoes instead (alone it has nothing to undo).

Reversibility comes from execution, not from the declaration: a commit that names an undo must return
to the initial state when the undo follows it, and a commit declared irreversible must not be undone
by any other commit tool called with the same record.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from abstaingen.model import CheckResult, EnvironmentBundle, JsonValue, TaskOverlay, ToolKind, ToolSpec
from abstaingen.model.task import state_changes
from abstaingen.sandboxes.session import CallOutcome, SandboxSession, calling, run_episodes

CHECKS = ("env_callable", "env_read_only", "env_commit_changes", "env_deterministic", "env_reversibility")


def args_for(tool: ToolSpec, example: dict[str, JsonValue]) -> dict[str, JsonValue]:
    """The example's arguments that `tool` takes (an undo gets the record its action changed)."""
    properties = tool.input_schema.get("properties", {})
    return {k: v for k, v in example.items() if isinstance(properties, dict) and k in properties}


def then_call(session: SandboxSession, first: ToolSpec, second: ToolSpec,
          args: dict[str, JsonValue]) -> Callable[[], Awaitable[tuple[CallOutcome, CallOutcome]]]:
    async def both() -> tuple[CallOutcome, CallOutcome]:
        return await session.call(first.name, args), await session.call(second.name, args_for(second, args))
    return both


async def check_environment(session: SandboxSession, bundle: EnvironmentBundle) -> list[CheckResult]:
    undos = {t.undone_by for t in bundle.tools if t.undone_by}
    calls = [(tool, args) for tool in bundle.tools if tool.name not in undos for args in tool.examples]
    singles = await run_episodes(session, bundle.env_id, [(TaskOverlay(), calling(session, tool.name, args))
                                                          for tool, args in calls for _ in range(2)])
    commits = [t for t in bundle.tools if t.kind == ToolKind.COMMIT and t.examples]
    pairs = [(tool, bundle.tool(tool.undone_by)) for tool in commits if tool.undone_by]
    pairs += [(tool, other) for tool in commits if bundle.irreversible(tool.name)
              for other in commits if other.name != tool.name]
    sequences = await run_episodes(session, bundle.env_id, [(TaskOverlay(), then_call(session, first, second, first.examples[0]))
                                                            for first, second in pairs])

    problems: dict[str, list[str]] = {name: [] for name in CHECKS}
    problems["env_callable"] = [f"{t.name} has no example call" for t in bundle.tools if not t.examples]
    for index, (tool, args) in enumerate(calls):
        (first_trace, first), (second_trace, second) = singles[2 * index], singles[2 * index + 1]
        call = f"{tool.name}({args})"
        if not first.ok:
            problems["env_callable"].append(f"{call} failed: {first.error}")
            continue
        changed = first_trace.final_state_hash != first_trace.initial_state_hash
        if tool.kind != ToolKind.COMMIT and changed:
            problems["env_read_only"].append(f"{tool.kind} tool {call} changed the state")
        if tool.kind == ToolKind.COMMIT and not changed:
            problems["env_commit_changes"].append(f"commit tool {call} changed nothing")
        if (first, first_trace.final_state_hash) != (second, second_trace.final_state_hash):
            problems["env_deterministic"].append(f"{call} gave different results on two runs")
    for (action_tool, other), (trace, (action, after)) in zip(pairs, sequences):
        restored = trace.final_state_hash == trace.initial_state_hash
        if action_tool.undone_by == other.name and not (action.ok and after.ok and restored):
            left = ", ".join(state_changes(bundle.initial_state, trace.final_state)) or "?"
            problems["env_reversibility"].append(
                f"{action_tool.name} is declared reversible, but {other.name} after it "
                f"{'failed: ' + str(after.error) if not after.ok else 'did not restore the state (still changed: ' + left + ')'}")
        elif action_tool.undone_by != other.name and action.ok and after.ok and restored:
            problems["env_reversibility"].append(
                f"{action_tool.name} is declared irreversible, but {other.name} undoes it")
    return [CheckResult(name=name, passed=not found, detail="; ".join(found[:5]) or "ok")
            for name, found in problems.items()]
