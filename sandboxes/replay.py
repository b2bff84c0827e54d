"""Replay a reference DAG step by step through an MCP session, as an agent would call the tools."""

from __future__ import annotations

from pathlib import Path

import anyio

from abstaingen.model import JsonValue, TaskVariant, Trace
from abstaingen.model.common import Model
from abstaingen.sandboxes.backends import SandboxBackend
from abstaingen.sandboxes.session import SandboxSession


class ReplayResult(Model):
    task_id: str
    trace: Trace
    failed_node: str | None = None
    failure: str | None = None

    @property
    def completed(self) -> bool:
        return self.failed_node is None


async def replay_variant(session: SandboxSession, variant: TaskVariant) -> ReplayResult:
    """Run the variant's reference DAG from a fresh episode; stop at the first failing step."""
    await session.reset(variant.overlay)
    outputs: dict[str, JsonValue] = {}
    failed_node = failure = None
    for node in variant.reference_dag.order():
        try:
            args = node.resolve_args(outputs)
        except LookupError as exc:
            failed_node, failure = node.id, f"cannot bind arguments: {exc}"
            break
        outcome = await session.call(node.tool, args)
        if not outcome.ok:
            failed_node, failure = node.id, f"{node.tool} failed: {outcome.error}"
            break
        outputs[node.id] = outcome.result
    trace = await session.snapshot(variant.env_id)
    return ReplayResult(task_id=variant.task_id, trace=trace, failed_node=failed_node, failure=failure)


def replay_in_sandbox(
    bundle_dir: Path, variants: list[TaskVariant], backend: SandboxBackend, runs: int = 2
) -> dict[str, list[ReplayResult]]:
    """Replay every variant `runs` times in one server for the environment (start-up is the cost)."""

    async def replay_all() -> dict[str, list[ReplayResult]]:
        results: dict[str, list[ReplayResult]] = {v.task_id: [] for v in variants}
        async with SandboxSession(bundle_dir, backend) as session:
            for _ in range(runs):
                for variant in variants:
                    results[variant.task_id].append(await replay_variant(session, variant))
        return results

    return anyio.run(replay_all)
