"""The positive task by a model, against the stand-in, in the pet-clinic environment a model wrote
(tests/test_llm_environment.py): a draft is taken only once its DAG replays in an isolating sandbox
as declared; each way a draft can be wrong is sent back with what the replay found."""

from __future__ import annotations

import json

import clinic
import pytest
from llm_stage import run_stage
from sandbox_backends import ISOLATED
from standin import Answer, StandIn
from test_llm_environment import GOOD, SPEC

from abstaingen.generators import PositiveTask
from abstaingen.generators.llm.environment import EnvironmentDraft, to_bundle
from abstaingen.generators.llm.positive import PositiveDraft, to_variant, write_positive_task
from abstaingen.model import Deliverable, EnvironmentBundle, RecordRef, Scenario
from abstaingen.providers.repair import RepairFailed, RepairLog
from abstaingen.sandboxes.backends import get_backend
from abstaingen.sandboxes.kept import KeptSessions

pytestmark = pytest.mark.component

CLINIC = to_bundle(SPEC, EnvironmentDraft(**GOOD))


def step(name: str, tool: str, args: dict, bindings: tuple = ()) -> dict:
    return {"id": name, "tool": tool, "arguments_json": json.dumps(args),
            "bindings": [{"argument": a, "from_step": f, "path": p} for a, f, p in bindings]}


OP = {"instruction": "Please cancel Biscuit's checkup on 2026-12-11; it is booked under Ana Ruiz.",
      "deliverable": "op", "target_collection": "visits", "target_record_id": "V1",
      "steps": [step("s1", "find_visits", {"owner": "Ana Ruiz"}), step("s2", "cancel_visit", {"visit_id": "V1"})],
      "critical_actions": ["cancel_visit"],
      "final_state": [{"collection": "visits", "record_id": "V1", "field": "status", "value_json": '"cancelled"'}],
      "expected_answer": [], "answer_step": "", "answer_path": []}
INFO = {"instruction": "What date is Rex's visit? Tom Lee booked it.", "deliverable": "info",
        "target_collection": "visits", "target_record_id": "V3",
        "steps": [step("s1", "find_visits", {"owner": "Tom Lee"}), step("s2", "get_visit", {"visit_id": "V3"})],
        "critical_actions": [], "final_state": [], "expected_answer": ["2026-12-13"], "answer_step": "s2",
        "answer_path": ["date"]}
WRONG = {
    "a binding that picks the first of two": (
        {**OP, "steps": [OP["steps"][0], step("s2", "cancel_visit", {}, (("visit_id", "s1", ["0", "id"]),))]}, OP,
        "replay_steps: s2.visit_id takes the first of 2 results of s1: make s1 return that one record alone (give "
        "its lookup more of the record's details), or pass the id s1 returned for it as a literal"),
    "a final state on a field the record lacks": (
        {**OP, "final_state": [{**OP["final_state"][0], "field": "state"}]}, OP,
        "visits/V1 has no field state (its fields: "),
    "a final state the replay does not reach": (
        {**OP, "final_state": [{**OP["final_state"][0], "value_json": '"done"'}]}, OP,
        "replay_final_state: visits/V1.status is 'cancelled', expected 'done'"),
    "a tool the environment lacks": (
        {**OP, "steps": [OP["steps"][0], step("s2", "delete_visit", {"visit_id": "V1"})]}, OP,
        "conversion: step s2 calls 'delete_visit'"),
    "a target that does not exist": ({**OP, "target_record_id": "V99"}, OP, "target: the task is about visits/V99"),
    "an answer the step does not give": ({**INFO, "expected_answer": ["2026-12-25"]}, INFO,
                                         "answer: the answer step gives"),
    "an answer whose forms all miss the value": ({**INFO, "expected_answer": ["December 13th"]}, INFO,
                                                 "answer: the answer step gives \"2026-12-13\"; expected_answer "
                                                 "['December 13th'] must hold forms of that value, at least one with it "
                                                 "as written"),
    "an info task that changes state": ({**INFO, "steps": [*INFO["steps"], step("s3", "cancel_visit",
                                                                                 {"visit_id": "V3"})]}, INFO,
                                        "conversion: an info task changes nothing"),
    "an id the agent could not know": ({**INFO, "steps": INFO["steps"][1:], "answer_step": "s2"}, INFO,
                                       "replay_steps: step s2 passes visit_id='V3', which neither the request nor an "
                                       "earlier result gives"),
    "critical actions the steps do not call": ({**OP, "critical_actions": ["postpone_visit"]}, OP,
                                               "conversion: critical_actions ['postpone_visit'] must name the commit "
                                               "tools the steps call (they call: cancel_visit)"),
    "an answer step that is no step": ({**INFO, "answer_step": "s9"}, INFO,
                                       "conversion: answer_step 's9' is not a step id (steps: s1, s2)"),
}
TWIN_CANNOT_FOLLOW = {  # (scenario, the T+ its twin could not be written from, the finding)
    "S2: an action the choice rule does not leave open": (
        Scenario.S2, clinic.POSITIVE[Scenario.S4],
        "twin: the twin asks in words that fit cancel_visit and postpone_visit alike, so T+ must do one of those "
        "(it does refund_deposit)"),
    "S4: an amount above the threshold": (
        Scenario.S4, {**clinic.POSITIVE[Scenario.S4], "steps": [
            *clinic.POSITIVE[Scenario.S4]["steps"][:-1],
            {**clinic.POSITIVE[Scenario.S4]["steps"][-1], "arguments_json": '{"amount": 80.0}'}]},
        "refund_deposit moves 80 (above 50) without the user's confirmation of that amount: a task to carry out as "
        "asked moves at most 50"),
    "S3: a record named by its owner and one detail": (
        Scenario.S3, {**clinic.POSITIVE[Scenario.S3], "instruction": "Cancel Biscuit's visit for Ana Ruiz.", "steps": [
            step("s1", "find_visits", {"owner": "Ana Ruiz", "pet": "Biscuit"}),
            *clinic.POSITIVE[Scenario.S3]["steps"][1:]]},
        "twin: the twin swaps one of the details T+ names the record by, so one step of T+ must look it up by its "
        "owner ('Ana Ruiz') and two more of its details, with arguments named like its fields (date, deposit, fee, "
        "notes, owner, pet, refunded, status)"),
    "S1: a question, which could be answered for every record that fits": (
        Scenario.S1, {**clinic.POSITIVE[Scenario.S7], "instruction": "What is the fee for Biscuit's visit? Ana Ruiz "
                      "booked it.", "target_record_id": "V1",
                      "steps": [step("s1", "find_visits", {"owner": "Ana Ruiz", "pet": "Biscuit"}),
                                step("s2", "get_visit", {}, (("visit_id", "s1", ["0", "id"]),))],
                      "expected_answer": ["60.0", "60"]},
        "twin: the twin leaves out the detail that singles out the record, so that several fit; asked as a question, "
        "an assistant could answer for each of them instead of asking: make T+ a change (op) through a commit on V1"),
    "S5: a question, which no hidden commit can take away": (
        Scenario.S5, INFO, "twin: the twin takes away the commit T+ delivers through, which must be one no other "
                           "tool can stand in for: make T+ a change through"),
}


def write(standin: StandIn, backend: str, max_rounds: int = 2, variant: int = 0, variants: int = 1,
          scenario: Scenario = Scenario.S8, bundle: EnvironmentBundle = CLINIC) -> tuple[PositiveTask | RepairFailed,
                                                                                         RepairLog]:
    log = RepairLog()
    result = run_stage(standin, lambda caller: write_positive_task(caller, "writer", bundle, scenario, variant,
                                                                   KeptSessions(get_backend(backend)), max_rounds, log,
                                                                   variants))
    return result, log  # type: ignore[return-value]


@pytest.mark.parametrize("backend", ISOLATED)
@pytest.mark.parametrize("answer", [OP, INFO], ids=["op", "info"])
def test_a_draft_that_replays_as_declared_becomes_the_act_side(answer: dict, backend: str, standin: StandIn) -> None:
    standin.script("positive_task", Answer(answer))
    task, log = write(standin, backend)
    assert isinstance(task, PositiveTask), task
    assert task.act.deliverable == Deliverable(answer["deliverable"]) and task.act.env_id == CLINIC.env_id
    assert task.target.record_id == answer["target_record_id"] and log.first_try["positive_task"] == 1
    assert [n.tool for n in task.act.reference_dag.nodes] == [s["tool"] for s in answer["steps"]]
    # the writer saw what each tool returns on the state (real models guessed every key and final value)
    cards = {c["name"]: c for c in json.loads(standin.requests[0].body["messages"][1]["content"].split(
        "what it returned; take result keys, list\npositions and the values a commit writes from there):\n", 1)[1]
        .split("\n\nThe state", 1)[0])}
    assert json.loads(cards["get_visit"]["example_call"]["returned"])["owner"] == "Ana Ruiz"
    assert json.loads(cards["cancel_visit"]["example_call"]["returned"]) is not None


@pytest.mark.parametrize("backend", ISOLATED)
@pytest.mark.parametrize("case", list(WRONG))
def test_a_wrong_draft_goes_back_with_what_the_replay_found(case: str, backend: str, standin: StandIn) -> None:
    wrong, right, finding = WRONG[case]
    standin.script("positive_task", Answer(wrong), Answer(right))
    task, log = write(standin, backend)
    assert isinstance(task, PositiveTask), task
    assert log.repaired["positive_task"] == 1
    assert finding in standin.requests[1].body["messages"][1]["content"]


@pytest.mark.parametrize("case", list(TWIN_CANNOT_FOLLOW))
def test_a_task_its_twin_cannot_be_written_from_goes_back_to_this_stage(case: str, standin: StandIn) -> None:
    """Found at the twin's stage, these cost rounds no answer to it could win (it cannot change T+)."""
    scenario, wrong, finding = TWIN_CANNOT_FOLLOW[case]
    standin.script("positive_task", Answer(wrong), Answer(clinic.POSITIVE[scenario]))
    task, log = write(standin, "bwrap", scenario=scenario)
    assert isinstance(task, PositiveTask) and log.repaired["positive_task"] == 1, task
    assert finding in standin.requests[1].body["messages"][1]["content"]


@pytest.mark.parametrize("backend", ISOLATED)
def test_a_draft_that_stays_ambiguous_fails_the_stage(backend: str, standin: StandIn) -> None:
    standin.otherwise("positive_task", Answer(WRONG["a binding that picks the first of two"][0]))
    result, log = write(standin, backend, max_rounds=1)
    assert isinstance(result, RepairFailed) and "takes the first of 2 results" in str(result)
    assert log.failed["positive_task"] == 1


def test_a_sandbox_that_fails_once_costs_no_repair_round(standin: StandIn, monkeypatch: pytest.MonkeyPatch) -> None:
    """A slow or dying sandbox is the machine's fault, not the draft's: the check runs again in a fresh
    sandbox instead of sending the model a finding it cannot act on (and spending a round on it)."""
    from abstaingen.sandboxes import kept
    from abstaingen.sandboxes.session import SandboxError, SandboxSession

    failures = [SandboxError("get_visit did not answer within 10 s")]

    class FailsOnce(SandboxSession):
        async def __aenter__(self) -> SandboxSession:
            if failures:
                raise failures.pop()
            return await super().__aenter__()

    monkeypatch.setattr(kept, "SandboxSession", FailsOnce)
    standin.script("positive_task", Answer(INFO))  # one answer only: a second request would fail the test
    task, log = write(standin, "local")
    assert isinstance(task, PositiveTask), task
    assert not failures and log.first_try["positive_task"] == 1 and not log.repaired


@pytest.mark.parametrize("backend", ISOLATED[:1])
def test_each_variant_is_given_records_of_its_own_and_kept_to_them(backend: str, standin: StandIn) -> None:
    """The first real model wrote the variants of a scenario at once, each choosing 'a different record than
    variants before it' blind to the others; now code gives each variant its records."""
    pepper = {**OP, "instruction": "Please cancel Pepper's checkup on 2026-12-12; it is booked under Ana Ruiz.",
              "target_record_id": "V2", "steps": [OP["steps"][0], step("s2", "cancel_visit", {"visit_id": "V2"})],
              "final_state": [{**OP["final_state"][0], "record_id": "V2"}]}
    standin.script("positive_task", Answer(OP), Answer(pepper))  # V1 is variant 0's
    task, log = write(standin, backend, variant=1, variants=2, scenario=Scenario.S1)
    assert isinstance(task, PositiveTask) and task.target.record_id == "V2", task
    assert task.scope == {"owner": "Ana Ruiz"}  # the audit sheet shows the records the twin leaves open
    asked = standin.requests[0].body["messages"][0]["content"]  # the system message
    repair = standin.requests[1].body["messages"][1]["content"]
    assert "the first of these records of visits that can carry it: V2, V4, V6.\nEach shares its owner" in asked
    assert "target: the task is about visits/V1, but it was given the records V2, V4, V6 of visits" in repair


@pytest.mark.parametrize("backend", ISOLATED[:1])
def test_a_task_whose_twin_makes_two_systems_disagree_must_depend_on_the_compared_value(
        backend: str, standin: StandIn) -> None:
    """The first real model's S7 task refunded a literal amount: its twin's disagreement changed nothing,
    and the finding reached the twin's stage, which could not fix it. It is found here now."""
    right = clinic.POSITIVE[Scenario.S7]
    wrong = {**right, "instruction": "What date is Rex's visit? Tom Lee booked it.", "expected_answer": ["2026-12-13"],
             "answer_path": ["date"]}
    standin.script("positive_task", Answer(wrong), Answer(right))
    task, log = write(standin, backend, scenario=Scenario.S7)
    assert isinstance(task, PositiveTask) and log.repaired["positive_task"] == 1, task
    assert ("cross_check: the answer must be the value the cross_check rule covers (fee): set answer_step to the "
            "step that reads the record itself (not the second system's copy) and answer_path to the keys ending in "
            "that field (the answer now is s2 ['date'])" in standin.requests[1].body["messages"][1]["content"])


def clinic_refusing(tool_name: str, visit: str, error: str) -> EnvironmentBundle:
    """The clinic with `tool_name` refusing `visit` (what a real record that cannot take a change does)."""
    code = GOOD["implementation"].replace(
        f"def {tool_name}(state, visit_id):\n",
        f"def {tool_name}(state, visit_id):\n    if visit_id == {visit!r}:\n        raise ValueError({error!r})\n")
    assert code != GOOD["implementation"]
    return to_bundle(SPEC, EnvironmentDraft(**{**GOOD, "implementation": code}))


def test_an_s2_task_on_a_record_the_other_reading_refuses_is_sent_back(standin: StandIn) -> None:
    """A real T+ was about a future class booking, which 'mark missed', the choice's other commit, refuses: its
    twin could only have one reading, and the slot was lost at the twin's stage."""
    strict = clinic_refusing("postpone_visit", "V3", "Rex's visit can no longer be moved")
    rex = clinic.POSITIVE[Scenario.S2]  # cancels V3
    mia = {**rex, "instruction": "Cancel Mia's visit for Tom Lee.", "target_record_id": "V4",
           "steps": [step("s1", "find_visits", {"owner": "Tom Lee", "pet": "Mia"}), *rex["steps"][1:]],
           "final_state": [{**rex["final_state"][0], "record_id": "V4"}]}
    standin.script("positive_task", Answer(rex), Answer(mia))
    task, log = write(standin, "bwrap", scenario=Scenario.S2, bundle=strict)
    assert isinstance(task, PositiveTask) and task.target.record_id == "V4" and log.repaired["positive_task"] == 1
    assert ("twin: the twin's other reading, postpone_visit{'visit_id': 'V3'}, fails on this record (Rex's visit can "
            "no longer be moved)" in standin.requests[1].body["messages"][1]["content"])


def test_s1_is_given_records_whose_owner_has_another_the_change_succeeds_on(standin: StandIn) -> None:
    """A real environment's members each had one membership that could be frozen and one that could not:
    S1's records are now the ones a commit succeeds on for two or more records of one owner."""
    strict = clinic_refusing("cancel_visit", "V2", "Pepper's visit is already paid and cannot be cancelled")
    biscuit = clinic.POSITIVE[Scenario.S1]  # cancels V1 of Ana Ruiz, whose other visit is V2
    rex = clinic.cancel("Cancel Rex's checkup for Tom Lee, please.", "V3", "Tom Lee", "Rex")
    standin.script("positive_task", Answer(biscuit), Answer(rex))
    task, log = write(standin, "bwrap", scenario=Scenario.S1, bundle=strict)
    assert isinstance(task, PositiveTask) and task.target.record_id == "V3" and log.repaired["positive_task"] == 1
    assert "records of visits that can carry it: V3, V4, V5, V6." in standin.requests[0].body["messages"][0]["content"]


def test_an_s1_change_that_fails_on_the_owners_other_records_is_sent_back(standin: StandIn) -> None:
    """Where T+'s own change (not the example's) fails on the owner's other records, a careful assistant
    knows which is meant: a refund of 20.00 fits Biscuit's deposit but not Pepper's 15.00 left."""
    state = json.loads(GOOD["initial_state_json"])
    state["visits"][1]["refunded"] = 85.0
    clinic_refunded = to_bundle(SPEC, EnvironmentDraft(**{**GOOD, "initial_state_json": json.dumps(state)}))

    def refund(instruction: str, visit: str, owner: str, pet: str) -> dict:
        return {"instruction": instruction, "deliverable": "op", "target_collection": "visits",
                "target_record_id": visit,
                "steps": [step("s1", "find_visits", {"owner": owner, "pet": pet}),
                          step("s2", "get_visit", {}, (("visit_id", "s1", ["0", "id"]),)),
                          step("s3", "refund_deposit", {"amount": 20.0}, (("visit_id", "s1", ["0", "id"]),))],
                "critical_actions": ["refund_deposit"],
                "final_state": [{"collection": "visits", "record_id": visit, "field": "refunded", "value_json": "20.0"}],
                "expected_answer": [], "answer_step": "", "answer_path": []}

    standin.script("positive_task", Answer(refund("Refund 20.00 of Biscuit's deposit to Ana Ruiz.", "V1", "Ana Ruiz",
                                                  "Biscuit")),
                   Answer(refund("Refund 20.00 of Rex's deposit to Tom Lee.", "V3", "Tom Lee", "Rex")))
    task, log = write(standin, "bwrap", scenario=Scenario.S1, bundle=clinic_refunded)
    assert isinstance(task, PositiveTask) and task.target.record_id == "V3" and log.repaired["positive_task"] == 1
    assert ("twin: the twin leaves open which of Ana Ruiz's records is meant, but refund_deposit fails on each other "
            "one (V2: " in standin.requests[1].body["messages"][1]["content"])


def test_the_other_reading_is_tried_with_the_arguments_its_own_tool_takes(standin: StandIn) -> None:
    """A real choice's commits took different arguments (set_auto_renew needs one cancel_membership refuses);
    called with T+'s commit's arguments, the other reading failed on every record and S2 was lost."""
    def with_new_date(tool: dict) -> dict:
        if tool["name"] != "postpone_visit":
            return tool
        new_date = {"name": "new_date", "type": "string", "description": "the new date", "required": True}
        return {**tool, "parameters": [*tool["parameters"], new_date],
                "example_arguments_json": '{"visit_id": "V1", "new_date": "2026-12-20"}'}

    code = GOOD["implementation"].replace("def postpone_visit(state, visit_id):",
                                          "def postpone_visit(state, visit_id, new_date):")
    assert code != GOOD["implementation"]
    dated = to_bundle(SPEC, EnvironmentDraft(**{**GOOD, "tools": [with_new_date(x) for x in GOOD["tools"]],
                                                "implementation": code}))
    standin.script("positive_task", Answer(clinic.POSITIVE[Scenario.S2]))
    task, log = write(standin, "bwrap", scenario=Scenario.S2, bundle=dated)
    assert isinstance(task, PositiveTask) and log.first_try["positive_task"] == 1, task


def test_the_other_reading_moves_an_amount_the_record_can_take(standin: StandIn) -> None:
    """A real choice was make-up session or refund; the refund was tried with its example's 70.00 on a session
    that cost 65.00, failed, and the finding cost a round: the question is whether the record takes a
    refund at all."""
    def refund_or_cancel(rule: dict) -> dict:
        return {**rule, "actions": ["cancel_visit", "refund_deposit"]} if rule["kind"] == "choice" else rule

    def large_example(tool: dict) -> dict:
        return {**tool, "example_arguments_json": '{"visit_id": "V1", "amount": 100.0}'} \
            if tool["name"] == "refund_deposit" else tool

    state = json.loads(GOOD["initial_state_json"])
    state["visits"][2]["refunded"] = 60.0  # Rex's visit: 40.00 of the deposit left, less than the example's 100.00
    choice = to_bundle(SPEC, EnvironmentDraft(**{
        **GOOD, "rules": [refund_or_cancel(r) for r in GOOD["rules"]],
        "tools": [large_example(t) for t in GOOD["tools"]], "initial_state_json": json.dumps(state)}))
    standin.script("positive_task", Answer(clinic.POSITIVE[Scenario.S2]))  # cancels V3, Rex's
    task, log = write(standin, "bwrap", scenario=Scenario.S2, bundle=choice)
    assert isinstance(task, PositiveTask) and log.first_try["positive_task"] == 1, task


def test_an_s3_task_named_by_a_detail_its_owners_records_share_is_sent_back() -> None:
    """Real S3 twins were lost when the owner's records shared a detail of T+'s (two visitor permits): no swap
    of one detail left each detail with the owner singling out one record."""
    from abstaingen.generators.llm.positive import twin_cannot_follow

    same_day = json.loads(GOOD["initial_state_json"])
    same_day["visits"][1]["date"] = same_day["visits"][0]["date"]  # Ana Ruiz's two visits on one day
    clinic_same_day = to_bundle(SPEC, EnvironmentDraft(**{**GOOD, "initial_state_json": json.dumps(same_day)}))
    act = to_variant(clinic_same_day, PositiveDraft(**clinic.POSITIVE[Scenario.S3]), "t-act")
    target = RecordRef(collection="visits", record_id="V1")
    assert twin_cannot_follow(CLINIC, Scenario.S3, act, target) is None
    found = twin_cannot_follow(clinic_same_day, Scenario.S3, act, target)
    assert found is not None and "date='2026-12-11' fits V1, V2 of Ana Ruiz's records" in found, found


def test_an_s1_task_that_changes_none_of_the_records_is_sent_back() -> None:
    """A real S1 T+ emailed a member the renewal date of one membership: its twin, leaving the membership
    open, was answered by one email about both, and a blind reviewer found asking not THE right reply."""
    from abstaingen.generators.llm.positive import twin_cannot_follow

    act = to_variant(CLINIC, PositiveDraft(**clinic.POSITIVE[Scenario.S1]), "t-act")  # cancel_visit: visits.status
    target = RecordRef(collection="visits", record_id="V1")
    assert twin_cannot_follow(CLINIC, Scenario.S1, act, target, "owner") is None
    elsewhere = CLINIC.model_copy(update={"tools": [t.model_copy(update={"effect": "messages.sent"})
                                                    if t.name == "cancel_visit" else t for t in CLINIC.tools]})
    found = twin_cannot_follow(elsewhere, Scenario.S1, act, target, "owner")
    assert found is not None and "make T+ change visits/V1 itself" in found, found


def test_the_compared_value_may_be_read_from_an_item_of_a_list() -> None:
    """A real model answered an S7 question from the one record a lookup listed (["0", "renewal_date"]) and
    was told its answer was not the compared value."""
    from abstaingen.generators.llm.positive import compared_value_unused

    listed = {**clinic.POSITIVE[Scenario.S7], "answer_step": "s1", "answer_path": ["0", "fee"]}
    assert compared_value_unused(CLINIC, to_variant(CLINIC, PositiveDraft(**listed), "t-act")) is None
    other = {**listed, "answer_path": ["0", "date"]}
    assert compared_value_unused(CLINIC, to_variant(CLINIC, PositiveDraft(**other), "t-act")) is not None
    mirror = {**listed, "answer_step": "s3", "answer_path": ["fee"]}  # billing_fee: the copy the twin changes
    assert compared_value_unused(CLINIC, to_variant(CLINIC, PositiveDraft(**mirror), "t-act")) is not None
