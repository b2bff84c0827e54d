"""The builtin domain library: every blueprint keeps the rules the generator and its labels rely on
(generators/builtin/domains/README.md says what they mean)."""

from __future__ import annotations

import re
import string
from datetime import date

import pytest
from builtin_fixtures import builtin_bundle, builtin_pair

from abstaingen.generators.builtin.blueprint import DISCLOSE, DomainBlueprint
from abstaingen.generators.builtin.capability import match_domain
from abstaingen.generators.builtin.domains import DOMAINS
from abstaingen.generators.builtin.naming import MONTHS
from abstaingen.model import Scenario
from abstaingen.validators.preconditions import echo_imbalance
from abstaingen.validators.structural import structural_checks

IDENTIFIER = re.compile(r"^[a-z][a-z0-9_]{0,39}$")


def slots(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def tool_names(bp: DomainBlueprint) -> list[str]:
    undos = [a.undo.name for a in bp.actions if a.undo]
    return [bp.find_tool, bp.get_tool, bp.mirror_tool, bp.verify_name, *(a.name for a in bp.actions), *undos]


@pytest.mark.parametrize("name", list(DOMAINS))
def test_names_and_tools(name: str) -> None:
    bp = DOMAINS[name]
    identifiers = [bp.entity, bp.collection, bp.owner_field, bp.key.name, bp.amount_field, bp.info_field,
                   bp.amount_used_field, bp.mirror.collection, bp.mirror.entity, *tool_names(bp)]
    assert all(IDENTIFIER.match(i) for i in identifiers), identifiers
    assert len(set(tool_names(bp))) == len(tool_names(bp))
    assert bp.entity != bp.mirror.entity and bp.collection != bp.mirror.collection
    assert len(bp.key.choices) >= 8 and len(set(bp.key.choices)) == len(bp.key.choices)
    assert len(bp.info_choices) >= 6 and (not bp.owners or len(set(bp.owners)) >= 20)
    assert match_domain(bp.seed_instruction, None).name == name


@pytest.mark.parametrize("name", list(DOMAINS))
def test_actions(name: str) -> None:
    bp = DOMAINS[name]
    amount_actions = [a for a in bp.actions if a.is_amount_action]
    assert len(amount_actions) == 1 and len(bp.status_actions) >= 3
    statuses = [a.new_status for a in bp.status_actions]
    assert len(set(statuses)) == len(statuses) and "active" not in statuses
    assert any(a.undo for a in bp.status_actions), "at least one reversible action"
    for action in bp.actions:
        assert len(action.requests) >= 2 and action.summary and action.description
        for request in action.requests:
            assert slots(request) == ({"name", "amount"} if action.is_amount_action else {"name"}), request
        assert all(slots(r) == {"name"} for r in action.full_requests)
        assert not (action.moves_record_amount and action.undo), "money that moved cannot be undone by a status"
    assert amount_actions[0].full_requests or any(a.moves_record_amount for a in bp.actions), \
        "S7 needs an action that depends on the amount"


@pytest.mark.parametrize("name", list(DOMAINS))
def test_policy_and_amounts(name: str) -> None:
    bp = DOMAINS[name]
    low, high = bp.amount_range
    assert 5 <= low < bp.confirmation.threshold < high
    assert len(bp.confirmation.confirmations) >= 3 and len(bp.confirmation.unrelated_confirmations) >= 3
    assert all("amount" in slots(c) for c in bp.confirmation.confirmations)
    assert all("amount" not in slots(c) for c in bp.confirmation.unrelated_confirmations)
    assert 0 <= bp.mirror.tolerance < low / 5 and bp.mirror.tolerance_reason


@pytest.mark.parametrize("name", list(DOMAINS))
def test_ambiguity(name: str) -> None:
    bp = DOMAINS[name]
    first, second = (bp.action(a) for a in bp.ambiguity.actions)
    assert not first.is_amount_action and not second.is_amount_action and first.name != second.name
    assert (first.undo is None) == (second.undo is None), "both readings irreversible, or both reversible"
    assert first.clarification and second.clarification
    assert len(bp.ambiguity.requests) >= 3 and all(slots(r) == {"name"} for r in bp.ambiguity.requests)
    assert all(slots(p) <= {"owner"} for p in bp.ambiguity.premises)
    for request in bp.ambiguity.requests:
        problem = echo_imbalance(request.format(name=""), first.description, second.description)
        assert problem is None, (request, problem)


@pytest.mark.parametrize("name", list(DOMAINS))
def test_notes_and_errors(name: str) -> None:
    bp = DOMAINS[name]
    actions = {a.name for a in bp.actions}
    assert len(bp.benign_notes) >= 5 and len(bp.risks) >= 4
    for risk in bp.risks:
        assert set(risk.restricts) <= actions | {DISCLOSE} and risk.restricts, risk.text
        assert risk.resolved and risk.resolved != risk.text
    restricted = {r for risk in bp.risks for r in risk.restricts}
    assert actions | {DISCLOSE} <= restricted, "every action (and sharing) is restricted by some note"
    assert any(DISCLOSE not in risk.restricts for risk in bp.risks), "an info act side needs a note that allows it"
    for action in actions:
        assert any(action not in risk.restricts for risk in bp.risks) or len(bp.benign_notes) >= 5
    assert bp.system.startswith("the ")  # what a service error names: "the reservation system"


@pytest.mark.parametrize("name", list(DOMAINS))
def test_naming_pools(name: str) -> None:
    naming = DOMAINS[name].naming
    assert all(slots(h) == {"owner"} for h in naming.heads)
    for pool, slot in ((naming.key, "key"), (naming.date, "date"), (naming.month, "month")):
        assert pool and all(p.startswith(" ") and slots(p) == {slot} for p in pool), pool
    assert all(slots(c) == {"details"} for c in naming.clarifications)
    questions = (*DOMAINS[name].info_questions, *DOMAINS[name].amount_questions)
    assert all(slots(q) == {"name"} for q in questions) and len(DOMAINS[name].info_questions) >= 3


@pytest.mark.parametrize("name", list(DOMAINS))
def test_every_scenario_builds_a_structurally_valid_pair(name: str) -> None:
    bundle = builtin_bundle(name)
    for scenario in Scenario:
        for variant in range(4):
            pair = builtin_pair(scenario, variant, name)
            failed = [c for c in structural_checks(pair, bundle) if not c.passed]
            assert not failed, [(c.name, c.detail) for c in failed]


@pytest.mark.parametrize("name", list(DOMAINS))
def test_generated_text_uses_the_right_article(name: str) -> None:
    pairs = [builtin_pair(s, 0, name) for s in Scenario]
    texts = [pairs[0].act.system_prompt, *(p.abstain.abstention_trigger or "" for p in pairs),
             *(p.perturbation.description for p in pairs), *(p.act.instruction for p in pairs)]
    assert not [t for t in texts if re.search(r"\b[Aa] [aeiou]", t)]


def test_no_person_is_a_customer_of_two_domains() -> None:
    """The same 48 people used to hold records in all 12 domains."""
    for seed in (11, 12):
        seen: dict[str, str] = {}
        for name in DOMAINS:
            bp = DOMAINS[name]
            for owner in {r[bp.owner_field] for r in builtin_bundle(name, seed).initial_state[bp.collection]}:
                assert seen.setdefault(owner, name) == name, (owner, seen[owner], name)


@pytest.mark.parametrize("name", list(DOMAINS))
def test_the_system_prompt_says_what_day_it_is_and_the_dates_follow(name: str) -> None:
    bp, bundle = DOMAINS[name], builtin_bundle(name)
    prompt = builtin_pair(Scenario.S1, 0, name).act.system_prompt
    said = re.search(r"Today is (\d{1,2}) (\w+) (\d{4})\.", prompt)
    assert said, prompt
    day = date(int(said[3]), MONTHS.index(said[2]) + 1, int(said[1])).isoformat()
    dates = [r["date"] for r in bundle.initial_state[bp.collection] if r["status"] == "active"]
    assert (max(dates) < day) if bp.past_dates else (day < min(dates))
    closed = [r for r in bundle.initial_state[bp.collection] if r["status"] != "active"]
    assert closed and all(r["status"] == bp.closed_status and r["date"] < min(dates) for r in closed)


@pytest.mark.parametrize("name", list(DOMAINS))
def test_a_closed_record_shares_no_detail_with_its_owners_active_ones(name: str) -> None:
    """History makes a world believable; it must not make a reference ambiguous or give a task a closed target."""
    bp, records = DOMAINS[name], builtin_bundle(name).initial_state[DOMAINS[name].collection]
    for closed in (r for r in records if r["status"] != "active"):
        active = [r for r in records if r[bp.owner_field] == closed[bp.owner_field] and r["status"] == "active"]
        assert all(closed[bp.key.name] != r[bp.key.name] and closed["date"][:7] != r["date"][:7] for r in active)
    targets = {builtin_pair(s, v, name).target.record_id for s in Scenario for v in range(2)}
    assert all(r["status"] == "active" for r in records if r["id"] in targets)
