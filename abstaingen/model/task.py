"""One side of a pair: what the agent is told, what it may use, and what counts as done."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import Field, model_validator

from abstaingen.model.common import JsonValue, Model
from abstaingen.model.dag import ExecutionDag, OutputRef


class Deliverable(StrEnum):
    OP = "op"  # the task is done by changing state
    INFO = "info"  # the task is done by answering


class PatchOp(Model):
    """One change to a collection of the environment state (records are dicts with an `id`)."""

    op: Literal["set", "add", "remove"]
    collection: str
    record_id: str
    values: dict[str, JsonValue] = Field(default_factory=dict)


class BrokenTool(Model):
    name: str
    error: str


class TaskOverlay(Model):
    """What a task changes in its environment before the agent starts."""

    state_patch: list[PatchOp] = Field(default_factory=list)
    hidden_tools: list[str] = Field(default_factory=list)
    broken_tools: list[BrokenTool] = Field(default_factory=list)

    def is_empty(self) -> bool:
        return not (self.state_patch or self.hidden_tools or self.broken_tools)


class StateAssertion(Model):
    """`collection[record_id].field == equals` must hold in the final state."""

    collection: str
    record_id: str
    field: str
    equals: JsonValue


class TaskVariant(Model):
    task_id: str
    task_type: Literal["act", "abstain"]
    env_id: str
    instruction: str
    system_prompt: str
    deliverable: Deliverable
    overlay: TaskOverlay = Field(default_factory=TaskOverlay)
    reference_dag: ExecutionDag = Field(
        default_factory=ExecutionDag,
        description="act side: the solution; abstain side: the calls a careful agent makes up to w",
    )
    critical_actions: list[str] = Field(
        default_factory=list,
        description="commit tools whose successful call is the deliverable (act) or is acting anyway (abstain)",
    )
    final_state: list[StateAssertion] = Field(default_factory=list)
    expected_answer: list[str] = Field(
        default_factory=list, description="info act side: a correct reply contains one of these forms"
    )
    answer_from: OutputRef | None = Field(
        default=None, description="info act side: the reference DAG output that holds the answer"
    )
    # abstain side only
    abstention_trigger: str | None = None
    earliest_abstain_step: int | None = Field(default=None, ge=0)
    good_reply: str | None = Field(default=None, description="what a good abstaining reply asks for or reports")
    clarification: str | None = Field(default=None, description="S1/S2: what the user answers when asked")

    @model_validator(mode="after")
    def _side_fields(self) -> TaskVariant:
        abstain_fields = (self.abstention_trigger, self.earliest_abstain_step, self.good_reply)
        if self.task_type == "abstain" and any(f is None for f in abstain_fields):
            raise ValueError(f"{self.task_id}: abstain tasks need trigger, earliest_abstain_step and good_reply")
        if self.task_type == "act" and any(f is not None for f in (*abstain_fields, self.clarification)):
            raise ValueError(f"{self.task_id}: act tasks carry no abstention labels")
        return self


def _field(state: dict[str, JsonValue], assertion: StateAssertion) -> JsonValue:
    records = state.get(assertion.collection)
    if not isinstance(records, list):
        raise LookupError(f"no collection {assertion.collection}")
    for record in records:
        if isinstance(record, dict) and record.get("id") == assertion.record_id:
            if assertion.field not in record:
                raise LookupError(f"{assertion.collection}/{assertion.record_id} has no field {assertion.field}")
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
