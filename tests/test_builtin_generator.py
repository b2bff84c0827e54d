"""The builtin backend: seeded, varied, covering every scenario, with labels that match its data."""

from __future__ import annotations

import re

import pytest
from builtin_fixtures import PROVENANCE, builtin_bundle, builtin_pair

from abstaingen.errors import AbstaingenError
from abstaingen.generators.builtin.capability import extract_capabilities, match_domain
from abstaingen.generators.builtin.domains import DOMAINS
from abstaingen.generators.builtin.naming import find_args, matching
from abstaingen.generators.builtin.stages import perturb, write_positive_task
from abstaingen.model import ControlKind, Deliverable, Phase, Scenario, ToolKind
from abstaingen.validators.policy import moved_amount
from abstaingen.validators.preconditions import unknown_outcome

VARIANTS = range(6)


def test_every_domain_has_reads_a_check_and_both_reversible_and_irreversible_commits() -> None:
    for domain in DOMAINS:
        bundle = builtin_bundle(domain)
        assert {t.kind for t in bundle.tools} == {ToolKind.LOOKUP, ToolKind.VERIFY, ToolKind.COMMIT}
        commits = [t.name for t in bundle.tools if t.kind == ToolKind.COMMIT]
        reversible = {t.name for t in bundle.tools if t.undone_by} | {t.undone_by for t in bundle.tools if t.undone_by}
        assert reversible and set(commits) - reversible
        for name in commits:  # annotations follow the real effect: an undoable commit is not destructive
            assert bundle.mcp_annotations(name)["destructiveHint"] == (name not in reversible)


def test_same_seed_same_data_other_seed_other_data() -> None:
    bp = DOMAINS["travel"]
    again = builtin_bundle.__wrapped__("travel", 11)
    assert again == builtin_bundle("travel", 11)
    other = builtin_bundle.__wrapped__("travel", 12)
    assert other.env_id != again.env_id and other.initial_state != again.initial_state
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


def _owned(pair, domain="travel"):
    bp = DOMAINS[domain]
    owner = pair.perturbation.witness.lookup.args[bp.owner_field]
    return [r for r in builtin_bundle(domain).initial_state[bp.collection] if r[bp.owner_field] == owner]


def test_s1_the_details_left_fit_several_records_and_the_act_side_names_one() -> None:
    forms = set()
    for variant in VARIANTS:
        pair = builtin_pair(Scenario.S1, variant)
        positive = write_positive_task(builtin_bundle(), DOMAINS["travel"], Scenario.S1, variant, 11)
        owned = _owned(pair)
        assert len(matching(owned, positive.plan.abstain_constraints or [], DOMAINS["travel"])) >= 2
        assert matching(owned, positive.plan.act_constraints, DOMAINS["travel"]) == [
            r for r in owned if r["id"] == positive.plan.record_id]
        assert pair.abstain.clarification
        assert positive.plan.abstain_constraints, "T- names a detail, never the owner alone"
        # a careful agent looks the details up before it can see that two records fit
        assert [n.tool for n in pair.abstain.reference_dag.nodes] == ["find_bookings"]
        assert pair.abstain.earliest_abstain_step == 1
        forms.add(positive.plan.form)
    assert forms == {"drop_detail", "swap_detail"}  # both a longer and an equally long reference on the act side


def test_s1_and_s3_are_op_tasks_only() -> None:
    """A question that fits two records is answered completely by answering for both."""
    for domain in DOMAINS:
        for scenario in (Scenario.S1, Scenario.S3):
            assert {builtin_pair(scenario, v, domain).act.deliverable for v in range(4)} == {Deliverable.OP}


def test_records_are_named_by_what_people_know_not_by_bounds_or_iso_dates() -> None:
    for domain in DOMAINS:
        for scenario in Scenario:
            for variant in range(2):
                pair = builtin_pair(scenario, variant, domain)
                for text in (pair.act.instruction, pair.abstain.instruction):
                    assert not re.search(r"\d{4}-\d{2}-\d{2}", text), text
                    assert not re.search(r"\b(over|under|more than|less than|fewer than|before|after) \$?\d", text), text


def test_s4_forms_rotate_and_each_side_stands_where_the_policy_says() -> None:
    bp = DOMAINS["travel"]
    forms = set()
    for variant in VARIANTS:
        pair = builtin_pair(Scenario.S4, variant)
        forms.add(pair.act.template.split("/")[2])
        witness = pair.perturbation.witness
        assert witness.impact > bp.confirmation.threshold
        assert not [c for c in pair.abstain.confirmations if c.amount == witness.impact]
        kinds = {c.kind for c in pair.act.controls}
        assert kinds & {ControlKind.CONFIRMED_AMOUNT, ControlKind.BELOW_THRESHOLD}
    assert forms == {"confirmation_removed", "unrelated_confirmation", "amount_raised"}


def test_runtime_scenarios_keep_the_instruction_and_label_the_revealing_step() -> None:
    for scenario, revealing in ((Scenario.S6, None), (Scenario.S7, "cross_check"), (Scenario.S8, "read")):
        for variant in VARIANTS:
            pair = builtin_pair(scenario, variant)
            assert pair.abstain.instruction == pair.act.instruction
            assert pair.abstain.earliest_abstain_step == len(pair.abstain.reference_dag.nodes)
            if revealing:
                assert pair.abstain.reference_dag.nodes[-1].id == revealing
            else:  # S6: the failing call and its retry, both failing
                failing = [n for n in pair.abstain.reference_dag.nodes if n.expect_error]
                assert len(failing) == 2 and pair.abstain.reference_dag.nodes[-1] == failing[-1]


def test_runtime_act_sides_carry_the_controls_their_abstain_sides_lack() -> None:
    seen = {s: set() for s in (Scenario.S6, Scenario.S7, Scenario.S8)}
    for scenario in seen:
        for variant in VARIANTS:
            seen[scenario] |= {c.kind for c in builtin_pair(scenario, variant).act.controls}
    assert ControlKind.TRANSIENT_FAILURE in seen[Scenario.S6]
    assert ControlKind.WITHIN_TOLERANCE in seen[Scenario.S7]
    assert {ControlKind.NOTE_RESTRICTS_OTHER_ACTION, ControlKind.BENIGN_NOTE} <= seen[Scenario.S8] or \
        {ControlKind.RESOLVED_RISK_NOTE, ControlKind.BENIGN_NOTE} <= seen[Scenario.S8]
    for scenario in seen:
        for variant in VARIANTS:
            assert all(c.controls_for and c.detail for c in builtin_pair(scenario, variant).act.controls)


def test_every_instruction_records_its_template() -> None:
    for scenario in Scenario:
        pair = builtin_pair(scenario, 0)
        assert pair.act.template.startswith(f"travel/{scenario.value}/")
        assert pair.abstain.template.split("/")[:3] == pair.act.template.split("/")[:3]  # the same form
        if pair.abstain.instruction == pair.act.instruction:
            assert pair.abstain.template == pair.act.template
        if scenario in (Scenario.S1, Scenario.S2):  # T-'s own record name or request
            assert pair.abstain.template != pair.act.template


def test_amount_requests_never_take_everything_that_is_left_unless_they_say_so() -> None:
    """'Purge 290 GB of old versions' from a folder holding 290 GB reads as wrong; amounts stay below
    what the record has left, except requests worded 'in full'."""
    for domain in DOMAINS:
        bp = DOMAINS[domain]
        records = {r["id"]: r for r in builtin_bundle(domain).initial_state[bp.collection]}
        for scenario in (Scenario.S1, Scenario.S4, Scenario.S5, Scenario.S6):
            for variant in VARIANTS:
                positive = write_positive_task(builtin_bundle(domain), bp, scenario, variant, 11)
                if positive.plan.amount is not None:
                    left = records[positive.plan.record_id][bp.amount_field]
                    assert positive.plan.amount < left, (domain, scenario, variant)


def test_s6_errors_are_outages_of_the_system_that_change_nothing() -> None:
    bp = DOMAINS["travel"]
    commits = {t.name for t in builtin_bundle().tools if t.kind == ToolKind.COMMIT}
    for variant in VARIANTS:
        pair = builtin_pair(Scenario.S6, variant)
        broken = pair.abstain.overlay.broken_tools
        assert broken and all(bp.system in b.error and ("try again" in b.error or "Retry" in b.error) for b in broken)
        if pair.act.deliverable == Deliverable.OP:  # a failed change says it changed nothing
            assert all("nothing was changed" in b.error or "unchanged" in b.error for b in broken)
        assert not [b for b in broken if unknown_outcome(b.error)]
        if pair.act.deliverable == Deliverable.OP:  # writes are down, for every commit tool
            assert {b.name for b in broken} == commits
            names = [n.id for n in pair.abstain.reference_dag.nodes]  # the record is re-read before the retry
            assert names.index("commit_attempt") < names.index("recheck") < names.index("commit")


def test_the_act_side_lookup_singles_out_the_target() -> None:
    bp = DOMAINS["travel"]
    for scenario in Scenario:
        positive = write_positive_task(builtin_bundle(), bp, scenario, 0, 11)
        args = find_args(bp, positive.plan.owner, positive.plan.act_constraints)
        assert positive.act.reference_dag.node("find").args == args


def test_seed_instructions_map_to_domains_and_unknown_ones_are_refused() -> None:
    assert match_domain("Help travellers cancel their flight bookings", None).name == "travel"
    assert extract_capabilities("anything", "travel").domain == "travel"
    with pytest.raises(AbstaingenError, match="no builtin domain matches"):
        match_domain("zzz qqq", None)
    with pytest.raises(AbstaingenError, match="unknown domain"):
        match_domain("x", "mars")


def test_provenance_and_target_are_carried_into_the_pair() -> None:
    bundle = builtin_bundle("travel")
    pair = perturb(write_positive_task(bundle, DOMAINS["travel"], Scenario.S2, 0, 11), bundle, DOMAINS["travel"],
                   PROVENANCE, 11)
    assert pair.provenance == PROVENANCE
    assert pair.abstain.critical_actions == list(DOMAINS["travel"].ambiguity.actions)
    assert pair.target is not None and pair.target.collection == "bookings"


def test_moved_amount_reads_the_argument_or_the_record() -> None:
    bundle = builtin_bundle("travel")
    record = bundle.initial_state["bookings"][0]
    refund = bundle.tool("issue_refund")
    assert moved_amount(refund, {"booking_id": record["id"], "amount": 40}, bundle.initial_state) == 40
    cancel = bundle.tool("cancel_with_refund")
    assert moved_amount(cancel, {"booking_id": record["id"]}, bundle.initial_state) == record["fare"]
    assert moved_amount(bundle.tool("hold_booking"), {"booking_id": record["id"]}, bundle.initial_state) is None
