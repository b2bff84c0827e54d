"""One side of a pair: what the agent is told, what it may use, and what counts as done."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Literal, NamedTuple

from pydantic import Field, model_validator

from abstaingen.model.common import JsonValue, Model
from abstaingen.model.dag import ExecutionDag, OutputRef


class Deliverable(StrEnum):
    OP = "op"  # the task is done by changing state
    INFO = "info"  # the task is done by answering


class PatchOp(Model):
    """One change to a collection of the environment state (records are dicts with an `id`)."""

    op: Literal["set", "add", "remove"] = Field(description="set changes fields of a record, add creates one, "
                                                              "remove deletes it")
    collection: str = Field(description="the collection of the state")
    record_id: str = Field(description="the record's id")
    values: dict[str, JsonValue] = Field(default_factory=dict, description="set and add: field -> value")


class BrokenTool(Model):
    name: str = Field(description="the tool whose calls fail")
    error: str = Field(description="the error message a failing call returns")
    failures: int | None = Field(
        default=None, ge=1,
        description="how many calls fail before the tool works again (a transient fault); None: every call fails",
    )


class TaskOverlay(Model):
    """What a task changes in its environment before the agent starts."""

    state_patch: list[PatchOp] = Field(default_factory=list, description="changes to the environment's state")
    hidden_tools: list[str] = Field(default_factory=list, description="tools the agent is not offered")
    broken_tools: list[BrokenTool] = Field(default_factory=list, description="tools whose calls fail")

    def is_empty(self) -> bool:
        return not (self.state_patch or self.hidden_tools or self.broken_tools)

    def has_transient_fault(self) -> bool:
        """A tool fails for a while and then works. AgentAbstain's runtime breaks a tool for good, so such a
        side cannot be run there: it is left out of that export and of the AgentAbstain view of scores."""
        return any(b.failures is not None for b in self.broken_tools)


class RecordRef(Model):
    """One record of the environment state: `collection[record_id]`."""

    collection: str = Field(description="the collection of the state")
    record_id: str = Field(description="the record's id")


class Confirmation(Model):
    """Something the user explicitly confirms in the instruction, in words the instruction contains."""

    category: str = Field(description="the impact category confirmed, as policies name it ('refund')")
    amount: float = Field(description="the amount the user confirmed")
    text: str = Field(description="the words of the instruction that confirm it")


class ControlKind(StrEnum):
    """Hard negatives: a T+ (or T-) feature that looks like a trigger but is not one, or the reverse."""

    BENIGN_NOTE = "benign_note"
    NOTE_RESTRICTS_OTHER_ACTION = "note_restricts_other_action"
    RESOLVED_RISK_NOTE = "resolved_risk_note"
    WITHIN_TOLERANCE = "within_tolerance"
    BELOW_THRESHOLD = "below_threshold"
    CONFIRMED_AMOUNT = "confirmed_amount"
    UNRELATED_CONFIRMATION = "unrelated_confirmation"
    TRANSIENT_FAILURE = "transient_failure"
    DETAILS_STILL_AMBIGUOUS = "details_still_ambiguous"
    SHORT_REFERENCE_UNIQUE = "short_reference_unique"
    BOUND_PHRASING = "bound_phrasing"


class Control(Model):
    kind: ControlKind = Field(description="the kind of hard negative")
    controls_for: str = Field(description="the shortcut this control takes away, e.g. 'a note on the record means stop'")
    detail: str = Field(description="what this task does about it")


class StateAssertion(Model):
    """`collection[record_id].field == equals` must hold in the final state."""

    collection: str = Field(description="the collection of the state")
    record_id: str = Field(description="the record's id")
    field: str = Field(description="the record's field")
    equals: JsonValue = Field(description="the value the field holds when the task is done")


class TaskVariant(Model):
    task_id: str = Field(description="the side's id, unique in the dataset")
    task_type: Literal["act", "abstain"] = Field(description="act: T+, carry it out; abstain: T-, stop and ask, "
                                                                "refuse or report")
    env_id: str = Field(description="the environment it runs in (a folder under environments/)")
    instruction: str = Field(description="the user's request")
    system_prompt: str = Field(description="the assistant's role and the environment's rules")
    deliverable: Deliverable = Field(description="op: done by changing state; info: done by answering")
    overlay: TaskOverlay = Field(default_factory=TaskOverlay, description="what this side changes in the "
                                                                          "environment before the agent starts")
    reference_dag: ExecutionDag = Field(
        default_factory=ExecutionDag,
        description="act side: the solution; abstain side: the calls a careful agent makes before it can know it "
                    "should stop (earliest_abstain_step of them)",
    )
    critical_actions: list[str] = Field(
        default_factory=list,
        description="commit tools whose successful call is the deliverable (act) or is acting anyway (abstain)",
    )
    premise: str = Field(default="", description="context the instruction opens with; both sides of a pair share it")
    template: str = Field(default="", description="the id of the template the instruction was written from")
    confirmations: list[Confirmation] = Field(
        default_factory=list, description="what the user explicitly confirms in the instruction (policy checks read it)"
    )
    controls: list[Control] = Field(
        default_factory=list, description="hard negatives built into this side, each with what it controls for"
    )
    final_state: list[StateAssertion] = Field(default_factory=list, description="op act side: what the state holds "
                                                                               "when the task is done")
    expected_answer: list[str] = Field(
        default_factory=list, description="info act side: a correct reply contains one of these forms"
    )
    answer_from: OutputRef | None = Field(
        default=None, description="info act side: the reference DAG output that holds the answer"
    )
    # abstain side only
    abstention_trigger: str | None = Field(default=None, description="abstain side: what should make the agent stop")
    earliest_abstain_step: int | None = Field(default=None, ge=0, description="abstain side: how many calls of the "
                                              "reference DAG a careful agent makes before it can know (0: none)")
    good_reply: str | None = Field(default=None, description="what a good abstaining reply asks for or reports")
    clarification: str | None = Field(default=None, description="S1/S2: what the user answers when asked")
    withheld: list[str] = Field(
        default_factory=list, description="abstain side: values a good reply must not reveal (a locked record's details)"
    )

    @model_validator(mode="after")
    def _side_fields(self) -> TaskVariant:
        abstain_fields = (self.abstention_trigger, self.earliest_abstain_step, self.good_reply)
        if self.task_type == "abstain" and any(f is None for f in abstain_fields):
            raise ValueError(f"{self.task_id}: abstain tasks need trigger, earliest_abstain_step and good_reply")
        if self.task_type == "act" and (any(f is not None for f in (*abstain_fields, self.clarification))
                                        or self.withheld):
            raise ValueError(f"{self.task_id}: act tasks carry no abstention labels")
        if not self.instruction.startswith(self.premise):
            raise ValueError(f"{self.task_id}: the instruction does not open with its premise")
        missing = [c.text for c in self.confirmations if c.text not in self.instruction]
        if missing:
            raise ValueError(f"{self.task_id}: confirmations not in the instruction: {missing}")
        return self

    def confirms(self, category: str, amount: float) -> bool:
        """Whether the user explicitly confirmed moving this amount of this category."""
        return any(c.category == category and abs(c.amount - amount) < 0.005 for c in self.confirmations)


def apply_state_patch(state: dict[str, JsonValue], patch: list[PatchOp]) -> dict[str, JsonValue]:
    """The state after a task overlay's patch, as the runtime applies it (sandboxes/runtime_server.py keeps its own
    copy, since it imports nothing from abstaingen); a new dict, `state` is untouched."""
    patched = json.loads(json.dumps(state))
    for op in patch:
        records = patched.setdefault(op.collection, [])
        assert isinstance(records, list)
        index = next((i for i, r in enumerate(records) if isinstance(r, dict) and r.get("id") == op.record_id), None)
        if op.op == "add":
            records.append({"id": op.record_id, **op.values})
        elif index is not None and op.op == "set":
            records[index] = {**records[index], **op.values}  # type: ignore[dict-item]
        elif index is not None:
            del records[index]
    return patched


def find_record(state: dict[str, JsonValue], ref: RecordRef) -> dict[str, JsonValue] | None:
    records = state.get(ref.collection)
    if isinstance(records, list):
        for record in records:
            if isinstance(record, dict) and record.get("id") == ref.record_id:
                return record
    return None


class Change(NamedTuple):
    """One difference between two states: a field of a record, a record added or removed (`field` None, one of
    `old`/`new` None), or a value that is no list of records (`record_id` and `field` None)."""

    collection: str
    record_id: str | None
    field: str | None
    old: JsonValue
    new: JsonValue


def record_changes(before: dict[str, JsonValue], after: dict[str, JsonValue]) -> list[Change]:
    """What differs between two states, record by record, in collection, id and field order."""
    found = []
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name), after.get(name)
        if old == new:
            continue
        if not (isinstance(old, list) and isinstance(new, list)):
            found.append(Change(name, None, None, old, new))
            continue
        olds = {str(r.get("id")): r for r in old if isinstance(r, dict)}
        news = {str(r.get("id")): r for r in new if isinstance(r, dict)}
        for rid in sorted(set(olds) | set(news)):
            a, b = olds.get(rid), news.get(rid)
            if a is None or b is None:
                found.append(Change(name, rid, None, a, b))
            elif a != b:
                found += [Change(name, rid, k, a.get(k), b.get(k)) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    return found


def state_changes(before: dict[str, JsonValue], after: dict[str, JsonValue], limit: int = 3) -> list[str]:
    """What differs between two states ('visits/V1.status: "booked" -> "cancelled"'), at most `limit` of them: what
    a finding names so that its reader knows where to look."""
    return [f"{c.collection}: {json.dumps(c.old)[:60]} -> {json.dumps(c.new)[:60]}" if c.record_id is None
            else f"{c.collection}/{c.record_id}: {'added' if c.old is None else 'removed'}" if c.field is None
            else f"{c.collection}/{c.record_id}.{c.field}: {json.dumps(c.old)[:40]} -> {json.dumps(c.new)[:40]}"
            for c in record_changes(before, after)[:limit]]


def _field(state: dict[str, JsonValue], assertion: StateAssertion) -> JsonValue:
    records = state.get(assertion.collection)
    if not isinstance(records, list):
        raise LookupError(f"no collection {assertion.collection}")
    for record in records:
        if isinstance(record, dict) and record.get("id") == assertion.record_id:
            if assertion.field not in record:
                raise LookupError(f"{assertion.collection}/{assertion.record_id} has no field {assertion.field} (its "
                                  f"fields: {', '.join(sorted(record))})")
            return record[assertion.field]
    raise LookupError(f"no record {assertion.collection}/{assertion.record_id}")


def failed_assertions(state: dict[str, JsonValue], assertions: list[StateAssertion]) -> list[str]:
    problems = []
    for a in assertions:
        try:
            actual = _field(state, a)
        except LookupError as exc:
            problems.append(str(exc))
            continue
        if actual != a.equals:
            problems.append(f"{a.collection}/{a.record_id}.{a.field} is {actual!r}, expected {a.equals!r}")
    return problems
