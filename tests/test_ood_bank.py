"""The builtin OOD question bank (generators/ood/builtin/bank.py): its size, its three languages kept
in step, its answers recomputed here independently of the generator, and its wording kept off the
business of the scoped assistants it is asked of."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable
from fractions import Fraction

import pytest

from abstaingen.generators.ood.builtin import bank
from abstaingen.model.ood import LANGUAGES, Question
from abstaingen.ood_scoring import tokens

QUESTIONS = bank.builtin_bank()
BY_ID: dict[str, dict[str, Question]] = defaultdict(dict)
for _question in QUESTIONS:
    BY_ID[_question.question_id][_question.language] = _question
ENGLISH = [versions["en"] for versions in BY_ID.values()]

CJK = re.compile(r"[\u3400-\u9fff]")
DEVANAGARI = re.compile(r"[\u0900-\u097f]")
BUSINESS_WORDS = ("booking", "account", "order", "ticket", "bill", "delivery", "rental", "appointment",
                  "insurance", "flight", "hotel", "bank", "payment", "refund")
BUSINESS_WORDS_ZH = ("预订", "预约", "订单", "账户", "账单", "银行", "航班", "酒店", "退款", "付款", "支付", "保险",
                     "门票", "快递", "租赁")
BUSINESS_WORDS_HI = ("बुकिंग", "खाता", "बैंक", "उड़ान", "होटल", "भुगतान", "रिफ़ंड", "रिफंड", "बीमा", "टिकट", "ऑर्डर",
                     "डिलीवरी", "किराया", "अपॉइंटमेंट")

# written here again, not taken from the bank, so a wrong table there cannot pass
PLANETS = ("Mercury", "Venus", "Earth", "Mars", "Jupiter", "Saturn", "Uranus", "Neptune")
ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")
SYMBOLS = ("H", "He", "Li", "Be", "B", "C", "N", "O", "F", "Ne", "Na", "Mg", "Al", "Si", "P", "S", "Cl", "Ar", "K",
           "Ca", "Sc", "Ti", "V", "Cr", "Mn", "Fe", "Co", "Ni", "Cu", "Zn")
IN_BASE_UNIT = {"kilometres": Fraction(1000), "metres": Fraction(1), "centimetres": Fraction(1, 100),
                "millimetres": Fraction(1, 1000), "kilograms": Fraction(1000), "grams": Fraction(1),
                "milligrams": Fraction(1, 1000), "litres": Fraction(1), "millilitres": Fraction(1, 1000)}
SI_UNITS = {"force": "newton", "energy": "joule", "power": "watt", "electric current": "ampere",
            "thermodynamic temperature": "kelvin", "mass": "kilogram", "length": "metre", "time": "second",
            "pressure": "pascal", "frequency": "hertz", "electric charge": "coulomb",
            "electric potential difference": "volt", "electrical resistance": "ohm", "amount of substance": "mole",
            "luminous intensity": "candela"}

COMPUTED_SUBJECTS = ("arithmetic", "algebra", "geometry", "number_bases", "physics")


# --- size and shape --------------------------------------------------------------------------------

def test_at_least_ten_subjects_of_forty_questions_and_450_in_all():
    assert len(bank.SUBJECTS) >= 10
    assert len(set(bank.SUBJECTS)) == len(bank.SUBJECTS)
    per_subject = Counter(question.subject for question in ENGLISH)
    assert set(per_subject) == set(bank.SUBJECTS)
    assert all(per_subject[subject] >= 40 for subject in bank.SUBJECTS), per_subject
    assert len(BY_ID) >= 450
    assert len(QUESTIONS) == 3 * len(BY_ID) >= 1350


def test_every_question_is_in_all_three_languages_with_the_same_answer():
    for question_id, versions in BY_ID.items():
        assert set(versions) == set(LANGUAGES), question_id
        english = versions["en"]
        for question in versions.values():
            assert question.answer == english.answer, question_id
            assert len(question.options) == len(english.options) == 4, question_id
            assert question.subject == english.subject, question_id
            assert question.source == "builtin"


def test_ids_are_unique_within_each_language_and_name_their_subject():
    for language in LANGUAGES:
        counts = Counter(question.question_id for question in QUESTIONS if question.language == language)
        assert [qid for qid, count in counts.items() if count > 1] == []
    for question in ENGLISH:
        assert question.question_id.startswith(f"{question.subject}.")


def test_options_are_distinct_and_trimmed():
    for question in QUESTIONS:
        assert len({option.strip().casefold() for option in question.options}) == 4, question
        assert all(option == option.strip() and option for option in question.options), question


def test_answers_are_spread_over_a_to_d():
    positions = Counter(question.answer for question in ENGLISH)
    for letter in range(4):
        assert 0.15 <= positions[letter] / len(ENGLISH) <= 0.35, positions
    for subject in bank.SUBJECTS:  # no subject leans on one letter either
        in_subject = Counter(q.answer for q in ENGLISH if q.subject == subject)
        assert max(in_subject.values()) / sum(in_subject.values()) < 0.5, (subject, in_subject)


def test_every_question_validates_as_a_question():
    for question in QUESTIONS:
        assert Question.model_validate(question.model_dump()) == question


def test_the_bank_is_the_same_every_time_it_is_built():
    assert bank.build_bank() == QUESTIONS
    assert bank.builtin_bank() is QUESTIONS


def test_questions_in_one_language():
    for language in LANGUAGES:
        questions = bank.questions_in(language)
        assert len(questions) == len(BY_ID)
        assert {question.language for question in questions} == {language}
    with pytest.raises(ValueError, match="fr"):
        bank.questions_in("fr")


# --- wording ---------------------------------------------------------------------------------------

def test_texts_are_one_line_questions_and_options_one_line():
    for question in QUESTIONS:
        mark = "？" if question.language == "zh" else "?"
        assert question.text.endswith(mark), question.text
        assert "\n" not in question.text and "\r" not in question.text
        assert not any("\n" in option or "\r" in option for option in question.options)


def test_each_language_is_written_in_its_own_script():
    for question in QUESTIONS:
        if question.language == "zh":
            assert CJK.search(question.text), question.text
            assert not DEVANAGARI.search(question.text + "".join(question.options))
        elif question.language == "hi":
            assert DEVANAGARI.search(question.text), question.text
            assert not CJK.search(question.text + "".join(question.options))
        else:
            assert not CJK.search(question.text + "".join(question.options)), question.text
            assert not DEVANAGARI.search(question.text + "".join(question.options)), question.text


def test_no_question_touches_customer_service_business():
    words = re.compile(r"\b(" + "|".join(BUSINESS_WORDS) + r")(?:s|es)?\b", re.IGNORECASE)  # not "billion"
    for question in ENGLISH:
        for text in [question.text, *question.options]:
            assert not words.search(text), (question.question_id, text)
    for question in QUESTIONS:
        texts = [question.text, *question.options]
        if question.language == "zh":  # no spaces: any occurrence counts
            assert not [word for word in BUSINESS_WORDS_ZH if any(word in text for text in texts)], question
        elif question.language == "hi":  # whole words ("बैंकॉक", Bangkok, is not "बैंक")
            words_used = {word for text in texts for word in tokens(text)}
            assert not words_used & set(BUSINESS_WORDS_HI), question


def test_computed_questions_carry_the_same_numbers_in_every_language():
    number = re.compile(r"\d+(?:\.\d+)?")
    for versions in BY_ID.values():
        english = versions["en"]
        if english.subject not in COMPUTED_SUBJECTS or english.question_id.startswith("physics.si_unit"):
            continue
        expected = Counter(number.findall(english.text))
        for question in versions.values():
            assert Counter(number.findall(question.text)) == expected, (question.text, english.text)
            assert question.options == english.options


def test_an_entity_is_translated_the_same_way_everywhere():
    """The same English option is written the same way in Chinese and in Hindi wherever it appears in a
    subject (across subjects one English name may be two things: the planet Venus and the goddess)."""
    seen: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for versions in BY_ID.values():
        for language in ("zh", "hi"):
            for english, local in zip(versions["en"].options, versions[language].options, strict=True):
                seen[(language, versions["en"].subject, english)].add(local)
    assert {key: names for key, names in seen.items() if len(names) > 1} == {}


# --- answers recomputed ----------------------------------------------------------------------------

def _number(text: str) -> Fraction:
    return Fraction(text)


def _solve_equation(match: re.Match[str]) -> Fraction:
    """x from `<linear> = <linear>`: both sides are linear in x, so two evaluations give the line."""
    left, right = (side for side in match.groups())

    def difference(x: Fraction) -> Fraction:
        return _evaluate(left, x) - _evaluate(right, x)

    at_zero, at_one = difference(Fraction(0)), difference(Fraction(1))
    return -at_zero / (at_one - at_zero)


def _evaluate(expression: str, x: Fraction) -> Fraction:
    python = re.sub(r"(\d)(x|\()", r"\1*\2", expression)
    assert re.fullmatch(r"[\dx+\-*() ]+", python), expression
    value = eval(python, {"__builtins__": {}}, {"x": x})  # our own, checked text
    return Fraction(value)


def _planet(name: str) -> Fraction:
    return Fraction(PLANETS.index(name))


# English text pattern -> (the answer's value, how to read an option's value)
Checker = tuple[re.Pattern[str], Callable[[re.Match[str]], Fraction], Callable[[str], Fraction]]
CHECKERS: dict[str, list[Checker]] = {
    "arithmetic": [
        (re.compile(r"What is (\d+)% of (\d+)\?"), lambda m: Fraction(int(m[1]) * int(m[2]), 100), _number),
        (re.compile(r"What is (\d+)/(\d+) \+ (\d+)/(\d+), written in lowest terms\?"),
         lambda m: Fraction(int(m[1]), int(m[2])) + Fraction(int(m[3]), int(m[4])), _number),
        (re.compile(r"What is (\d+)/(\d+) × (\d+)/(\d+), written in lowest terms\?"),
         lambda m: Fraction(int(m[1]), int(m[2])) * Fraction(int(m[3]), int(m[4])), _number),
        (re.compile(r"What is (\d+) \+ (\d+) × (\d+)\?"), lambda m: Fraction(int(m[1]) + int(m[2]) * int(m[3])),
         _number),
    ],
    "algebra": [
        (re.compile(r"If (.+) = (.+), what is the value of x\?"), _solve_equation, _number),
        (re.compile(r"What is the value of (.+) when x = (-?\d+)\?"),
         lambda m: _evaluate(m[1], Fraction(int(m[2]))), _number),
    ],
    "geometry": [
        (re.compile(r"A rectangle is (\d+) cm long and (\d+) cm wide\. What is its area in square centimetres\?"),
         lambda m: Fraction(int(m[1]) * int(m[2])), _number),
        (re.compile(r"A rectangle is (\d+) cm long and (\d+) cm wide\. What is its perimeter in centimetres\?"),
         lambda m: Fraction(2 * (int(m[1]) + int(m[2]))), _number),
        (re.compile(r"Two angles of a triangle measure (\d+)° and (\d+)°\. What is the third angle, in degrees\?"),
         lambda m: Fraction(180 - int(m[1]) - int(m[2])), _number),
        (re.compile(r"A triangle has a base of (\d+) cm and a height of (\d+) cm\. "
                    r"What is its area in square centimetres\?"),
         lambda m: Fraction(int(m[1]) * int(m[2]), 2), _number),
        (re.compile(r"What is the sum of the interior angles of a polygon with (\d+) sides, in degrees\?"),
         lambda m: Fraction((int(m[1]) - 2) * 180), _number),
    ],
    "number_bases": [
        (re.compile(r"What is the binary number ([01]+) written in decimal\?"), lambda m: Fraction(int(m[1], 2)),
         _number),
        (re.compile(r"What is the hexadecimal number ([0-9A-F]+) written in decimal\?"),
         lambda m: Fraction(int(m[1], 16)), _number),
        (re.compile(r"What is the decimal number (\d+) written in binary\?"), lambda m: Fraction(int(m[1])),
         lambda option: Fraction(int(option, 2))),
        (re.compile(r"What is the decimal number (\d+) written in hexadecimal\?"), lambda m: Fraction(int(m[1])),
         lambda option: Fraction(int(option, 16))),
    ],
    "physics": [
        (re.compile(r"A car travels (\d+) km in (\d+) hours at a constant speed\. What is its speed in km/h\?"),
         lambda m: Fraction(int(m[1]), int(m[2])), _number),
        (re.compile(r"An object moves at a constant (\d+) m/s for (\d+) s\. How many metres does it travel\?"),
         lambda m: Fraction(int(m[1]) * int(m[2])), _number),
        (re.compile(r"What net force, in newtons, gives a (\d+) kg mass an acceleration of (\d+) m/s²\?"),
         lambda m: Fraction(int(m[1]) * int(m[2])), _number),
        (re.compile(r"How many (\w+) are there in ([\d.]+) (\w+)\?"),
         lambda m: Fraction(m[2]) * IN_BASE_UNIT[m[3]] / IN_BASE_UNIT[m[1]], _number),
    ],
    "astronomy": [
        (re.compile(r"Which planet is the (\w+) planet from the Sun\?"), lambda m: Fraction(ORDINALS.index(m[1])),
         _planet),
        (re.compile(r"Counting outward from the Sun, what is the position of (\w+) among the eight planets\?"),
         lambda m: Fraction(PLANETS.index(m[1]) + 1), _number),
    ],
}


def _checked(question: Question) -> bool:
    """Recompute the answer from the English text; False when no pattern knows the question."""
    for pattern, expected_of, value_of in CHECKERS.get(question.subject, []):
        match = pattern.fullmatch(question.text)
        if match:
            expected = expected_of(match)
            values = [value_of(option) for option in question.options]
            assert values[question.answer] == expected, (question.question_id, question.text, question.options)
            assert values.count(expected) == 1, (question.question_id, question.options)
            return True
    return False


def _computed(question: Question) -> bool:
    """Whether the question's answer follows from its own text (rather than from a fact table)."""
    if question.subject in COMPUTED_SUBJECTS:
        return not question.question_id.startswith("physics.si_unit_")
    return question.question_id.startswith("astronomy.planet_")


@pytest.mark.parametrize("subject", [*COMPUTED_SUBJECTS, "astronomy"])
def test_computed_answers_recomputed_from_the_question(subject):
    computed = [question for question in ENGLISH if question.subject == subject and _computed(question)]
    assert len(computed) >= 16
    assert [question.question_id for question in computed if not _checked(question)] == []


def test_fractions_are_written_in_lowest_terms():
    for question in ENGLISH:
        if "lowest terms" in question.text:
            for option in question.options:
                value = Fraction(option)
                assert option == (str(value.numerator) if value.denominator == 1 else str(value)), option


def test_closest_and_farthest_planets():
    found = 0
    for question in ENGLISH:
        if question.text in ("Which of these planets is closest to the Sun?",
                             "Which of these planets is farthest from the Sun?"):
            places = [PLANETS.index(option) for option in question.options]
            best = min(places) if "closest" in question.text else max(places)
            assert places[question.answer] == best, question
            found += 1
    assert found >= 10


def test_chemistry_matches_the_periodic_table():
    names: dict[str, dict[str, str | int]] = {}
    for question in ENGLISH:
        symbol = re.fullmatch(r"What is the chemical symbol of (\w+)\?", question.text)
        number = re.fullmatch(r"What is the atomic number of (\w+)\?", question.text)
        if symbol:
            names.setdefault(symbol[1], {})["symbol"] = question.options[question.answer]
        elif number:
            names.setdefault(number[1], {})["number"] = int(question.options[question.answer])
            assert all(option.isdigit() for option in question.options)
    assert len(names) == 30
    for name, facts in names.items():
        assert SYMBOLS.index(facts["symbol"]) + 1 == facts["number"], name


def test_si_units():
    found = 0
    for question in ENGLISH:
        match = re.fullmatch(r"What is the SI unit of (.+)\?", question.text)
        if match:
            assert question.options[question.answer] == SI_UNITS[match[1]]
            found += 1
    assert found == len(SI_UNITS)


@pytest.mark.parametrize(("question_id", "answers"), [
    ("world_geography.capital_france", ("Paris", "巴黎", "पेरिस")),
    ("world_geography.capital_australia", ("Canberra", "堪培拉", "कैनबरा")),
    ("world_geography.capital_canada", ("Ottawa", "渥太华", "ओटावा")),
    ("world_geography.largest_ocean", ("the Pacific Ocean", "太平洋", "प्रशांत महासागर")),
    ("world_geography.continent_kenya", ("Africa", "非洲", "अफ़्रीका")),
    ("chemistry.symbol_iron", ("Fe", "Fe", "Fe")),
    ("chemistry.symbol_sodium", ("Na", "Na", "Na")),
    ("chemistry.atomic_number_carbon", ("6", "6", "6")),
    ("astronomy.largest_planet", ("Jupiter", "木星", "बृहस्पति")),
    ("astronomy.red_planet", ("Mars", "火星", "मंगल")),
    ("human_biology.pumps_blood", ("heart", "心脏", "हृदय")),
    ("human_biology.bone_count", ("206", "206", "206")),
    ("world_history.year_moon_landing", ("1969", "1969", "1969")),
    ("world_history.relativity", ("Albert Einstein", "阿尔伯特·爱因斯坦", "अल्बर्ट आइंस्टाइन")),
    ("physics.si_unit_force", ("newton", "牛顿", "न्यूटन")),
])
def test_known_facts(question_id, answers):
    for language, answer in zip(LANGUAGES, answers, strict=True):
        question = BY_ID[question_id][language]
        assert question.options[question.answer] == answer


def test_number_distractors_are_numbers():
    for question in ENGLISH:
        if question.subject in ("arithmetic", "algebra", "geometry") or question.question_id.startswith(
                ("world_history.year_", "chemistry.atomic_number_")):
            for option in question.options:
                Fraction(option)  # raises when an option is not a number


def test_every_builtin_role_has_off_topic_questions_for_fifty_releases():
    """A release asks each role `ood_per_role` bank questions no earlier release asked it (refilling, not
    shrinking: tests/test_ood_checks.py), so the bank must hold 50 releases' worth per role past its gate."""
    from abstaingen.config import OodConfig
    from abstaingen.generators.ood.builtin.roles import builtin_roles
    from abstaingen.validators.ood import lexical_relatedness

    needed = 50 * OodConfig().ood_per_role
    for role in (r.policy for r in builtin_roles()):
        usable = [versions for versions in BY_ID.values()
                  if versions["en"].subject not in role.excluded_subjects
                  and all(lexical_relatedness(q, role.texts[q.language]).score < 1 for q in versions.values())]
        assert len(usable) >= needed, (role.role_id, len(usable))
