"""Environment synthesis by a model, against the stand-in model server: a draft in a domain none of
the builtin ones covers becomes a bundle that passed the code gate and the environment checks in an
isolating sandbox; drafts that fail them go back to the model with the findings."""

from __future__ import annotations

import json

import clinic
import pytest
from llm_stage import run_stage
from sandbox_backends import ISOLATED
from standin import Answer, StandIn

from abstaingen.generators.builtin.domains import DOMAINS
from abstaingen.generators.llm.environment import synthesize_environment
from abstaingen.generators.llm.perturbation import unsupported
from abstaingen.model import CapabilitySpec, EnvironmentBundle, Scenario
from abstaingen.providers.repair import RepairFailed, RepairLog
from abstaingen.sandboxes.backends import get_backend

pytestmark = pytest.mark.component

SPEC = CapabilitySpec(domain="pet_clinic", seed_instruction="Cancel Biscuit's checkup on Friday",
                      summary="An assistant that manages visits at a pet clinic.",
                      capabilities=["find an owner's visits", "cancel a visit", "restore a cancelled visit"])
CODE = '''
def find_visits(state, owner):
    return [visit for visit in state["visits"] if visit["owner"] == owner]


def get_visit(state, visit_id):
    for visit in state["visits"]:
        if visit["id"] == visit_id:
            return visit
    raise ValueError(f"no visit {visit_id}")


def cancel_visit(state, visit_id):
    visit = get_visit(state, visit_id)
    if visit["status"] != "booked":
        raise ValueError(f"visit {visit_id} is {visit['status']}")
    visit["status"] = "cancelled"
    return {"visit_id": visit_id, "status": "cancelled"}


def restore_visit(state, visit_id):
    visit = get_visit(state, visit_id)
    if visit["status"] != "cancelled":
        raise ValueError(f"visit {visit_id} is not cancelled")
    visit["status"] = "booked"
    return {"visit_id": visit_id, "status": "booked"}
'''
STATE = {"visits": [{"id": f"V{n}", "owner": owner, "pet": pet, "date": f"2026-12-{10 + n:02d}", "status": "booked"}
                    for n, (owner, pet) in enumerate([("Ana Ruiz", "Biscuit"), ("Ana Ruiz", "Pepper"),
                                                      ("Tom Lee", "Rex"), ("Tom Lee", "Mia"), ("Ola Berg", "Ziggy"),
                                                      ("Ola Berg", "Nala")], start=1)]}


def tool(name: str, kind: str, parameter: str, example: str, effect: str = "", undone_by: str = "") -> dict:
    return {"name": name, "description": f"{name.replace('_', ' ').capitalize()} in the clinic's records.",
            "kind": kind, "parameters": [{"name": parameter, "type": "string", "description": f"the {parameter}",
                                          "required": True}],
            "effect": effect, "undone_by": undone_by, "example_arguments_json": json.dumps({parameter: example}),
            "impact_category": "", "impact_argument": ""}


LEAN = {"description": "The visit book of a small pet clinic.", "initial_state_json": json.dumps(STATE),
        "implementation": CODE, "rules": [],
        "tools": [tool("find_visits", "lookup", "owner", "Ana Ruiz"), tool("get_visit", "lookup", "visit_id", "V1"),
                  tool("cancel_visit", "commit", "visit_id", "V1", "visits.status=cancelled", "restore_visit"),
                  tool("restore_visit", "commit", "visit_id", "V1", "visits.status=booked")]}
GOOD = clinic.ENVIRONMENT  # every scenario can be written in it
WRONG = {
    "imports os": ({**GOOD, "implementation": "import os\n" + clinic.CODE}, "code_gate: line 1: import of 'os'"),
    "a lookup that writes": ({**GOOD, "implementation": clinic.CODE.replace(
        '    return [v for v in state["visits"] if v["owner"] == owner',
        '    state["visits"][0]["seen"] = True\n    return [v for v in state["visits"] if v["owner"] == owner')},
        "env_read_only: lookup tool find_visits"),
    "state that is not JSON": ({**GOOD, "initial_state_json": "{'visits': []}"},
                               "conversion: initial_state_json is not JSON"),
    "an undo that does not undo": ({**GOOD, "implementation": clinic.CODE.replace(
        '["cancelled", "postponed"], "booked")', '["cancelled", "postponed"], "rebooked")')},
                                   "env_reversibility: cancel_visit is declared reversible, but restore_visit after it "
                                   "did not restore the state (still changed: visits/V1.status: \"booked\" -> "
                                   "\"rebooked\")"),
    "a rule on a category no commit moves": (
        {**GOOD, "rules": [{**r, "category": "refunds"} if r["kind"] == "confirmation" else r for r in GOOD["rules"]]},
        "conversion: confirmation rule: category 'refunds' is no commit's impact_category (they are: 'refund')"),
    "a mirror tool that does not exist": (
        {**GOOD, "rules": [{**r, "mirror_tool": "fee_lookup"} if r["kind"] == "cross_check" else r
                           for r in GOOD["rules"]]},
        "conversion: cross_check rule: mirror_tool 'fee_lookup' is no tool: name a lookup (find_visits, get_visit, "
        "billing_fee)"),
    "a tool written twice": ({**GOOD, "tools": [*GOOD["tools"], GOOD["tools"][0]]},
                             "conversion: duplicate tool names: find_visits"),
}
# what LEAN, a clinic with one lookup by owner, a reversible cancel and no rules, cannot carry
LEAN_LACKS = ["S2", "S3", "S4", "S7", "S8"]


def synthesize(standin: StandIn, backend: str, max_rounds: int = 2) -> tuple[EnvironmentBundle | RepairFailed,
                                                                             RepairLog]:
    log = RepairLog()
    result = run_stage(standin, lambda caller: synthesize_environment(caller, "writer", SPEC, get_backend(backend),
                                                                      max_rounds, log), kind="anthropic")
    return result, log  # type: ignore[return-value]


@pytest.mark.parametrize("backend", ISOLATED)
def test_a_good_draft_becomes_a_checked_bundle_in_a_new_domain(backend: str, standin: StandIn) -> None:
    standin.script("environment", Answer(GOOD))
    bundle, log = synthesize(standin, backend)
    assert isinstance(bundle, EnvironmentBundle), bundle
    assert bundle.domain == "pet_clinic" not in DOMAINS and bundle.origin == "llm"
    assert [t.name for t in bundle.tools] == [t["name"] for t in GOOD["tools"]]
    assert bundle.irreversible("cancel_visit") is False and bundle.irreversible("refund_deposit")
    assert log.first_try["environment"] == 1


@pytest.mark.parametrize("backend", ISOLATED)
@pytest.mark.parametrize("case", list(WRONG))
def test_a_draft_that_fails_its_checks_is_repaired(case: str, backend: str, standin: StandIn) -> None:
    wrong, finding = WRONG[case]
    standin.script("environment", Answer(wrong), Answer(GOOD))
    bundle, log = synthesize(standin, backend)
    assert isinstance(bundle, EnvironmentBundle), bundle
    assert log.repaired["environment"] == 1
    assert finding in standin.requests[1].body["messages"][0]["content"]


@pytest.mark.parametrize("backend", ISOLATED)
def test_a_model_that_keeps_writing_os_imports_fails_the_stage(backend: str, standin: StandIn) -> None:
    standin.otherwise("environment", Answer(WRONG["imports os"][0]))
    result, log = synthesize(standin, backend, max_rounds=1)
    assert isinstance(result, RepairFailed) and "code_gate" in str(result)
    assert standin.count() == 2 and log.failed["environment"] == 1


@pytest.mark.parametrize("backend", ISOLATED[:1])
def test_an_environment_that_cannot_carry_a_scenario_goes_back_with_what_it_lacks(backend: str,
                                                                                 standin: StandIn) -> None:
    """The first real model wrote environments without an irreversible amount, a choice or a cross-check,
    as nothing asked for them, and lost those scenarios' slots at the task stage."""
    standin.script("environment", Answer(LEAN), Answer(GOOD))
    bundle, log = synthesize(standin, backend)
    assert isinstance(bundle, EnvironmentBundle) and log.repaired["environment"] == 1
    asked, repair = (request.body["messages"][0]["content"] for request in standin.requests)
    system = str(standin.requests[0].body["system"])
    assert all(f"- {s.value} (" in system for s in Scenario)  # the prompt asks for what every scenario needs
    findings = [line for line in repair.splitlines() if line.startswith("- check: scenarios: ")]
    assert [line.removeprefix("- check: scenarios: ")[:2] for line in findings] == LEAN_LACKS
    assert "add a commit tool with an empty undone_by" in repair and "add a rule of kind choice" in repair


@pytest.mark.parametrize("backend", ISOLATED[:1])
def test_an_environment_still_lacking_a_scenario_after_the_last_round_is_taken_with_what_it_carries(
        backend: str, standin: StandIn) -> None:
    standin.otherwise("environment", Answer(LEAN))
    bundle, log = synthesize(standin, backend, max_rounds=1)
    assert isinstance(bundle, EnvironmentBundle), bundle
    assert standin.count() == 2 and log.failed["environment"] == 0
    assert [s.value for s in Scenario if unsupported(bundle, s)] == LEAN_LACKS
