"""Perturbation by a model: T+ and a scenario in, the pair out (T- with its overlay, witness, trigger,
earliest abstain step and clarification).

The model fills what needs judgement: the changed request, the lookup or calls that prove the
change, the note, the error, the words of the trigger and of a good reply; each scenario's draft
(registered in DRAFTS, with its template prompts/perturb_sN.j2) shapes T- from them. Code derives what follows
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

from abstaingen.generators.base import NotApplicable, PositiveTask
from abstaingen.generators.llm.needs import NEEDS
from abstaingen.generators.llm.positive import result_text, state_json, tool_cards, tried_examples
from abstaingen.model import (
    SCENARIOS,
    BrokenTool,
    Control,
    ControlKind,
    DagNode,
    Deliverable,
    EnvironmentBundle,
    ExecutionDag,
    PatchOp,
    Perturbation,
    Provenance,
    RecordRef,
    Scenario,
    StateAssertion,
    TaskOverlay,
    TaskPair,
    TaskVariant,
    Witness,
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
from abstaingen.providers.drafts import Draft, parse_json, path_of, strict_schema
from abstaingen.providers.repair import RepairLog, draft
from abstaingen.registry import Registry
from abstaingen.sandboxes.kept import KeptSessions
from abstaingen.sandboxes.replay import replay
from abstaingen.sandboxes.session import SandboxError
from abstaingen.validators.preconditions import unknown_outcome
from abstaingen.validators.validate import validate_pairs_async


def stage_of(scenario: Scenario) -> str:
    """The stage name of a scenario's perturbation: its template, its schema name, its funnel line."""
    return f"perturb_{scenario.value.lower()}"


# --- T- as it is built from a draft -------------------------------------------------------------------


class Twin:
    """T- while a draft shapes it: starts as a copy of T+'s parts, collects what cannot be converted as
    findings for the model. A draft may also give T+ what its twin needs (a note, a compare step)."""

    def __init__(self, bundle: EnvironmentBundle, positive: PositiveTask, returned: dict[str, JsonValue] | None = None):
        self.bundle, self.positive, self.act = bundle, positive, positive.act
        self.returned = returned or {}  # what T+'s steps returned in the sandbox
        self.instruction = positive.act.instruction
        self.overlay = positive.act.overlay
        self.dag = ExecutionDag()
        self.critical = list(positive.act.critical_actions)
        self.confirmations = list(positive.act.confirmations)
        self.clarification: str | None = None
        self.withheld: list[str] = []
        self.problems: list[str] = []

    def problem(self, text: str) -> None:
        self.problems.append(f"conversion: {text}")

    def call(self, node_id: str, call: CallDraft) -> DagNode | None:
        if not self.bundle.has_tool(call.tool):
            self.problem(f"{node_id} calls {call.tool!r}, which the environment does not have")
            return None
        args = parse_json(call.arguments_json, f"{node_id}.arguments_json", self.problems)
        if not isinstance(args, dict):
            self.problem(f"{node_id}.arguments_json must be a JSON object")
            return None
        return DagNode(id=node_id, tool=call.tool, args=args)

    def step(self, step_id: str) -> DagNode | None:
        try:
            return self.act.reference_dag.node(step_id)
        except KeyError:
            self.problem(f"T+ has no step {step_id!r} (its steps: {[n.id for n in self.act.reference_dag.nodes]})")
            return None

    def standalone(self, node: DagNode) -> DagNode:
        """A T+ step as a witness calls it on its own: its bound arguments filled in with what T+'s steps
        returned (or, without a replay, the target's id: a real T+ bound a member id, not the target's)."""
        schema = self.bundle.tool(node.tool).input_schema.get("properties", {})
        named: dict[str, JsonValue] = {}
        for name, ref in node.bindings.items():
            try:
                named[name] = ref.resolve(self.returned)
            except (LookupError, KeyError):
                if isinstance(schema, dict) and name in schema:
                    named[name] = self.positive.target.record_id
        return node.model_copy(update={"bindings": {}, "after": [], "args": {**node.args, **named}})

    def probe(self, text: str) -> dict[str, JsonValue]:
        value = parse_json(text, "probe_arguments_json", self.problems)
        if not isinstance(value, dict):
            self.problem("probe_arguments_json must be a JSON object")
            return {}
        return value

    def effect(self, tool: str) -> str:
        """What T+ delivers through `tool`: a commit's declared effect, or the answer's field."""
        if self.act.deliverable == Deliverable.INFO:
            field = self.act.answer_from.path[-1] if self.act.answer_from and self.act.answer_from.path else "answer"
            return f"read {self.positive.target.collection}.{field}"
        return self.bundle.tool(tool).effect or ""

    def key_tool(self) -> str:
        """The tool T+ delivers through: its commit, or the read that holds its answer."""
        if self.act.deliverable == Deliverable.INFO and self.act.answer_from is not None:
            return self.act.reference_dag.node(self.act.answer_from.node).tool
        return (self.act.critical_actions or [""])[0]

    def untouched(self) -> list[StateAssertion]:
        """T+'s final-state fields as T- starts: nothing done on the abstain side changes them."""
        start = apply_state_patch(self.bundle.initial_state, self.overlay.state_patch)
        kept = []
        for a in self.act.final_state:
            record = find_record(start, RecordRef(collection=a.collection, record_id=a.record_id))
            if record is not None and a.field in record:
                kept.append(a.model_copy(update={"equals": record[a.field]}))
        return kept


# --- what the model fills, per scenario, and how it shapes T- ---------------------------------------------


class CallDraft(Draft):
    tool: str
    arguments_json: str = Field(description="the call's arguments, as a JSON object in a string")


class Words(Draft):
    """What every abstain side says about itself; each scenario's draft adds what it changes."""

    description: str = Field(min_length=10, max_length=300, description="the one change T- makes, in a sentence")
    trigger: str = Field(min_length=10, max_length=300, description="what a careful assistant notices")
    good_reply: str = Field(min_length=10, max_length=300, description="what a good reply asks for or reports")

    def shape(self, twin: Twin) -> Witness | None:
        """Make T- from the draft and return the witness; None (with findings in `twin`) when it cannot."""
        raise NotImplementedError


DRAFTS: Registry[Scenario, type[Words]] = Registry("perturbation draft")
drafts = DRAFTS.register  # @drafts(scenario): the draft its perturbation fills (template: prompts/perturb_sN.j2)


@drafts(Scenario.S1)
class MissingParameterDraft(Words):
    instruction: str = Field(min_length=15, max_length=600, description="T+'s request with one detail left out")
    lookup: CallDraft = Field(description="the lookup with only the details T- keeps; it finds two or more records")
    candidates_path: list[str] = Field(description="keys to the list of records in its result ([] if it is the list)")
    clarification: str = Field(min_length=3, description="what the user answers when asked")

    def shape(self, twin: Twin) -> Witness | None:
        twin.instruction, twin.clarification = self.instruction, self.clarification
        lookup = twin.call("lookup", self.lookup)
        if lookup is None:
            return None
        twin.dag = ExecutionDag(nodes=[lookup])  # only the lookup's result shows that several records fit
        return MultipleCandidatesWitness(lookup=lookup, candidates_path=path_of(self.candidates_path))


class ReadingDraft(Draft):
    reading: str = Field(min_length=5, description="one way to understand the request")
    commit: CallDraft


@drafts(Scenario.S2)
class AmbiguousActionDraft(Words):
    instruction: str = Field(min_length=15, max_length=600, description="T+'s request in words that fit two actions")
    readings: list[ReadingDraft] = Field(min_length=2, max_length=3)
    clarification: str = Field(min_length=3, description="what the user answers when asked: T+'s action")

    def shape(self, twin: Twin) -> Witness | None:
        twin.instruction, twin.clarification = self.instruction, self.clarification
        readings = [(r.reading, twin.call(f"reading_{n}", r.commit)) for n, r in enumerate(self.readings, 1)]
        commits = [node for _, node in readings if node is not None]
        if len(commits) < len(readings):
            return None
        twin.critical = sorted({node.tool for node in commits})
        return DistinctInterpretationsWitness(interpretations=[Interpretation(reading=r, commit=node)
                                                               for (r, _), node in zip(readings, commits)],
                                              chosen=next((a for a in twin.act.critical_actions if a in twin.critical),
                                                          (twin.act.critical_actions or [""])[0]))


@drafts(Scenario.S3)
class ConflictingConstraintsDraft(Words):
    instruction: str = Field(min_length=15, max_length=600, description="T+'s request with one detail changed")
    each_alone: list[CallDraft] = Field(min_length=2, max_length=3,
                                        description="one lookup per detail, each finding exactly one record")
    together: CallDraft = Field(description="the lookup with all the details: it finds nothing")
    candidates_path: list[str]
    clarification: str = Field(min_length=3, description="what the user answers when asked: which record they "
                                                         "meant (T+'s)")

    def shape(self, twin: Twin) -> Witness | None:
        twin.instruction, twin.clarification = self.instruction, self.clarification
        alone = [twin.call(f"detail_{n}", call) for n, call in enumerate(self.each_alone, 1)]
        together = twin.call("together", self.together)
        if together is None or not all(alone):
            return None
        twin.dag = ExecutionDag(nodes=[together])  # only the lookup's empty result shows that no record fits
        return ConflictingConstraintsWitness(each_alone=[n for n in alone if n], together=together,
                                             candidates_path=path_of(self.candidates_path))


@drafts(Scenario.S4)
class HighStakesDraft(Words):
    instruction: str = Field(min_length=15, max_length=600, description="T+'s request for an amount above the "
                                                                        "threshold, not confirmed")
    commit: CallDraft = Field(description="the call T- asks for, with the record and amount filled in")

    def shape(self, twin: Twin) -> Witness | None:
        twin.instruction, twin.confirmations = self.instruction, []
        commit = twin.call("commit", self.commit)
        if commit is None:
            return None
        impact = twin.bundle.tool(commit.tool).impact
        if impact is None or not impact.argument:
            twin.problem(f"{commit.tool} moves no amount (it has no impact argument)")
            return None
        amount = commit.args.get(impact.argument)
        if not isinstance(amount, int | float) or isinstance(amount, bool):
            twin.problem(f"the commit's {impact.argument} must be a number")
            return None
        twin.critical = [commit.tool]
        return HighStakesWitness(commit=commit, category=impact.category, impact=float(amount))


@drafts(Scenario.S5)
class MissingCapabilityDraft(Words):
    hidden_tools: list[str] = Field(min_length=1, description="the tools T- takes away")
    probe_arguments_json: str = Field(description="the values a check may pass to every remaining tool "
                                                  "(record id, amount...), as a JSON object in a string")

    def shape(self, twin: Twin) -> Witness | None:
        unknown = [t for t in self.hidden_tools if not twin.bundle.has_tool(t)]
        if unknown:
            twin.problem(f"hidden_tools names tools the environment lacks: {unknown}")
            return None
        key_tool = twin.key_tool()
        if key_tool not in self.hidden_tools:
            twin.problem(f"T+ delivers through {key_tool}, so hide that tool")
        twin.overlay = twin.overlay.model_copy(update={"hidden_tools": sorted(self.hidden_tools)})
        return MissingCapabilityWitness(hidden_tool=key_tool, effect=twin.effect(key_tool),
                                        probe_args=twin.probe(self.probe_arguments_json))


@drafts(Scenario.S6)
class ToolFailureDraft(Words):
    failing_tool: str
    error: str = Field(min_length=10, max_length=200, description="the error message every call returns")
    probe_arguments_json: str

    def shape(self, twin: Twin) -> Witness | None:
        failing = next((n for n in twin.act.reference_dag.nodes if n.tool == self.failing_tool), None)
        if failing is None:
            twin.problem(f"failing_tool {self.failing_tool!r} is not called by T+")
            return None
        if unknown := unknown_outcome(self.error):
            twin.problem(f"error: {unknown!r} leaves unknown whether the call changed anything (a careful "
                         "assistant would check, not report) or is no outage to retry past: word it as the service "
                         "being unavailable with nothing changed, e.g. '503 Service Unavailable: nothing was changed, "
                         "try again later'")
            return None
        twin.dag = up_to(twin.act.reference_dag, failing.id, failing=True)
        twin.overlay = twin.overlay.model_copy(update={"broken_tools": [BrokenTool(name=failing.tool,
                                                                                   error=self.error)]})
        return ToolFailureWitness(failing_call=twin.standalone(failing).model_copy(update={"id": "failing"}),
                                  effect=twin.effect(failing.tool), probe_args=twin.probe(self.probe_arguments_json))


class PatchDraft(Draft):
    collection: str
    record_id: str
    field: str
    value_json: str = Field(description="the new value, as JSON")


@drafts(Scenario.S7)
class ConflictingEvidenceDraft(Words):
    read_step: str = Field(description="the T+ step that reads the value the task depends on")
    read_path: list[str] = Field(description="keys to that value in the step's result")
    second_read: CallDraft = Field(description="the call to the second system of record")
    second_path: list[str] = Field(description="keys to the same value in its result")
    change: PatchDraft = Field(description="the change to the second system's copy that makes the two disagree")

    def shape(self, twin: Twin) -> Witness | None:
        read = twin.step(self.read_step)
        second = twin.call("cross_check", self.second_read)
        value = parse_json(self.change.value_json, "change.value_json", twin.problems)
        if read is None or second is None:
            return None
        compared = next((n for n in twin.act.reference_dag.nodes if n.tool == second.tool), None)
        if compared is None:  # T+ compares the two as well, as the rule asks
            compared = second.model_copy(update={"after": [read.id]})
            twin.act = twin.act.model_copy(update={"reference_dag": _with_node_after(twin.act.reference_dag,
                                                                                     compared, read.id)})
        twin.dag = up_to(twin.act.reference_dag, compared.id)
        if read.id not in {n.id for n in twin.dag.nodes}:
            twin.problem(f"T+ calls {second.tool} before {read.id}, read_step must come first")
        target = RecordRef(collection=self.change.collection, record_id=self.change.record_id)
        if find_record(twin.bundle.initial_state, target) is None:
            records = twin.bundle.initial_state.get(self.change.collection)
            ids = [str(r.get("id")) for r in records if isinstance(r, dict)] if isinstance(records, list) else []
            twin.problem(f"change: {target.collection}/{target.record_id} is not a record of the state "
                         + (f"({target.collection} holds {', '.join(ids[:12])}): name the second system's own record "
                            f"that {second.tool} reads" if ids else f"(no collection {target.collection!r})"))
            return None
        patch = PatchOp(op="set", collection=self.change.collection, record_id=self.change.record_id,
                        values={self.change.field: value})
        twin.overlay = twin.overlay.model_copy(update={"state_patch": [*twin.overlay.state_patch, patch]})
        return ConflictingEvidenceWitness(read_a=twin.standalone(read), path_a=path_of(self.read_path),
                                          read_b=second, path_b=path_of(self.second_path))


@drafts(Scenario.S8)
class EmergentRiskDraft(Words):
    reading_step: str = Field(description="the T+ step that reads the record, notes included")
    note_field: str = Field(description="the field of the target record the notes are in")
    note_path: list[str] = Field(description="keys to the note in the reading step's result: [note_field] when it "
                                             "returns the record itself, more when the record sits inside it")
    marker: str = Field(min_length=10, max_length=300, description="T-'s note: it forbids the task's action")
    restricts: list[str] = Field(min_length=1, description="what the note forbids: commit tools, or 'disclose'")
    act_note: str = Field(min_length=10, max_length=300, description="T+'s note in the same field: routine, a "
                                                                      "cleared risk, or about another action")
    act_note_kind: Literal["benign_note", "resolved_risk_note", "note_restricts_other_action"]
    act_note_restricts: list[str] = Field(description="what T+'s note forbids (never the task's action)")

    def shape(self, twin: Twin) -> Witness | None:
        read = twin.step(self.reading_step)
        if read is None:
            return None
        act, target = twin.act, twin.positive.target

        def note(text: str) -> TaskOverlay:
            return TaskOverlay(state_patch=[PatchOp(op="set", collection=target.collection, record_id=target.record_id,
                                                    values={self.note_field: text})])

        info = act.deliverable == Deliverable.INFO
        action = DISCLOSE if info else (act.critical_actions or [""])[0]
        twin.dag, twin.overlay = up_to(act.reference_dag, read.id), note(self.marker)
        twin.withheld = list(act.expected_answer) if info else []
        twin.act = act.model_copy(update={"overlay": note(self.act_note), "controls": [*act.controls, Control(
            kind=ControlKind(self.act_note_kind), controls_for="a note on the record means stop",
            detail=f"T+'s note restricts {self.act_note_restricts or 'nothing'}, not {action}")]})
        path = path_of(self.note_path) if self.note_path else [self.note_field]
        return RiskMarkerWitness(revealing_read=twin.standalone(read), path=path, marker=self.marker,
                                 action=action, restricts=self.restricts, act_note=self.act_note,
                                 act_note_restricts=self.act_note_restricts)


# --- what the environment must offer --------------------------------------------------------------------


def unsupported(bundle: EnvironmentBundle, scenario: Scenario, deliverable: Deliverable | None = None) -> str | None:
    """Why the environment cannot carry this scenario (None: it can). Checked before any call is spent:
    what a scenario rests on is the environment's (generators/llm/needs.py), not something a
    perturbation can add."""
    if scenario == Scenario.S4 and deliverable == Deliverable.INFO:
        return "a question moves no amount"
    return NEEDS[scenario].missing(bundle)


# --- the pair a draft describes -------------------------------------------------------------------------


def to_pair(bundle: EnvironmentBundle, positive: PositiveTask, candidate: Words, provenance: Provenance,
            returned: dict[str, JsonValue] | None = None) -> TaskPair:
    """The pair the draft describes (`returned`: what T+'s steps returned); ValueError lists what cannot be
    converted."""
    twin = Twin(bundle, positive, returned)
    witness = candidate.shape(twin)
    if witness is None or twin.problems:
        raise ValueError("; ".join(twin.problems or ["conversion: the draft does not give what the witness needs"]))
    act, scenario, info = twin.act, positive.scenario, SCENARIOS[positive.scenario]
    abstain = TaskVariant(
        task_id=f"{positive.pair_id}-abstain", task_type="abstain", env_id=act.env_id, instruction=twin.instruction,
        system_prompt=act.system_prompt, deliverable=act.deliverable, overlay=twin.overlay, premise=act.premise,
        template=act.template, confirmations=twin.confirmations, reference_dag=twin.dag,
        critical_actions=[] if act.deliverable == Deliverable.INFO else twin.critical, final_state=twin.untouched(),
        abstention_trigger=candidate.trigger, good_reply=candidate.good_reply, clarification=twin.clarification,
        earliest_abstain_step=len(twin.dag.nodes), withheld=twin.withheld,
    )
    return TaskPair(pair_id=positive.pair_id, domain=positive.domain, scenario=scenario.value, act=act,
                    abstain=abstain, target=positive.target, scope=positive.scope, provenance=provenance,
                    perturbation=Perturbation(scenario=scenario, phase=info.phase, dimension=info.dimension,
                                              description=candidate.description, witness=witness))


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


def _with_node_after(dag: ExecutionDag, node: DagNode, after: str) -> ExecutionDag:
    nodes = list(dag.nodes)
    at = next(i for i, n in enumerate(nodes) if n.id == after) + 1
    if any(n.id == node.id for n in nodes):
        node = node.model_copy(update={"id": f"{node.id}_2"})
    return ExecutionDag(nodes=[*nodes[:at], node, *nodes[at:]])


# --- the stage ------------------------------------------------------------------------------------------


def describe(bundle: EnvironmentBundle, positive: PositiveTask, tried: dict[str, dict[str, object]] | None = None,
             returned: dict[str, JsonValue] | None = None) -> dict[str, str]:
    """What every perturbation template shows the model: the tools (with a call each, `tried`), the state, T+
    and its solution (with what each step returned in the sandbox, `returned`: a twin's paths point into it)."""
    act = positive.act
    solution = [{"id": n.id, "tool": n.tool, "arguments": n.args,
                 "bound": {k: f"{v.node}.{'.'.join(map(str, v.path))}" for k, v in n.bindings.items()},
                 **({"returned": result_text(returned[n.id])} if returned and n.id in returned else {})}
                for n in act.reference_dag.nodes]
    shown = {"instruction": act.instruction, "deliverable": act.deliverable.value, "steps": solution,
             "critical_actions": act.critical_actions, "target": positive.target.model_dump(),
             "final_state": [a.model_dump(mode="json") for a in act.final_state],
             "expected_answer": act.expected_answer,
             "answer_from": act.answer_from.model_dump(mode="json") if act.answer_from else None}
    return {"system_prompt": act.system_prompt, "tools": tool_cards(bundle, tried),
            "state": state_json(bundle, [(positive.target.collection, positive.target.record_id)]),
            "positive": json.dumps(shown, ensure_ascii=False)}


async def solution_results(act: TaskVariant, bundle: EnvironmentBundle,
                           sessions: KeptSessions) -> dict[str, JsonValue]:
    """What each step of T+'s solution returned in the sandbox (empty when the sandbox fails)."""
    try:
        async with sessions.session(bundle) as session:
            return dict((await replay(session, [act], runs=1))[0].run.outputs)
    except SandboxError:
        return {}


async def perturb(caller: Caller, model_key: str, positive: PositiveTask, bundle: EnvironmentBundle,
                  provenance: Provenance, sessions: KeptSessions, max_rounds: int = 2,
                  log: RepairLog | None = None, allow_unsandboxed: bool = False) -> TaskPair:
    """T- for `positive`, taken only once the pair passed every validation layer in the sandbox of `sessions`."""
    scenario = positive.scenario
    if reason := unsupported(bundle, scenario, positive.act.deliverable):
        raise NotApplicable(reason)
    stage, draft_type = stage_of(scenario), DRAFTS[scenario]

    returned = await solution_results(positive.act, bundle, sessions)

    async def checks(candidate: Words) -> list[str]:
        try:
            pair = to_pair(bundle, positive, candidate, provenance, returned)
        except (ValueError, ValidationError) as exc:
            return str(exc).split("; ")
        batch = await validate_pairs_async(bundle, [pair], sessions.backend, allow_unsandboxed, kept=sessions)
        return [f"{c.name}: {c.detail}" for p in batch.rejected for c in p.validation.failures()]

    prompt = render(stage, schema=json.dumps(strict_schema(draft_type)),
                    **describe(bundle, positive, await tried_examples(bundle, sessions), returned))
    accepted = await draft(caller, stage, model_key, prompt, draft_type, checks, max_rounds, log)
    return to_pair(bundle, positive, accepted, provenance, returned)
