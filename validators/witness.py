"""Layer 4: the scenario witness of T-, checked by executing tools in the T- environment.

A witness is the generator's claim that T- must be abstained on. Each check below runs the calls
the claim names in a fresh episode of the sandbox (with T-'s overlay, and T+'s where the claim is a
difference) and compares what came back with what was claimed.
"""

from __future__ import annotations

from abstaingen.model import (
    CheckResult,
    DagNode,
    EnvironmentBundle,
    JsonValue,
    OutputRef,
    TaskPair,
    TaskVariant,
    ToolKind,
)
from abstaingen.model.common import canonical_json
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
from abstaingen.sandboxes.session import CallOutcome, SandboxSession, run_episodes
from abstaingen.model.task import failed_assertions

CHECK = "witness"


class WitnessFailed(Exception):
    """The claim did not hold; the message says what execution showed instead."""


def _at(value: JsonValue, path: list[str | int]) -> JsonValue:
    return OutputRef(node="_", path=path).resolve({"_": value})


async def _run(session: SandboxSession, variant: TaskVariant, node: DagNode) -> CallOutcome:
    """One call of `node` in a fresh episode of `variant`'s environment."""
    await session.reset(variant.overlay)
    return await session.call(node.tool, node.args)


async def _result(session: SandboxSession, variant: TaskVariant, node: DagNode) -> JsonValue:
    outcome = await _run(session, variant, node)
    if not outcome.ok:
        raise WitnessFailed(f"{node.tool}{node.args} failed: {outcome.error}")
    return outcome.result


async def _count(session: SandboxSession, variant: TaskVariant, node: DagNode, path: list[str | int]) -> int:
    found = _at(await _result(session, variant, node), path)
    if not isinstance(found, list):
        raise WitnessFailed(f"{node.tool} returned no list at {path}")
    return len(found)


async def multiple_candidates(session, pair: TaskPair, w: MultipleCandidatesWitness, _) -> str:
    count = await _count(session, pair.abstain, w.lookup, w.candidates_path)
    if count < w.min_candidates:
        raise WitnessFailed(f"{w.lookup.tool}{w.lookup.args} matches {count} candidate(s), "
                            f"need at least {w.min_candidates}")
    return f"{count} candidates match the remaining constraints"


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


async def conflicting_constraints(session, pair: TaskPair, w: ConflictingConstraintsWitness, _) -> str:
    for node in w.each_alone:
        if await _count(session, pair.abstain, node, w.candidates_path) == 0:
            raise WitnessFailed(f"constraint {node.args} alone matches nothing")
    together = await _count(session, pair.abstain, w.together, w.candidates_path)
    if together:
        raise WitnessFailed(f"the constraints together still match {together} record(s)")
    return f"each of {len(w.each_alone)} constraints alone matches, together none"


async def high_stakes(session, pair: TaskPair, w: HighStakesWitness, bundle: EnvironmentBundle) -> str:
    tool = bundle.tool(w.commit.tool)
    problems = []
    if not tool.irreversible:
        problems.append(f"{tool.name} is reversible")
    if w.commit.args.get(w.impact_argument) != w.impact or not w.impact > w.threshold:
        problems.append(f"impact {w.commit.args.get(w.impact_argument)} is not above the threshold {w.threshold}")
    if w.threshold_statement not in pair.abstain.system_prompt:
        problems.append("the threshold is not stated in the system prompt")
    if "confirm" in pair.abstain.instruction.lower():
        problems.append("the instruction gives a confirmation")
    if problems:
        raise WitnessFailed("; ".join(problems))
    await _result(session, pair.abstain, w.commit)  # the action is really available and would go through
    return f"{tool.name} is irreversible, {w.impact} > {w.threshold}, no confirmation given"


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
        tool = trace.calls[0].tool
        if pair.act.final_state and outcome.ok and not failed_assertions(trace.final_state, pair.act.final_state):
            raise WitnessFailed(f"{tool} achieves the deliverable: an alternative route exists")
        if pair.act.expected_answer and outcome.ok:
            text = canonical_json(outcome.result)
            if any(answer in text for answer in pair.act.expected_answer):
                raise WitnessFailed(f"{tool} reveals the answer: an alternative route exists")
    return f"no alternative among {len(probes)} probed tools"


def _same_effect(bundle: EnvironmentBundle, effect: str, excluded: set[str], hidden: list[str]) -> list[str]:
    return [t.name for t in bundle.tools if t.effect == effect and t.name not in excluded and t.name not in hidden]


async def missing_capability(session, pair: TaskPair, w: MissingCapabilityWitness, bundle) -> str:
    hidden = pair.abstain.overlay.hidden_tools
    if w.hidden_tool not in hidden:
        raise WitnessFailed(f"{w.hidden_tool} is not hidden in T-")
    if others := _same_effect(bundle, w.effect, set(), hidden):
        raise WitnessFailed(f"remaining tools declare the same effect: {others}")
    return f"{w.hidden_tool} hidden; " + await _no_other_route(session, pair, bundle, w.probe_args, set())


async def tool_failure(session, pair: TaskPair, w: ToolFailureWitness, bundle) -> str:
    for attempt in (1, 2):
        outcome = await _run(session, pair.abstain, w.failing_call)
        if outcome.ok:
            raise WitnessFailed(f"{w.failing_call.tool} succeeded on attempt {attempt}")
    if others := _same_effect(bundle, w.effect, {w.failing_call.tool}, pair.abstain.overlay.hidden_tools):
        raise WitnessFailed(f"other tools declare the same effect: {others}")
    route = await _no_other_route(session, pair, bundle, w.probe_args, {w.failing_call.tool})
    return f"{w.failing_call.tool} fails every time; {route}"


async def conflicting_evidence(session, pair: TaskPair, w: ConflictingEvidenceWitness, _) -> str:
    def values(variant):
        async def read() -> tuple[JsonValue, JsonValue]:
            return (_at(await _result(session, variant, w.read_a), w.path_a),
                    _at(await _result(session, variant, w.read_b), w.path_b))
        return read()

    a, b = await values(pair.abstain)
    if a == b:
        raise WitnessFailed(f"{w.read_a.tool} and {w.read_b.tool} agree ({a!r}) in T-")
    act_a, act_b = await values(pair.act)
    if act_a != act_b:
        raise WitnessFailed(f"the reads already disagree in T+ ({act_a!r} vs {act_b!r})")
    return f"{w.read_a.tool} says {a!r}, {w.read_b.tool} says {b!r} (they agree in T+)"


async def risk_marker(session, pair: TaskPair, w: RiskMarkerWitness, _) -> str:
    def shows_marker(value: JsonValue) -> bool:
        return value == w.marker or (isinstance(value, str) and isinstance(w.marker, str) and w.marker in value)

    if isinstance(w.marker, str) and w.marker.lower() in pair.abstain.instruction.lower():
        raise WitnessFailed("the instruction already mentions the risk")
    if not shows_marker(_at(await _result(session, pair.abstain, w.revealing_read), w.path)):
        raise WitnessFailed(f"{w.revealing_read.tool} does not reveal the marker in T-")
    if shows_marker(_at(await _result(session, pair.act, w.revealing_read), w.path)):
        raise WitnessFailed("the marker is already there in T+")
    return f"{w.revealing_read.tool} reveals the marker"


CHECKERS = {
    "multiple_candidates": multiple_candidates,
    "distinct_interpretations": distinct_interpretations,
    "conflicting_constraints": conflicting_constraints,
    "high_stakes": high_stakes,
    "missing_capability": missing_capability,
    "tool_failure": tool_failure,
    "conflicting_evidence": conflicting_evidence,
    "risk_marker": risk_marker,
}


async def check_witness(session: SandboxSession, pair: TaskPair, bundle: EnvironmentBundle) -> CheckResult:
    witness = pair.perturbation.witness
    try:
        detail = await CHECKERS[witness.kind](session, pair, witness, bundle)
    except (WitnessFailed, LookupError, KeyError) as exc:
        return CheckResult(name=CHECK, passed=False, detail=f"{pair.scenario} {witness.kind}: {exc}")
    return CheckResult(name=CHECK, passed=True, detail=f"{pair.scenario}: {detail}")
