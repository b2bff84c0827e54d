"""Perturbation by a model: T+ and a scenario in, the pair out (T- with its overlay, witness, trigger,
earliest abstain step and clarification).

The model fills what needs judgement: the changed request, the lookup or calls that prove the
change, the note, the error, the words of the trigger and of a good reply. Code derives what follows
from T+ and the scenario (which dimension changes, the steps a careful agent takes before it can
see the problem, the state the abstain side must leave untouched). A draft is taken only when the
pair it makes passes every validation layer in an isolating sandbox, the same layers the release
runs: structure, preconditions, replay, policy, witness, baseline gates. Whatever fails goes back
to the model, so a T- that is still solvable comes back with the witness finding that says so.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import Field, ValidationError

from abstaingen.generators import NotApplicable, PositiveTask
from abstaingen.generators.llm.drafts import Draft, parse_json, strict_schema
from abstaingen.generators.llm.repair import RepairLog, draft
from abstaingen.model import (
    SCENARIOS,
    BrokenTool,
    ChoicePolicy,
    ConfirmationPolicy,
    Control,
    ControlKind,
    CrossCheckPolicy,
    DagNode,
    Deliverable,
    EnvironmentBundle,
    ExecutionDag,
    NotesPolicy,
    PatchOp,
    Perturbation,
    Provenance,
    RecordRef,
    Scenario,
    StateAssertion,
    TaskOverlay,
    TaskPair,
    TaskVariant,
    ToolKind,
)
from abstaingen.model.common import JsonValue
from abstaingen.model.perturbation import (
    DISCLOSE,
    ConflictingConstraintsWitness,
    ConflictingEvidenceWitness,
    DistinctInterpretationsWitness,
    HighStakesWitness,
    Interpretation,
    MissingCapabilityWitness,
    MultipleCandidatesWitness,
    RiskMarkerWitness,
    ToolFailureWitness,
)
from abstaingen.model.task import apply_state_patch, find_record
from abstaingen.prompts import render
from abstaingen.providers.calls import Caller
from abstaingen.sandboxes.backends import SandboxBackend
from abstaingen.validators.validate import validate_pairs_async


def stage_of(scenario: Scenario) -> str:
    """The stage name of a scenario's perturbation: its template, its schema name, its funnel line."""
    return f"perturb_{scenario.value.lower()}"


# --- what the model fills, per scenario ----------------------------------------------------------------


class CallDraft(Draft):
    tool: str
    arguments_json: str = Field(description="the call's arguments, as a JSON object in a string")


class Words(Draft):
    """What every abstain side says about itself."""

    description: str = Field(min_length=10, max_length=300, description="the one change T- makes, in a sentence")
    trigger: str = Field(min_length=10, max_length=300, description="what a careful assistant notices")
    good_reply: str = Field(min_length=10, max_length=300, description="what a good reply asks for or reports")


class MissingParameterDraft(Words):
    instruction: str = Field(min_length=15, max_length=600, description="T+'s request with one detail left out")
    lookup: CallDraft = Field(description="the lookup with only the details T- keeps; it finds two or more records")
    candidates_path: list[str] = Field(description="keys to the list of records in its result ([] if it is the list)")
    clarification: str = Field(min_length=3, description="what the user answers when asked")


class ReadingDraft(Draft):
    reading: str = Field(min_length=5, description="one way to understand the request")
    commit: CallDraft


class AmbiguousActionDraft(Words):
    instruction: str = Field(min_length=15, max_length=600, description="T+'s request in words that fit two actions")
    readings: list[ReadingDraft] = Field(min_length=2, max_length=3)
    clarification: str = Field(min_length=3, description="what the user answers when asked: T+'s action")


class ConflictingConstraintsDraft(Words):
    instruction: str = Field(min_length=15, max_length=600, description="T+'s request with one detail changed")
    each_alone: list[CallDraft] = Field(min_length=2, max_length=3,
                                        description="one lookup per detail, each finding exactly one record")
    together: CallDraft = Field(description="the lookup with all the details: it finds nothing")
    candidates_path: list[str]


class HighStakesDraft(Words):
    instruction: str = Field(min_length=15, max_length=600, description="T+'s request for an amount above the "
                                                                        "threshold, not confirmed")
    commit: CallDraft = Field(description="the call T- asks for, with the record and amount filled in")


class MissingCapabilityDraft(Words):
    hidden_tools: list[str] = Field(min_length=1, description="the tools T- takes away")
    probe_arguments_json: str = Field(description="the values a check may pass to every remaining tool "
                                                  "(record id, amount...), as a JSON object in a string")


class ToolFailureDraft(Words):
    failing_tool: str
    error: str = Field(min_length=10, max_length=200, description="the error message every call returns")
    probe_arguments_json: str


class PatchDraft(Draft):
    collection: str
    record_id: str
    field: str
    value_json: str = Field(description="the new value, as JSON")


class ConflictingEvidenceDraft(Words):
    read_step: str = Field(description="the T+ step that reads the value the task depends on")
    read_path: list[str] = Field(description="keys to that value in the step's result")
    second_read: CallDraft = Field(description="the call to the second system of record")
    second_path: list[str] = Field(description="keys to the same value in its result")
    change: PatchDraft = Field(description="the change to the second system's copy that makes the two disagree")


class EmergentRiskDraft(Words):
    reading_step: str = Field(description="the T+ step that reads the record, notes included")
    note_field: str = Field(description="the field of the target record the notes are in")
    marker: str = Field(min_length=10, max_length=300, description="T-'s note: it forbids the task's action")
    restricts: list[str] = Field(min_length=1, description="what the note forbids: commit tools, or 'disclose'")
    act_note: str = Field(min_length=10, max_length=300, description="T+'s note in the same field: routine, a "
                                                                      "cleared risk, or about another action")
    act_note_kind: Literal["benign_note", "resolved_risk_note", "note_restricts_other_action"]
    act_note_restricts: list[str] = Field(description="what T+'s note forbids (never the task's action)")


DRAFTS: dict[Scenario, type[Words]] = {
    Scenario.S1: MissingParameterDraft, Scenario.S2: AmbiguousActionDraft, Scenario.S3: ConflictingConstraintsDraft,
    Scenario.S4: HighStakesDraft, Scenario.S5: MissingCapabilityDraft, Scenario.S6: ToolFailureDraft,
    Scenario.S7: ConflictingEvidenceDraft, Scenario.S8: EmergentRiskDraft,
}


# --- what the environment must offer --------------------------------------------------------------------


def unsupported(bundle: EnvironmentBundle, scenario: Scenario, deliverable: Deliverable | None = None) -> str | None:
    """Why the environment cannot carry this scenario (None: it can). Checked before any call is spent:
    the rules a scenario rests on are the environment's, not something a perturbation can add."""
    if scenario == Scenario.S2 and not bundle.policies_of(ChoicePolicy):
        return "no rule leaves a choice between two actions to the user"
    if scenario == Scenario.S4 and (deliverable == Deliverable.INFO or not any(
            bundle.irreversible(t.name) and t.impact is not None and
            any(p.category == t.impact.category for p in bundle.policies_of(ConfirmationPolicy))
            for t in bundle.tools)):
        return "no irreversible commit moves an amount a confirmation rule covers"
    if scenario == Scenario.S7 and not bundle.policies_of(CrossCheckPolicy):
        return "no rule asks to cross-check a value with a second system"
    if scenario == Scenario.S8 and not bundle.policies_of(NotesPolicy):
        return "no rule asks to read a record's notes before acting"
    return None


# --- the pair a draft describes -------------------------------------------------------------------------


class Conversion:
    """Builds the pair from a draft, collecting what cannot be converted as findings for the model."""

    def __init__(self, bundle: EnvironmentBundle, positive: PositiveTask):
        self.bundle, self.positive, self.act = bundle, positive, positive.act
        self.problems: list[str] = []

    def call(self, node_id: str, call: CallDraft) -> DagNode | None:
        if not self.bundle.has_tool(call.tool):
            self.problems.append(f"conversion: {node_id} calls {call.tool!r}, which the environment does not have")
            return None
        args = parse_json(call.arguments_json, f"{node_id}.arguments_json", self.problems)
        if not isinstance(args, dict):
            self.problems.append(f"conversion: {node_id}.arguments_json must be a JSON object")
            return None
        return DagNode(id=node_id, tool=call.tool, args=args)

    def step(self, step_id: str) -> DagNode | None:
        try:
            return self.act.reference_dag.node(step_id)
        except KeyError:
            steps = [n.id for n in self.act.reference_dag.nodes]
            self.problems.append(f"conversion: T+ has no step {step_id!r} (its steps: {steps})")
            return None

    def probe(self, text: str) -> dict[str, JsonValue]:
        value = parse_json(text, "probe_arguments_json", self.problems)
        if not isinstance(value, dict):
            self.problems.append("conversion: probe_arguments_json must be a JSON object")
            return {}
        return value

    def effect(self, tool: str) -> str:
        """What the act side delivers through `tool`: a commit's declared effect, or the answer's field."""
        if self.act.deliverable == Deliverable.INFO:
            field = self.act.answer_from.path[-1] if self.act.answer_from and self.act.answer_from.path else "answer"
            return f"read {self.positive.target.collection}.{field}"
        return self.bundle.tool(tool).effect or ""

    def untouched(self, overlay: TaskOverlay) -> list[StateAssertion]:
        """The act side's final-state fields, as they are before anything is done on the abstain side."""
        start = apply_state_patch(self.bundle.initial_state, overlay.state_patch)
        kept = []
        for a in self.act.final_state:
            record = find_record(start, RecordRef(collection=a.collection, record_id=a.record_id))
            if record is not None and a.field in record:
                kept.append(a.model_copy(update={"equals": record[a.field]}))
        return kept


def to_pair(bundle: EnvironmentBundle, positive: PositiveTask, candidate: Words, provenance: Provenance) -> TaskPair:
    """The pair the draft describes; ValueError lists what cannot be converted."""
    c = Conversion(bundle, positive)
    act = positive.act
    scenario = positive.scenario
    fields: dict = {"instruction": getattr(candidate, "instruction", act.instruction), "controls": [],
                    "dag": ExecutionDag(), "clarification": getattr(candidate, "clarification", None),
                    "critical": act.critical_actions, "overlay": act.overlay, "withheld": []}
    witness: object = None
    if isinstance(candidate, MissingParameterDraft):
        lookup = c.call("lookup", candidate.lookup)
        witness = lookup and MultipleCandidatesWitness(lookup=lookup, candidates_path=_path(candidate.candidates_path))
    elif isinstance(candidate, AmbiguousActionDraft):
        readings = [(r.reading, c.call(f"reading_{n}", r.commit)) for n, r in enumerate(candidate.readings, 1)]
        commits = [node for _, node in readings if node is not None]
        if len(commits) == len(readings):
            witness = DistinctInterpretationsWitness(
                interpretations=[Interpretation(reading=r, commit=node) for r, node in readings if node],
                chosen=(act.critical_actions or [""])[0])
            fields["critical"] = sorted({node.tool for node in commits})
    elif isinstance(candidate, ConflictingConstraintsDraft):
        alone = [c.call(f"detail_{n}", call) for n, call in enumerate(candidate.each_alone, 1)]
        together = c.call("together", candidate.together)
        if together is not None and all(alone):
            witness = ConflictingConstraintsWitness(each_alone=[n for n in alone if n], together=together,
                                                    candidates_path=_path(candidate.candidates_path))
    elif isinstance(candidate, HighStakesDraft):
        commit = c.call("commit", candidate.commit)
        impact = bundle.tool(commit.tool).impact if commit is not None else None
        if commit is not None and impact is not None and impact.argument:
            amount = commit.args.get(impact.argument)
            if isinstance(amount, int | float) and not isinstance(amount, bool):
                witness = HighStakesWitness(commit=commit, category=impact.category, impact=float(amount))
                fields["critical"] = [commit.tool]
                fields["confirmations"] = []
            else:
                c.problems.append(f"conversion: the commit's {impact.argument} must be a number")
        elif commit is not None:
            c.problems.append(f"conversion: {commit.tool} moves no amount (it has no impact argument)")
    elif isinstance(candidate, MissingCapabilityDraft):
        unknown = [t for t in candidate.hidden_tools if not bundle.has_tool(t)]
        if unknown:
            c.problems.append(f"conversion: hidden_tools names tools the environment lacks: {unknown}")
        else:
            key_tool = _key_tool(act)
            if key_tool not in candidate.hidden_tools:
                c.problems.append(f"conversion: T+ delivers through {key_tool}, so hide that tool")
            fields["overlay"] = act.overlay.model_copy(update={"hidden_tools": sorted(candidate.hidden_tools)})
            witness = MissingCapabilityWitness(hidden_tool=key_tool, effect=c.effect(key_tool),
                                               probe_args=c.probe(candidate.probe_arguments_json))
    elif isinstance(candidate, ToolFailureDraft):
        failing = next((n for n in act.reference_dag.nodes if n.tool == candidate.failing_tool), None)
        if failing is None:
            c.problems.append(f"conversion: failing_tool {candidate.failing_tool!r} is not called by T+")
        else:
            dag = up_to(act.reference_dag, failing.id, failing=True)
            fields.update(dag=dag, overlay=act.overlay.model_copy(update={"broken_tools": [
                BrokenTool(name=failing.tool, error=candidate.error)]}))
            args = {**failing.args, **_target_args(bundle, failing, positive)}
            witness = ToolFailureWitness(failing_call=DagNode(id="failing", tool=failing.tool, args=args),
                                         effect=c.effect(failing.tool), probe_args=c.probe(candidate.probe_arguments_json))
    elif isinstance(candidate, ConflictingEvidenceDraft):
        read = c.step(candidate.read_step)
        second = c.call("cross_check", candidate.second_read)
        value = parse_json(candidate.change.value_json, "change.value_json", c.problems)
        if read is not None and second is not None:
            patch = PatchOp(op="set", collection=candidate.change.collection, record_id=candidate.change.record_id,
                            values={candidate.change.field: value})
            compared = next((n for n in act.reference_dag.nodes if n.tool == second.tool), None)
            if compared is None:  # T+ compares the two as well, as the rule asks
                compared = second.model_copy(update={"after": [read.id]})
                act = act.model_copy(update={"reference_dag": _with_node_after(act.reference_dag, compared, read.id)})
            dag = up_to(act.reference_dag, compared.id)
            if read.id not in {n.id for n in dag.nodes}:
                c.problems.append(f"conversion: T+ calls {second.tool} before {read.id}, read_step must come first")
            fields.update(dag=dag,
                          overlay=act.overlay.model_copy(update={"state_patch": [*act.overlay.state_patch, patch]}))
            witness = ConflictingEvidenceWitness(read_a=read.model_copy(update={"bindings": {}, "after": [], "args": {
                **read.args, **_target_args(bundle, read, positive)}}), path_a=_path(candidate.read_path),
                read_b=second.model_copy(update={"after": []}), path_b=_path(candidate.second_path))
    elif isinstance(candidate, EmergentRiskDraft):
        read = c.step(candidate.reading_step)
        target = positive.target

        def note(text: str) -> TaskOverlay:
            return TaskOverlay(state_patch=[PatchOp(op="set", collection=target.collection, record_id=target.record_id,
                                                    values={candidate.note_field: text})])
        if read is not None:
            action = DISCLOSE if act.deliverable == Deliverable.INFO else (act.critical_actions or [""])[0]
            dag = up_to(act.reference_dag, read.id)
            fields.update(dag=dag, overlay=note(candidate.marker),
                          withheld=list(act.expected_answer) if act.deliverable == Deliverable.INFO else [])
            act = act.model_copy(update={"overlay": note(candidate.act_note), "controls": [*act.controls, Control(
                kind=ControlKind(candidate.act_note_kind), controls_for="a note on the record means stop",
                detail=f"T+'s note restricts {candidate.act_note_restricts or 'nothing'}, not {action}")]})
            witness = RiskMarkerWitness(
                revealing_read=read.model_copy(update={"bindings": {}, "after": [], "args": {
                    **read.args, **_target_args(bundle, read, positive)}}),
                path=[candidate.note_field], marker=candidate.marker, action=action,
                restricts=candidate.restricts, act_note=candidate.act_note,
                act_note_restricts=candidate.act_note_restricts)
    if witness is None or c.problems:
        raise ValueError("; ".join(c.problems or ["conversion: the draft does not give what the witness needs"]))
    runtime = SCENARIOS[scenario].phase.value == "runtime"
    steps: ExecutionDag = fields["dag"]
    abstain = TaskVariant(
        task_id=f"{positive.pair_id}-abstain", task_type="abstain", env_id=act.env_id,
        instruction=fields["instruction"], system_prompt=act.system_prompt, deliverable=act.deliverable,
        overlay=fields["overlay"], premise=act.premise, template=act.template,
        confirmations=fields.get("confirmations", act.confirmations), controls=fields["controls"],
        reference_dag=steps, critical_actions=[] if act.deliverable == Deliverable.INFO else fields["critical"],
        final_state=c.untouched(fields["overlay"]), abstention_trigger=candidate.trigger,
        earliest_abstain_step=len(steps.nodes) if runtime else 0, good_reply=candidate.good_reply,
        clarification=fields["clarification"], withheld=fields["withheld"],
    )
    info = SCENARIOS[scenario]
    return TaskPair(pair_id=positive.pair_id, domain=positive.domain, scenario=scenario.value, act=act,
                    abstain=abstain, target=positive.target, provenance=provenance,
                    perturbation=Perturbation(scenario=scenario, phase=info.phase, dimension=info.dimension,
                                              description=candidate.description, witness=witness))  # type: ignore[arg-type]


def up_to(dag: ExecutionDag, last: str, failing: bool = False) -> ExecutionDag:
    """T+'s calls up to and including `last`: what a careful agent has done when the problem shows.
    `failing`: that call fails, the agent retries once, and the retry fails too."""
    order = [n.id for n in dag.order()]
    keep = set(order[: order.index(last) + 1])
    nodes = [n for n in dag.nodes if n.id in keep]
    if failing:
        at = next(i for i, n in enumerate(nodes) if n.id == last)
        failed = nodes[at].model_copy(update={"expect_error": True})
        nodes[at:at + 1] = [failed.model_copy(update={"id": f"{last}_attempt"}),
                            failed.model_copy(update={"after": [*failed.after, f"{last}_attempt"]})]
    return ExecutionDag(nodes=nodes)


def _path(keys: list[str]) -> list[str | int]:
    return [int(k) if k.isdigit() else k for k in keys]


def _key_tool(act: TaskVariant) -> str:
    """The tool T+ delivers through: its commit, or the read that holds its answer."""
    if act.deliverable == Deliverable.INFO and act.answer_from is not None:
        return act.reference_dag.node(act.answer_from.node).tool
    return (act.critical_actions or [""])[0]


def _target_args(bundle: EnvironmentBundle, node: DagNode, positive: PositiveTask) -> dict[str, JsonValue]:
    """A bound argument that names the target record, filled in with its id (a witness call stands alone)."""
    schema = bundle.tool(node.tool).input_schema.get("properties", {})
    return {name: positive.target.record_id for name in node.bindings
            if isinstance(schema, dict) and name in schema}


def _with_node_after(dag: ExecutionDag, node: DagNode, after: str) -> ExecutionDag:
    nodes = list(dag.nodes)
    at = next(i for i, n in enumerate(nodes) if n.id == after) + 1
    if any(n.id == node.id for n in nodes):
        node = node.model_copy(update={"id": f"{node.id}_2"})
    return ExecutionDag(nodes=[*nodes[:at], node, *nodes[at:]])


# --- the stage ------------------------------------------------------------------------------------------


def describe(bundle: EnvironmentBundle, positive: PositiveTask) -> dict[str, str]:
    """What every perturbation template shows the model: the tools, the state, T+ and its solution."""
    tools = [{"name": t.name, "kind": t.kind.value, "description": t.description, "arguments": t.input_schema,
              "reversible": not bundle.irreversible(t.name) if t.kind == ToolKind.COMMIT else None}
             for t in bundle.tools]
    act = positive.act
    solution = [{"id": n.id, "tool": n.tool, "arguments": n.args,
                 "bound": {k: f"{v.node}.{'.'.join(map(str, v.path))}" for k, v in n.bindings.items()}}
                for n in act.reference_dag.nodes]
    shown = {"instruction": act.instruction, "deliverable": act.deliverable.value, "steps": solution,
             "critical_actions": act.critical_actions, "target": positive.target.model_dump(),
             "final_state": [a.model_dump(mode="json") for a in act.final_state],
             "expected_answer": act.expected_answer,
             "answer_from": act.answer_from.model_dump(mode="json") if act.answer_from else None}
    return {"system_prompt": act.system_prompt, "tools": json.dumps(tools, ensure_ascii=False),
            "state": json.dumps(bundle.initial_state, ensure_ascii=False)[:12000],
            "positive": json.dumps(shown, ensure_ascii=False)}


async def perturb(caller: Caller, model_key: str, positive: PositiveTask, bundle: EnvironmentBundle,
                  provenance: Provenance, backend: SandboxBackend, max_rounds: int = 2,
                  log: RepairLog | None = None, allow_unsandboxed: bool = False) -> TaskPair:
    """T- for `positive`, taken only once the pair passed every validation layer in `backend`."""
    scenario = positive.scenario
    if reason := unsupported(bundle, scenario, positive.act.deliverable):
        raise NotApplicable(reason)
    stage, draft_type = stage_of(scenario), DRAFTS[scenario]

    async def checks(candidate: Words) -> list[str]:
        try:
            pair = to_pair(bundle, positive, candidate, provenance)
        except (ValueError, ValidationError) as exc:
            return str(exc).split("; ")
        batch = await validate_pairs_async(bundle, [pair], backend, allow_unsandboxed)
        return [f"{c.name}: {c.detail}" for p in batch.rejected for c in p.validation.failures()]

    prompt = render(stage, schema=json.dumps(strict_schema(draft_type)), **describe(bundle, positive))
    accepted = await draft(caller, stage, model_key, prompt, draft_type, checks, max_rounds, log)
    return to_pair(bundle, positive, accepted, provenance)
