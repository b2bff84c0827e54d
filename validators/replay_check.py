"""Layer 3: positive replay. The act side's reference DAG ran in the sandbox; judge its traces."""

from __future__ import annotations

from abstaingen.model import CheckResult, OutputRef, TaskVariant
from abstaingen.model.task import failed_assertions
from abstaingen.sandboxes.replay import ReplayResult

CHECKS = ("replay_steps", "replay_final_state", "replay_deterministic")


def ambiguous_bindings(act: TaskVariant, run: ReplayResult) -> list[str]:
    """A binding that takes item 0 of a list is only sound when the list has exactly one item:
    otherwise T+ does not single out what it acts on, and the replay merely picked the first."""
    problems = []
    for node in act.reference_dag.nodes:
        for name, ref in node.bindings.items():
            for depth, key in enumerate(ref.path):
                if key != 0 or ref.node not in run.run.outputs:
                    continue
                listed = OutputRef(node=ref.node, path=ref.path[:depth]).resolve(run.run.outputs)
                if isinstance(listed, list) and len(listed) != 1:
                    problems.append(f"{node.id}.{name} takes the first of {len(listed)} results of {ref.node}: make "
                                    f"{ref.node} return that one record alone (give its lookup more of the record's "
                                    f"details), or pass the id {ref.node} returned for it as a literal")
    return problems


def check_positive_replay(act: TaskVariant, runs: list[ReplayResult]) -> list[CheckResult]:
    """Every step succeeds and binds to a single candidate, the final state meets the assertions,
    and every run has the same trace hash."""
    if not runs:
        return [CheckResult(name="replay_steps", passed=False, detail="the act side was never replayed")]
    first = runs[0]
    step_problems = [f"step {first.failed_node}: {first.failure}"] if not first.completed else []
    if first.completed and len(first.trace.calls) != len(act.reference_dag.nodes):
        step_problems.append(f"{len(first.trace.calls)} calls for {len(act.reference_dag.nodes)} steps")
    step_problems += ambiguous_bindings(act, first)
    steps = CheckResult(name="replay_steps", passed=not step_problems, detail="; ".join(step_problems) or "ok")
    problems = failed_assertions(first.trace.final_state, act.final_state)
    if act.final_state and first.trace.final_state_hash == first.trace.initial_state_hash:
        problems.append("the op task left the state unchanged")
    final = CheckResult(name="replay_final_state", passed=not problems, detail="; ".join(problems) or "ok")
    hashes = sorted({r.trace.trace_hash for r in runs})
    deterministic = CheckResult(
        name="replay_deterministic",
        passed=len(runs) >= 2 and len(hashes) == 1,
        detail=f"{len(runs)} runs, trace hash {hashes[0][:16]}" if len(hashes) == 1
        else f"{len(runs)} runs gave {len(hashes)} different trace hashes",
    )
    return [steps, final, deterministic]
