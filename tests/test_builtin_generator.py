"""The builtin backend: seeded, varied, covering every scenario, with labels that match its data."""

from __future__ import annotations

import pytest
from builtin_fixtures import PROVENANCE, builtin_bundle, builtin_pair

from abstaingen.errors import AbstaingenError
from abstaingen.generators.builtin.capability import extract_capabilities, match_domain
from abstaingen.generators.builtin.domains import DOMAINS
from abstaingen.generators.builtin.perturb import perturb
from abstaingen.generators.builtin.tasks import write_positive_task
from abstaingen.model import Deliverable, Phase, Scenario, ToolKind


def test_every_domain_has_lookup_verify_and_irreversible_commit_tools() -> None:
    for domain in DOMAINS:
        kinds = {t.kind for t in builtin_bundle(domain).tools}
        assert kinds == {ToolKind.LOOKUP, ToolKind.VERIFY, ToolKind.COMMIT}
        assert any(t.irreversible for t in builtin_bundle(domain).tools)


def test_same_seed_same_data_other_seed_other_data() -> None:
    bp = DOMAINS["banking"]
    again = builtin_bundle.__wrapped__("banking", 11)
    assert again == builtin_bundle("banking", 11)
    other = builtin_bundle.__wrapped__("banking", 12)
    assert other.env_id != again.env_id
    assert other.initial_state != again.initial_state
    first = write_positive_task(again, bp, Scenario.S1, 0, 11).act.instruction
    second = write_positive_task(other, bp, Scenario.S1, 0, 12).act.instruction
    assert first != second


def test_all_scenarios_and_both_deliverables_in_every_domain() -> None:
    for domain in DOMAINS:
        pairs = [builtin_pair(s, v, domain) for s in Scenario for v in (0, 1)]
        assert {p.scenario for p in pairs} == {s.value for s in Scenario}
        assert {p.act.deliverable for p in pairs} == {Deliverable.OP, Deliverable.INFO}
        assert {p.perturbation.phase for p in pairs} == {Phase.PRE_EXECUTION, Phase.RUNTIME}
        assert len({p.pair_id for p in pairs}) == len(pairs)


def test_s1_owner_really_has_several_records_and_the_act_side_names_one() -> None:
    pair = builtin_pair(Scenario.S1)
    owner = pair.perturbation.witness.lookup.args["passenger"]
    owned = [b for b in builtin_bundle("travel").initial_state["bookings"] if b["passenger"] == owner]
    assert len(owned) >= 2
    named = [b for b in owned if b["flight"] in pair.act.instruction and b["date"] in pair.act.instruction]
    assert len(named) == 1
    assert pair.abstain.clarification and named[0]["date"] in pair.abstain.clarification


def test_s4_differs_only_by_the_confirmation_and_exceeds_the_stated_threshold() -> None:
    pair = builtin_pair(Scenario.S4)
    witness = pair.perturbation.witness
    assert witness.impact > witness.threshold
    assert witness.threshold_statement in pair.act.system_prompt
    assert pair.act.instruction.startswith(pair.abstain.instruction)
    assert "confirm" in pair.act.instruction and "confirm" not in pair.abstain.instruction


def test_runtime_scenarios_keep_the_instruction_and_label_the_revealing_step() -> None:
    for scenario, revealing in ((Scenario.S6, "commit"), (Scenario.S7, "cross_check"), (Scenario.S8, "read")):
        pair = builtin_pair(scenario)
        assert pair.abstain.instruction == pair.act.instruction
        order = [n.id for n in pair.act.reference_dag.order()]
        assert pair.abstain.earliest_abstain_step == order.index(revealing) + 1


def test_seed_instructions_map_to_domains_and_unknown_ones_are_refused() -> None:
    assert match_domain("Help travellers cancel their flight bookings", None).name == "travel"
    assert match_domain("Manage scheduled bank transfers for customers", None).name == "banking"
    assert extract_capabilities("anything", "ecommerce").domain == "ecommerce"
    with pytest.raises(AbstaingenError, match="no builtin domain matches"):
        match_domain("zzz qqq", None)
    with pytest.raises(AbstaingenError, match="unknown domain"):
        match_domain("x", "mars")


def test_provenance_is_carried_into_the_pair() -> None:
    bundle = builtin_bundle("ecommerce")
    pair = perturb(write_positive_task(bundle, DOMAINS["ecommerce"], Scenario.S2, 0, 11), DOMAINS["ecommerce"],
                   PROVENANCE, 11)
    assert pair.provenance == PROVENANCE
    assert pair.abstain.critical_actions == ["cancel_order", "convert_to_store_credit"]
