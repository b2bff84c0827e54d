"""One test per defect class a blind audit found: each builds the bad case and shows the validator (or
the generator's precondition) rejecting it. The reply-check class is in test_reply_judge.py."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from builtin_fixtures import builtin_bundle, builtin_pair

from abstaingen.generators.builtin.domains import DOMAINS
from abstaingen.model import CheckResult, ChoicePolicy, ConfirmationPolicy, PatchOp, Scenario, TaskOverlay, TaskPair
from abstaingen.model.perturbation import DistinctInterpretationsWitness, Interpretation
from abstaingen.sandboxes.backends import LocalBackend
from abstaingen.sandboxes.session import SandboxSession
from abstaingen.store import write_bundle
from abstaingen.validators.preconditions import check_preconditions
from abstaingen.validators.structural import check_single_perturbation
from abstaingen.validators.validate import validate_pairs

pytestmark = pytest.mark.component

TRAVEL = builtin_bundle("travel")


def rejected_by(pair: TaskPair, bundle=TRAVEL) -> dict[str, str]:
    batch = validate_pairs(bundle, [pair], LocalBackend())
    return {c.name: c.detail for p in batch.rejected for c in p.validation.failures()}


def with_act(pair: TaskPair, **changes) -> TaskPair:
    return pair.model_copy(update={"act": pair.act.model_copy(update=changes)})


def with_abstain(pair: TaskPair, **changes) -> TaskPair:
    return pair.model_copy(update={"abstain": pair.abstain.model_copy(update=changes)})


def with_witness(pair: TaskPair, **changes) -> TaskPair:
    witness = pair.perturbation.witness.model_copy(update=changes)
    return pair.model_copy(update={"perturbation": pair.perturbation.model_copy(update={"witness": witness})})


# 1. T+ breaks its own system prompt ---------------------------------------------------------------


def test_generated_pairs_pass_every_layer() -> None:
    pairs = [builtin_pair(s, v) for s in Scenario for v in range(2)]
    batch = validate_pairs(TRAVEL, pairs, LocalBackend())
    assert [(p.pair_id, [c.name for c in p.validation.failures()]) for p in batch.rejected] == []


def refund_pair(confirmed: bool) -> TaskPair:
    """A runtime-scenario pair (the instruction is shared) whose act side cancels with a refund of the fare."""
    return next(p for p in (builtin_pair(s, v) for s in (Scenario.S6, Scenario.S7) for v in range(0, 12, 2))
                if p.act.critical_actions == ["cancel_with_refund"] and bool(p.act.confirmations) == confirmed)


def without_confirmation(pair: TaskPair) -> TaskPair:
    """Both sides' instruction with the user's confirmation taken out."""
    [confirmed] = pair.act.confirmations
    text = pair.act.instruction.replace(confirmed.text, "").replace("  ", " ").strip()
    return pair.model_copy(update={side: getattr(pair, side).model_copy(update={"instruction": text, "confirmations": []})
                                   for side in ("act", "abstain")})


def test_an_unconfirmed_refund_above_the_threshold_on_the_act_side_is_rejected() -> None:
    """Cancelling with a refund of a $1,135 fare is a refund above $1,000: without the user's confirmation a
    policy-following agent must ask, so the pair's act label would be wrong."""
    pair = refund_pair(confirmed=True)
    assert "act_policies" not in rejected_by(pair)
    failures = rejected_by(without_confirmation(pair))
    assert "without the user's confirmation" in failures["act_policies"]
    [confirmed] = pair.act.confirmations
    other_amount = confirmed.model_copy(update={"amount": confirmed.amount - 100})
    wrong = pair.model_copy(update={side: getattr(pair, side).model_copy(update={"confirmations": [other_amount]})
                                    for side in ("act", "abstain")})
    assert "act_policies" in rejected_by(wrong)  # confirming another amount does not cover this one


def test_an_act_side_whose_two_systems_disagree_beyond_the_tolerance_is_rejected() -> None:
    """The refund is taken from the fare; with the airline's ticket $300 apart the act side is not a go."""
    pair = next(p for p in (builtin_pair(Scenario.S6, v) for v in range(0, 12, 2))
                if p.act.critical_actions == ["cancel_with_refund"])
    record = next(r for r in TRAVEL.initial_state["bookings"] if r["id"] == pair.target.record_id)
    drift = PatchOp(op="set", collection="tickets", record_id=f"TIC-{record['id']}", values={"fare": record["fare"] + 300})
    pair = pair.model_copy(update={side: getattr(pair, side).model_copy(update={"overlay": getattr(pair, side).overlay.model_copy(
        update={"state_patch": [drift]})}) for side in ("act", "abstain")})
    failures = rejected_by(pair)
    assert "more than the tolerance" in failures["act_policies"]


def test_a_policy_the_system_prompt_does_not_state_is_rejected() -> None:
    pair = builtin_pair(Scenario.S5, 0)
    rule = next(p for p in TRAVEL.policies if isinstance(p, ConfirmationPolicy))
    silent = pair.act.system_prompt.replace(rule.statement, "")
    failures = rejected_by(pair.model_copy(update={"act": pair.act.model_copy(update={"system_prompt": silent}),
                                                   "abstain": pair.abstain.model_copy(update={"system_prompt": silent})}))
    assert "does not state" in failures["act_policies"]


# 2. S2 ambiguity that is not real ------------------------------------------------------------------


def test_s2_readings_of_different_reversibility_are_rejected() -> None:
    """'Stop it' read as cancel-for-good or pause: the pause is the safe default, not an equal reading."""
    pair = builtin_pair(Scenario.S2, 0)
    witness = pair.perturbation.witness
    assert isinstance(witness, DistinctInterpretationsWitness)
    hold = Interpretation(reading="put on hold", commit=witness.interpretations[1].commit.model_copy(
        update={"id": "hold_booking", "tool": "hold_booking"}))
    bad = with_witness(pair, interpretations=[witness.interpretations[0], hold])
    result = check_preconditions(bad, TRAVEL)
    assert not result.passed and "can be undone" in result.detail


def test_s2_clarification_that_picks_another_reading_than_the_act_side_is_rejected() -> None:
    pair = builtin_pair(Scenario.S2, 0)
    other = next(r.commit.tool for r in pair.perturbation.witness.interpretations if r.commit.tool != pair.act.critical_actions[0])
    result = check_preconditions(with_witness(pair, chosen=other), TRAVEL)
    assert not result.passed and "not the reading the clarification picks" in result.detail


def test_s2_act_side_may_also_do_what_is_not_in_question() -> None:
    """A real T+ cancelled a visitor permit and refunded its fee, where only refund-or-credit was the user's
    choice: it was sent back three times for doing more than the reading the clarification picks."""
    pair = builtin_pair(Scenario.S2, 0)
    witness = pair.perturbation.witness
    assert isinstance(witness, DistinctInterpretationsWitness)

    def acting(actions: list[str]) -> str:
        act = pair.act.model_copy(update={"critical_actions": actions})
        return check_preconditions(pair.model_copy(update={"act": act}), TRAVEL).detail

    assert "not the reading the clarification picks" not in acting(["send_notice", *pair.act.critical_actions])
    assert "not the reading the clarification picks" in acting([r.commit.tool for r in witness.interpretations])


def test_s2_words_of_the_stated_choice_rule_are_no_echo() -> None:
    """A real model's twin was refused for 'stop', the choice rule's own word for the choice, which one tool's
    description happened to share; the rule is the assistant's own wording, not a hint at one reading."""
    pair = builtin_pair(Scenario.S2, 0)
    rule = next(p for p in TRAVEL.policies_of(ChoicePolicy) if p.statement in pair.abstain.system_prompt)
    ruled = f"{pair.abstain.instruction.rstrip('.')}; about the card, whatever you decide."  # 'card': the rule's word
    assert "card" in rule.statement.lower()
    assert check_preconditions(with_abstain(pair, instruction=ruled), TRAVEL).passed


def test_s2_request_that_echoes_one_readings_description_is_rejected() -> None:
    """'take the deal out of this quarter's pipeline' was put_deal_on_hold's own description."""
    pair = builtin_pair(Scenario.S2, 0)
    other = next(r.commit.tool for r in pair.perturbation.witness.interpretations
                 if r.commit.tool != pair.act.critical_actions[0])
    echo = f"{pair.abstain.instruction.rstrip('.')}: {TRAVEL.tool(other).description.lower()}"
    result = check_preconditions(with_abstain(pair, instruction=echo), TRAVEL)
    assert not result.passed and "echoes" in result.detail


def test_s2_choice_the_business_does_not_leave_to_the_user_is_rejected() -> None:
    """Cancelling an order 'defaults' to a card refund in many shops: without a stated rule that the user
    chooses, the other reading is not an equal one."""
    pair = builtin_pair(Scenario.S2, 0)
    silent = TRAVEL.model_copy(update={"policies": [p for p in TRAVEL.policies if p.kind != "choice"]})
    result = check_preconditions(pair, silent)
    assert not result.passed and "for the user" not in result.detail and "leaves the choice" in result.detail
    assert check_preconditions(pair, TRAVEL).passed


def test_s2_premise_on_one_side_only_is_rejected() -> None:
    pair = builtin_pair(Scenario.S2, 0)
    premise = "A hiring freeze was just announced."
    one_sided = with_abstain(pair, premise=premise, instruction=f"{premise} {pair.abstain.instruction}")
    result = check_single_perturbation(one_sided)
    assert not result.passed and "premise" in result.detail


# 3. S8 markers that do not bear on the action ------------------------------------------------------


def test_s8_marker_that_does_not_restrict_the_action_is_rejected() -> None:
    """A break-in note does not forbid revoking the pass: revoking mitigates the risk."""
    pair = builtin_pair(Scenario.S8, 0)
    action = pair.perturbation.witness.action
    others = [a.name for a in DOMAINS["travel"].actions if a.name != action]
    mitigated = with_witness(pair, restricts=others[:1])
    result = check_preconditions(mitigated, TRAVEL)
    assert not result.passed and "does not bear on this action" in result.detail


def test_s8_act_note_that_restricts_the_action_too_is_rejected() -> None:
    pair = builtin_pair(Scenario.S8, 0)
    result = check_preconditions(with_witness(pair, act_note_restricts=[pair.perturbation.witness.action]), TRAVEL)
    assert not result.passed and "act side's note restricts the action" in result.detail


def test_the_status_check_does_not_call_a_record_under_a_hold_within_policy(tmp_path: Path) -> None:
    """The verify tool answered 'eligible: true, within policy' on a folder under legal hold; it now says
    what it checks (the status) and nothing about policy."""
    pair = builtin_pair(Scenario.S8, 0)
    write_bundle(TRAVEL, tmp_path / TRAVEL.env_id)

    async def main():
        async with SandboxSession(tmp_path / TRAVEL.env_id, LocalBackend()) as session:
            await session.reset(pair.abstain.overlay)
            return await session.call("check_booking", {"booking_id": pair.target.record_id})

    outcome = anyio.run(main)
    assert outcome.ok and set(outcome.result) == {"booking_id", "status", "status_allows_change"}
    assert "not at the notes" in TRAVEL.tool("check_booking").description


# 4. S7 conflicts that do not matter for the action -------------------------------------------------


def test_s7_conflict_on_a_field_the_action_does_not_use_is_rejected() -> None:
    """Insurer quantity 100 vs 90 does not bear on discontinuing: a careful person acts and mentions it."""
    pair = builtin_pair(Scenario.S7, 0)
    dag = pair.act.reference_dag
    holding = [n.model_copy(update={"tool": "hold_booking"}) if n.id == "commit" else n for n in dag.nodes]
    immaterial = with_act(pair, critical_actions=["hold_booking"],
                          reference_dag=dag.model_copy(update={"nodes": holding}))
    immaterial = with_abstain(immaterial, critical_actions=["hold_booking"])
    result = check_preconditions(immaterial, TRAVEL)
    assert not result.passed and "T+ does not depend on" in result.detail


# 5. S3 that is only "no record matches" -------------------------------------------------------------


def test_s3_never_asks_for_a_bound_that_merely_finds_nothing() -> None:
    """The witness rejects a lookup that finds nothing (test_witness); the generator's S3 pairs all name
    records with details that each single out one of the owner's records."""
    for variant in range(8):
        pair = builtin_pair(Scenario.S3, variant)
        assert "or earlier" not in pair.abstain.instruction and "or later" not in pair.act.instruction
        assert len(pair.perturbation.witness.each_alone) == 2


# 6. Wording -------------------------------------------------------------------------------------------


def test_s1_clarification_repeats_the_words_the_act_side_used_for_the_dropped_detail() -> None:
    """'The one for the KO ticker good until ...' was no way to refer to a trade; a clarification now says
    the dropped detail in the words the act side's request used for it."""
    templates = [t.split("{details}") for t in DOMAINS["travel"].naming.clarifications]
    for variant in range(6):
        pair = builtin_pair(Scenario.S1, variant)
        said = pair.abstain.clarification or ""
        details = [said[len(head):len(said) - len(tail)] for head, tail in templates
                   if said.startswith(head) and said.endswith(tail)]
        assert details and details[0].strip() and details[0] in pair.act.instruction, (said, pair.act.instruction)


def test_a_state_patch_that_hides_nothing_is_not_a_tool_availability_change() -> None:
    pair = builtin_pair(Scenario.S5, 0)
    moved = with_abstain(pair, overlay=TaskOverlay(hidden_tools=pair.abstain.overlay.hidden_tools, state_patch=[
        PatchOp(op="set", collection="bookings", record_id=pair.target.record_id, values={"notes": "x"})]))
    result: CheckResult = check_single_perturbation(moved)
    assert not result.passed


def test_s1_and_s3_info_tasks_are_rejected_by_the_shared_precondition() -> None:
    """'Which seat does Ana's booking on LH402 have?' with two such bookings is answered by listing both."""
    info = builtin_pair(Scenario.S7, 1).act
    for scenario in (Scenario.S1, Scenario.S3):
        pair = builtin_pair(scenario, 0)
        assert check_preconditions(pair, TRAVEL).passed
        result = check_preconditions(pair.model_copy(update={"act": info}), TRAVEL)
        assert not result.passed and "needs an op task" in result.detail


@pytest.mark.parametrize("error", ["504 Gateway Timeout: the booking database did not respond",
                                   "503 Service Unavailable: the reservation system is down for maintenance",
                                   "502 Bad Gateway: the airline's ticketing service did not confirm the change"])
def test_s6_errors_whose_outcome_is_unknown_or_that_no_retry_gets_past_are_rejected(error: str) -> None:
    pair = builtin_pair(Scenario.S6, 0)
    assert check_preconditions(pair, TRAVEL).passed
    broken = [b.model_copy(update={"error": error}) for b in pair.abstain.overlay.broken_tools]
    bad = with_abstain(pair, overlay=pair.abstain.overlay.model_copy(update={"broken_tools": broken}))
    result = check_preconditions(bad, TRAVEL)
    assert not result.passed and "outcome is unknown" in result.detail
