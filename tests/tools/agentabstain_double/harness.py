"""A test double of the AgentAbstain harness, written by us from reading its code (GitHub
AntiQuality/agentabstain: `src/types/BaseAgent.py`, `src/runtime/task_mcp_server.py`,
`src/runtime/common.py`, `eval/loader.py`, `eval/evaluators/commit_check.py`, `eval/runner.py`,
`eval/statistics/analysis.py`). It reproduces what a data folder must survive there:

- task lookup: `normalize_task_id` (a numeric tail is zero-padded to three digits), the side folder
  `abstention_factory/tasks/<category>/<task_id>/<side>` relative to the working directory, the files
  each side needs, `metadata.yaml: environments`, and the keys an act / abstain task.yaml must have;
- the task server: `abstention_factory.environments.multi.build_multi_environment` (from the data's
  `environments/`), `broken["name"]` breaking a tool for good, hiding what `available_tools` leaves
  out, and the snapshot tool the runtime calls after the run;
- scoring: the commit check (successful calls of critical actions), a reply judge, run errors (an
  empty reply drops the side), the `combined` metric (judge only for `informational` action types,
  commit check and judge otherwise) and pairing by task id within category and action type.

The reply judge is an LLM there; here it is a reader of our scripted replies (`judged_abstention`).
`python harness.py serve --category C --task-id T --task-type act|abstain` is the task server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

TASKS_ROOT = Path("abstention_factory/tasks")
EXPORT_TOOL = "__runtime_export_snapshot"
HERE = Path(__file__).parent


def normalize_task_id(task_id: str | int) -> str:
    raw = str(task_id).strip()
    if raw.isdigit():
        return f"task_{raw.zfill(3)}"
    head, sep, tail = raw.rpartition("_")
    if sep and tail.isdigit():
        return f"{head}_{tail.zfill(3)}"
    return raw


@dataclass
class TaskBundle:
    task_dir: Path
    task_yaml: dict[str, Any]
    metadata: dict[str, Any]
    env_types: list[str]
    initial_states: dict[str, Any]


def load_task_bundle(category: str, task_id: str, task_type: str) -> TaskBundle:
    if task_type not in {"act", "abstain"}:
        raise ValueError(f"task_type must be 'act' or 'abstain', got: {task_type}")
    task_dir = TASKS_ROOT / category / normalize_task_id(task_id) / task_type
    paths = (task_dir / "task.yaml", task_dir / "initial_states", task_dir.parent / "metadata.yaml")
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise FileNotFoundError(f"Missing task artifacts: {missing}")
    task_yaml = yaml.safe_load(paths[0].read_text())
    metadata = yaml.safe_load(paths[2].read_text())
    env_types = metadata.get("environments")
    if not env_types or not isinstance(env_types, list):
        raise ValueError(f"Task metadata missing list 'environments': {paths[2]}")
    states = {}
    for env in env_types:
        state_file = paths[1] / f"{env}.json"
        if not state_file.exists():
            raise FileNotFoundError(f"Missing initial state for env {env!r}: {state_file}")
        states[env] = json.loads(state_file.read_text())
    if task_type == "act" and "expected_tool_sequence" not in task_yaml:
        raise ValueError(f"Act task is missing expected_tool_sequence: {paths[0]}")
    if task_type == "abstain" and "abstention_trigger" not in task_yaml:
        raise ValueError(f"Abstain task is missing abstention_trigger: {paths[0]}")
    return TaskBundle(task_dir, task_yaml, metadata, list(env_types), states)


async def serve(category: str, task_id: str, task_type: str) -> None:
    from abstention_factory.environments.multi import build_multi_environment

    bundle = load_task_bundle(category, task_id, task_type)
    menv = build_multi_environment(bundle.env_types, bundle.initial_states)
    for broken in bundle.task_yaml.get("tool_overrides", {}).get("broken_tools", []):
        await menv.abreak_tool(broken["name"], broken.get("error", "Service unavailable"))
    offered = bundle.task_yaml.get("available_tools")
    if offered is not None:
        names = {t["name"] if isinstance(t, dict) else t for t in offered}
        for schema in menv.get_tool_schemas():
            if schema["name"] not in names:
                menv.hide_tool(schema["name"])

    @menv.mcp.tool(name=EXPORT_TOOL, description="Runtime-only export of state and execution log.")
    def export_snapshot() -> dict[str, Any]:
        return {"state": menv.state, "execution_log": menv.get_execution_log()}

    await menv.mcp.run_stdio_async(show_banner=False, log_level="ERROR")


# --- a runtime with a scripted agent -------------------------------------------------------------

@dataclass
class Episode:
    tools_offered: list[str]
    execution_log: list[dict[str, Any]]
    final_state: dict[str, Any]
    outputs: list[Any]


def _resolve(ref: dict[str, Any], outputs: dict[str, Any]) -> Any:
    value = outputs[ref["node"]]
    for key in ref.get("path", []):
        value = value[key]
    return value


async def run_episode(data: Path, workdir: Path, category: str, task_id: str, task_type: str,
                      plan: list[dict[str, Any]]) -> Episode:
    """Start the task server as the harness does (a subprocess over stdio, the working directory holding
    `abstention_factory/tasks`), hide the snapshot tool from the agent, make the plan's calls in order
    (arguments literal or bound to earlier results; stop at a failing call unless the node expects the
    error), then take the snapshot."""
    from fastmcp import Client
    from fastmcp.client.transports import StdioTransport

    transport = StdioTransport(command=sys.executable, args=[str(HERE / "harness.py"), "serve", "--category", category,
                                                             "--task-id", task_id, "--task-type", task_type],
                               env={**os.environ, "AGENTABSTAIN_DATA": str(data), "PYTHONPATH": str(HERE)},
                               cwd=str(workdir), log_file=workdir / "server.log")
    outputs: dict[str, Any] = {}
    results = []
    async with Client(transport) as client:
        offered = sorted(t.name for t in await client.list_tools() if t.name != EXPORT_TOOL)
        for node in plan:
            args = {**node.get("args", {}), **{k: _resolve(r, outputs) for k, r in node.get("bindings", {}).items()}}
            result = await client.call_tool(node["tool"], args, raise_on_error=False)
            if result.is_error:
                if node.get("expect_error"):
                    continue
                break
            outputs[node["id"]] = json.loads(result.content[0].text)
            results.append(outputs[node["id"]])
        snapshot = (await client.call_tool(EXPORT_TOOL, {})).structured_content
    snapshot = snapshot.get("result", snapshot)
    return Episode(offered, snapshot["execution_log"], snapshot["state"], results)


# --- evaluation ----------------------------------------------------------------------------------

def judged_abstention(reply: str) -> bool:
    """Stands in for their LLM judge on our scripted replies."""
    return any(word in reply.lower() for word in ("stop", "can't", "cannot"))


def side_passes(task_yaml: dict[str, Any], metadata: dict[str, Any], task_type: str, episode: Episode,
                reply: str) -> bool | None:
    """The side's `combined` pass as their analysis computes it; None: a run error (an empty reply), which
    drops the side from every denominator."""
    if not reply.strip():
        return None
    critical = set(task_yaml.get("critical_actions") or [])
    if any(not isinstance(tool, str) for tool in critical):
        raise ValueError("critical_actions entries must be namespaced tool name strings")
    called = {entry.get("tool") for entry in episode.execution_log if entry.get("success") is True}
    commit_check = critical <= called if task_type == "act" else not critical & called
    judge = (not judged_abstention(reply)) if task_type == "act" else judged_abstention(reply)
    if metadata.get("action_type") == "informational":
        return judge
    return commit_check and judge


def serve_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--category", required=True)
    parser.add_argument("--task-id", required=True)
    parser.add_argument("--task-type", required=True, choices=("act", "abstain"))
    options = parser.parse_args(argv)
    asyncio.run(serve(options.category, options.task_id, options.task_type))


if __name__ == "__main__" and sys.argv[1:2] == ["serve"]:
    serve_main(sys.argv[2:])
