"""Layer 2: environment checks, by execution in the sandbox.

Every tool is called with each of its examples, twice, each time in a fresh episode: the call must
succeed, a lookup or verify tool must leave the state hash as it was, a commit tool must change it,
and the two calls must return the same result and leave the same state.
"""

from __future__ import annotations

from abstaingen.model import CheckResult, EnvironmentBundle, TaskOverlay, ToolKind
from abstaingen.sandboxes.session import SandboxSession, run_episodes

CHECKS = ("env_callable", "env_read_only", "env_commit_changes", "env_deterministic")


async def check_environment(session: SandboxSession, bundle: EnvironmentBundle) -> list[CheckResult]:
    calls = [(tool, args) for tool in bundle.tools for args in tool.examples]
    episodes = [(TaskOverlay(), lambda name=tool.name, args=args: session.call(name, args))
                for tool, args in calls for _ in range(2)]
    done = await run_episodes(session, bundle.env_id, episodes)
    problems: dict[str, list[str]] = {name: [] for name in CHECKS}
    problems["env_callable"] = [f"{t.name} has no example call" for t in bundle.tools if not t.examples]
    for index, (tool, args) in enumerate(calls):
        (first_trace, first), (second_trace, second) = done[2 * index], done[2 * index + 1]
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
    return [CheckResult(name=name, passed=not found, detail="; ".join(found[:5]) or "ok")
            for name, found in problems.items()]
