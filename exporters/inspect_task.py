"""abstaingen pairs as an Inspect AI task (written by `abstaingen export inspect`, next to samples.jsonl,
pairs.jsonl and environments/).

    inspect eval abstaingen_task.py --model <provider/model> [-T sandbox=docker] [-T scenarios=S1,S8]

One sample per side of a pair. The agent gets the side's system prompt, its request, and the
environment as MCP tools: `abstaingen env serve` runs the environment inside abstaingen's sandbox
(auto: docker, else bwrap, else a plain subprocess) with the side's overlay (state patch, hidden and
broken tools) and records every call. abstaingen's scorer then reads that record and the final reply:
an act side passes when it is done (state or answer checked), an abstain side when the agent did not
act and said why. Needs abstaingen with its `[inspect]` extra (which brings inspect-ai).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections import defaultdict
from functools import cache
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem
from inspect_ai.scorer import (
    CORRECT,
    INCORRECT,
    Metric,
    SampleScore,
    Score,
    Target,
    accuracy,
    metric,
    scorer,
    value_to_float,
)
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.tool import mcp_connection, mcp_server_stdio, mcp_tools

HERE = Path(__file__).resolve().parent
RECORD = "abstaingen_record"


@cache
def _bundle(folder: str) -> Any:
    from abstaingen.store import read_bundle

    return read_bundle(Path(folder))


def samples(folder: Path, scenarios: set[str] | None = None) -> list[Sample]:
    rows = [json.loads(line) for line in (folder / "samples.jsonl").read_text(encoding="utf-8").splitlines() if line]
    return [Sample(id=row["id"], input=row["input"], metadata=row["metadata"]) for row in rows
            if scenarios is None or row["metadata"]["scenario"] in scenarios]


@solver
def abstaingen_agent(folder: str, sandbox: str = "auto"):
    """The side's system prompt first, then a tool loop over the environment served for this sample."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        meta = state.metadata
        record = tempfile.mkdtemp(prefix="abstaingen-inspect-")
        state.store.set(RECORD, record)
        server = mcp_server_stdio(
            name=meta["env_id"], command=sys.executable,
            args=["-m", "abstaingen", "env", "serve", str(Path(folder) / "environments" / meta["env_id"]),
                  "--task", str(Path(folder) / "pairs.jsonl"), "--task-id", str(state.sample_id),
                  "--record", record, "--sandbox", sandbox])
        source = mcp_tools(server)
        async with mcp_connection([source]):
            state.tools = await source.tools()
            state.messages.insert(0, ChatMessageSystem(content=meta["system_prompt"]))
            state = await generate(state)
        return state

    return solve


@metric
def paired_accuracy() -> Metric:
    """Pairs whose two sides both passed, over the pairs with both sides in the run."""

    def compute(scores: list[SampleScore]) -> float:
        sides: dict[str, list[bool]] = defaultdict(list)
        passed = value_to_float()  # Inspect hands metrics the scores as floats ("C" is 1.0 by then)
        for sample in scores:
            sides[(sample.sample_metadata or {})["pair_id"]].append(passed(sample.score.value) == 1.0)
        complete = [passed for passed in sides.values() if len(passed) == 2]
        return sum(all(passed) for passed in complete) / len(complete) if complete else 0.0

    return compute


@scorer(metrics=[accuracy(), paired_accuracy()])
def abstaingen_scorer(folder: str):
    """abstaingen's scorer on the recorded episode and the final reply."""

    async def score(state: TaskState, target: Target) -> Score:
        from abstaingen.model import TaskVariant
        from abstaingen.sandboxes.session import recorded_trace
        from abstaingen.scoring import score_side

        variant = TaskVariant.model_validate(state.metadata["variant"])
        record = Path(state.store.get(RECORD))
        try:
            trace = recorded_trace(record, _bundle(str(Path(folder) / "environments" / variant.env_id)),
                                   variant.overlay)
        finally:
            shutil.rmtree(record, ignore_errors=True)
        side = await score_side(variant, trace, state.output.completion)
        return Score(value=CORRECT if side.passed else INCORRECT, answer=state.output.completion,
                     explanation=f"{side.outcome.value}: {side.detail}",
                     metadata={"outcome": side.outcome.value, "tool_calls": side.tool_calls,
                               "agentabstain_passed": side.agentabstain_passed})

    return score


@task
def abstaingen(folder: str = str(HERE), sandbox: str = "auto", scenarios: str | list[str] = "") -> Task:
    """`scenarios`: a subset (S1..S8), comma-separated or a list (`-T scenarios=S1,S8` arrives as a list);
    empty: all."""
    named = scenarios.split(",") if isinstance(scenarios, str) else scenarios
    chosen = {s.strip() for s in named if s.strip()} or None
    return Task(dataset=MemoryDataset(samples(Path(folder), chosen), name="abstaingen"),
                solver=abstaingen_agent(folder, sandbox), scorer=abstaingen_scorer(folder))
