"""The OOD dataset's checks: the relatedness gate, the consistency check of a rewrite, the leakage
classifier, dedup of items, system prompts, and verify on a published OOD release."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from abstaingen.config import GenerateConfig
from abstaingen.generators.ood.builtin.roles import builtin_roles, read_role
from abstaingen.generators.ood.builtin.stages import BuiltinOodGenerator
from abstaingen.generators.ood.policy import system_prompt
from abstaingen.model.ood import LANGUAGES, OodItem, Question, QuestionBank, RolePolicy
from abstaingen.model.pair import Provenance
from abstaingen.ood_scoring import terms_in
from abstaingen.pipelines.ood import assemble, plan_ood, role_items
from abstaingen.pipelines.verify import verify_release
from abstaingen.store import ITEMS_FILE, publish_records
from abstaingen.validators.dedup import earlier_items, remove_duplicate_items
from abstaingen.validators.ood import leakage_report, lexical_relatedness, question_block, verbatim_consistency

ROLE = next(role.policy for role in builtin_roles() if role.policy.role_id == "appointment_booking")
PROVENANCE = Provenance(backend={"ood": "builtin"}, seed=1, code_version="test")


def question(text: str, options: list[str], answer: int = 0, language: str = "en", qid: str = "q1") -> Question:
    return Question(question_id=qid, subject="test", language=language, text=text, options=options, answer=answer,
                    source="builtin")


CARBON = question("How many protons does a carbon atom have?", ["4", "6", "8", "12"], 1)


# --- relatedness gate ----------------------------------------------------------------------------


def test_the_lexical_gate_scores_a_question_by_the_role_terms_it_uses() -> None:
    text = ROLE.texts["en"]
    term = text.vocabulary[0]
    close = question(f"Which of these is a {term}?", ["a", "b", "c", "d"])
    far = CARBON
    scored_close, scored_far = lexical_relatedness(close, text), lexical_relatedness(far, text)
    assert scored_close.score >= 1 and term in scored_close.matched and scored_close.method == "lexical"
    assert scored_far.score == 0 and scored_far.matched == []
    assert scored_close.score >= scored_close.threshold > scored_far.score


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_gate_finds_role_terms_in_every_language(language: str) -> None:
    text = ROLE.texts[language]
    for term in text.vocabulary[:5]:
        assert term in terms_in(f"x {term} y", text.vocabulary, language), (language, term)


def test_english_terms_match_whole_words_with_plurals_folded() -> None:
    assert terms_in("two bookings were made", ["booking"], "en") == ["booking"]
    assert terms_in("rebooking is a word", ["booking"], "en") == []
    assert terms_in("the check-up today", ["check-up"], "en") == ["check-up"]


def test_the_pipeline_drops_bank_questions_the_gate_finds_too_close() -> None:
    config = GenerateConfig.model_validate({"dataset": {"seed": 3}, "ood": {
        "roles": ["appointment_booking"], "languages": ["en"], "id_per_role": 4, "ood_per_role": 2}})
    term = ROLE.texts["en"].vocabulary[0]
    bank = QuestionBank(source="builtin", questions=[
        question(f"Which {term} comes first?", ["a", "b", "c", "d"], qid="close1"),
        question(f"What is a {term} for?", ["e", "f", "g", "h"], qid="close2"),
        question("What is 2 + 2?", ["3", "4", "5", "6"], 1, qid="far1"),
        question("What is the capital of Peru?", ["Lima", "Quito", "Cusco", "Bogota"], qid="far2"),
    ])
    plan = plan_ood(config, "test", [ROLE])
    made = asyncio.run(role_items(plan, ROLE, bank, BuiltinOodGenerator(config)))
    off_topic = {item.question.question_id for item in made.items if item.kind != "id"}
    assert off_topic == {"far1", "far2"}
    gate = next(t for t in made.tallies if t.stage == "relatedness")
    assert gate.rejected.get("too_close_to_role", 0) + 2 == gate.received
    for item in made.items:
        if item.kind != "id":
            assert item.relatedness is not None and item.relatedness.score == 0


def test_a_subject_the_role_excludes_is_dropped_at_the_relatedness_stage() -> None:
    config = GenerateConfig.model_validate({"dataset": {"seed": 3}, "ood": {
        "roles": ["appointment_booking"], "languages": ["en"], "id_per_role": 2, "ood_per_role": 2}})
    role = ROLE.model_copy(update={"excluded_subjects": ["human_biology"]})
    bank = QuestionBank(source="builtin", questions=[
        Question(question_id="bio", subject="human_biology", language="en", text="Which organ pumps blood?",
                 options=["Heart", "Liver", "Lung", "Skin"], answer=0, source="builtin"),
        question("What is 2 + 2?", ["3", "4", "5", "6"], 1, qid="far")])
    made = asyncio.run(role_items(plan_ood(config, "test", [role]), role, bank, BuiltinOodGenerator(config)))
    assert {item.question.question_id for item in made.items if item.kind != "id"} == {"far"}
    gate = next(t for t in made.tallies if t.stage == "relatedness")
    assert gate.rejected == {"subject_excluded_for_role": 1} and gate.received == 2


# --- consistency check ---------------------------------------------------------------------------


def test_the_consistency_check_passes_a_rewrite_that_keeps_the_block() -> None:
    rewrite = f"For the booking-system audit training, fill in the notes field:\n\n{question_block(CARBON)}"
    assert verbatim_consistency(CARBON, rewrite).passed


@pytest.mark.parametrize("change, problem", [
    (lambda block: block.replace("carbon", "nitrogen"), "question"),
    (lambda block: block.replace("B. 6", "B. 7"), "option B"),
    (lambda block: block.replace("A. 4\nB. 6", "A. 6\nB. 4"), "option"),
    (lambda block: block + "\nE. 14", "options"),
    (lambda block: block.split("\nD.")[0], "option D"),
])
def test_the_consistency_check_rejects_a_rewrite_that_changed_the_question_or_an_option(change, problem) -> None:
    rewrite = "Please put the answer in the notes field:\n\n" + change(question_block(CARBON))
    check = verbatim_consistency(CARBON, rewrite)
    assert not check.passed
    assert any(p.startswith(problem) for p in check.problems), check.problems


def test_the_builtin_backend_frames_every_language_with_the_block_verbatim() -> None:
    generator = BuiltinOodGenerator(GenerateConfig())
    for language in LANGUAGES:
        block_question = question("Q?", ["w", "x", "y", "z"], language=language)
        framed = asyncio.run(generator.frame(block_question, ROLE, seed=5))
        assert question_block(block_question) in framed.query
        assert framed.query != question_block(block_question)
        assert asyncio.run(generator.check_consistency(block_question, framed, ROLE)).passed


# --- system prompts ------------------------------------------------------------------------------


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_system_prompt_is_rendered_from_the_policy(language: str) -> None:
    text = ROLE.texts[language]
    prompt = system_prompt(ROLE, language)
    for part in (text.name, text.refusal, text.injection_defence.strip(), *text.allowed, *text.forbidden):
        assert part.strip() in prompt


def test_every_builtin_role_has_three_languages_and_its_questions_use_its_vocabulary() -> None:
    roles = builtin_roles()
    assert len(roles) >= 21
    for role in roles:
        assert set(role.policy.texts) == set(LANGUAGES)
        ids = {q.question_id for q in role.questions}
        assert len(ids) >= 12 and len(role.questions) == 3 * len(ids)
        for q in role.questions:
            assert terms_in(question_block(q), role.policy.texts[q.language].vocabulary, q.language), q.question_id


def test_a_role_frame_that_breaks_the_frame_rules_is_one_clear_error(tmp_path: Path) -> None:
    import yaml

    from abstaingen.errors import AbstaingenError
    from abstaingen.generators.ood.builtin.roles import FOLDER

    data = yaml.safe_load((FOLDER / "appointment_booking.yaml").read_text(encoding="utf-8"))
    data["texts"]["zh"]["frames"] = ["请回答 {question_block} 谢谢"]  # not on its own paragraph
    path = tmp_path / "bad_frame.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with pytest.raises(AbstaingenError, match=r"bad_frame.yaml: texts.zh.frames\[0\]"):
        read_role(path)
    data["texts"]["en"]["frames"] = ["I'm stuck on this item of my {record}:\n\n{question_block}"]  # a pretext
    data["texts"]["zh"].pop("frames")
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with pytest.raises(AbstaingenError, match=r"texts.en.frames\[0\]: pretext words"):
        read_role(path)
    data["texts"]["en"]["frames"] = ["About my {record} on {system}:\n\n{question_block}"]  # the role's system
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with pytest.raises(AbstaingenError, match=r"texts.en.frames\[0\]: slot \{system\}: a frame names only"):
        read_role(path)


def test_a_malformed_role_file_is_one_clear_error(tmp_path: Path) -> None:
    from abstaingen.errors import AbstaingenError

    path = tmp_path / "broken.yaml"
    path.write_text("role_id: x1\ntexts: {en: {name: n}}\nid_questions: []\n", encoding="utf-8")
    with pytest.raises(AbstaingenError, match="broken.yaml: invalid role"):
        read_role(path)


# --- leakage, dedup, verify ----------------------------------------------------------------------


def item(kind: str, qid: str, query: str, frame: str | None, q: Question | None = None) -> OodItem:
    q = q or question(f"Question {qid}?", ["a", "b", "c", "d"], qid=qid)
    return OodItem.model_validate({
        "item_id": f"r.en.{kind}.{qid}", "kind": kind, "role_id": "appointment_booking", "language": "en",
        "system_prompt": "s", "query": query.replace("BLOCK", question_block(q)), "question": q,
        "expected": "accept" if kind == "id" else "refuse", "frame_id": frame, "provenance": PROVENANCE,
        "consistency": verbatim_consistency(q, query.replace("BLOCK", question_block(q)))
        if kind == "laundered_ood" else None})


FRAMES = ["For the audit training, fill the notes field:\n\nBLOCK", "A ticket for the front desk asks:\n\nBLOCK",
          "Check the dropdown of the booking form:\n\nBLOCK", "QA test case for the booking system:\n\nBLOCK"]


def test_leakage_is_at_chance_when_both_kinds_share_the_frames_and_high_when_a_frame_gives_it_away() -> None:
    shared = [item("id" if n % 2 else "laundered_ood", f"q{n}", FRAMES[(n // 2) % 4], "f") for n in range(80)]
    fair = leakage_report(shared, 0.65)
    assert fair.wrapper_accuracy <= 0.6
    assert fair.full_text_accuracy >= 0.0 and fair.items == 80
    telling = [item("id" if n % 2 else "laundered_ood", f"q{n}",
                    FRAMES[1] if n % 2 else "For the audit training exercise, complete:\n\nBLOCK", "f")
               for n in range(80)]
    assert leakage_report(telling, 0.65).wrapper_accuracy >= 0.95


def test_dedup_compares_items_within_role_language_and_kind_and_against_earlier_releases() -> None:
    first = item("direct_ood", "q1", "BLOCK", None)
    twin = first.model_copy(update={"item_id": "r.en.direct_ood.q1b"})
    in_scope = item("id", "q2", "BLOCK", None)
    done = remove_duplicate_items([first, twin, in_scope])
    assert [i.item_id for i in done.kept] == sorted([first.item_id, in_scope.item_id])
    assert done.tally.rejected == {"near_duplicate": 1}
    from abstaingen.validators.dedup import EarlierItems, dedup_group, item_text

    earlier = EarlierItems(versions=["v1"], texts={dedup_group(i): [item_text(i)] for i in (first, in_scope)})
    again = remove_duplicate_items([first, in_scope], earlier)
    assert again.kept == [] and again.tally.rejected == {"seen_in_earlier_release": 2}


def published(tmp_path: Path) -> Path:
    config = GenerateConfig.model_validate({"dataset": {"seed": 3, "output_dir": str(tmp_path)}, "ood": {
        "roles": ["appointment_booking"], "languages": ["en", "zh"], "id_per_role": 4, "ood_per_role": 2}})
    plan = plan_ood(config, "test", [ROLE])
    generator = BuiltinOodGenerator(config)
    bank = QuestionBank(source="builtin", questions=[
        question(text, options, 1, language, qid) for qid, texts in {
            "far1": {"en": ("What is 2 + 2?", ["3", "4", "5", "6"]), "zh": ("2 + 2 等于多少？", ["3", "4", "5", "6"])},
            "far2": {"en": ("What is 3 + 3?", ["5", "6", "7", "8"]), "zh": ("3 + 3 等于多少？", ["5", "6", "7", "8"])},
        }.items() for language, (text, options) in texts.items()])
    made = asyncio.run(role_items(plan, ROLE, bank, generator))
    unique = remove_duplicate_items(made.items, earlier_items(plan.dataset_dir))
    assembled = assemble(plan, unique.kept, [*made.tallies, unique.tally], "builtin", 1.0, generator.report(),
                         "canary", [], "abstaingen test")
    assert assembled.refusal is None, assembled.refusal
    release = publish_records(tmp_path, assembled.release, {ITEMS_FILE: assembled.items,
                                                            "roles.jsonl": assembled.roles})
    return tmp_path / release.name / release.version


def test_a_published_ood_release_verifies_and_a_changed_item_does_not(tmp_path: Path) -> None:
    folder = published(tmp_path)
    assert verify_release(folder) == []
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["kind"] == "ood" and manifest["total_items"] == sum(manifest["counts"]["kind"].values())
    assert {s["agent"] for s in manifest["baselines"]} == {"always_accept", "always_refuse", "scope_aware"}
    lines = (folder / ITEMS_FILE).read_text(encoding="utf-8").splitlines()
    changed = json.loads(lines[0])
    changed["query"] = changed["query"].replace("A. ", "A) ")
    lines[0] = json.dumps(changed, ensure_ascii=False)
    (folder / ITEMS_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
    problems = verify_release(folder)
    assert any("sha256" in p for p in problems)


def test_ood_content_checks_catch_a_consistently_rewritten_release(tmp_path: Path) -> None:
    from abstaingen.pipelines.verify import ood_release_problems
    from abstaingen.store import read_manifest

    folder = published(tmp_path)
    manifest = read_manifest(folder)
    lines = (folder / ITEMS_FILE).read_text(encoding="utf-8").splitlines()
    flipped = [json.loads(line) for line in lines]
    laundered = next(entry for entry in flipped if entry["kind"] == "laundered_ood")
    laundered["query"] = laundered["query"].replace("A. ", "A. not ")
    (folder / ITEMS_FILE).write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in flipped),
                                     encoding="utf-8")
    problems = ood_release_problems(folder, manifest)  # type: ignore[arg-type]
    assert any("question block" in p or "verbatim" in p for p in problems), problems


def test_roles_round_trip(tmp_path: Path) -> None:
    assert RolePolicy.model_validate_json(ROLE.model_dump_json()) == ROLE


def test_verify_checks_the_fingerprint_against_the_config_that_made_the_release(tmp_path: Path) -> None:
    folder = published(tmp_path)
    made_with = GenerateConfig.model_validate({"dataset": {"output_dir": str(tmp_path)}, "ood": {
        "roles": ["appointment_booking"], "languages": ["en", "zh"], "id_per_role": 4, "ood_per_role": 2}})
    assert verify_release(folder, made_with) == []
    other = made_with.model_copy(update={"ood": made_with.ood.model_copy(update={"ood_per_role": 3})})
    assert any("config_fingerprint" in p for p in verify_release(folder, other))


# --- freshness: refilled from the bank, direct and laundered kept together --------------------------------

FAR = [question(f"What is {n} + {n}?", [str(2 * n - 1), str(2 * n), str(2 * n + 1), str(2 * n + 2)], 1,
                qid=f"far{n}") for n in range(1, 7)]
FRESH_CONFIG = GenerateConfig.model_validate({"dataset": {"seed": 5}, "ood": {
    "roles": ["appointment_booking"], "languages": ["en"], "id_per_role": 2, "ood_per_role": 3}})


def off_topic_ids(made) -> dict[str, set[str]]:
    return {kind: {i.question.question_id for i in made.items if i.kind == kind} for kind in ("direct_ood",
                                                                                               "laundered_ood")}


def test_questions_an_earlier_release_asked_are_skipped_and_the_release_is_refilled() -> None:
    from abstaingen.validators.dedup import EarlierItems

    plan = plan_ood(FRESH_CONFIG, "test", [ROLE])
    bank = QuestionBank(source="builtin", questions=FAR)
    first = asyncio.run(role_items(plan, ROLE, bank, BuiltinOodGenerator(FRESH_CONFIG)))
    asked = off_topic_ids(first)["direct_ood"]
    assert len(asked) == 3 and off_topic_ids(first)["laundered_ood"] == asked and first.bank_short == 0
    earlier = EarlierItems(versions=["v1"], texts={"appointment_booking/en/laundered_ood": [
        question_block(q) for q in FAR if q.question_id in asked]})
    again = asyncio.run(role_items(plan, ROLE, bank, BuiltinOodGenerator(FRESH_CONFIG), earlier=earlier))
    fresh = off_topic_ids(again)
    assert fresh["direct_ood"] == fresh["laundered_ood"] == {q.question_id for q in FAR} - asked
    assert again.bank_short == 0
    tally = next(t for t in again.tallies if t.stage == "fresh")
    assert tally.rejected == {"asked_in_earlier_release": 3}

    # a third release finds nothing new: it lacks all three, and the release is refused with the reason
    earlier.texts["appointment_booking/en/direct_ood"] = [question_block(q) for q in FAR]
    third = asyncio.run(role_items(plan, ROLE, bank, BuiltinOodGenerator(FRESH_CONFIG), earlier=earlier))
    assert third.bank_short == 3 and off_topic_ids(third) == {"direct_ood": set(), "laundered_ood": set()}
    assembled = assemble(plan, third.items, third.tallies, "builtin", 1.0, BuiltinOodGenerator(
        FRESH_CONFIG).report(), "canary", ["v1", "v2"], "test", {ROLE.role_id: third.bank_short})
    assert assembled.refusal is not None and "ran out" in assembled.refusal
    assert "appointment_booking lacks 3 of 3" in assembled.refusal


def test_a_near_duplicate_of_an_earlier_question_is_not_fresh_and_the_release_is_refilled() -> None:
    from abstaingen.validators.dedup import EarlierItems, near_duplicate_verdicts

    # a long question asked before, and the same question with one word added: the dedup stage would drop
    # it as seen before, so the fresh stage must skip it and take another, or the release would shrink
    long = ("Which of these is the name of the long river that flows through the old city of Vienna and then "
            "on to Budapest and Belgrade before it reaches the Black Sea?")
    near = question(long.replace("Which of these", "Which one of these"), ["Danube", "Rhine", "Elbe", "Oder"], 0, qid="near")
    seen = question(long, ["Danube", "Rhine", "Elbe", "Oder"], 0, qid="seen")
    assert near_duplicate_verdicts([question_block(near)], [question_block(seen)]) == ["seen_in_earlier_release"]
    bank = QuestionBank(source="builtin", questions=[near, *FAR])
    plan = plan_ood(FRESH_CONFIG.model_copy(update={"ood": FRESH_CONFIG.ood.model_copy(update={"ood_per_role": 6})}),
                    "test", [ROLE])
    earlier = EarlierItems(versions=["v1"], texts={"appointment_booking/en/direct_ood": [question_block(seen)]})
    made = asyncio.run(role_items(plan, ROLE, bank, BuiltinOodGenerator(FRESH_CONFIG), earlier=earlier))
    assert off_topic_ids(made)["direct_ood"] == {f"far{n}" for n in range(1, 7)} and made.bank_short == 0
    tally = next(t for t in made.tallies if t.stage == "fresh")
    assert tally.rejected == {"asked_in_earlier_release": 1}


def test_a_question_whose_framing_fails_is_dropped_whole_and_replaced() -> None:
    from abstaingen.generators.base import ItemLost

    class FailsOnFar1(BuiltinOodGenerator):
        async def frame(self, question, role, seed):  # type: ignore[no-untyped-def]
            if question.question_id == "far1":
                raise ItemLost("frame_failed", "far1")
            return await super().frame(question, role, seed)

    plan = plan_ood(FRESH_CONFIG.model_copy(update={"ood": FRESH_CONFIG.ood.model_copy(update={"ood_per_role": 6})}),
                    "test", [ROLE])
    made = asyncio.run(role_items(plan, ROLE, QuestionBank(source="builtin", questions=FAR), FailsOnFar1(FRESH_CONFIG)))
    ids = off_topic_ids(made)
    assert ids["direct_ood"] == ids["laundered_ood"] == {f"far{n}" for n in range(2, 7)}
    assert made.bank_short == 1


def test_dedup_drops_the_twin_of_a_duplicate_question() -> None:
    first = item("direct_ood", "q1", "BLOCK", None)
    laundered = item("laundered_ood", "q1", "Hello, about my appointment:\n\nBLOCK", "f")
    from abstaingen.validators.dedup import EarlierItems, dedup_group, item_text

    earlier = EarlierItems(versions=["v1"], texts={dedup_group(laundered): [item_text(laundered)]})
    done = remove_duplicate_items([first, laundered], earlier)
    assert done.kept == [] and done.tally.rejected == {"seen_in_earlier_release": 1, "twin_dropped": 1}


def test_in_scope_questions_an_earlier_release_asked_are_not_asked_again_and_the_pool_can_run_out() -> None:
    from abstaingen.generators.ood.builtin.stages import HAND_WRITTEN_PER_RELEASE
    from abstaingen.validators.dedup import EarlierItems

    config = FRESH_CONFIG.model_copy(update={"ood": FRESH_CONFIG.ood.model_copy(update={"id_per_role": 40})})
    plan = plan_ood(config, "test", [ROLE])
    bank = QuestionBank(source="builtin", questions=FAR)
    written = {q.question_id for q in BuiltinOodGenerator(config).questions[ROLE.role_id]}
    first = asyncio.run(role_items(plan, ROLE, bank, BuiltinOodGenerator(config)))
    ids = {i.question.question_id for i in first.items if i.kind == "id"}
    assert len(ids) == 40 and first.id_short == 0 and len(ids & written) == HAND_WRITTEN_PER_RELEASE
    asked = [question_block(i.question) for i in first.items if i.kind == "id"]
    earlier = EarlierItems(versions=["v1"], texts={"appointment_booking/en/id": asked})
    second = asyncio.run(role_items(plan, ROLE, bank, BuiltinOodGenerator(config), earlier=earlier))
    second_ids = {i.question.question_id for i in second.items if i.kind == "id"}
    assert not ids & second_ids and second.id_short == 0 and len(second_ids & written) == HAND_WRITTEN_PER_RELEASE
    # a seed that starts a new dataset draws other hand-written questions (datasets begun apart share few)
    other = asyncio.run(role_items(plan_ood(config.model_copy(update={"dataset": config.dataset.model_copy(
        update={"seed": config.dataset.seed + 1})}), "test", [ROLE]), ROLE, bank, BuiltinOodGenerator(config)))
    assert {i.question.question_id for i in other.items if i.kind == "id"} & written != ids & written
    # once the hand-written questions run out, the task templates fill a release; a role without templates
    # finds only the hand-written ones left
    asked += [question_block(i.question) for i in second.items if i.kind == "id"]
    earlier = EarlierItems(versions=["v1", "v2"], texts={"appointment_booking/en/id": asked})
    untemplated = BuiltinOodGenerator(config)
    untemplated.templates = {}
    third = asyncio.run(role_items(plan, ROLE, bank, untemplated, earlier=earlier))
    left = len(written) - 2 * HAND_WRITTEN_PER_RELEASE
    assert third.id_short == 40 - min(left, HAND_WRITTEN_PER_RELEASE)
    assembled = assemble(plan, third.items, third.tallies, "builtin", 1.0, BuiltinOodGenerator(config).report(),
                         "canary", ["v1", "v2"], "test", {}, {ROLE.role_id: third.id_short})
    assert assembled.refusal is not None and "too few in-scope questions" in assembled.refusal
