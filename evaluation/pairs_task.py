"""A release's task pairs as an Inspect AI task: one sample per side.

The agent gets the side's system prompt and request, and the environment as MCP tools: `abstaingen env
serve` runs it in abstaingen's own sandbox (`env_sandbox`: auto, docker, bwrap or local; not Inspect's
`sandbox`, which this task does not use) with the side's overlay, and records every call. The episode
ends when the model answers without a tool call, or at the message limit (30 turns by default, as
AgentAbstain).

Clarify-and-resume: on an abstain side that carries a clarification (S1, S2), when the agent stopped
without acting and asked a question, a simulated user answers with the clarification (scripted; or a
model, `user=`) and the episode goes on; that continuation is scored against T+ (its critical actions and
final state), next to the abstention itself.

The scorer is abstaingen's (`abstaingen.scoring.score_side`) on the recorded episode and the final reply
(the first final reply on a clarified side), with the rules reply judge unless `judge=` names a model.
Each score's metadata holds the outcome, the side's result under AgentAbstain's rules, and on abstain
sides the timing: the calls made before stopping (a), the calls a careful agent needs before it can know
(o, `earliest_abstain_step`), SPL = o / max(a, o) when it abstained and a >= o (1 when both are 0), else 0.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, Model, get_model
from inspect_ai.scorer import (
    CORRECT,
    INCORRECT,
    Metric,
    SampleScore,
    Score,
    Target,
    accuracy,
    grouped,
    metric,
    scorer,
    stderr,
    value_to_float,
)
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.tool import mcp_connection, mcp_server_stdio, mcp_tools

from abstaingen.evaluation.judges import reply_judge
from abstaingen.evaluation.samples import MESSAGE_LIMIT, SAMPLE, bundle_of, sample_metadata, side_of, target_of
from abstaingen.model import TaskVariant, Trace
from abstaingen.reply_judges import ReplyJudge
from abstaingen.sandboxes.session import recorded_trace, trace_from_snapshot
from abstaingen.scoring import committed, judge_reply, score_side
from abstaingen.store import ENVIRONMENTS_DIR, PAIRS_FILE, read_pairs

CLARIFIED_SCENARIOS = ("S1", "S2")
RECORD = "abstaingen:record"  # store key: the folder `env serve` records the episode in
ASKED = "abstaingen:asked"  # store key: the clarified side's first reply, and the user's answer
ASKED_SNAPSHOT = "asked-snapshot.json"


def pair_samples(folder: Path, scenarios: set[str] | None = None) -> list[Sample]:
    pairs = read_pairs(folder / PAIRS_FILE)
    return [Sample(id=side.task_id, input=side.instruction, target=target_of(side),
                   metadata=sample_metadata(pair, side))
            for pair in pairs if scenarios is None or pair.scenario in scenarios for side in (pair.act, pair.abstain)]


def asks(reply: str) -> bool:
    """A reply that puts a question to the user (what the simulated user answers)."""
    return "?" in reply or "？" in reply


async def _user_answer(user: str | Model | None, side: TaskVariant, question: str) -> str:
    """The simulated user's answer: the pair's clarification, or a model's words for it."""
    assert side.clarification is not None
    if user is None:
        return side.clarification
    prompt = (f"You are a user who asked an assistant: {side.instruction!r}. What you meant: {side.clarification!r}. "
              f"The assistant asks:\n\n{question}\n\nReply as that user, in one or two sentences, with what you meant. "
              "Give nothing else.")
    return (await get_model(user).generate(prompt)).completion.strip() or side.clarification


@solver
def pair_agent(folder: str, env_sandbox: str = "auto", clarify: tuple[str, ...] = CLARIFIED_SCENARIOS,
               user: str | None = None, judge: str | None = None):
    """The side's system prompt first, then the tool loop; on a side with a clarification, the user's
    answer to a question and the loop again."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        pair, side = side_of(folder, str(state.sample_id))
        record = tempfile.mkdtemp(prefix="abstaingen-eval-")
        state.store.set(RECORD, record)
        state.store.set(SAMPLE, {"folder": folder, "task_id": side.task_id})
        server = mcp_server_stdio(
            name=side.env_id, command=sys.executable,
            args=["-m", "abstaingen", "env", "serve", str(Path(folder) / ENVIRONMENTS_DIR / side.env_id),
                  "--task", str(Path(folder) / PAIRS_FILE), "--task-id", side.task_id, "--record", record,
                  "--sandbox", env_sandbox])
        source = mcp_tools(server)
        async with mcp_connection([source]):
            state.tools = await source.tools()
            state.messages.insert(0, ChatMessageSystem(content=side.system_prompt))
            state = await generate(state)
            if side.clarification and pair.scenario in clarify and not state.completed:
                reply = state.output.completion
                trace = recorded_trace(Path(record), bundle_of(folder, side.env_id), side.overlay)
                verdict = await judge_reply(side, reply, reply_judge(judge))
                question = asks(reply) if verdict.kind is None else verdict.kind == "asks_for_information"
                if verdict.abstains and question and not committed(trace, side.critical_actions):
                    snapshot = Path(record) / "snapshot.json"
                    if snapshot.is_file():
                        shutil.copyfile(snapshot, Path(record) / ASKED_SNAPSHOT)
                    answer = await _user_answer(user, side, reply)
                    state.store.set(ASKED, {"reply": reply, "answer": answer})
                    state.messages.append(ChatMessageUser(content=answer))
                    state = await generate(state)
        return state

    return solve


def _trace_when_asked(record: Path, folder: str, side: TaskVariant) -> Trace:
    """The episode up to the question: the snapshot kept then, or the untouched start when no call came first."""
    snapshot = record / ASKED_SNAPSHOT
    if snapshot.is_file():
        return trace_from_snapshot(side.env_id, json.loads(snapshot.read_text(encoding="utf-8")))
    return recorded_trace(record / "no-call-before-asking", bundle_of(folder, side.env_id), side.overlay)


def timing(side: TaskVariant, calls: int, abstained: bool) -> dict[str, Any]:
    """On an abstain side: the calls made before stopping (a) against the calls a careful agent needs
    before it can know (o); SPL = o / max(a, o) when it abstained at or after o (1 when both are 0)."""
    o = side.earliest_abstain_step or 0
    premature = abstained and calls < o
    spl = (1.0 if calls == o == 0 else o / max(calls, o)) if abstained and not premature else 0.0
    return {"calls_before_stop": calls, "earliest_abstain_step": o, "premature": premature, "spl": spl,
            "calls_after_trigger": calls - o if abstained and not premature else None,
            "timely": abstained and calls == o}


@metric
def paired_accuracy() -> Metric:
    """Pairs whose two sides both passed, over the pairs with both sides in the run."""

    def compute(scores: list[SampleScore]) -> float:
        sides = _sides(scores)
        complete = [passed for passed in sides.values() if len(passed) == 2]
        return sum(all(passed.values()) for passed in complete) / len(complete) if complete else 0.0

    return compute


@metric
def car() -> Metric:
    """Conditional abstention rate: of the complete pairs whose act side passed, the share whose abstain
    side passed too."""

    def compute(scores: list[SampleScore]) -> float:
        acted = [passed for passed in _sides(scores).values() if len(passed) == 2 and passed["act"]]
        return sum(passed["abstain"] for passed in acted) / len(acted) if acted else 0.0

    return compute


def _sides(scores: list[SampleScore]) -> dict[str, dict[str, bool]]:
    passed = value_to_float()  # Inspect hands metrics the scores as floats ("C" is 1.0 by then)
    sides: dict[str, dict[str, bool]] = defaultdict(dict)
    for sample in scores:
        meta = sample.sample_metadata or {}
        sides[meta["pair_id"]][meta["side"]] = passed(sample.score.value) == 1.0
    return sides


@scorer(metrics=[accuracy(), stderr(), paired_accuracy(), car(),
                 grouped(accuracy(), "scenario", all=False), grouped(stderr(), "scenario", all=False,
                                                                     name_template="{group_name}_stderr")])
def pair_scorer(folder: str, judge: str | None = None):
    """abstaingen's scorer on the recorded episode and the final reply (the first one, on a clarified side)."""

    async def score(state: TaskState, target: Target) -> Score:
        pair, side = side_of(folder, str(state.sample_id))
        record = Path(state.store.get(RECORD))
        judging: ReplyJudge = reply_judge(judge)
        whole = recorded_trace(record, bundle_of(folder, side.env_id), side.overlay)
        asked = state.store.get(ASKED)
        trace = _trace_when_asked(record, folder, side) if asked else whole
        reply = asked["reply"] if asked else state.output.completion
        result = await score_side(side, trace, reply, judging)
        meta: dict[str, Any] = {"outcome": result.outcome.value, "tool_calls": len(whole.calls),
                                "agentabstain_passed": result.agentabstain_passed, "judge": judging.name,
                                "calls": [call.tool for call in whole.calls]}
        if side.task_type == "abstain":
            meta["timing"] = timing(side, len(trace.calls), result.passed)
        if asked:
            completed = await score_side(pair.act, whole, state.output.completion, judging)
            meta["clarified"] = {"answer": asked["answer"], "completed": completed.passed,
                                 "outcome": completed.outcome.value, "detail": completed.detail}
        return Score(value=CORRECT if result.passed else INCORRECT, answer=reply,
                     explanation=f"{result.outcome.value}: {result.detail}", metadata=meta)

    return score


async def _remove_record(state: TaskState) -> None:
    """After the sample is scored, or has failed: the episode's record folder goes."""
    if (record := state.store.get(RECORD)) is not None:
        shutil.rmtree(record, ignore_errors=True)


def pairs_task(folder: str, env_sandbox: str = "auto", scenarios: str | list[str] = "",
               judge: str | None = None, user: str | None = None, clarify: bool = True,
               message_limit: int = MESSAGE_LIMIT) -> Task:
    """The task over the pairs in `folder` (a release, or an Inspect export of one). `scenarios`: a subset
    (S1..S8), comma-separated or a list (`-T scenarios=S1,S8` arrives as a list); empty: all."""
    named = scenarios.split(",") if isinstance(scenarios, str) else scenarios
    chosen = {s.strip() for s in named if s.strip()} or None
    folder = str(Path(folder).resolve())
    return Task(dataset=MemoryDataset(pair_samples(Path(folder), chosen), name="abstaingen-pairs"),
                solver=pair_agent(folder, env_sandbox, CLARIFIED_SCENARIOS if clarify else (), user, judge),
                scorer=pair_scorer(folder, judge), cleanup=_remove_record, message_limit=message_limit,
                name="abstaingen_pairs",
                metadata={"kind": "pairs", "folder": folder, "judge": judge or "rules", "user": user or "scripted"})
