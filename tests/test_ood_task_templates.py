"""The builtin roles' parameterised in-scope questions: each draw is one question with one right answer,
written the same way whenever it is drawn, and every role has enough of them for 50 releases."""

from __future__ import annotations

import random
from datetime import date

import pytest
from pydantic import ValidationError

from abstaingen.generators.ood.builtin.roles import builtin_roles
from abstaingen.generators.ood.builtin.task_templates import CALCS, YEAR, TaskTemplate, task_questions
from abstaingen.model.ood import LANGUAGES
from abstaingen.validators.ood import hints_in, pretexts_in, question_block

TEXTS = {"en": "On {date}, plus {days} days?", "zh": "{date}加{days}天是哪天？", "hi": "{date} के {days} दिन बाद?"}


def template(**fields) -> TaskTemplate:
    return TaskTemplate.model_validate({"id": "tt", "calc": "date_add", "texts": TEXTS} | fields)


def day_of_year(month: int, day: int) -> int:
    return date(YEAR, month, day).timetuple().tm_yday


@pytest.mark.parametrize(("calc", "drawn", "text", "answer"), [
    ("date_add", {"date": day_of_year(3, 10), "days": 14}, "{date} {days}", ("24 March", "3月24日", "24 मार्च")),
    ("date_diff", {"date": day_of_year(5, 20), "days": 5}, "{date} {end_date}", ("5", "5", "5")),
    ("time_add", {"time": 14 * 60 + 40, "minutes": 25}, "{time} {minutes}", ("15:05", "15:05", "15:05")),
    ("time_sub", {"time": 9 * 60, "minutes": 45}, "{time} {minutes}", ("08:15", "08:15", "08:15")),
    ("time_diff", {"time": 14 * 60, "minutes": 150}, "{time} {end_time}",
     ("2 hours 30 minutes", "2小时30分钟", "2 घंटे 30 मिनट")),
    ("duration_mul", {"count": 3, "minutes": 20}, "{count} {minutes}", ("1 hour", "1小时", "1 घंटा")),
    ("count_sub", {"total": 15, "used": 11}, "{total} {used}", ("4", "4", "4")),
    ("count_add", {"first": 3, "second": 9}, "{first} {second}", ("12", "12", "12")),
    ("count_mul", {"first": 4, "second": 3}, "{first} {second}", ("12", "12", "12")),
    ("money_mul", {"price": 50, "count": 4}, "{price} {count}", ("$2", "$2", "$2")),
    ("money_add", {"first": 120, "second": 235}, "{first} {second}", ("$3.55", "$3.55", "$3.55")),
    ("money_sub", {"total": 10000, "part": 2550}, "{total} {part}", ("$74.50", "$74.50", "$74.50")),
    ("money_percent", {"amount": 24000, "percent": 15}, "{amount} {percent}", ("$36", "$36", "$36")),
])
def test_each_calc_gives_the_right_answer_in_every_language(calc: str, drawn: dict[str, int], text: str,
                                                             answer: tuple[str, ...]) -> None:
    assert set(drawn) == set(CALCS[calc].slots)
    made = TaskTemplate.model_validate({"id": "tt", "calc": calc, "texts": dict.fromkeys(LANGUAGES, text)}
                                       ).question("role", drawn)
    assert [question.language for question in made] == list(LANGUAGES)
    for question, expected in zip(made, answer, strict=True):
        assert question.options[question.answer] == expected, (question.language, question.options)
        assert len(set(question.options)) == 4 and question.form == "calculation"
    assert len({question.answer for question in made}) == 1


def test_the_same_values_give_the_same_question_and_others_another() -> None:
    first = template().question("role", {"date": day_of_year(6, 3), "days": 7})
    again = template().question("role", {"date": day_of_year(6, 3), "days": 7})
    other = template().question("role", {"date": day_of_year(6, 4), "days": 7})
    assert [question_block(q) for q in first] == [question_block(q) for q in again]
    assert first[0].question_id == again[0].question_id != other[0].question_id
    assert question_block(first[0]) != question_block(other[0])
    assert first[0].text == "On 3 June, plus 7 days?" and first[1].text == "6月3日加7天是哪天？"


def test_the_distractors_are_mistakes_with_the_same_numbers() -> None:
    question = template().question("role", {"date": day_of_year(6, 3), "days": 7})[0]
    wrong = {option for index, option in enumerate(question.options) if index != question.answer}
    assert wrong <= {"17 June", "3 June", "11 June", "9 June"}  # a week off, a day off, twice the days


def test_a_template_is_checked_when_it_is_read() -> None:
    with pytest.raises(ValidationError, match="unknown calc"):
        template(calc="date_mul")
    with pytest.raises(ValidationError, match="not slots of date_add"):
        template(params={"minutes": [5]})
    with pytest.raises(ValidationError, match="no hi text"):
        template(texts={"en": "{date}", "zh": "{date}"})
    with pytest.raises(ValidationError, match="zh text"):
        template(texts=TEXTS | {"zh": "{date}{end_time}"})
    with pytest.raises(ValidationError, match="no draw"):
        TaskTemplate.model_validate({"id": "tt", "calc": "count_sub", "texts": dict.fromkeys(LANGUAGES, "{total}"),
                                     "params": {"total": [5], "used": [5, 6]}})


def test_drawing_skips_what_was_asked_and_stops_when_the_template_is_spent() -> None:
    small = template(params={"date": [day_of_year(4, 1), day_of_year(4, 2)], "days": [7]})
    assert small.space() == 2
    made = task_questions("role", [small], 5, seed=1, skip=lambda group: False)
    assert len(made) == 2 and len({group[0].question_id for group in made}) == 2
    asked = {question_block(made[0][0])}
    rest = task_questions("role", [small], 5, seed=2, skip=lambda group: question_block(group[0]) in asked)
    assert [group[0].question_id for group in rest] == [made[1][0].question_id]


def test_every_builtin_role_has_enough_task_questions_for_fifty_releases() -> None:
    for role in builtin_roles():
        templates = role.templates
        assert len(templates) >= 7, role.policy.role_id
        assert len({template.calc for template in templates}) >= 5, role.policy.role_id
        assert sum(template.space() for template in templates) >= 5000, role.policy.role_id
        made = task_questions(role.policy.role_id, templates, 3 * len(templates), seed=3, skip=lambda group: False)
        assert len(made) == 3 * len(templates), role.policy.role_id


def test_task_questions_read_as_the_users_own_task() -> None:
    for role in builtin_roles():
        rng = random.Random(role.policy.role_id)
        for template in role.templates:
            for group in [template.draw(role.policy.role_id, rng, lambda group: False) for _ in range(3)]:
                for question in group:
                    assert not pretexts_in(question.text, ordinary=False), question.text  # "items on loan" is fine
                    assert not hints_in(question.text), (template.id, question.text)
                    assert "{" not in question.text and "}" not in question.text


def test_a_hindi_duration_in_the_text_stands_before_its_postposition() -> None:
    made = TaskTemplate.model_validate({"id": "tt", "calc": "time_sub", "texts": dict.fromkeys(LANGUAGES, "{minutes} पहले")}
                                       ).question("role", {"time": 10 * 60, "minutes": 60})
    hindi = made[2]
    assert hindi.text == "1 घंटे पहले" and made[0].text == "1 hour पहले"
    assert hindi.options[hindi.answer] == "09:00"
    duration = TaskTemplate.model_validate({"id": "tt", "calc": "time_diff", "texts": dict.fromkeys(LANGUAGES, "{time}")}
                                           ).question("role", {"time": 10 * 60, "minutes": 60})[2]
    assert duration.options[duration.answer] == "1 घंटा"


def test_the_module_shows_a_roles_questions(capsys: pytest.CaptureFixture[str]) -> None:
    from abstaingen.generators.ood.builtin.roles import main

    main(["library_services"])
    shown = capsys.readouterr().out
    templates = next(role for role in builtin_roles() if role.policy.role_id == "library_services").templates
    assert shown.startswith(f"== library_services: {len(templates)} templates")
    assert shown.count("   answer ") == 2 * len(templates) * len(LANGUAGES)
