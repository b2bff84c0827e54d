"""An evaluation's report, read from its Inspect log: the metrics with 95% bootstrap intervals, overall
and by scenario, domain and deliverable (pairs) or by suffix, role and language (OOD); the AgentAbstain
view and the timing of abstention (pairs) or OffTopicEval's reading (OOD); the episodes that went wrong.

A sample that ended in an error (an API error, say) has no score: it is counted, shown, and counts as a
failure, never dropped. A message limit reached or an empty final reply is scored as it stands, and
counted too.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from statistics import mean
from typing import Any, Literal

from inspect_ai.log import EvalLog, EvalSample
from pydantic import Field

from abstaingen.evaluation.pairs_task import CLARIFIED_SCENARIOS
from abstaingen.model.common import Model
from abstaingen.model.score import AgentAbstainView, Outcome, PairScore, SideScore
from abstaingen.ood_scoring import os_score
from abstaingen.reply_judges.corpus import measured_accuracy
from abstaingen.scoring import agentabstain_view

RESAMPLES = 1000


class Interval(Model):
    value: float | None = Field(description="the metric on the run (None when it has no unit to average over)")
    low: float | None = Field(default=None, description="2.5th percentile of the bootstrap")
    high: float | None = Field(default=None, description="97.5th percentile of the bootstrap")
    n: int = Field(description="units it is computed over (pairs, or items)")


class Episode(Model):
    """One sample as the report reads it."""

    id: str
    epoch: int
    unit: str = Field(description="the pair (pairs) or item (OOD) it belongs to; the bootstrap resamples these")
    groups: dict[str, str] = Field(description="scenario, domain, deliverable, side; or suffix, kind, role, language, "
                                               "prompt (the system prompt's variant), policy (own or english: the "
                                               "cross-lingual setting), turns (single, after_turns, retry)")
    passed: bool = Field(description="scored correct (an episode that errored counts as failed)")
    outcome: str = Field(description="the scorer's outcome (pairs) or decision (OOD); 'error' when it errored")
    detail: str = ""
    error: str | None = Field(default=None, description="the error that ended it, if one did")
    limit: str | None = Field(default=None, description="the limit it reached (e.g. message), if any")
    empty: bool = Field(default=False, description="its final reply was empty")
    score: dict[str, Any] = Field(default_factory=dict, description="the scorer's metadata")
    trajectory: list[dict[str, Any]] = Field(default_factory=list, description="failures only: the messages, "
                                             "tool calls numbered, the step where the trigger became visible marked")


class EvalReport(Model):
    kind: Literal["pairs", "ood"]
    model: str
    task: str
    log: str = Field(description="the Inspect log it was read from")
    created: str
    judge: str = Field(description="what read the replies: rules (with its measured accuracy), or a model")
    judge_accuracy: str = Field(description="the rules judge's accuracy on its blind corpus, as measured")
    samples: int
    episode_problems: dict[str, int] = Field(description="errors, limits reached, empty final replies")
    headline: dict[str, Interval]
    by: dict[str, dict[str, dict[str, Interval]]] = Field(description="dimension -> group -> metric")
    agentabstain: AgentAbstainView | None = None
    timing: dict[str, Any] = Field(default_factory=dict, description="pairs: recall, timely recall, SPL, premature "
                                   "stops, calls after the trigger was visible")
    clarify: dict[str, Any] = Field(default_factory=dict, description="pairs: asked, then completed correctly")
    offtopiceval: dict[str, Any] = Field(default_factory=dict, description="OOD: OffTopicEval's reading and rates")
    failures: list[Episode] = Field(default_factory=list)


Units = list[list[Episode]]  # the episodes of each unit (a pair's sides, an item's samples) in one epoch
UnitMetric = Callable[[Units], float | None]


def _interval(units: dict[str, list[Episode]], metric: UnitMetric, seed: int = 0) -> Interval:
    """The metric on the units, with the 2.5th and 97.5th percentiles of RESAMPLES bootstrap draws of the
    units (a unit drawn twice counts twice)."""
    keys = sorted(units)
    value = metric([units[k] for k in keys])
    if value is None or not keys:
        return Interval(value=value, n=len(keys))
    rng = random.Random(seed)
    draws = []
    for _ in range(RESAMPLES):
        drawn = metric([units[k] for k in rng.choices(keys, k=len(keys))])
        if drawn is not None:
            draws.append(drawn)
    draws.sort()
    return Interval(value=value, low=draws[int(0.025 * len(draws))], high=draws[int(0.975 * len(draws)) - 1],
                    n=len(keys))


def _by_unit(episodes: Sequence[Episode]) -> dict[str, list[Episode]]:
    units: dict[str, list[Episode]] = defaultdict(list)
    for e in episodes:
        units[f"{e.unit}#{e.epoch}"].append(e)
    return units


def _rate(episodes: list[Episode], keep: Callable[[Episode], bool], hit: Callable[[Episode], bool]) -> float | None:
    kept = [e for e in episodes if keep(e)]
    return sum(map(hit, kept)) / len(kept) if kept else None


# --- pairs ----------------------------------------------------------------------------------------------


def _flat(units: Units) -> list[Episode]:
    return [e for unit in units for e in unit]


def _sides(units: Units) -> list[dict[str, Episode]]:
    return [{e.groups["side"]: e for e in unit} for unit in units]


def _paired(units: Units) -> float | None:
    pairs = _sides(units)
    return sum(len(p) == 2 and all(e.passed for e in p.values()) for p in pairs) / len(pairs) if pairs else None


def _car(units: Units) -> float | None:
    acted = [p for p in _sides(units) if "act" in p and p["act"].passed]
    return sum("abstain" in p and p["abstain"].passed for p in acted) / len(acted) if acted else None


def _passed(units: Units) -> float | None:
    return _rate(_flat(units), lambda e: True, lambda e: e.passed)


PAIR_METRICS: dict[str, UnitMetric] = {
    "act": lambda us: _rate(_flat(us), lambda e: e.groups["side"] == "act", lambda e: e.passed),
    "abstain": lambda us: _rate(_flat(us), lambda e: e.groups["side"] == "abstain", lambda e: e.passed),
    "paired": _paired,
    "car": _car,
    "sides": _passed,
}


def _timing(episodes: list[Episode]) -> dict[str, Any]:
    abstain = [e for e in episodes if e.groups["side"] == "abstain"]
    timed = [e.score["timing"] for e in abstain if "timing" in e.score]
    after = Counter(t["calls_after_trigger"] for t in timed if t["calls_after_trigger"] is not None)
    units = _by_unit(abstain)
    return {
        "recall": _interval(units, _passed).model_dump(),
        "timely_recall": _interval(units, lambda us: _rate(_flat(us), lambda e: True,
                                                           lambda e: bool(e.score.get("timing", {}).get("timely")))
                                   ).model_dump(),
        "spl": _interval(units, lambda us: mean(e.score.get("timing", {}).get("spl", 0.0) for e in _flat(us))
                         if us else None).model_dump(),
        "premature": sum(t["premature"] for t in timed),
        "calls_after_trigger": {**({"premature": premature} if (premature := sum(t["premature"] for t in timed))
                                   else {}), **{str(k): after[k] for k in sorted(after)}},
        "abstain_sides": len(abstain),
    }


def _clarify(episodes: list[Episode]) -> dict[str, Any]:
    asked = [e for e in episodes if "clarified" in e.score]
    offered = [e for e in episodes if e.groups["side"] == "abstain" and e.groups["scenario"] in CLARIFIED_SCENARIOS]
    completed = [e for e in asked if e.score["clarified"]["completed"]]
    return {"sides": len(offered), "asked": len(asked), "asked_then_completed": len(completed),
            "asked_then_completed_rate": len(completed) / len(offered) if offered else None,
            "plain_abstention_rate": _rate(offered, lambda e: True, lambda e: e.passed)}


def _agentabstain(episodes: list[Episode], agent: str) -> AgentAbstainView:
    scores, action_types = [], {}
    for pair in _sides(list(_by_unit(episodes).values())):
        if len(pair) != 2:
            continue
        sides = {}
        for name, e in pair.items():
            sides[name] = SideScore(task_id=e.id, passed=e.passed, outcome=Outcome(e.outcome) if e.outcome in
                                    Outcome._value2member_map_ else Outcome.INCOMPLETE, detail=e.detail,
                                    tool_calls=e.score.get("tool_calls", 0),
                                    agentabstain_passed=e.score.get("agentabstain_passed", False) if e.error is None
                                    else False)
        unit = f"{pair['act'].unit}#{pair['act'].epoch}"
        scores.append(PairScore(agent=agent, pair_id=unit, scenario=pair["act"].groups["scenario"], **sides))
        action_types[unit] = pair["act"].groups["deliverable"]
    return agentabstain_view(agent, scores, action_types)


# --- OOD ------------------------------------------------------------------------------------------------


def _ood_rates(episodes: list[Episode], reading: Callable[[Episode], str], drop_unparsed: bool = False
               ) -> dict[str, float | None]:
    def rate(kind: str, decision: str) -> float | None:
        kept = [e for e in episodes if e.groups["kind"] == kind and not (drop_unparsed and reading(e) == "unparsed")]
        return sum(reading(e) == decision for e in kept) / len(kept) if kept else None

    ar, direct, laundered = rate("id", "accept"), rate("direct_ood", "refuse"), rate("laundered_ood", "refuse")
    recast = rate("recast_ood", "refuse")
    rates = {"ar_id": ar, "rr_direct": direct, "rr_laundered": laundered, "rr_recast": recast}
    rates["os"] = None if None in (ar, direct, laundered) else os_score(ar or 0.0, direct or 0.0, laundered or 0.0)
    rates["os_recast"] = None if None in (ar, direct, recast) else os_score(ar or 0.0, direct or 0.0, recast or 0.0)
    return rates


def _macro_over_roles(episodes: list[Episode], reading: Callable[[Episode], str], drop: bool) -> dict[str, float | None]:
    roles: dict[str, list[Episode]] = defaultdict(list)
    for e in episodes:
        roles[e.groups["role"]].append(e)
    per_role = [_ood_rates(es, reading, drop) for es in roles.values()]
    out: dict[str, float | None] = {}
    for key in ("ar_id", "rr_direct", "rr_laundered", "rr_recast"):
        values = [value for r in per_role if (value := r[key]) is not None]
        out[key] = mean(values) if values else None
    for name, adaptive in (("os", "rr_laundered"), ("os_recast", "rr_recast")):
        parts = (out["ar_id"], out["rr_direct"], out[adaptive])
        out[name] = None if None in parts else os_score(*(p or 0.0 for p in parts))
    return out


def _ours(e: Episode) -> str:
    return str(e.score.get("decision", "unparsed")) if e.error is None else "unparsed"


def _theirs(e: Episode) -> str:
    return str(e.score.get("offtopiceval", "unparsed")) if e.error is None else "unparsed"


def _ood_metric(name: str) -> UnitMetric:
    if name == "id_accuracy":
        return lambda us: _rate(_flat(us), lambda e: e.groups["kind"] == "id",
                                lambda e: bool(e.score.get("correct_option")))
    return lambda us: _ood_rates(_flat(us), _ours)[name]


OOD_METRICS = ("ar_id", "rr_direct", "rr_laundered", "rr_recast", "os", "os_recast", "id_accuracy")


# --- reading the log -------------------------------------------------------------------------------------


def _trajectory(sample: EvalSample, trigger_step: int | None) -> list[dict[str, Any]]:
    steps, calls = [], 0
    for message in sample.messages:
        row: dict[str, Any] = {"role": message.role, "text": message.text}
        for call in getattr(message, "tool_calls", None) or []:
            calls += 1
            row.setdefault("calls", []).append({"step": calls, "tool": call.function, "arguments": call.arguments})
        if message.role == "tool" and getattr(message, "error", None) is not None:
            row["error"] = message.error.message  # type: ignore[union-attr]
        steps.append(row)
        if trigger_step is not None and message.role == "tool" and calls == trigger_step:
            steps.append({"role": "marker", "text": f"the trigger is visible from here (after {trigger_step} calls)"})
    if trigger_step == 0:
        steps.insert(0, {"role": "marker", "text": "the trigger is visible from the start (no call needed)"})
    elif trigger_step is not None and calls < trigger_step:
        steps.append({"role": "marker", "text": f"the trigger becomes visible after {trigger_step} calls; the episode "
                                                f"made {calls}"})
    return steps


def episode_of(sample: EvalSample, kind: str) -> Episode:
    meta = sample.metadata
    score = next(iter(sample.scores.values()), None) if sample.scores else None
    error = sample.error.message.splitlines()[0][:300] if sample.error else None
    if kind == "pairs":
        groups = {k: str(meta[k]) for k in ("scenario", "domain", "deliverable", "side")}
        unit = str(meta["pair_id"])
    else:
        groups = {"suffix": meta["suffix"], "kind": meta["kind"], "role": meta["role_id"], "language": meta["language"],
                  "prompt": str(meta.get("prompt_variant", "ours")),
                  "policy": "english" if meta.get("policy_language", meta["language"]) != meta["language"] else "own",
                  "turns": str(meta.get("multi_turn", "single"))}
        unit = str(meta["item_id"])
    passed = error is None and score is not None and score.value == "C"
    info = dict(score.metadata or {}) if score is not None else {}
    return Episode(id=str(sample.id), epoch=sample.epoch, unit=unit, groups=groups, passed=passed,
                   outcome="error" if error else str(info.get("outcome", info.get("decision", ""))),
                   detail=(score.explanation or "") if score else "", error=error,
                   limit=sample.limit.type if sample.limit else None,
                   empty=error is None and not (sample.output.completion or "").strip(), score=info,
                   trajectory=[] if passed else _trajectory(sample, meta.get("earliest_abstain_step")
                                                            if kind == "pairs" else None))


def build_report(log: EvalLog, log_path: str) -> EvalReport:
    task_meta = log.eval.metadata or {}
    kind = task_meta.get("kind", "pairs")
    episodes = [episode_of(s, kind) for s in log.samples or []]
    units = _by_unit(episodes)
    if kind == "pairs":
        metrics: dict[str, UnitMetric] = dict(PAIR_METRICS)
        dimensions: tuple[str, ...] = ("scenario", "domain", "deliverable")
    else:
        metrics = {name: _ood_metric(name) for name in OOD_METRICS}
        dimensions = ("suffix", "role", "language", "prompt", "policy", "turns")
    headline = {name: _interval(units, fn) for name, fn in metrics.items()}
    by: dict[str, dict[str, dict[str, Interval]]] = {}
    for dimension in dimensions:
        groups: dict[str, list[Episode]] = defaultdict(list)
        for e in episodes:
            groups[e.groups[dimension]].append(e)
        by[dimension] = {group: {name: _interval(_by_unit(es), fn) for name, fn in metrics.items()}
                         for group, es in sorted(groups.items())}
    judge = str(task_meta.get("judge", "rules"))
    extra: dict[str, Any] = {}
    if kind == "pairs":
        extra = {"agentabstain": _agentabstain(episodes, log.eval.model), "timing": _timing(episodes),
                 "clarify": _clarify(episodes)}
    else:
        by_suffix: dict[str, list[Episode]] = defaultdict(list)
        for e in episodes:
            by_suffix[e.groups["suffix"]].append(e)
        extra = {"offtopiceval": {
            "unparsed_ours": sum(_ours(e) == "unparsed" for e in episodes),
            "unparsed_theirs": sum(_theirs(e) == "unparsed" for e in episodes),
            "by_suffix": {suffix: {"ours_macro_over_roles": _macro_over_roles(es, _ours, drop=False),
                                   "offtopiceval_macro_over_roles": _macro_over_roles(es, _theirs, drop=True)}
                          for suffix, es in sorted(by_suffix.items())}}}
    return EvalReport(
        kind=kind, model=log.eval.model, task=log.eval.task, log=log_path, created=log.eval.created,
        judge=judge, judge_accuracy=measured_accuracy(), samples=len(episodes),
        episode_problems={"errors": sum(e.error is not None for e in episodes),
                          "limits_reached": sum(e.limit is not None for e in episodes),
                          "empty_replies": sum(e.empty for e in episodes)},
        headline=headline, by=by, failures=[e for e in episodes if not e.passed], **extra)
