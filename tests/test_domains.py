"""The builtin domain library: every blueprint keeps the invariants the generator and validators rely on."""

from __future__ import annotations

import re

import pytest
from builtin_fixtures import builtin_bundle, builtin_pair

from abstaingen.generators.builtin.capability import match_domain
from abstaingen.generators.builtin.domains import DOMAINS
from abstaingen.model import Scenario
from abstaingen.validators.structural import structural_checks

IDENTIFIER = re.compile(r"^[a-z][a-z0-9_]{0,39}$")


@pytest.mark.parametrize("name", list(DOMAINS))
def test_blueprint_is_well_formed(name: str) -> None:
    bp = DOMAINS[name]
    identifiers = [bp.entity, bp.collection, bp.owner_field, bp.key.name, bp.amount_field, bp.info_field,
                   bp.mirror_collection, bp.mirror_entity, bp.verify_name, bp.primary.name, bp.alternate.name,
                   bp.amount_commit.name, bp.amount_commit.field, bp.primary.new_status, bp.alternate.new_status]
    assert all(IDENTIFIER.match(i) for i in identifiers), identifiers
    tools = [bp.find_tool, bp.get_tool, bp.mirror_tool, bp.verify_name, bp.primary.name, bp.alternate.name,
             bp.amount_commit.name]
    assert len(set(tools)) == len(tools)
    assert bp.entity != bp.mirror_entity
    assert len({"active", bp.primary.new_status, bp.alternate.new_status}) == 3
    low, high = bp.amount_range
    assert low < bp.amount_commit.threshold < high and low >= 5  # amounts are rounded down to a multiple of 5
    assert len(bp.key.choices) >= 6 and len(bp.info_choices) >= 6
    assert len(bp.risk_markers) >= 3 and len(bp.outage_errors) >= 2
    assert len(set(bp.owners)) >= 8
    assert all(f"{{{k}}}" in bp.target for k in ("owner", "key", "date"))
    assert "{target}" in bp.ambiguous_request
    assert "{amount}" in bp.amount_commit.request and "{target}" in bp.amount_commit.request
    assert match_domain(bp.seed_instruction, None).name == name


@pytest.mark.parametrize("name", list(DOMAINS))
def test_every_scenario_builds_a_structurally_valid_pair(name: str) -> None:
    bundle = builtin_bundle(name)
    for scenario in Scenario:
        for variant in (0, 1):
            pair = builtin_pair(scenario, variant, name)
            failed = [c for c in structural_checks(pair, bundle) if not c.passed]
            assert not failed, [(c.name, c.detail) for c in failed]


@pytest.mark.parametrize("name", list(DOMAINS))
def test_generated_text_uses_the_right_article(name: str) -> None:
    pair = builtin_pair(Scenario.S5, 0, name)
    texts = [pair.act.system_prompt, pair.abstain.abstention_trigger, pair.perturbation.description]
    assert not [t for t in texts if re.search(r"\b[Aa] [aeiou]", t)]
