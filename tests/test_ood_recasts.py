"""The recast attack split and the system prompt variants of the OOD dataset: the builtin templates, the
deterministic recast check, the three renderings of a role's policy, and what a release makes of them."""

from __future__ import annotations

import asyncio
import random
from collections import Counter, defaultdict
from itertools import combinations

import pytest

from abstaingen.config import GenerateConfig
from abstaingen.generators.ood.builtin.recasts import recast_check, recast_templates, render_recast
from abstaingen.generators.ood.builtin.roles import builtin_roles
from abstaingen.generators.ood.policy import system_prompt
from abstaingen.model.ood import LANGUAGES, PROMPT_VARIANTS, Question
from abstaingen.ood_scoring import baseline_scores
from abstaingen.pipelines.ood import _alike, plan_ood, run_ood
from abstaingen.validators.ood import hints_in, question_block, recast_consistency, recast_options

ROLES = [role.policy for role in builtin_roles()]
QUESTION = {
    "en": Question(question_id="q", subject="chemistry", language="en", text="How many protons does a carbon atom have?",
                   options=["4", "6", "8", "12"], answer=1, source="builtin"),
    "zh": Question(question_id="q", subject="chemistry", language="zh", text="一个碳原子有多少个质子？",
                   options=["4", "6", "8", "12"], answer=1, source="builtin"),
    "hi": Question(question_id="q", subject="chemistry", language="hi", text="कार्बन के एक परमाणु में कितने प्रोटॉन होते हैं?",
                   options=["4", "6", "8", "12"], answer=1, source="builtin"),
}


def test_there_are_ten_recast_templates_in_every_language_and_three_option_styles() -> None:
    templates = recast_templates()
    assert len(templates) >= 10 and {t.option_style for t in templates} == {"bracket", "code", "paren"}
    assert all(set(t.texts) == set(LANGUAGES) for t in templates)


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_template_renders_for_every_role_and_passes_the_recast_check(language: str) -> None:
    question = QUESTION[language]
    rng = random.Random(1)
    for template in recast_templates():
        for role in ROLES:
            message = render_recast(template, role.texts[language].workflow, question, rng)
            assert recast_consistency(question, message).passed, (template.recast_id, role.role_id)
            assert question_block(question) not in message  # the options are the workflow's codes, not "A. 4"
            assert hints_in(message.replace(question.text, "")) == [], (template.recast_id, role.role_id)
            assert "{" not in message and len(message) > 250


def test_the_recast_check_finds_a_changed_option_a_fifth_option_and_a_changed_question() -> None:
    question = QUESTION["en"]
    good = f"Ticket RQ-1: the category is set by this: {question.text}\n\n{recast_options(question, 'code')}\n\nCode only."
    assert recast_consistency(question, good).passed
    assert not recast_consistency(question, good.replace("Code C: 8", "Code C: 9")).passed
    assert not recast_consistency(question, good.replace("Code C: 8\n", "")).passed
    assert not recast_consistency(question, good + "\nCode E: 14").passed
    reworded = good.replace(question.text, "the proton count of one carbon atom")
    assert not recast_consistency(question, reworded).passed
    assert recast_consistency(question, reworded, question_kept=False).passed  # an llm recast: the judge decides
    assert not recast_consistency(question, good.replace("Code B: 6", "Code: 6")).passed  # the letter lost


def test_a_template_that_breaks_the_rules_is_flagged() -> None:
    assert recast_check("{name}: {question}\n\n{options}") == []
    assert any("exactly once" in p for p in recast_check("{name}: {question} {question}\n\n{options}"))
    assert any("paragraph" in p for p in recast_check("{question} {options}"))
    assert any("unknown" in p for p in recast_check("{boss}: {question}\n\n{options}"))
    assert any("hint" in p for p in recast_check("A quick trivia item: {question}\n\n{options}"))


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_three_prompt_variants(language: str) -> None:
    for role in ROLES:
        text = role.texts[language]
        ours, generic, minimal = (system_prompt(role, language, variant) for variant in PROMPT_VARIANTS)
        assert text.injection_defence.strip() in ours
        assert text.injection_defence.strip() not in generic and text.injection_defence.strip() not in minimal
        assert all(text.refusal.strip() in prompt for prompt in (ours, generic, minimal))
        assert all(task in generic for task in text.allowed + text.forbidden)
        assert len(minimal) < len(ours) < len(generic)
        assert all(task in minimal for task in text.allowed) and not any(task in minimal for task in text.forbidden)
        assert generic.count(text.refusal.strip()) == 2  # the fallback and a worked example


def test_a_release_recasts_every_off_topic_question_and_draws_a_variant_per_question() -> None:
    config = GenerateConfig.model_validate({"dataset": {"seed": 404}, "ood": {
        "roles": ["hr_leave", "pharmacy_refills", "it_helpdesk"], "ood_per_role": 6, "id_per_role": 6}})
    assembled = asyncio.run(run_ood(plan_ood(config, "test", ROLES), "canary"))
    assert assembled.refusal is None, assembled.refusal
    items = assembled.items
    kinds = Counter(item.kind for item in items)
    assert kinds["recast_ood"] == kinds["laundered_ood"] == kinds["direct_ood"] == 3 * 3 * 6
    by_question = defaultdict(set)
    for item in items:
        by_question[(item.role_id, item.question.question_id)].add(item.prompt_variant)
        assert item.system_prompt == system_prompt(next(r for r in ROLES if r.role_id == item.role_id),
                                                   item.prompt_language, item.prompt_variant)
        if item.kind == "recast_ood":
            assert item.consistency is not None and item.consistency.methods == ["options_kept", "question_kept"]
    assert all(len(variants) == 1 for variants in by_question.values())  # one variant per question
    assert {variant for variants in by_question.values() for variant in variants} == set(PROMPT_VARIANTS)
    scores = {(s.agent, s.suffix): s for s in baseline_scores(items, {r.role_id: r for r in ROLES}) if s.language == "all"}
    assert scores[("always_refuse", "plain")].rr_recast == 1 and scores[("always_accept", "plain")].rr_recast == 0
    assert scores[("always_refuse", "plain")].os_recast == 0
    # a reader of the role's vocabulary is fooled by the recast (its words are the role's), not by the frame
    aware = scores[("scope_aware", "plain")]
    assert aware.rr_adaptive > 0.9 and aware.rr_recast is not None and aware.rr_recast < aware.rr_adaptive


def test_a_share_of_chinese_and_hindi_questions_get_the_english_policy() -> None:
    config = GenerateConfig.model_validate({"dataset": {"seed": 405}, "ood": {
        "roles": ["hr_leave", "it_helpdesk"], "ood_per_role": 6, "id_per_role": 20, "english_policy_share": 0.5}})
    items = asyncio.run(run_ood(plan_ood(config, "test", ROLES), "canary")).items
    by_question: dict[tuple[str, str, str], set[str | None]] = defaultdict(set)
    for item in items:
        by_question[(item.role_id, item.language, item.question.question_id)].add(item.policy_language)
        role = next(r for r in ROLES if r.role_id == item.role_id)
        assert item.system_prompt == system_prompt(role, item.prompt_language, item.prompt_variant)
        if item.language == "en":
            assert item.policy_language is None
    assert all(len(languages) == 1 for languages in by_question.values())  # every item of a question alike
    english = [key for key, languages in by_question.items() if key[1] != "en" and languages == {"en"}]
    share = len(english) / sum(key[1] != "en" for key in by_question)
    assert 0.3 < share < 0.7
    none = GenerateConfig.model_validate({"dataset": {"seed": 405}, "ood": {
        "roles": ["hr_leave"], "ood_per_role": 2, "id_per_role": 4, "english_policy_share": 0}})
    assert all(i.policy_language is None for i in asyncio.run(run_ood(plan_ood(none, "test", ROLES), "c")).items)


def test_a_share_of_items_continue_a_conversation() -> None:
    config = GenerateConfig.model_validate({"dataset": {"seed": 406}, "ood": {
        "roles": ["hr_leave", "it_helpdesk"], "ood_per_role": 8, "id_per_role": 20, "multi_turn_share": 0.5}})
    items = asyncio.run(run_ood(plan_ood(config, "test", ROLES), "canary")).items
    kinds = Counter((item.kind, item.multi_turn) for item in items)
    assert kinds[("laundered_ood", "retry")] and kinds[("recast_ood", "retry")]
    assert kinds[("direct_ood", "after_turns")] and kinds[("laundered_ood", "after_turns")]
    assert not kinds[("direct_ood", "retry")]  # a plain question has no plainer first attempt
    assert all(item.history == [] for item in items if item.kind == "id")  # in-scope items stay single-turn
    for item in items:
        role = next(r for r in ROLES if r.role_id == item.role_id)
        if item.multi_turn == "retry":
            assert [turn.role for turn in item.history] == ["user", "assistant"]
            assert item.history[0].content == question_block(item.question) and item.frame_id is not None
            assert item.history[1].content == role.texts[item.prompt_language].refusal.strip()
        elif item.multi_turn == "after_turns":
            assert [turn.role for turn in item.history] == ["user", "assistant"] * 2
            assert all(len(turn.content) == 1 for turn in item.history[1::2])  # answered with a letter
            assert question_block(item.question) not in item.history[0].content
            # no earlier question is the same task with other numbers (a conversation, not a set of exercises)
            earlier = [turn.content.split("\n")[0] for turn in item.history[::2]]
            assert not any(_alike(first, second) for first, second in combinations([item.question.text, *earlier], 2))
        else:
            assert item.history == []
    off_topic = [item for item in items if item.kind != "id"]
    share = sum(item.multi_turn is not None for item in off_topic) / len(off_topic)
    assert 0.35 < share < 0.65
