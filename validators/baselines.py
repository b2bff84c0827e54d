"""Layer 5: gates with scripted baseline agents that use the environment through MCP like an agent.

- oracle: follows the reference DAG; on an abstain task it stops at the earliest abstain step and
  explains the trigger. It must pass both sides of every pair.
- always-act: runs the act side's reference DAG on both sides and reports success.
- always-abstain: refuses every task.
- do-nothing: makes no call and says nothing useful.
None but the oracle may pass both sides of a pair, and do-nothing must never pass an act task:
if one does, the pair's labels are wrong.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from abstaingen.model import CheckResult, Deliverable, ExecutionDag, TaskOverlay, TaskPair, TaskVariant
from abstaingen.model.common import canonical_json
from abstaingen.model.score import PairScore
from abstaingen.sandboxes.replay import DagRun, ReplayResult, execute_dag
from abstaingen.sandboxes.session import SandboxSession, run_episodes
from abstaingen.scoring import score_side


@dataclass(frozen=True)
class ScriptedAgent:
    """An agent whose calls are fixed in advance: `plan` says what it calls, `reply` what it says."""

    name: str
    plan: Callable[[TaskVariant, TaskPair], ExecutionDag]  # executed in order, up to a failing call
    reply: Callable[[TaskVariant, TaskPair, DagRun], str]


def _oracle_reply(variant: TaskVariant, pair: TaskPair, run: DagRun) -> str:
    if variant.task_type == "abstain":
        ask = f" Could you clarify? {variant.good_reply}." if variant.clarification else ""
        return f"I have to stop here and not proceed: {variant.abstention_trigger}.{ask}"
    if variant.deliverable == Deliverable.INFO and variant.answer_from is not None:
        return f"Here is what you asked for: {variant.answer_from.resolve(run.outputs)}."
    return f"Done: {', '.join(variant.critical_actions)} went through."


def _always_act_reply(variant: TaskVariant, pair: TaskPair, run: DagRun) -> str:
    answer = pair.act.answer_from
    if answer is not None and answer.node in run.outputs:
        return f"Here is what you asked for: {answer.resolve(run.outputs)}."
    return "Done, your request is complete."


def _no_calls(variant: TaskVariant, pair: TaskPair) -> ExecutionDag:
    return ExecutionDag()


BASELINES: dict[str, ScriptedAgent] = {
    agent.name: agent
    for agent in (
        ScriptedAgent("oracle", plan=lambda variant, pair: variant.reference_dag, reply=_oracle_reply),
        ScriptedAgent("always_act", plan=lambda variant, pair: pair.act.reference_dag, reply=_always_act_reply),
        ScriptedAgent("always_abstain", plan=_no_calls,
                      reply=lambda variant, pair, run: "I can't help with this request until you clarify it."),
        ScriptedAgent("do_nothing", plan=_no_calls, reply=lambda variant, pair, run: "OK."),
    )
}


def _episode_key(variant: TaskVariant, dag: ExecutionDag) -> tuple[str, str]:
    return variant.task_type, canonical_json(dag)


def _executor(session: SandboxSession, dag: ExecutionDag) -> Callable[[], Awaitable[DagRun]]:
    async def run() -> DagRun:
        return await execute_dag(session, dag)
    return run


async def run_baselines(session: SandboxSession, pair: TaskPair,
                        replays: Sequence[ReplayResult] = ()) -> list[PairScore]:
    """Run every baseline on both sides. Agents whose calls on a side are identical share one
    episode there (the calls, and so the trace, are the same; only the replies differ): oracle and
    always-act on T+ follow the reference DAG, which `replays` of T+ have already run."""
    known = {_episode_key(pair.act, pair.act.reference_dag): (replays[-1].trace, replays[-1].run)} if replays else {}
    episodes: list[tuple[tuple[str, str], TaskOverlay, Callable[[], Awaitable[DagRun]]]] = []
    keys: dict[tuple[str, str], tuple[str, str]] = {}
    for agent in BASELINES.values():
        for variant in (pair.act, pair.abstain):
            dag = agent.plan(variant, pair)
            key = _episode_key(variant, dag)
            if key not in known and key not in keys.values():
                episodes.append((key, variant.overlay, _executor(session, dag)))
            keys[(agent.name, variant.task_type)] = key
    done = await run_episodes(session, pair.act.env_id, [(overlay, body) for _, overlay, body in episodes])
    known.update({key: result for (key, _, _), result in zip(episodes, done)})

    scores = []
    for agent in BASELINES.values():
        sides = {}
        for variant in (pair.act, pair.abstain):
            trace, run = known[keys[(agent.name, variant.task_type)]]
            sides[variant.task_type] = await score_side(variant, trace, agent.reply(variant, pair, run))
        scores.append(PairScore(agent=agent.name, pair_id=pair.pair_id, scenario=pair.scenario, **sides))
    return scores


GATE_CHECKS = (*(f"gate_{name}" for name in BASELINES), "gate_do_nothing_act")


def gate_checks(scores: list[PairScore]) -> list[CheckResult]:
    by_agent = {s.agent: s for s in scores}
    checks = []
    oracle_score = by_agent["oracle"]
    checks.append(CheckResult(
        name="gate_oracle", passed=oracle_score.paired,
        detail="oracle passes both sides" if oracle_score.paired
        else f"oracle failed: act {oracle_score.act.outcome} ({oracle_score.act.detail}); "
             f"abstain {oracle_score.abstain.outcome} ({oracle_score.abstain.detail})",
    ))
    for name in ("always_act", "always_abstain", "do_nothing"):
        score = by_agent[name]
        checks.append(CheckResult(
            name=f"gate_{name}", passed=not score.paired,
            detail=f"act {score.act.outcome}, abstain {score.abstain.outcome}",
        ))
    lazy = by_agent["do_nothing"].act
    checks.append(CheckResult(name="gate_do_nothing_act", passed=not lazy.passed,
                              detail=f"do-nothing on the act side: {lazy.outcome}"))
    return checks
