"""Layer 5: the scenario witness of T-, checked by executing tools in the T- environment.

A witness is the generator's claim that T- must be abstained on. Each checker below runs the calls
the claim names in a fresh episode of the sandbox (with T-'s overlay, and T+'s where the claim is a
difference) and compares what came back with what was claimed. Checkers register by witness kind.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from abstaingen.model import (
    CheckResult,
    ConfirmationPolicy,
    CrossCheckPolicy,
    DagNode,
    EnvironmentBundle,
    JsonValue,
    OutputRef,
    TaskPair,
    TaskVariant,
    ToolKind,
)
from abstaingen.model.common import canonical_json
from abstaingen.model.dag import shape
from abstaingen.model.perturbation import (
    ConflictingConstraintsWitness,
    ConflictingEvidenceWitness,
    DistinctInterpretationsWitness,
    HighStakesWitness,
    MissingCapabilityWitness,
    MultipleCandidatesWitness,
    RiskMarkerWitness,
    ToolFailureWitness,
)
from abstaingen.model.task import failed_assertions
from abstaingen.registry import Registry
from abstaingen.sandboxes.session import CallOutcome, SandboxSession, run_episodes

CHECK = "witness"

Checker = Callable[[SandboxSession, TaskPair, Any, EnvironmentBundle], Awaitable[str]]
CHECKERS: Registry[str, Checker] = Registry("witness checker")
checks = CHECKERS.register  # @checks(kind): the checker of a witness kind


class WitnessFailed(Exception):
    """The claim did not hold; the message says what execution showed instead."""


def _at(value: JsonValue, path: list[str | int], tool: str) -> JsonValue:
    """`value` (what `tool` returned) at `path`; a path that does not fit says what the result holds."""
    try:
        return OutputRef(node=tool, path=path).resolve({tool: value})
    except LookupError as exc:
        raise WitnessFailed(f"the path {[str(k) for k in path]} does not fit {tool}'s result, which is "
                            f"{shape(value)} ({exc}); [] is the result itself") from None


async def _run(session: SandboxSession, variant: TaskVariant, node: DagNode) -> CallOutcome:
    """One call of `node` in a fresh episode of `variant`'s environment."""
    await session.reset(variant.overlay)
    return await session.call(node.tool, node.args)


async def _result(session: SandboxSession, variant: TaskVariant, node: DagNode) -> JsonValue:
    outcome = await _run(session, variant, node)
    if not outcome.ok:
        raise WitnessFailed(f"{node.tool}{node.args} failed: {outcome.error}")
    return outcome.result


async def _found(session: SandboxSession, variant: TaskVariant, node: DagNode, path: list[str | int]) -> list:
    found = _at(await _result(session, variant, node), path, node.tool)
    if not isinstance(found, list):
        raise WitnessFailed(f"{node.tool} returned no list at {path}")
    return found


@checks("multiple_candidates")
async def multiple_candidates(session, pair: TaskPair, w: MultipleCandidatesWitness, _) -> str:
    count = len(await _found(session, pair.abstain, w.lookup, w.candidates_path))
    if count < w.min_candidates:
        raise WitnessFailed(f"{w.lookup.tool}{w.lookup.args} matches {count} candidate(s), "
                            f"need at least {w.min_candidates}")
    return f"{count} candidates match the details given"


@checks("distinct_interpretations")
async def distinct_interpretations(session, pair: TaskPair, w: DistinctInterpretationsWitness, bundle) -> str:
    for reading in w.interpretations:
        if bundle.tool(reading.commit.tool).kind != ToolKind.COMMIT:
            raise WitnessFailed(f"interpretation {reading.reading!r} calls {reading.commit.tool}, not a commit tool")
    episodes = [(pair.abstain.overlay, lambda node=r.commit: session.call(node.tool, node.args))
                for r in w.interpretations]
    outcomes = set()
    for reading, (trace, outcome) in zip(w.interpretations, await run_episodes(session, pair.abstain.env_id, episodes)):
        if not outcome.ok:
            raise WitnessFailed(f"interpretation {reading.reading!r} fails: {outcome.error}")
        if trace.final_state_hash == trace.initial_state_hash:
            raise WitnessFailed(f"interpretation {reading.reading!r} changes nothing")
        outcomes.add(trace.final_state_hash)
    if len(outcomes) < len(w.interpretations):
        raise WitnessFailed("two interpretations lead to the same state")
    return f"{len(outcomes)} interpretations lead to {len(outcomes)} different states"


@checks("conflicting_constraints")
async def conflicting_constraints(session, pair: TaskPair, w: ConflictingConstraintsWitness, _) -> str:
    """Each detail alone singles out a record, a different one each: the request mixes up two records.
    A request whose details merely find nothing is not a conflict."""
    singled = []
    for node in w.each_alone:
        found = await _found(session, pair.abstain, node, w.candidates_path)
        if len(found) != 1:
            raise WitnessFailed(f"constraint {node.args} alone matches {len(found)} records, not exactly one")
        singled.append(canonical_json(found[0]))
    if len(set(singled)) < len(singled):
        raise WitnessFailed("two constraints single out the same record: they do not conflict")
    together = len(await _found(session, pair.abstain, w.together, w.candidates_path))
    if together:
        raise WitnessFailed(f"the constraints together still match {together} record(s)")
    return f"each of {len(w.each_alone)} constraints singles out a different record, together none"


@checks("high_stakes")
async def high_stakes(session, pair: TaskPair, w: HighStakesWitness, bundle: EnvironmentBundle) -> str:
    tool = bundle.tool(w.commit.tool)
    policies = [p for p in bundle.policies_of(ConfirmationPolicy) if p.category == w.category]
    problems = []
    if not bundle.irreversible(tool.name):
        problems.append(f"{tool.name} can be undone")
    if tool.impact is None or tool.impact.category != w.category:
        problems.append(f"{tool.name} moves no {w.category}")
    if not policies:
        raise WitnessFailed(f"no confirmation policy covers {w.category!r}")
    threshold = policies[0].threshold
    if not w.impact > threshold:
        problems.append(f"impact {w.impact} is not above the policy threshold {threshold}")
    if tool.impact is not None and tool.impact.argument and w.commit.args.get(tool.impact.argument) != w.impact:
        problems.append(f"the call moves {w.commit.args.get(tool.impact.argument)}, not {w.impact}")
    if pair.abstain.confirms(w.category, w.impact):
        problems.append("the instruction confirms this amount")
    if problems:
        raise WitnessFailed("; ".join(problems))
    await _result(session, pair.abstain, w.commit)  # the action is really available and would go through
    return f"{tool.name} is irreversible, {w.impact} > {threshold}, not confirmed"


async def _no_other_route(session, pair: TaskPair, bundle: EnvironmentBundle, probe_args: dict[str, JsonValue],
                          excluded: set[str]) -> str:
    """Call every remaining tool with what the task offers; none may deliver what T+ delivers."""
    probes = []
    for tool in bundle.tools:
        if tool.name in excluded or tool.name in pair.abstain.overlay.hidden_tools:
            continue
        properties = tool.input_schema.get("properties", {})
        args = {k: v for k, v in probe_args.items() if k in properties}  # type: ignore[operator]
        if set(tool.input_schema.get("required", [])) <= set(args):  # type: ignore[arg-type]
            probes.append((pair.abstain.overlay, lambda name=tool.name, args=args: session.call(name, args)))
    for trace, outcome in await run_episodes(session, pair.abstain.env_id, probes):
        called = trace.calls[0].tool
        if pair.act.final_state and outcome.ok and not failed_assertions(trace.final_state, pair.act.final_state):
            raise WitnessFailed(f"{called} achieves the deliverable: an alternative route exists")
        if pair.act.expected_answer and outcome.ok:
            text = canonical_json(outcome.result)
            if any(answer in text for answer in pair.act.expected_answer):
                raise WitnessFailed(f"{called} reveals the answer: an alternative route exists")
    return f"no alternative among {len(probes)} probed tools"


def same_effect(bundle: EnvironmentBundle, key_tool: str, effect: str, hidden: list[str]) -> list[str]:
    """Tools left to T- that declare the effect T+ delivers through `key_tool`. The tool that undoes
    `key_tool` changes the same field back and cannot deliver the outcome, so it does not count (the
    probes of _no_other_route still call it)."""
    undo = bundle.tool(key_tool).undone_by if bundle.has_tool(key_tool) else None
    return [t.name for t in bundle.tools
            if t.effect == effect and t.name not in {key_tool, undo} and t.name not in hidden]


@checks("missing_capability")
async def missing_capability(session, pair: TaskPair, w: MissingCapabilityWitness, bundle) -> str:
    hidden = pair.abstain.overlay.hidden_tools
    if w.hidden_tool not in hidden:
        raise WitnessFailed(f"{w.hidden_tool} is not hidden in T-")
    if others := same_effect(bundle, w.hidden_tool, w.effect, hidden):
        raise WitnessFailed(f"remaining tools declare the same effect: {others}")
    return f"{w.hidden_tool} hidden; " + await _no_other_route(session, pair, bundle, w.probe_args, set())


@checks("tool_failure")
async def tool_failure(session, pair: TaskPair, w: ToolFailureWitness, bundle) -> str:
    """The tool fails on every one of `attempts` calls in a row (a retry does not help)."""
    await session.reset(pair.abstain.overlay)
    for attempt in range(1, w.attempts + 1):
        outcome = await session.call(w.failing_call.tool, w.failing_call.args)
        if outcome.ok:
            raise WitnessFailed(f"{w.failing_call.tool} succeeded on attempt {attempt}")
    if others := same_effect(bundle, w.failing_call.tool, w.effect, pair.abstain.overlay.hidden_tools):
        raise WitnessFailed(f"other tools declare the same effect: {others}")
    route = await _no_other_route(session, pair, bundle, w.probe_args, {w.failing_call.tool})
    return f"{w.failing_call.tool} fails {w.attempts} times in a row; {route}"


def _compared(value: JsonValue) -> float | str:
    """A compared value: a number, or a text (a zone, a date) that must match exactly."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise WitnessFailed(f"{value!r} is neither a number nor a text")
    return float(value) if isinstance(value, int | float) else value


def _apart(a: float | str, b: float | str, tolerance: float) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) > tolerance
    return a != b  # texts (or a text and a number) agree only when equal


def _value_text(value: float | str) -> str:
    return f"{value:g}" if isinstance(value, float) else repr(value)


@checks("conflicting_evidence")
async def conflicting_evidence(session, pair: TaskPair, w: ConflictingEvidenceWitness, bundle) -> str:
    """The two reads differ by more than the stated tolerance in T-, and by no more than it in T+ (values that
    are not numbers: differ at all, agree exactly)."""
    field = w.path_a[-1] if w.path_a else None
    policies = [p for p in bundle.policies_of(CrossCheckPolicy) if p.field == field and p.mirror_tool == w.read_b.tool]
    tolerance = policies[0].tolerance if policies else 0.0

    async def reads(variant: TaskVariant) -> tuple[float | str, float | str]:
        a = _compared(_at(await _result(session, variant, w.read_a), w.path_a, w.read_a.tool))
        b = _compared(_at(await _result(session, variant, w.read_b), w.path_b, w.read_b.tool))
        return a, b

    a, b = await reads(pair.abstain)
    if not _apart(a, b, tolerance):
        raise WitnessFailed(f"{w.read_a.tool} and {w.read_b.tool} agree within the tolerance {tolerance:g} "
                            f"in T- ({_value_text(a)} vs {_value_text(b)})")
    act_a, act_b = await reads(pair.act)
    if _apart(act_a, act_b, tolerance):
        raise WitnessFailed(f"the reads already disagree in T+ ({_value_text(act_a)} vs {_value_text(act_b)})")
    return (f"{w.read_a.tool} says {_value_text(a)}, {w.read_b.tool} says {_value_text(b)} "
            f"(T+: {_value_text(act_a)} vs {_value_text(act_b)}, tolerance {tolerance:g})")


@checks("risk_marker")
async def risk_marker(session, pair: TaskPair, w: RiskMarkerWitness, _) -> str:
    def shows(value: JsonValue, expected: JsonValue) -> bool:
        return value == expected

    if isinstance(w.marker, str) and w.marker.lower() in pair.abstain.instruction.lower():
        raise WitnessFailed("the instruction already mentions the risk")
    if w.marker == w.act_note:
        raise WitnessFailed("both sides show the same note")
    revealed = _at(await _result(session, pair.abstain, w.revealing_read), w.path, w.revealing_read.tool)
    if not shows(revealed, w.marker):
        raise WitnessFailed(f"{w.revealing_read.tool} does not reveal the marker in T-")
    act_value = _at(await _result(session, pair.act, w.revealing_read), w.path, w.revealing_read.tool)
    if shows(act_value, w.marker):
        raise WitnessFailed("the marker is already there in T+")
    if act_value != w.act_note:
        raise WitnessFailed(f"T+ shows {act_value!r}, not the note the witness names")
    return f"{w.revealing_read.tool} reveals the marker; T+ shows a note that does not restrict {w.action}"


async def check_witness(session: SandboxSession, pair: TaskPair, bundle: EnvironmentBundle) -> CheckResult:
    witness = pair.perturbation.witness
    try:
        detail = await CHECKERS[witness.kind](session, pair, witness, bundle)
    except (WitnessFailed, LookupError, KeyError) as exc:
        return CheckResult(name=CHECK, passed=False, detail=f"{pair.scenario} {witness.kind}: {exc}")
    return CheckResult(name=CHECK, passed=True, detail=f"{pair.scenario}: {detail}")
