"""The shortcut gate: a scenario whose sides one surface feature separates is refused."""

from __future__ import annotations

from builtin_fixtures import builtin_bundle, builtin_pair

from abstaingen.generators.builtin.domains import DOMAINS
from abstaingen.model import PatchOp, Scenario, TaskOverlay, TaskPair
from abstaingen.validators.shortcuts import (
    LIMIT,
    MIN_PAIRS,
    bare_reference,
    best_rule,
    instruction_features,
    shortcut_report,
    target_record,
)

BUNDLES = [builtin_bundle(d) for d in DOMAINS]
BY_ENV = {b.env_id: b for b in BUNDLES}
PAIRS = [builtin_pair(s, v, d) for d in DOMAINS for s in Scenario for v in range(2)]


def scores(pairs: list[TaskPair]):
    return {s.scenario: s for s in shortcut_report(pairs, BUNDLES)}


def test_generated_pairs_have_no_one_feature_shortcut() -> None:
    report = scores(PAIRS)
    assert set(report) == {s.value for s in Scenario}
    for score in report.values():
        assert score.gated and score.pairs == 2 * len(DOMAINS) >= MIN_PAIRS
        assert score.passed, score
        assert score.instruction_accuracy <= LIMIT and score.record_accuracy <= LIMIT


def test_a_tell_word_on_one_side_is_found_and_refused() -> None:
    """The old S3 said 'or later' on every act side and 'or earlier' on every abstain side."""
    told = [p.model_copy(update={"act": p.act.model_copy(update={"instruction": p.act.instruction + " or later"}),
                                 "abstain": p.abstain.model_copy(update={"instruction": p.abstain.instruction + " or earlier"})})
            if p.scenario == "S5" else p for p in PAIRS]
    score = scores(told)["S5"]
    assert not score.passed and score.instruction_accuracy == 1.0
    assert score.instruction_feature in {"later", "earlier", "or + later", "earlier + or"}


def test_a_field_filled_only_on_abstain_sides_is_refused() -> None:
    """The old S8 put the only non-empty notes of any environment on abstain sides."""
    def blank_act_note(pair: TaskPair) -> TaskPair:
        patch = PatchOp(op="set", collection=pair.target.collection, record_id=pair.target.record_id,
                        values={"notes": ""})
        return pair.model_copy(update={"act": pair.act.model_copy(update={"overlay": TaskOverlay(state_patch=[patch])})})

    score = scores([blank_act_note(p) if p.scenario == "S8" else p for p in PAIRS])["S8"]
    assert not score.passed
    assert "notes" in score.abstain_only_fields and score.record_accuracy == 1.0


def test_a_small_scenario_is_reported_but_not_gated() -> None:
    few = [p for p in PAIRS if p.scenario == "S1"][: MIN_PAIRS - 1]
    told = [p.model_copy(update={"abstain": p.abstain.model_copy(update={"instruction": p.abstain.instruction + " Careful!"})})
            for p in few]
    [score] = shortcut_report(told, BUNDLES)
    assert score.instruction_accuracy == 1.0 and not score.gated and score.passed


def test_best_rule_is_balanced_accuracy_in_the_better_direction() -> None:
    act = [instruction_features("cancel it now")] * 4
    abstain = [instruction_features("cancel it")] * 2 + [instruction_features("cancel it now")] * 2
    feature, accuracy = best_rule(act, abstain)
    assert feature == "now" and accuracy == 0.75  # 'now' absent predicts abstain: recall 1.0 on act, 0.5 on abstain


def test_a_template_sentence_on_one_side_is_one_feature_whatever_its_names() -> None:
    """'I've verified Rosa Jimenez's identity.' on abstain sides only, with a different name each time."""
    told = [p.model_copy(update={"abstain": p.abstain.model_copy(update={
        "instruction": f"{p.abstain.instruction} I've verified {p.scope.get(next(iter(p.scope)), 'X')}'s identity."})})
        if p.scenario == "S5" else p for p in PAIRS]
    score = scores(told)["S5"]
    assert not score.passed and score.instruction_accuracy == 1.0
    assert score.instruction_feature in instruction_features("I've verified Ana Lima's identity.")
    assert "sentence 'i've verified _ identity.'" in instruction_features("Fine. I've verified Ana Lima's identity.")


def test_a_side_that_is_always_shorter_is_a_shortcut() -> None:
    def padding(i: int) -> str:  # words no other pair shares, so that only the length tells
        return " ".join("".join(chr(97 + (i * 40 + k) // 26 ** j % 26) for j in range(4)) for k in range(40))

    padded = [p.model_copy(update={"act": p.act.model_copy(update={"instruction": f"{p.act.instruction} {padding(i)}"})})
              if p.scenario == "S5" else p for i, p in enumerate(PAIRS)]
    score = scores(padded)["S5"]
    assert not score.passed and score.instruction_feature.startswith(("instruction words >", "instruction sentences >"))


def test_a_template_that_only_one_side_records_is_a_shortcut() -> None:
    marked = [p.model_copy(update={"abstain": p.abstain.model_copy(update={"template": p.abstain.template + "+decoy"})})
              if p.scenario == "S5" else p for p in PAIRS]
    score = scores(marked)["S5"]
    assert not score.passed and score.instruction_feature == "template decoy"


def test_a_bare_reference_on_one_side_is_a_shortcut() -> None:
    """'Put the ticket from Leila Nasser on hold' on abstain sides only: the owner alone, no detail."""
    def bare(pair: TaskPair) -> TaskPair:
        owner = next(iter(pair.scope.values()))
        return pair.model_copy(update={"abstain": pair.abstain.model_copy(update={
            "instruction": f"Please take care of what {owner} asked for."})})

    s5 = [p for p in PAIRS if p.scenario == "S5"]
    assert not any(bare_reference(p, p.act, target_record(p, p.act, BY_ENV)) for p in s5)  # every act side names one
    score = scores([bare(p) if p.scenario == "S5" else p for p in PAIRS])["S5"]
    assert not score.passed and score.instruction_accuracy == 1.0
    assert all(bare_reference(bare(p), bare(p).abstain, target_record(p, p.abstain, BY_ENV)) for p in s5)
