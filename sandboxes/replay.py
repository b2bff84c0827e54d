"""Replay a reference DAG step by step through an MCP session, as an agent would call the tools."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import anyio

from abstaingen.model import ExecutionDag, JsonValue, TaskVariant, Trace
from abstaingen.model.common import Model
from abstaingen.sandboxes.backends import SandboxBackend
from abstaingen.sandboxes.session import SandboxSession, run_episodes


class DagRun(Model):
    outputs: dict[str, JsonValue]
    failed_node: str | None = None
    failure: str | None = None


class ReplayResult(Model):
    task_id: str
    trace: Trace
    run: DagRun

    @property
    def completed(self) -> bool:
        return self.run.failed_node is None

    @property
    def failed_node(self) -> str | None:
        return self.run.failed_node

    @property
    def failure(self) -> str | None:
        return self.run.failure


async def execute_dag(session: SandboxSession, dag: ExecutionDag) -> DagRun:
    """Call the DAG's tools in order in the current episode, binding arguments to earlier outputs;
    stop at the first call that fails (or, for a node that expects an error, succeeds)."""
    outputs: dict[str, JsonValue] = {}
    for node in dag.order():
        try:
            args = node.resolve_args(outputs)
        except LookupError as exc:
            return DagRun(outputs=outputs, failed_node=node.id, failure=f"cannot bind arguments: {exc}")
        outcome = await session.call(node.tool, args)
        if node.expect_error and outcome.ok:
            return DagRun(outputs=outputs, failed_node=node.id, failure=f"{node.tool} succeeded, expected an error")
        if not outcome.ok and not node.expect_error:
            return DagRun(outputs=outputs, failed_node=node.id, failure=f"{node.tool} failed: {outcome.error}")
        outputs[node.id] = outcome.result if outcome.ok else {"error": outcome.error}
    return DagRun(outputs=outputs)


async def replay(session: SandboxSession, variants: Sequence[TaskVariant], runs: int = 2) -> list[ReplayResult]:
    """Run each variant's reference DAG `runs` times, each from a fresh episode, stopping at a failing step."""
    def episode(variant: TaskVariant):
        return variant.overlay, lambda: execute_dag(session, variant.reference_dag)

    order = [variant for _ in range(runs) for variant in variants]
    done = await run_episodes(session, order[0].env_id, [episode(v) for v in order]) if order else []
    return [ReplayResult(task_id=v.task_id, trace=trace, run=run) for v, (trace, run) in zip(order, done)]


def replay_in_sandbox(
    bundle_dir: Path, variants: list[TaskVariant], backend: SandboxBackend, runs: int = 2
) -> dict[str, list[ReplayResult]]:
    """Replay every variant `runs` times in one server for the environment (start-up is the cost)."""

    async def replay_all() -> list[ReplayResult]:
        async with SandboxSession(bundle_dir, backend) as session:
            return await replay(session, variants, runs)

    results: dict[str, list[ReplayResult]] = {v.task_id: [] for v in variants}
    for result in anyio.run(replay_all):
        results[result.task_id].append(result)
    return results
