"""What each scenario needs of an environment (generators/llm/needs.py): the pet clinic, which carries
all eight, and one copy of it per finding, each lacking one thing; every finding says what to add."""

from __future__ import annotations

import copy
import json
from typing import Any

import clinic
import pytest

from abstaingen.generators.llm.environment import MAX_TOOLS, EnvironmentDraft, to_bundle
from abstaingen.generators.llm.needs import assigned_records, missing_scenarios
from abstaingen.model import CapabilitySpec, EnvironmentBundle, Scenario

SPEC = CapabilitySpec(domain="pet_clinic", seed_instruction=clinic.INSTRUCTION, summary=clinic.CAPABILITY["summary"],
                      capabilities=clinic.CAPABILITY["capabilities"])


def bundle(change: Any = None) -> EnvironmentBundle:
    draft = copy.deepcopy(clinic.ENVIRONMENT)
    if change is not None:
        change(draft)
    return to_bundle(SPEC, EnvironmentDraft.model_validate(draft))


def without_rule(kind: str) -> Any:
    return lambda draft: draft.update(rules=[r for r in draft["rules"] if r["kind"] != kind])


def rule_field(kind: str, field: str) -> Any:
    def change(draft: dict) -> None:
        next(r for r in draft["rules"] if r["kind"] == kind)["field"] = field
    return change


def only_lookup_by_id(draft: dict) -> None:
    draft["tools"] = [t for t in draft["tools"] if t["name"] != "find_visits"]


def undoable_refund(draft: dict) -> None:
    next(t for t in draft["tools"] if t["name"] == "refund_deposit")["undone_by"] = "refund_deposit"


def effects_shared(draft: dict) -> None:
    for t in draft["tools"]:
        if t["kind"] == "commit":
            t["effect"] = "visits.status"
    next(t for t in draft["tools"] if t["name"] == "restore_visit")["undone_by"] = ""


CASES = {  # what is taken away -> the scenarios it takes, and words of the finding
    "the lookup that lists an owner's visits by details": (only_lookup_by_id, ["S1", "S3"],
                                                           "a parameter named exactly like"),
    "the choice rule": (without_rule("choice"), ["S2"], "add a rule of kind choice"),
    "an irreversible refund": (undoable_refund, ["S4"], "add a commit tool with an empty undone_by"),
    "the confirmation rule": (without_rule("confirmation"), ["S4"], "a rule of kind confirmation"),
    "a commit of its own effect": (effects_shared, ["S5", "S6"], "that no other tool declares"),
    "the cross_check rule": (without_rule("cross_check"), ["S7"], "add a rule of kind cross_check"),
    "the cross-checked field": (rule_field("cross_check", "charge"), ["S7"], "name a collection and field"),
    "the notes rule": (without_rule("notes"), ["S8"], "add a rule of kind notes"),
    "the notes field": (rule_field("notes", "remarks"), ["S8"], "give its records that field"),
}


def test_the_clinic_carries_every_scenario() -> None:
    assert missing_scenarios(bundle()) == []


@pytest.mark.parametrize("case", list(CASES))
def test_each_lack_is_a_finding_that_says_what_to_add(case: str) -> None:
    change, scenarios, words = CASES[case]
    findings = missing_scenarios(bundle(change))
    assert [f.removeprefix("scenarios: ")[:2] for f in findings] == scenarios, findings
    assert all(words in finding for finding in findings), findings


def test_the_day_the_prompts_state_is_the_day_the_sandbox_clock_tells() -> None:
    """The prompts say what today is, and the agent's system prompt too; a tool that still read the clock
    would see the same day."""
    from abstaingen.generators.llm.positive import system_prompt
    from abstaingen.model.environment import TODAY
    from abstaingen.prompts import render
    from abstaingen.sandboxes.runtime_server import FROZEN_CLOCK

    assert FROZEN_CLOCK.date() == TODAY
    assert f"Today is {TODAY.isoformat()}." in system_prompt(bundle())
    told = bundle(lambda draft: draft.update(description=f"A pet clinic's visit book. Today is {TODAY.isoformat()}."))
    assert system_prompt(told).count("Today is") == 1  # real models say it in the description already
    environment = render("environment", schema="{}", domain="d", summary="s", capabilities=["c"], instructions=["i"],
                         needs={}, today=TODAY.isoformat(), max_tools=MAX_TOOLS, forbidden=[])
    assert f"Today is {TODAY.isoformat()}" in environment.system


def test_the_environment_prompt_states_the_tool_limit_its_schema_enforces() -> None:
    """Strict schemas carry no maxItems: the first real model wrote 17 tools and lost a round to a limit no
    prompt had stated."""
    from abstaingen.model.environment import TODAY
    from abstaingen.prompts import render

    environment = render("environment", schema="{}", domain="d", summary="s", capabilities=["c"], instructions=["i"],
                         needs={}, today=TODAY.isoformat(), max_tools=MAX_TOOLS, forbidden=[])
    assert f"3 to {MAX_TOOLS} tools" in environment.system
    # names the code gate refuses even as a parameter: a real model's `type` parameter cost a round
    forbidding = render("environment", schema="{}", domain="d", summary="s", capabilities=["c"], instructions=["i"],
                        needs={}, today=TODAY.isoformat(), max_tools=MAX_TOOLS, forbidden=["id", "type"])
    assert "not even\n  as a parameter or variable: id, type" in forbidding.system
    assert EnvironmentDraft.model_fields["tools"].metadata[-1].max_length == MAX_TOOLS


def test_the_variants_of_a_scenario_are_given_records_no_other_variant_of_it_gets() -> None:
    def one_more_owner(draft: dict) -> None:
        state = json.loads(draft["initial_state_json"])
        state["visits"].append({**state["visits"][0], "id": "V7", "owner": "Ida Holm", "pet": "Fig",
                                "date": "2026-12-30"})
        draft["initial_state_json"] = json.dumps(state)

    clinic_with_v7 = bundle(one_more_owner)
    for scenario in Scenario:
        shares = [assigned_records(clinic_with_v7, scenario, variant, 3) for variant in range(3)]
        ids = [record for share in shares if share for record in share[1]]
        assert len(ids) == len(set(ids)) and all(share and share[0] == "visits" for share in shares), scenario
        # a request that leaves out a detail, or whose details clash, needs an owner with other visits
        assert ("V7" in ids) is (scenario not in (Scenario.S1, Scenario.S3)), scenario


def test_the_task_prompts_show_what_each_commit_changes_and_moves() -> None:
    """A writer of T+ or T- that sees only names and descriptions has to guess final states and which tools
    could deliver an outcome (a blind review of the prompts found every final state a guess)."""
    from abstaingen.generators.llm.positive import tool_cards

    cards = {card["name"]: card for card in json.loads(tool_cards(bundle()))}
    assert cards["cancel_visit"]["changes"] == "visits.status=cancelled"
    assert cards["cancel_visit"]["reversible"] is True and cards["cancel_visit"]["undone_by"] == "restore_visit"
    assert cards["refund_deposit"]["reversible"] is False
    assert cards["refund_deposit"]["moves"] == {"what": "refund", "amount_argument": "amount", "amount_field": ""}
    assert "changes" not in cards["get_visit"]  # a lookup changes nothing
    assert cards["restore_visit"]["undoes"] == ["cancel_visit", "postpone_visit"]  # an undo says what it undoes


def with_owners_collection(several_details: bool) -> Any:
    """A second collection, pets, listed by owner too, that no commit changes; with several_details, the
    visits lookup filters on the owner alone and the pets lookup on owner and species."""
    def change(draft: dict) -> None:
        state = json.loads(draft["initial_state_json"])
        state = {"pets": [{"id": f"P{i}", "owner": v["owner"], "name": v["pet"], "species": "dog" if i % 2 else "cat"}
                          for i, v in enumerate(state["visits"], 1)], **state}
        draft["initial_state_json"] = json.dumps(state)
        parameter = {"type": "string", "description": "the owner's name", "required": True}
        species = {"name": "species", "type": "string", "description": "cat or dog", "required": False}
        name = {"name": "name", "type": "string", "description": "the pet's name", "required": False}
        draft["tools"].insert(0, {**draft["tools"][0], "name": "find_pets", "description": "Pets of an owner.",
                                  "kind": "lookup", "parameters": [{**parameter, "name": "owner"}, species, name],
                                  "effect": "", "undone_by": "", "example_arguments_json": '{"owner": "Ana Ruiz"}',
                                  "impact_category": "", "impact_argument": ""})
        draft["implementation"] += ("\ndef find_pets(state, owner, species=None, name=None):\n    return [p for p in "
                                    "state['pets'] if p['owner'] == owner and species in (None, p['species']) and "
                                    "name in (None, p['name'])]\n")
        if several_details:
            finder = next(t for t in draft["tools"] if t["name"] == "find_visits")
            finder["parameters"] = [p for p in finder["parameters"] if p["name"] == "owner"]
    return change


def test_s1_and_s3_tasks_are_about_the_records_their_lookups_and_commits_serve() -> None:
    """Real-model answers were given records no commit changes (vehicles) for S1, and records of a collection
    the multi-detail lookup does not search for S3: the twins could not be written."""
    clinic_with_pets = bundle(with_owners_collection(several_details=False))
    assert assigned_records(clinic_with_pets, Scenario.S1, 0, 1)[0] == "visits"  # type: ignore[index]
    assert assigned_records(clinic_with_pets, Scenario.S3, 0, 1)[0] == "visits"  # type: ignore[index]
    only_pets_filter = bundle(with_owners_collection(several_details=True))
    assert assigned_records(only_pets_filter, Scenario.S1, 0, 1)[0] == "visits"  # type: ignore[index]
    assert assigned_records(only_pets_filter, Scenario.S3, 0, 1)[0] == "pets"  # type: ignore[index]


def test_s3_is_given_only_records_two_details_single_out_among_their_owners() -> None:
    """A real model was given classes whose type and time slot its owner's other records shared: no twin
    that swaps one detail left each detail singling out one record."""
    def same_day(draft: dict) -> None:
        state = json.loads(draft["initial_state_json"])
        state["visits"][1]["date"] = state["visits"][0]["date"]  # Ana Ruiz's two visits on one day
        draft["initial_state_json"] = json.dumps(state)

    found = assigned_records(bundle(same_day), Scenario.S3, 0, 1)
    assert found is not None and found[0] == "visits" and not {"V1", "V2"} & set(found[1]), found
    assert {"V1", "V2"} <= set(assigned_records(bundle(), Scenario.S3, 0, 1)[1])  # type: ignore[index]
