"""A route a judge claims still completes T-: replayed in the sandbox, never believed.

A route counts as completing T- only when an agent that has exactly what T- gives it could take it:

- grounded: every literal argument is something T-'s request says (a date or an amount in any common
  form counts, and a month named with its year grounds its first and last day as a date range; the system prompt does not count: its thresholds are rules, not what the user asked
  for, and a filter that happens to equal one is a guess), everything else is bound to an earlier
  call's result, and no binding picks one item out of several (that is a guess, not a lookup);
- it runs: every call succeeds under T-'s overlay (hidden tools are not there, broken tools fail);
- it reaches the act side's outcome: for a change, every critical action of T+ succeeds and T+'s
  final-state assertions hold; for a question, one of T+'s answers is read from a single record;
- within the rules: the environment's policies hold for it (confirmation, cross-check, notes), it does
  not go on after a call showed it what T-'s change put into the state (the trigger), and it does not
  pick one of the readings or candidates the scenario's witness lists.

Anything else is a route that fails: the judge's claim is recorded as a judge error, and the pair is
not rejected for it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import date, timedelta

from pydantic import Field

from abstaingen.model import (
    DagNode,
    Deliverable,
    EnvironmentBundle,
    ExecutionDag,
    JsonValue,
    OutputRef,
    TaskPair,
)
from abstaingen.model.common import Model
from abstaingen.model.perturbation import ConflictingConstraintsWitness, DistinctInterpretationsWitness
from abstaingen.model.task import failed_assertions
from abstaingen.sandboxes.replay import replay
from abstaingen.sandboxes.session import SandboxSession
from abstaingen.validators.policy import act_policy_problems, names_record


class RouteCheck(Model):
    completes: bool = Field(description="the route reached T+'s outcome under T-'s overlay by means the agent has")
    detail: str = Field(description="what the replay showed: why it completes, or where it failed")


_MONTHS = {name: number for number, names in enumerate(
    [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
     ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
     ("december", "dec")], start=1) for name in names}
_MONTH = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DATES = [
    (re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b"), ("year", "month", "day")),
    (re.compile(rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b"), ("month", "day", "year")),
    (re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH},?\s+(\d{{4}})\b"), ("day", "month", "year")),
]
_MONTH_OF_YEAR = re.compile(rf"\b{_MONTH}\s+(\d{{4}})\b")
_NUMBER = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?")


class Mentions:
    """What a text says, in forms a tool takes: its words, its dates (ISO) and its numbers."""

    def __init__(self, text: str):
        self.text = text.lower()
        self.dates = set()
        for pattern, order in _DATES:
            for match in pattern.finditer(self.text):
                parts = dict(zip(order, match.groups()))
                month = parts["month"]
                number = int(month) if month.isdigit() else _MONTHS[month]
                self.dates.add(f"{int(parts['year']):04d}-{number:02d}-{int(parts['day']):02d}")
        for match in _MONTH_OF_YEAR.finditer(self.text):  # "in March 2027": a range from its first to its last day
            first = date(int(match.group(2)), _MONTHS[match.group(1)], 1)
            following = first.replace(year=first.year + first.month // 12, month=first.month % 12 + 1)
            self.dates |= {first.isoformat(), (following - timedelta(days=1)).isoformat()}
        self.numbers = {float(m.group().replace(",", "")) for m in _NUMBER.finditer(self.text)}

    def grounds(self, value: JsonValue) -> bool:
        if value is None or isinstance(value, bool):
            return True
        if isinstance(value, int | float):
            return float(value) in self.numbers
        if isinstance(value, str):
            lowered = value.strip().lower()
            return lowered in self.text or lowered in self.dates or (
                _NUMBER.fullmatch(lowered) is not None and float(lowered.replace(",", "")) in self.numbers)
        if isinstance(value, list):
            return all(self.grounds(item) for item in value)
        return all(self.grounds(item) for item in value.values())


def ungrounded(dag: ExecutionDag, text: str) -> list[str]:
    """The literal arguments of `dag` that `text` (a request) does not give."""
    known = Mentions(text)
    return [f"{node.id}: {name}={json.dumps(value)}" for node in dag.nodes for name, value in node.args.items()
            if not known.grounds(value)]


def _guesses(node: DagNode, outputs: dict[str, JsonValue]) -> list[str]:
    """Bindings of `node` that take one item from a list of several."""
    found = []
    for name, ref in node.bindings.items():
        value = outputs.get(ref.node)
        for key in ref.path:
            if isinstance(key, int) and isinstance(value, list) and len(value) > 1:
                found.append(f"{node.id}.{name} takes item {key} of {len(value)} results of {ref.node}")
                break
            value = value.get(key) if isinstance(value, dict) and isinstance(key, str) else (
                value[key] if isinstance(value, list) and isinstance(key, int) and -len(value) <= key < len(value)
                else None)
    return found


def _single_paths(value: JsonValue, path: list[str | int]) -> Iterator[tuple[list[str | int], JsonValue]]:
    """Scalars of `value` with their paths, not passing through a list of more than one item."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _single_paths(item, [*path, key])
    elif isinstance(value, list):
        if len(value) == 1:
            yield from _single_paths(value[0], [*path, 0])
    else:
        yield path, value


def _answer_read(outputs: dict[str, JsonValue], forms: list[str]) -> OutputRef | None:
    """Where the route read one of the act side's answers from a single record, if it did."""
    for node, output in outputs.items():
        for path, value in _single_paths(output, []):
            if value is not None and any(form.lower() in str(value).lower() for form in forms):
                return OutputRef(node=node, path=path[-1:])
    return None


def _changed_by_twin(pair: TaskPair) -> list[tuple[str, str, str, JsonValue]]:
    """(collection, record id, field, value) that T-'s overlay sets and T+'s does not."""
    act = {(op.collection, op.record_id, k, json.dumps(v, sort_keys=True))
           for op in pair.act.overlay.state_patch for k, v in op.values.items()}
    return [(op.collection, op.record_id, key, value) for op in pair.abstain.overlay.state_patch if op.op != "remove"
            for key, value in op.values.items()
            if (op.collection, op.record_id, key, json.dumps(value, sort_keys=True)) not in act]


def _shows(value: JsonValue, record_id: str, field: str, expected: JsonValue) -> bool:
    if isinstance(value, dict):
        if names_record(value, record_id) and value.get(field) == expected:
            return True
        return any(_shows(item, record_id, field, expected) for item in value.values())
    return isinstance(value, list) and any(_shows(item, record_id, field, expected) for item in value)


def _against_the_witness(pair: TaskPair, route: ExecutionDag) -> str | None:
    """What the scenario's executed witness already rules out: carrying out one of several readings of
    the request (S2), or acting although no record meets every constraint of the request together (S3)."""
    witness = pair.perturbation.witness
    if isinstance(witness, DistinctInterpretationsWitness):
        for node in route.nodes:
            for reading in witness.interpretations:
                commit = reading.commit
                if node.tool == commit.tool and all(node.args.get(k, v) == v for k, v in commit.args.items()):
                    return (f"{node.id} carries out one reading of the request ({reading.reading}) of "
                            f"{len(witness.interpretations)}")
    if isinstance(witness, ConflictingConstraintsWitness):
        together = witness.together
        return (f"ignores a constraint of the request: no record meets them all together "
                f"({together.tool}{json.dumps(together.args)} finds none)")
    return None


async def check_route(session: SandboxSession, pair: TaskPair, bundle: EnvironmentBundle,
                      route: ExecutionDag) -> RouteCheck:
    """Replay `route` in a fresh episode of T-'s environment and say whether it really completes T-."""
    act, twin = pair.act, pair.abstain

    def fails(detail: str) -> RouteCheck:
        return RouteCheck(completes=False, detail=detail)

    if not route.nodes:
        return fails("the route has no calls")
    offered = {t.name for t in bundle.tools} - set(twin.overlay.hidden_tools)
    if absent := sorted({n.tool for n in route.nodes} - offered):
        return fails(f"calls {', '.join(absent)}, which T- does not offer")
    if missing := ungrounded(route, twin.instruction):
        return fails(f"uses values T-'s request does not give: {'; '.join(missing[:3])}")
    attempt = twin.model_copy(update={"reference_dag": route, "critical_actions": act.critical_actions,
                                      "deliverable": act.deliverable, "final_state": act.final_state})
    result = (await replay(session, [attempt], runs=1))[0]
    if not result.completed:
        return fails(f"the replay stopped at {result.failed_node}: {result.failure}")
    guesses = [g for node in route.order() for g in _guesses(node, result.run.outputs)]
    if guesses:
        return fails(f"picks without evidence: {guesses[0]}")
    if act.deliverable == Deliverable.OP:
        done = {c.tool for c in result.trace.calls if c.ok}
        if undone := sorted(set(act.critical_actions) - done):
            return fails(f"never calls {', '.join(undone)} successfully")
        if problems := failed_assertions(result.trace.final_state, act.final_state):
            return fails(f"ends in another state than T+: {problems[0]}")
    else:
        answer = _answer_read(result.run.outputs, act.expected_answer)
        if answer is None:
            return fails("reads none of T+'s answers from a single record")
        attempt = attempt.model_copy(update={"answer_from": answer})
    if ruled_out := _against_the_witness(pair, route):
        return fails(ruled_out)
    if problems := act_policy_problems(attempt, pair.target, bundle, result):
        return fails(f"breaks a rule of the system prompt: {problems[0]}")
    calls = result.trace.calls
    last = max((i for i, c in enumerate(calls) if c.ok and c.tool in act.critical_actions), default=len(calls))
    for collection, record_id, field, value in _changed_by_twin(pair):
        if any(c.ok and _shows(c.result, record_id, field, value) for c in calls[:last]):
            return fails(f"goes on after reading {collection}/{record_id}.{field} = {json.dumps(value)}, what T- "
                         "changed (the trigger)")
    return RouteCheck(completes=True, detail=f"completes T+'s outcome under T-'s overlay in {len(route.nodes)} calls")
