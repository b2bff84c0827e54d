"""The builtin question bank: off-topic multiple-choice questions for offline runs, written for this
project in English, Simplified Chinese and Hindi.

Every question exists in all three languages under one question_id, with the same options in the same
places and the same answer. Two kinds of subject:

- computed (arithmetic, algebra, geometry, number_bases, most of physics): parameters come from a
  fixed-seed `random.Random` or a fixed list, the answer is computed, and the three distractors are
  typical mistakes (the wrong operation, a slipped decimal point, an off-by-one step);
- facts (chemistry, world_geography, astronomy, human_biology, world_history, physics' SI units):
  tables of entities named in each language, with distractors taken from the same table;
- facts written as data, one file per subject in `subjects/` (literature, music, mythology, zoology,
  botany, earth_science, visual_arts, world_languages): a term table and facts whose answer and three
  distractors are its keys (`_SubjectFile`).

The answer's position (A-D) is a hash of the question_id, so it is spread over the four letters and
never changes between runs. Every question is school-subject wording: none of them may touch the
business of a customer-service assistant.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from functools import cache, partial
from itertools import combinations
from pathlib import Path
from typing import NamedTuple

import yaml
from pydantic import Field, ValidationError

from abstaingen.errors import AbstaingenError
from abstaingen.model.common import Model
from abstaingen.model.ood import LANGUAGES, Question

SOURCE = "builtin"
PER_KIND = 16  # questions per computed kind


class T(NamedTuple):
    """One text in the three languages."""

    en: str
    zh: str
    hi: str

    def in_(self, language: str) -> str:
        return str(getattr(self, language))


def same(text: object) -> T:
    """A text written the same way in every language (a number, a symbol)."""
    return T(str(text), str(text), str(text))


@dataclass(frozen=True)
class Draft:
    """A question before its answer is placed: the correct option and three distractors."""

    key: str
    text: T
    answer: T
    distractors: tuple[T, T, T]


# --- helpers ---------------------------------------------------------------------------------------

def _rank(*parts: str) -> int:
    """A stable pseudo-random number for a choice (Python's hash() differs between runs)."""
    return int(hashlib.sha256("|".join(parts).encode()).hexdigest()[:16], 16)


def answer_position(question_id: str) -> int:
    """Where a question's correct option goes: A-D by a hash of its id."""
    return _rank("abstaingen.bank.position", question_id) % 4


def _decimal(value: Fraction) -> str | None:
    """A number as a plain decimal (12, 4.5, 0.25), or None when it has no finite decimal form."""
    denominator = value.denominator
    for prime in (2, 5):
        while denominator % prime == 0:
            denominator //= prime
    if denominator != 1:
        return None
    return format((Decimal(value.numerator) / Decimal(value.denominator)).normalize(), "f")


def _integer(value: Fraction) -> str | None:
    return str(value.numerator) if value.denominator == 1 else None


def _fraction(value: Fraction) -> str | None:
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def _numeric_options(answer: Fraction | int, mistakes: Iterable[Fraction | int],
                     show: Callable[[Fraction], str | None] = _decimal,
                     minimum: Fraction | int = 1) -> tuple[T, tuple[T, T, T]]:
    """The answer and three distractors: the listed mistakes first, in order, then answer +-1, +-2, ...
    Each distractor is a different value from the answer and from each other, at least `minimum`,
    and writable by `show`."""
    correct = Fraction(answer)
    shown = show(correct)
    if shown is None:
        raise ValueError(f"the answer {correct} cannot be written")
    fallbacks = [correct + step for k in range(1, 30) for step in (k, -k)]
    chosen: list[Fraction] = []
    for candidate in [Fraction(m) for m in mistakes] + fallbacks:
        if candidate == correct or candidate in chosen or candidate < minimum or show(candidate) is None:
            continue
        chosen.append(candidate)
        if len(chosen) == 3:
            break
    a, b, c = (same(show(value)) for value in chosen)
    return same(shown), (a, b, c)


def _numeric_draft(key: str, text: T, answer: Fraction | int, mistakes: Iterable[Fraction | int],
                   show: Callable[[Fraction], str | None] = _decimal, minimum: Fraction | int = 1) -> Draft:
    correct, distractors = _numeric_options(answer, mistakes, show, minimum)
    return Draft(key, text, correct, distractors)


def _around(value: int, steps: Sequence[int], salt: str, minimum: int = 1) -> list[int]:
    """Three values near `value`, `steps` away from it, with the answer's rank among the four options
    chosen by hash: some below, the rest above, so neither the smallest nor a middle value gives it away."""
    ordered = sorted(steps, key=lambda step: _rank(salt, str(step)))
    below = [value - step for step in ordered if value - step >= minimum]
    above = [value + step for step in ordered]
    count_below = min(_rank("below", salt) % 4, len(below))
    return below[:count_below] + above[:3 - count_below]


def _pick(pool: Sequence[str], exclude: Iterable[str], salt: str, count: int = 3,
          prefer: Callable[[str], int] = lambda _: 0) -> list[str]:
    """`count` keys of `pool` other than `exclude`: the preferred ones (lowest `prefer`) first, ties in a
    fixed pseudo-random order."""
    excluded = set(exclude)
    candidates = [key for key in pool if key not in excluded]
    return sorted(candidates, key=lambda key: (prefer(key), _rank(salt, key)))[:count]


def _three(terms: Sequence[T]) -> tuple[T, T, T]:
    a, b, c = terms
    return a, b, c


def _linear(a: int, b: int) -> str:
    """`ax + b` written as a textbook would: 'x + 4', '3x - 5', '7x'."""
    head = "x" if a == 1 else f"{a}x"
    if b > 0:
        return f"{head} + {b}"
    if b < 0:
        return f"{head} - {-b}"
    return head


# --- arithmetic ------------------------------------------------------------------------------------

_PERCENTS = (5, 10, 12, 15, 20, 25, 30, 40, 45, 60, 75, 80)
_PERCENT_BASES = (20, 40, 60, 80, 120, 160, 200, 240, 300, 360, 400, 480, 500, 640, 800)


def _proper_fractions(rng: random.Random) -> tuple[int, int]:
    while True:
        denominator = rng.randint(2, 9)
        numerator = rng.randint(1, denominator - 1)
        if Fraction(numerator, denominator).numerator == numerator:
            return numerator, denominator


def _fraction_pairs(rng: random.Random, count: int) -> list[tuple[int, int, int, int]]:
    pairs: list[tuple[int, int, int, int]] = []
    while len(pairs) < count:
        (a, b), (c, d) = _proper_fractions(rng), _proper_fractions(rng)
        if b != d and (a, b, c, d) not in pairs and (c, d, a, b) not in pairs:
            pairs.append((a, b, c, d))
    return pairs


def _arithmetic() -> list[Draft]:
    rng = random.Random("abstaingen.bank.arithmetic")
    drafts = []
    pairs = [(p, n) for p in _PERCENTS for n in _PERCENT_BASES if p * n % 100 == 0]
    for i, (p, n) in enumerate(rng.sample(pairs, PER_KIND), start=1):
        part = Fraction(p * n, 100)
        text = T(f"What is {p}% of {n}?", f"{n} 的 {p}% 是多少？", f"{n} का {p}% कितना होता है?")
        # mistakes: the decimal point slipped either way, the remaining part, n divided by p
        drafts.append(_numeric_draft(f"percent_{i:02d}", text, part,
                                     [part * 10, n - part, part / 10, Fraction(n, p)]))
    for i, (a, b, c, d) in enumerate(_fraction_pairs(rng, PER_KIND), start=1):
        x, y = Fraction(a, b), Fraction(c, d)
        text = T(f"What is {a}/{b} + {c}/{d}, written in lowest terms?",
                 f"{a}/{b} + {c}/{d} 的结果化成最简分数是多少？",
                 f"{a}/{b} + {c}/{d} का मान सरलतम रूप में क्या है?")
        # mistakes: numerators and denominators added, denominators multiplied without scaling, product
        drafts.append(_numeric_draft(f"fraction_add_{i:02d}", text, x + y,
                                     [Fraction(a + c, b + d), Fraction(a + c, b * d), x * y],
                                     show=_fraction, minimum=Fraction(1, 1000)))
    for i, (a, b, c, d) in enumerate(_fraction_pairs(rng, PER_KIND), start=1):
        x, y = Fraction(a, b), Fraction(c, d)
        text = T(f"What is {a}/{b} × {c}/{d}, written in lowest terms?",
                 f"{a}/{b} × {c}/{d} 的结果化成最简分数是多少？",
                 f"{a}/{b} × {c}/{d} का मान सरलतम रूप में क्या है?")
        # mistakes: added instead, divided instead, numerators multiplied over the summed denominators
        drafts.append(_numeric_draft(f"fraction_multiply_{i:02d}", text, x * y,
                                     [x + y, x / y, Fraction(a * c, b + d)],
                                     show=_fraction, minimum=Fraction(1, 1000)))
    seen: set[tuple[int, int, int]] = set()
    while len(seen) < PER_KIND:
        a, b, c = rng.randint(2, 20), rng.randint(2, 9), rng.randint(2, 9)
        if (a, b, c) in seen:
            continue
        seen.add((a, b, c))
        text = T(f"What is {a} + {b} × {c}?", f"{a} + {b} × {c} 等于多少？", f"{a} + {b} × {c} का मान क्या है?")
        # mistakes: worked left to right, multiplied the wrong pair, added everything
        drafts.append(_numeric_draft(f"operations_{len(seen):02d}", text, a + b * c,
                                     [(a + b) * c, a * b + c, a + b + c]))
    return drafts


# --- algebra ---------------------------------------------------------------------------------------

def _nonzero(rng: random.Random, low: int, high: int) -> int:
    value = 0
    while value == 0:
        value = rng.randint(low, high)
    return value


def _unique(rng: random.Random, make: Callable[[random.Random], tuple[int, ...]]) -> list[tuple[int, ...]]:
    found: list[tuple[int, ...]] = []
    while len(found) < PER_KIND:
        params = make(rng)
        if params not in found:
            found.append(params)
    return found


def _algebra() -> list[Draft]:
    rng = random.Random("abstaingen.bank.algebra")
    drafts = []
    for i, (a, b, x) in enumerate(_unique(rng, lambda r: (r.randint(2, 9), _nonzero(r, -20, 20), r.randint(1, 12))),
                                  start=1):
        c = a * x + b
        equation = f"{_linear(a, b)} = {c}"
        text = T(f"If {equation}, what is the value of x?", f"若 {equation}，则 x 的值是多少？",
                 f"यदि {equation} है, तो x का मान क्या है?")
        # mistakes: forgot to divide, moved b with the wrong sign, one step off
        drafts.append(_numeric_draft(f"linear_{i:02d}", text, x, [c - b, Fraction(c + b, a), x + 1, x - 1],
                                     show=_integer, minimum=-100))
    for i, (a, b, x) in enumerate(_unique(rng, lambda r: (r.randint(2, 9), r.randint(1, 9), r.randint(1, 12))),
                                  start=1):
        c = a * (x + b)
        equation = f"{a}({_linear(1, b)}) = {c}"
        text = T(f"If {equation}, what is the value of x?", f"若 {equation}，则 x 的值是多少？",
                 f"यदि {equation} है, तो x का मान क्या है?")
        # mistakes: added b instead of subtracting, forgot to subtract, subtracted before dividing
        drafts.append(_numeric_draft(f"brackets_{i:02d}", text, x, [x + 2 * b, x + b, c - b, x - 1],
                                     show=_integer, minimum=-100))
    for i, (a, c, b, x) in enumerate(_unique(rng, lambda r: (r.randint(3, 9), r.randint(1, 2), r.randint(1, 20),
                                                             r.randint(1, 12))), start=1):
        d = (a - c) * x + b
        equation = f"{_linear(a, b)} = {_linear(c, d)}"
        text = T(f"If {equation}, what is the value of x?", f"若 {equation}，则 x 的值是多少？",
                 f"यदि {equation} है, तो x का मान क्या है?")
        # mistakes: added the x terms, added the constants, ignored the x on the right
        drafts.append(_numeric_draft(f"both_sides_{i:02d}", text, x,
                                     [Fraction(d - b, a + c), Fraction(d + b, a - c), Fraction(d - b, a), x + 1],
                                     show=_integer, minimum=-100))
    for i, (a, b, v) in enumerate(_unique(rng, lambda r: (r.randint(2, 9), _nonzero(r, -15, 15), r.randint(2, 10))),
                                  start=1):
        expression = _linear(a, b)
        text = T(f"What is the value of {expression} when x = {v}?", f"当 x = {v} 时，{expression} 的值是多少？",
                 f"जब x = {v} हो, तब {expression} का मान क्या है?")
        # mistakes: a and v written side by side as digits, b's sign flipped, added a instead of multiplying
        drafts.append(_numeric_draft(f"evaluate_{i:02d}", text, a * v + b,
                                     [a * v - b, a + v + b, a * (v + b), (a + b) * v],
                                     show=_integer, minimum=-200))
    return drafts


# --- geometry --------------------------------------------------------------------------------------

def _geometry() -> list[Draft]:
    rng = random.Random("abstaingen.bank.geometry")
    drafts = []
    sides = _unique(rng, lambda r: tuple(sorted(r.sample(range(3, 21), 2), reverse=True)))
    for i, (length, width) in enumerate(sides[:10], start=1):
        text = T(f"A rectangle is {length} cm long and {width} cm wide. What is its area in square centimetres?",
                 f"一个长方形长 {length} 厘米、宽 {width} 厘米，它的面积是多少平方厘米？",
                 f"एक आयत की लंबाई {length} सेमी और चौड़ाई {width} सेमी है। इसका क्षेत्रफल कितने वर्ग सेमी है?")
        # mistakes: the perimeter, the sum of the sides, half the area
        drafts.append(_numeric_draft(f"rectangle_area_{i:02d}", text, length * width,
                                     [2 * (length + width), length + width, Fraction(length * width, 2)]))
    sides = _unique(rng, lambda r: tuple(sorted(r.sample(range(3, 31), 2), reverse=True)))
    for i, (length, width) in enumerate(sides[:10], start=1):
        text = T(f"A rectangle is {length} cm long and {width} cm wide. What is its perimeter in centimetres?",
                 f"一个长方形长 {length} 厘米、宽 {width} 厘米，它的周长是多少厘米？",
                 f"एक आयत की लंबाई {length} सेमी और चौड़ाई {width} सेमी है। इसका परिमाप कितने सेमी है?")
        # mistakes: only two sides added, the area, one side counted twice
        drafts.append(_numeric_draft(f"rectangle_perimeter_{i:02d}", text, 2 * (length + width),
                                     [length + width, length * width, 2 * length + width]))
    angles = _unique(rng, lambda r: (r.randrange(20, 111, 5), r.randrange(15, 66, 5)))
    for i, (a, b) in enumerate(angles[:10], start=1):
        text = T(f"Two angles of a triangle measure {a}° and {b}°. What is the third angle, in degrees?",
                 f"一个三角形的两个内角分别是 {a}° 和 {b}°，第三个内角是多少度？",
                 f"किसी त्रिभुज के दो कोण {a}° और {b}° हैं। तीसरा कोण कितने डिग्री का है?")
        # mistakes: subtracted from 360, the two angles added, subtracted only one angle
        drafts.append(_numeric_draft(f"triangle_angle_{i:02d}", text, 180 - a - b,
                                     [360 - a - b, a + b, 180 - a, 90 - b]))
    triangles = _unique(rng, lambda r: (r.randint(4, 20), r.randrange(2, 21, 2)))
    for i, (base, height) in enumerate(triangles[:10], start=1):
        text = T(f"A triangle has a base of {base} cm and a height of {height} cm. "
                 f"What is its area in square centimetres?",
                 f"一个三角形的底是 {base} 厘米，高是 {height} 厘米，它的面积是多少平方厘米？",
                 f"एक त्रिभुज का आधार {base} सेमी और ऊँचाई {height} सेमी है। इसका क्षेत्रफल कितने वर्ग सेमी है?")
        # mistakes: forgot to halve, added the two lengths, halved twice
        drafts.append(_numeric_draft(f"triangle_area_{i:02d}", text, Fraction(base * height, 2),
                                     [base * height, base + height, Fraction(base * height, 4)]))
    for i, n in enumerate(range(3, 13), start=1):
        text = T(f"What is the sum of the interior angles of a polygon with {n} sides, in degrees?",
                 f"一个有 {n} 条边的多边形，内角和是多少度？",
                 f"{n} भुजाओं वाले बहुभुज के सभी अंतःकोणों का योग कितने डिग्री होता है?")
        # mistakes: (n - 1) or n triangles instead of n - 2, one triangle too few
        drafts.append(_numeric_draft(f"polygon_angles_{i:02d}", text, (n - 2) * 180,
                                     [(n - 1) * 180, n * 180, (n - 3) * 180, (n - 2) * 90]))
    return drafts


# --- number bases ----------------------------------------------------------------------------------

def _binary(value: Fraction) -> str | None:
    return format(value.numerator, "b") if value.denominator == 1 and value > 0 else None


def _hex(value: Fraction) -> str | None:
    return format(value.numerator, "X") if value.denominator == 1 and value > 0 else None


def _number_bases() -> list[Draft]:
    rng = random.Random("abstaingen.bank.number_bases")
    drafts = []
    for i, value in enumerate(rng.sample(range(9, 256), PER_KIND), start=1):
        digits = format(value, "b")
        text = T(f"What is the binary number {digits} written in decimal?",
                 f"二进制数 {digits} 转换成十进制是多少？",
                 f"द्विआधारी (बाइनरी) संख्या {digits} का दशमलव मान क्या है?")
        # mistakes: bits read from the wrong end, one place value added or missed, off by one
        drafts.append(_numeric_draft(f"binary_to_decimal_{i:02d}", text, value,
                                     [int(digits[::-1], 2), value ^ 2, value + 1, value - 1]))
    for i, value in enumerate(rng.sample(range(26, 256), PER_KIND), start=1):
        digits = format(value, "X")
        high, low = divmod(value, 16)
        text = T(f"What is the hexadecimal number {digits} written in decimal?",
                 f"十六进制数 {digits} 转换成十进制是多少？",
                 f"हेक्साडेसिमल संख्या {digits} का दशमलव मान क्या है?")
        # mistakes: first digit worth 10 instead of 16, digits swapped, off by one
        drafts.append(_numeric_draft(f"hex_to_decimal_{i:02d}", text, value,
                                     [high * 10 + low, low * 16 + high, value + 16, value - 1]))
    for i, value in enumerate(rng.sample(range(9, 128), PER_KIND), start=1):
        text = T(f"What is the decimal number {value} written in binary?",
                 f"十进制数 {value} 转换成二进制是多少？",
                 f"दशमलव संख्या {value} को द्विआधारी (बाइनरी) रूप में कैसे लिखते हैं?")
        reversed_value = int(format(value, "b")[::-1], 2)
        drafts.append(_numeric_draft(f"decimal_to_binary_{i:02d}", text, value,
                                     [reversed_value, value ^ 2, value + 1, value - 1], show=_binary))
    for i, value in enumerate(rng.sample(range(26, 256), PER_KIND), start=1):
        high, low = divmod(value, 16)
        text = T(f"What is the decimal number {value} written in hexadecimal?",
                 f"十进制数 {value} 转换成十六进制是多少？",
                 f"दशमलव संख्या {value} को हेक्साडेसिमल रूप में कैसे लिखते हैं?")
        drafts.append(_numeric_draft(f"decimal_to_hex_{i:02d}", text, value,
                                     [low * 16 + high, value + 16, value - 16, value + 1], show=_hex))
    return drafts


# --- physics ---------------------------------------------------------------------------------------

class Unit(NamedTuple):
    name: T         # plural in English: "kilograms"
    base: Fraction  # the unit in its base unit (metre, gram or litre)


_UNITS = {
    "km": Unit(T("kilometres", "千米", "किलोमीटर"), Fraction(1000)),
    "m": Unit(T("metres", "米", "मीटर"), Fraction(1)),
    "cm": Unit(T("centimetres", "厘米", "सेंटीमीटर"), Fraction(1, 100)),
    "mm": Unit(T("millimetres", "毫米", "मिलीमीटर"), Fraction(1, 1000)),
    "kg": Unit(T("kilograms", "千克", "किलोग्राम"), Fraction(1000)),
    "g": Unit(T("grams", "克", "ग्राम"), Fraction(1)),
    "mg": Unit(T("milligrams", "毫克", "मिलीग्राम"), Fraction(1, 1000)),
    "l": Unit(T("litres", "升", "लीटर"), Fraction(1)),
    "ml": Unit(T("millilitres", "毫升", "मिलीलीटर"), Fraction(1, 1000)),
}

# (from, to, amounts to pick from): the amount is in the first unit
_CONVERSIONS = (
    ("km", "m", ("2.5", "3", "4.2", "7")), ("m", "cm", ("1.5", "3", "6.25", "8")),
    ("m", "mm", ("2", "0.75", "4.5")), ("cm", "mm", ("12", "7.5", "36")),
    ("kg", "g", ("3.5", "2", "0.4", "12")), ("g", "mg", ("5", "0.25", "1.8")),
    ("l", "ml", ("2", "1.25", "0.6")), ("m", "km", ("4500", "800", "12000")),
    ("g", "kg", ("2500", "750", "6000")), ("ml", "l", ("1500", "250", "3200")),
    ("cm", "m", ("350", "40", "1200")), ("mm", "cm", ("85", "120", "6")),
)

# quantity, its SI unit
_SI_UNITS = (
    (T("force", "力", "बल"), T("newton", "牛顿", "न्यूटन")),
    (T("energy", "能量", "ऊर्जा"), T("joule", "焦耳", "जूल")),
    (T("power", "功率", "शक्ति"), T("watt", "瓦特", "वाट")),
    (T("electric current", "电流", "विद्युत धारा"), T("ampere", "安培", "ऐम्पियर")),
    (T("thermodynamic temperature", "热力学温度", "ऊष्मागतिक ताप"), T("kelvin", "开尔文", "केल्विन")),
    (T("mass", "质量", "द्रव्यमान"), T("kilogram", "千克", "किलोग्राम")),
    (T("length", "长度", "लंबाई"), T("metre", "米", "मीटर")),
    (T("time", "时间", "समय"), T("second", "秒", "सेकंड")),
    (T("pressure", "压强", "दाब"), T("pascal", "帕斯卡", "पास्कल")),
    (T("frequency", "频率", "आवृत्ति"), T("hertz", "赫兹", "हर्ट्ज़")),
    (T("electric charge", "电荷量", "विद्युत आवेश"), T("coulomb", "库仑", "कूलॉम")),
    (T("electric potential difference", "电压", "विभवांतर"), T("volt", "伏特", "वोल्ट")),
    (T("electrical resistance", "电阻", "विद्युत प्रतिरोध"), T("ohm", "欧姆", "ओम")),
    (T("amount of substance", "物质的量", "पदार्थ की मात्रा"), T("mole", "摩尔", "मोल")),
    (T("luminous intensity", "发光强度", "ज्योति तीव्रता"), T("candela", "坎德拉", "कैंडेला")),
)


def _physics() -> list[Draft]:
    rng = random.Random("abstaingen.bank.physics")
    drafts = []
    for i, (speed, hours) in enumerate(_unique(rng, lambda r: (r.randrange(40, 121, 5), r.randint(2, 6)))[:8],
                                       start=1):
        distance = speed * hours
        text = T(f"A car travels {distance} km in {hours} hours at a constant speed. What is its speed in km/h?",
                 f"一辆汽车以恒定速度在 {hours} 小时内行驶了 {distance} 千米，它的速度是多少千米每小时？",
                 f"एक कार स्थिर चाल से {hours} घंटे में {distance} किमी चलती है। उसकी चाल कितने किमी/घंटा है?")
        # mistakes: multiplied, subtracted, divided by one hour too many
        drafts.append(_numeric_draft(f"speed_{i:02d}", text, speed,
                                     [distance * hours, distance - hours, Fraction(distance, hours + 1)]))
    for i, (speed, seconds) in enumerate(_unique(rng, lambda r: (r.randint(3, 25), r.randint(4, 30)))[:8], start=1):
        text = T(f"An object moves at a constant {speed} m/s for {seconds} s. How many metres does it travel?",
                 f"一个物体以 {speed} 米/秒 的恒定速度运动了 {seconds} 秒，它运动了多少米？",
                 f"कोई वस्तु {speed} मी/से की स्थिर चाल से {seconds} सेकंड तक चलती है। वह कितने मीटर दूरी तय करती है?")
        # mistakes: added, divided, half the product
        drafts.append(_numeric_draft(f"distance_{i:02d}", text, speed * seconds,
                                     [speed + seconds, Fraction(seconds, speed), Fraction(speed * seconds, 2)],
                                     minimum=Fraction(1, 100)))
    for i, (mass, acceleration) in enumerate(_unique(rng, lambda r: (r.randint(2, 40), r.randint(2, 12)))[:8],
                                             start=1):
        text = T(f"What net force, in newtons, gives a {mass} kg mass an acceleration of {acceleration} m/s²?",
                 f"要使质量为 {mass} 千克的物体产生 {acceleration} 米/秒² 的加速度，需要多少牛顿的合力？",
                 f"{mass} किग्रा द्रव्यमान की वस्तु में {acceleration} मी/से² का त्वरण उत्पन्न करने के लिए कितने "
                 f"न्यूटन का परिणामी बल चाहिए?")
        # mistakes: added, divided, multiplied by 10 as if gravity were involved
        drafts.append(_numeric_draft(f"force_{i:02d}", text, mass * acceleration,
                                     [mass + acceleration, Fraction(mass, acceleration), mass * acceleration * 10],
                                     minimum=Fraction(1, 100)))
    for i, (source, target, amounts) in enumerate(_CONVERSIONS, start=1):
        amount = Fraction(rng.choice(amounts))
        result = amount * _UNITS[source].base / _UNITS[target].base
        written = _decimal(amount)
        src, dst = _UNITS[source].name, _UNITS[target].name
        text = T(f"How many {dst.en} are there in {written} {src.en}?",
                 f"{written} {src.zh}等于多少{dst.zh}？",
                 f"{written} {src.hi} में कितने {dst.hi} होते हैं?")
        # mistakes: the prefix off by one or two powers of ten either way
        drafts.append(_numeric_draft(f"conversion_{i:02d}", text, result,
                                     [result / 10, result * 10, result * 100, result / 100],
                                     minimum=Fraction(1, 10**6)))
    units = [unit.en for _, unit in _SI_UNITS]
    by_name = {unit.en: unit for _, unit in _SI_UNITS}
    for quantity, unit in _SI_UNITS:
        key = f"si_unit_{quantity.en.replace(' ', '_')}"
        text = T(f"What is the SI unit of {quantity.en}?", f"在国际单位制中，{quantity.zh}的单位是什么？",
                 f"SI पद्धति में {quantity.hi} का मात्रक क्या है?")
        others = _pick(units, [unit.en], key)
        drafts.append(Draft(key, text, unit, _three([by_name[name] for name in others])))
    return drafts


# --- chemistry -------------------------------------------------------------------------------------

class Element(NamedTuple):
    number: int
    symbol: str
    name: T


_ELEMENTS = (
    Element(1, "H", T("hydrogen", "氢", "हाइड्रोजन")), Element(2, "He", T("helium", "氦", "हीलियम")),
    Element(3, "Li", T("lithium", "锂", "लीथियम")), Element(4, "Be", T("beryllium", "铍", "बेरिलियम")),
    Element(5, "B", T("boron", "硼", "बोरॉन")), Element(6, "C", T("carbon", "碳", "कार्बन")),
    Element(7, "N", T("nitrogen", "氮", "नाइट्रोजन")), Element(8, "O", T("oxygen", "氧", "ऑक्सीजन")),
    Element(9, "F", T("fluorine", "氟", "फ़्लोरीन")), Element(10, "Ne", T("neon", "氖", "नियॉन")),
    Element(11, "Na", T("sodium", "钠", "सोडियम")), Element(12, "Mg", T("magnesium", "镁", "मैग्नीशियम")),
    Element(13, "Al", T("aluminium", "铝", "ऐलुमिनियम")), Element(14, "Si", T("silicon", "硅", "सिलिकॉन")),
    Element(15, "P", T("phosphorus", "磷", "फ़ॉस्फ़ोरस")), Element(16, "S", T("sulfur", "硫", "सल्फ़र")),
    Element(17, "Cl", T("chlorine", "氯", "क्लोरीन")), Element(18, "Ar", T("argon", "氩", "आर्गन")),
    Element(19, "K", T("potassium", "钾", "पोटैशियम")), Element(20, "Ca", T("calcium", "钙", "कैल्शियम")),
    Element(21, "Sc", T("scandium", "钪", "स्कैंडियम")), Element(22, "Ti", T("titanium", "钛", "टाइटेनियम")),
    Element(23, "V", T("vanadium", "钒", "वैनेडियम")), Element(24, "Cr", T("chromium", "铬", "क्रोमियम")),
    Element(25, "Mn", T("manganese", "锰", "मैंगनीज़")), Element(26, "Fe", T("iron", "铁", "आयरन")),
    Element(27, "Co", T("cobalt", "钴", "कोबाल्ट")), Element(28, "Ni", T("nickel", "镍", "निकेल")),
    Element(29, "Cu", T("copper", "铜", "कॉपर")), Element(30, "Zn", T("zinc", "锌", "ज़िंक")),
)


def _chemistry() -> list[Draft]:
    drafts = []
    symbols = [element.symbol for element in _ELEMENTS]
    for element in _ELEMENTS:
        name = element.name
        key = f"symbol_{element.name.en}"
        text = T(f"What is the chemical symbol of {name.en}?", f"{name.zh}的元素符号是什么？",
                 f"{name.hi} का रासायनिक प्रतीक क्या है?")

        def looks_alike(symbol: str, element: Element = element) -> int:
            # plausible: the same first letter as the symbol, then as the English name
            if symbol[0] == element.symbol[0]:
                return 0
            return 1 if symbol[0].lower() == element.name.en[0] else 2

        others = _pick(symbols, [element.symbol], key, prefer=looks_alike)
        drafts.append(Draft(key, text, same(element.symbol), _three([same(symbol) for symbol in others])))
    for element in _ELEMENTS:
        name = element.name
        text = T(f"What is the atomic number of {name.en}?", f"{name.zh}的原子序数是多少？",
                 f"{name.hi} की परमाणु संख्या क्या है?")
        key = f"atomic_number_{name.en}"
        # neighbours in the periodic table
        drafts.append(_numeric_draft(key, text, element.number, _around(element.number, (1, 2, 3), key)))
    return drafts


# --- world geography -------------------------------------------------------------------------------

class Country(NamedTuple):
    name: T
    capital: T
    continent: str  # a key of _CONTINENTS


_CONTINENTS = {
    "africa": T("Africa", "非洲", "अफ़्रीका"),
    "antarctica": T("Antarctica", "南极洲", "अंटार्कटिका"),
    "asia": T("Asia", "亚洲", "एशिया"),
    "europe": T("Europe", "欧洲", "यूरोप"),
    "north_america": T("North America", "北美洲", "उत्तरी अमेरिका"),
    "south_america": T("South America", "南美洲", "दक्षिणी अमेरिका"),
    "oceania": T("Oceania", "大洋洲", "ओशिनिया"),
}

_COUNTRIES = (
    Country(T("France", "法国", "फ़्रांस"), T("Paris", "巴黎", "पेरिस"), "europe"),
    Country(T("Germany", "德国", "जर्मनी"), T("Berlin", "柏林", "बर्लिन"), "europe"),
    Country(T("Italy", "意大利", "इटली"), T("Rome", "罗马", "रोम"), "europe"),
    Country(T("Spain", "西班牙", "स्पेन"), T("Madrid", "马德里", "मैड्रिड"), "europe"),
    Country(T("Portugal", "葡萄牙", "पुर्तगाल"), T("Lisbon", "里斯本", "लिस्बन"), "europe"),
    Country(T("the United Kingdom", "英国", "यूनाइटेड किंगडम"), T("London", "伦敦", "लंदन"), "europe"),
    Country(T("Ireland", "爱尔兰", "आयरलैंड"), T("Dublin", "都柏林", "डबलिन"), "europe"),
    Country(T("Greece", "希腊", "यूनान"), T("Athens", "雅典", "एथेंस"), "europe"),
    Country(T("Poland", "波兰", "पोलैंड"), T("Warsaw", "华沙", "वारसॉ"), "europe"),
    Country(T("Austria", "奥地利", "ऑस्ट्रिया"), T("Vienna", "维也纳", "वियना"), "europe"),
    Country(T("Sweden", "瑞典", "स्वीडन"), T("Stockholm", "斯德哥尔摩", "स्टॉकहोम"), "europe"),
    Country(T("Norway", "挪威", "नॉर्वे"), T("Oslo", "奥斯陆", "ओस्लो"), "europe"),
    Country(T("Finland", "芬兰", "फ़िनलैंड"), T("Helsinki", "赫尔辛基", "हेलसिंकी"), "europe"),
    Country(T("Japan", "日本", "जापान"), T("Tokyo", "东京", "टोक्यो"), "asia"),
    Country(T("China", "中国", "चीन"), T("Beijing", "北京", "बीजिंग"), "asia"),
    Country(T("India", "印度", "भारत"), T("New Delhi", "新德里", "नई दिल्ली"), "asia"),
    Country(T("South Korea", "韩国", "दक्षिण कोरिया"), T("Seoul", "首尔", "सियोल"), "asia"),
    Country(T("Thailand", "泰国", "थाईलैंड"), T("Bangkok", "曼谷", "बैंकॉक"), "asia"),
    Country(T("Vietnam", "越南", "वियतनाम"), T("Hanoi", "河内", "हनोई"), "asia"),
    Country(T("Canada", "加拿大", "कनाडा"), T("Ottawa", "渥太华", "ओटावा"), "north_america"),
    Country(T("the United States", "美国", "संयुक्त राज्य अमेरिका"),
            T("Washington, D.C.", "华盛顿特区", "वाशिंगटन डी.सी."), "north_america"),
    Country(T("Mexico", "墨西哥", "मेक्सिको"), T("Mexico City", "墨西哥城", "मेक्सिको सिटी"), "north_america"),
    Country(T("Cuba", "古巴", "क्यूबा"), T("Havana", "哈瓦那", "हवाना"), "north_america"),
    Country(T("Brazil", "巴西", "ब्राज़ील"), T("Brasília", "巴西利亚", "ब्रासीलिया"), "south_america"),
    Country(T("Argentina", "阿根廷", "अर्जेंटीना"), T("Buenos Aires", "布宜诺斯艾利斯", "ब्यूनस आयर्स"),
            "south_america"),
    Country(T("Peru", "秘鲁", "पेरू"), T("Lima", "利马", "लीमा"), "south_america"),
    Country(T("Chile", "智利", "चिली"), T("Santiago", "圣地亚哥", "सैंटियागो"), "south_america"),
    Country(T("Colombia", "哥伦比亚", "कोलंबिया"), T("Bogotá", "波哥大", "बोगोटा"), "south_america"),
    Country(T("Australia", "澳大利亚", "ऑस्ट्रेलिया"), T("Canberra", "堪培拉", "कैनबरा"), "oceania"),
    Country(T("New Zealand", "新西兰", "न्यूज़ीलैंड"), T("Wellington", "惠灵顿", "वेलिंगटन"), "oceania"),
    Country(T("Kenya", "肯尼亚", "केन्या"), T("Nairobi", "内罗毕", "नैरोबी"), "africa"),
    Country(T("Nigeria", "尼日利亚", "नाइजीरिया"), T("Abuja", "阿布贾", "अबुजा"), "africa"),
    Country(T("Morocco", "摩洛哥", "मोरक्को"), T("Rabat", "拉巴特", "रबात"), "africa"),
    Country(T("Ethiopia", "埃塞俄比亚", "इथियोपिया"), T("Addis Ababa", "亚的斯亚贝巴", "अदीस अबाबा"), "africa"),
    Country(T("Ghana", "加纳", "घाना"), T("Accra", "阿克拉", "अक्रा"), "africa"),
)

# countries asked "on which continent": none that spans two continents or whose continent has two names
_CONTINENT_QUESTIONS = ("Kenya", "Nigeria", "Morocco", "Ghana", "Peru", "Chile", "Colombia", "Argentina",
                        "Canada", "Mexico", "Thailand", "Vietnam", "Poland", "Finland")

_PLACES = {
    "pacific": T("the Pacific Ocean", "太平洋", "प्रशांत महासागर"),
    "atlantic": T("the Atlantic Ocean", "大西洋", "अटलांटिक महासागर"),
    "indian": T("the Indian Ocean", "印度洋", "हिंद महासागर"),
    "arctic": T("the Arctic Ocean", "北冰洋", "आर्कटिक महासागर"),
    "southern": T("the Southern Ocean", "南大洋", "दक्षिणी महासागर"),
    "everest": T("Mount Everest", "珠穆朗玛峰", "माउंट एवरेस्ट"),
    "k2": T("K2", "乔戈里峰", "के2"),
    "kilimanjaro": T("Mount Kilimanjaro", "乞力马扎罗山", "किलिमंजारो पर्वत"),
    "mont_blanc": T("Mont Blanc", "勃朗峰", "मॉन्ट ब्लांक"),
    "sahara": T("the Sahara", "撒哈拉沙漠", "सहारा मरुस्थल"),
    "gobi": T("the Gobi", "戈壁沙漠", "गोबी मरुस्थल"),
    "kalahari": T("the Kalahari", "卡拉哈里沙漠", "कालाहारी मरुस्थल"),
    "thar": T("the Thar", "塔尔沙漠", "थार मरुस्थल"),
    "nile": T("the Nile", "尼罗河", "नील नदी"),
    "congo": T("the Congo", "刚果河", "कांगो नदी"),
    "niger": T("the Niger", "尼日尔河", "नाइजर नदी"),
    "zambezi": T("the Zambezi", "赞比西河", "ज़ाम्बेज़ी नदी"),
    "amazon": T("the Amazon", "亚马孙河", "अमेज़न नदी"),
    "parana": T("the Paraná", "巴拉那河", "पराना नदी"),
    "orinoco": T("the Orinoco", "奥里诺科河", "ओरिनोको नदी"),
    "mississippi": T("the Mississippi", "密西西比河", "मिसिसिपी नदी"),
    "yangtze": T("the Yangtze", "长江", "यांग्त्ज़ी नदी"),
    "ganges": T("the Ganges", "恒河", "गंगा नदी"),
    "mekong": T("the Mekong", "湄公河", "मेकांग नदी"),
    "yellow_river": T("the Yellow River", "黄河", "ह्वांग हो (पीली नदी)"),
    "volga": T("the Volga", "伏尔加河", "वोल्गा नदी"),
    "danube": T("the Danube", "多瑙河", "डेन्यूब नदी"),
    "rhine": T("the Rhine", "莱茵河", "राइन नदी"),
    "thames": T("the Thames", "泰晤士河", "टेम्स नदी"),
    "seine": T("the Seine", "塞纳河", "सीन नदी"),
    "tiber": T("the Tiber", "台伯河", "टाइबर नदी"),
    "russia": T("Russia", "俄罗斯", "रूस"),
    "canada": T("Canada", "加拿大", "कनाडा"),
    "china": T("China", "中国", "चीन"),
    "united_states": T("the United States", "美国", "संयुक्त राज्य अमेरिका"),
    "vatican": T("Vatican City", "梵蒂冈", "वेटिकन सिटी"),
    "monaco": T("Monaco", "摩纳哥", "मोनाको"),
    "san_marino": T("San Marino", "圣马力诺", "सैन मैरिनो"),
    "liechtenstein": T("Liechtenstein", "列支敦士登", "लिकटेंस्टाइन"),
    **_CONTINENTS,
}


class Fact(NamedTuple):
    """A hand-written question whose options are keys of a term table: the answer, then 3 distractors."""

    key: str
    text: T
    answer: str
    distractors: tuple[str, str, str]


_GEOGRAPHY_FACTS = (
    Fact("largest_ocean", T("Which is the largest ocean on Earth?", "地球上最大的海洋是哪一个？",
                            "पृथ्वी का सबसे बड़ा महासागर कौन-सा है?"), "pacific", ("atlantic", "indian", "arctic")),
    Fact("smallest_ocean", T("Which is the smallest of the Earth's five oceans?", "地球五大洋中最小的是哪一个？",
                             "पृथ्वी के पाँच महासागरों में सबसे छोटा कौन-सा है?"),
         "arctic", ("indian", "southern", "atlantic")),
    Fact("ocean_europe_north_america",
         T("Which ocean lies between Europe and North America?", "哪个大洋位于欧洲和北美洲之间？",
           "यूरोप और उत्तरी अमेरिका के बीच कौन-सा महासागर है?"), "atlantic", ("pacific", "indian", "southern")),
    Fact("ocean_africa_australia",
         T("Which ocean lies between Africa and Australia?", "哪个大洋位于非洲和澳大利亚之间？",
           "अफ़्रीका और ऑस्ट्रेलिया के बीच कौन-सा महासागर है?"), "indian", ("pacific", "atlantic", "arctic")),
    Fact("highest_mountain", T("What is the highest mountain on Earth above sea level?",
                               "地球上海拔最高的山峰是哪一座？", "समुद्र तल से सबसे ऊँचा पर्वत कौन-सा है?"),
         "everest", ("k2", "kilimanjaro", "mont_blanc")),
    Fact("largest_hot_desert", T("What is the largest hot desert in the world?", "世界上最大的热带沙漠是哪一个？",
                                 "विश्व का सबसे बड़ा गर्म मरुस्थल कौन-सा है?"),
         "sahara", ("gobi", "kalahari", "thar")),
    Fact("longest_river_africa", T("What is the longest river in Africa?", "非洲最长的河流是哪一条？",
                                   "अफ़्रीका की सबसे लंबी नदी कौन-सी है?"), "nile", ("congo", "niger", "zambezi")),
    Fact("longest_river_south_america",
         T("What is the longest river in South America?", "南美洲最长的河流是哪一条？",
           "दक्षिणी अमेरिका की सबसे लंबी नदी कौन-सी है?"), "amazon", ("parana", "orinoco", "mississippi")),
    Fact("longest_river_asia", T("What is the longest river in Asia?", "亚洲最长的河流是哪一条？",
                                 "एशिया की सबसे लंबी नदी कौन-सी है?"), "yangtze", ("ganges", "mekong", "yellow_river")),
    Fact("longest_river_europe", T("What is the longest river in Europe?", "欧洲最长的河流是哪一条？",
                                   "यूरोप की सबसे लंबी नदी कौन-सी है?"), "volga", ("danube", "rhine", "thames")),
    Fact("river_paris", T("Which river flows through Paris?", "哪条河流经巴黎？",
                          "पेरिस से होकर कौन-सी नदी बहती है?"), "seine", ("thames", "danube", "rhine")),
    Fact("river_london", T("Which river flows through London?", "哪条河流经伦敦？",
                           "लंदन से होकर कौन-सी नदी बहती है?"), "thames", ("seine", "rhine", "tiber")),
    Fact("river_rome", T("Which river flows through Rome?", "哪条河流经罗马？",
                         "रोम से होकर कौन-सी नदी बहती है?"), "tiber", ("seine", "danube", "thames")),
    Fact("river_vienna_budapest", T("Which river flows through both Vienna and Budapest?",
                                    "哪条河同时流经维也纳和布达佩斯？",
                                    "कौन-सी नदी वियना और बुडापेस्ट दोनों से होकर बहती है?"),
         "danube", ("rhine", "volga", "seine")),
    Fact("largest_country", T("Which is the largest country in the world by area?", "按面积计算，世界上最大的国家是哪一个？",
                              "क्षेत्रफल की दृष्टि से विश्व का सबसे बड़ा देश कौन-सा है?"),
         "russia", ("canada", "china", "united_states")),
    Fact("smallest_country", T("Which is the smallest country in the world by area?",
                               "按面积计算，世界上最小的国家是哪一个？",
                               "क्षेत्रफल की दृष्टि से विश्व का सबसे छोटा देश कौन-सा है?"),
         "vatican", ("monaco", "san_marino", "liechtenstein")),
    Fact("largest_continent", T("Which is the largest continent by area?", "按面积计算，最大的大洲是哪一个？",
                                "क्षेत्रफल की दृष्टि से सबसे बड़ा महाद्वीप कौन-सा है?"),
         "asia", ("africa", "north_america", "europe")),
    Fact("south_pole", T("On which continent is the geographic South Pole?", "地理南极点位于哪个大洲？",
                         "भौगोलिक दक्षिणी ध्रुव किस महाद्वीप पर स्थित है?"),
         "antarctica", ("south_america", "africa", "asia")),
)


def _facts(facts: Iterable[Fact], terms: dict[str, T]) -> list[Draft]:
    return [Draft(fact.key, fact.text, terms[fact.answer], _three([terms[key] for key in fact.distractors]))
            for fact in facts]


def _world_geography() -> list[Draft]:
    drafts = []
    capitals = [country.name.en for country in _COUNTRIES]
    by_name = {country.name.en: country for country in _COUNTRIES}
    for country in _COUNTRIES:
        name = country.name
        key = f"capital_{name.en.removeprefix('the ').lower().replace(' ', '_')}"
        text = T(f"What is the capital of {name.en}?", f"{name.zh}的首都是哪座城市？",
                 f"{name.hi} की राजधानी कौन-सी है?")

        def elsewhere(other: str, country: Country = country) -> int:
            # capitals of the same continent first: the plausible confusions
            return int(by_name[other].continent != country.continent)

        others = _pick(capitals, [name.en], key, prefer=elsewhere)
        drafts.append(Draft(key, text, country.capital, _three([by_name[other].capital for other in others])))
    continents = list(_CONTINENTS)
    for country_name in _CONTINENT_QUESTIONS:
        country = by_name[country_name]
        name = country.name
        key = f"continent_{name.en.lower().replace(' ', '_')}"
        text = T(f"On which continent is {name.en}?", f"{name.zh}位于哪个大洲？",
                 f"{name.hi} किस महाद्वीप में स्थित है?")
        others = _pick(continents, [country.continent, "oceania"], key)
        drafts.append(Draft(key, text, _CONTINENTS[country.continent],
                            _three([_CONTINENTS[other] for other in others])))
    return drafts + _facts(_GEOGRAPHY_FACTS, _PLACES)


# --- astronomy -------------------------------------------------------------------------------------

_PLANETS = (  # from the Sun outwards
    T("Mercury", "水星", "बुध"), T("Venus", "金星", "शुक्र"), T("Earth", "地球", "पृथ्वी"), T("Mars", "火星", "मंगल"),
    T("Jupiter", "木星", "बृहस्पति"), T("Saturn", "土星", "शनि"), T("Uranus", "天王星", "यूरेनस"),
    T("Neptune", "海王星", "नेपच्यून"),
)
_ORDINALS = (
    T("first", "1", "पहला"), T("second", "2", "दूसरा"), T("third", "3", "तीसरा"), T("fourth", "4", "चौथा"),
    T("fifth", "5", "पाँचवाँ"), T("sixth", "6", "छठा"), T("seventh", "7", "सातवाँ"), T("eighth", "8", "आठवाँ"),
)

_SKY = {
    **{planet.en.lower(): planet for planet in _PLANETS},
    "moon": T("the Moon", "月球", "चंद्रमा"),
    "ganymede": T("Ganymede", "木卫三（盖尼米德）", "गैनिमीड"),
    "titan": T("Titan", "土卫六（泰坦）", "टाइटन"),
    "europa": T("Europa", "木卫二（欧罗巴）", "यूरोपा"),
    "milky_way": T("the Milky Way", "银河系", "मिल्की वे (आकाशगंगा)"),
    "andromeda": T("the Andromeda Galaxy", "仙女座星系", "एंड्रोमेडा गैलेक्सी"),
    "triangulum": T("the Triangulum Galaxy", "三角座星系", "ट्रायंगुलम गैलेक्सी"),
    "magellanic": T("the Large Magellanic Cloud", "大麦哲伦云", "बड़ा मैगेलैनिक मेघ"),
    "dwarf_planet": T("a dwarf planet", "矮行星", "बौना ग्रह"),
    "planet": T("a planet", "行星", "ग्रह"),
    "comet": T("a comet", "彗星", "धूमकेतु"),
    "satellite": T("a moon", "卫星", "उपग्रह"),
    "8_seconds": T("about 8 seconds", "约 8 秒", "लगभग 8 सेकंड"),
    "8_minutes": T("about 8 minutes", "约 8 分钟", "लगभग 8 मिनट"),
    "8_hours": T("about 8 hours", "约 8 小时", "लगभग 8 घंटे"),
    "8_days": T("about 8 days", "约 8 天", "लगभग 8 दिन"),
    "24_hours": T("about 24 hours", "约 24 小时", "लगभग 24 घंटे"),
    "30_days": T("about 30 days", "约 30 天", "लगभग 30 दिन"),
    "365_days": T("about 365 days", "约 365 天", "लगभग 365 दिन"),
    "687_days": T("about 687 days", "约 687 天", "लगभग 687 दिन"),
    "proxima": T("Proxima Centauri", "比邻星", "प्रॉक्सिमा सेंटॉरी"),
    "sirius": T("Sirius", "天狼星", "सीरियस"),
    "polaris": T("Polaris", "北极星", "ध्रुव तारा"),
    "betelgeuse": T("Betelgeuse", "参宿四", "बीटलजूस"),
}

_ASTRONOMY_FACTS = (
    Fact("largest_planet", T("Which is the largest planet in the Solar System?", "太阳系中最大的行星是哪一颗？",
                             "सौरमंडल का सबसे बड़ा ग्रह कौन-सा है?"), "jupiter", ("saturn", "neptune", "earth")),
    Fact("smallest_planet", T("Which is the smallest planet in the Solar System?", "太阳系中最小的行星是哪一颗？",
                              "सौरमंडल का सबसे छोटा ग्रह कौन-सा है?"), "mercury", ("mars", "venus", "earth")),
    Fact("red_planet", T("Which planet is often called the Red Planet?", "哪颗行星常被称为“红色星球”？",
                         "किस ग्रह को अक्सर 'लाल ग्रह' कहा जाता है?"), "mars", ("jupiter", "venus", "mercury")),
    Fact("hottest_planet", T("Which planet has the hottest average surface temperature in the Solar System?",
                             "太阳系中哪颗行星的平均表面温度最高？",
                             "सौरमंडल में किस ग्रह की सतह का औसत तापमान सबसे अधिक है?"),
         "venus", ("mercury", "mars", "jupiter")),
    Fact("bright_rings", T("Which planet is best known for its large, bright ring system?",
                           "哪颗行星以其宽阔明亮的光环而闻名？",
                           "कौन-सा ग्रह अपने बड़े और चमकीले वलयों के लिए सबसे अधिक प्रसिद्ध है?"),
         "saturn", ("mars", "mercury", "venus")),
    Fact("tilted_axis", T("Which planet spins tipped on its side, with its axis tilted by about 98 degrees?",
                          "哪颗行星几乎“躺着”自转，自转轴倾角约为 98 度？",
                          "कौन-सा ग्रह लगभग 98 डिग्री झुकी धुरी के कारण मानो करवट लेकर घूमता है?"),
         "uranus", ("neptune", "saturn", "jupiter")),
    Fact("great_red_spot", T("The Great Red Spot is a giant storm on which planet?", "“大红斑”是哪颗行星上的巨大风暴？",
                             "'ग्रेट रेड स्पॉट' किस ग्रह पर चलने वाला एक विशाल तूफ़ान है?"),
         "jupiter", ("saturn", "mars", "neptune")),
    Fact("olympus_mons", T("On which planet is the giant volcano Olympus Mons?", "巨型火山奥林帕斯山位于哪颗行星上？",
                           "विशाल ज्वालामुखी ओलंपस मॉन्स किस ग्रह पर है?"), "mars", ("venus", "mercury", "jupiter")),
    Fact("largest_moon", T("Which is the largest moon in the Solar System?", "太阳系中最大的卫星是哪一颗？",
                           "सौरमंडल का सबसे बड़ा उपग्रह कौन-सा है?"), "ganymede", ("titan", "moon", "europa")),
    Fact("titan", T("Titan is a moon of which planet?", "泰坦（Titan）是哪颗行星的卫星？",
                    "टाइटन किस ग्रह का उपग्रह है?"), "saturn", ("jupiter", "neptune", "uranus")),
    Fact("phobos", T("Phobos is a moon of which planet?", "福波斯（Phobos）是哪颗行星的卫星？",
                     "फ़ोबोस किस ग्रह का उपग्रह है?"), "mars", ("jupiter", "saturn", "neptune")),
    Fact("io", T("Io is a moon of which planet?", "伊奥（Io）是哪颗行星的卫星？", "आयो किस ग्रह का उपग्रह है?"),
         "jupiter", ("saturn", "uranus", "mars")),
    Fact("triton", T("Triton is the largest moon of which planet?", "特里同（Triton）是哪颗行星最大的卫星？",
                     "ट्राइटन किस ग्रह का सबसे बड़ा उपग्रह है?"), "neptune", ("uranus", "saturn", "jupiter")),
    Fact("home_galaxy", T("In which galaxy is the Solar System?", "太阳系位于哪个星系？",
                          "सौरमंडल किस गैलेक्सी (मंदाकिनी) में स्थित है?"),
         "milky_way", ("andromeda", "triangulum", "magellanic")),
    Fact("pluto", T("Since 2006, how has the International Astronomical Union classified Pluto?",
                    "自 2006 年起，国际天文学联合会把冥王星归为哪一类天体？",
                    "2006 से अंतरराष्ट्रीय खगोलीय संघ प्लूटो को किस श्रेणी में रखता है?"),
         "dwarf_planet", ("planet", "comet", "satellite")),
    Fact("sunlight_time", T("About how long does sunlight take to reach the Earth?", "阳光到达地球大约需要多长时间？",
                            "सूर्य के प्रकाश को पृथ्वी तक पहुँचने में लगभग कितना समय लगता है?"),
         "8_minutes", ("8_seconds", "8_hours", "8_days")),
    Fact("earth_orbit", T("About how long does the Earth take to go once around the Sun?",
                          "地球绕太阳公转一周大约需要多长时间？",
                          "पृथ्वी को सूर्य का एक चक्कर लगाने में लगभग कितना समय लगता है?"),
         "365_days", ("24_hours", "30_days", "687_days")),
    Fact("nearest_star", T("Apart from the Sun, which star is nearest to the Earth?", "除太阳外，离地球最近的恒星是哪一颗？",
                           "सूर्य के अलावा पृथ्वी के सबसे निकट का तारा कौन-सा है?"),
         "proxima", ("sirius", "polaris", "betelgeuse")),
)


def _neighbours(index: int, size: int) -> list[int]:
    """Other places near `index` in a row of `size`: the likeliest mix-ups first."""
    return [other for step in (1, 2, 3, 4) for other in (index - step, index + step) if 0 <= other < size][:3]


def _astronomy() -> list[Draft]:
    drafts = []
    for place, (planet, ordinal) in enumerate(zip(_PLANETS, _ORDINALS)):
        text = T(f"Which planet is the {ordinal.en} planet from the Sun?", f"从太阳向外数，第 {ordinal.zh} 颗行星是哪一颗？",
                 f"सूर्य से गिनने पर {ordinal.hi} ग्रह कौन-सा है?")
        drafts.append(Draft(f"planet_number_{place + 1}", text, planet,
                            _three([_PLANETS[other] for other in _neighbours(place, len(_PLANETS))])))
    for place, planet in enumerate(_PLANETS):
        text = T(f"Counting outward from the Sun, what is the position of {planet.en} among the eight planets?",
                 f"从太阳向外数，{planet.zh}是八大行星中的第几颗？",
                 f"सूर्य से गिनने पर आठ ग्रहों में {planet.hi} का स्थान कौन-सा है?")
        drafts.append(Draft(f"planet_position_{planet.en.lower()}", text, same(place + 1),
                            _three([same(other + 1) for other in _neighbours(place, len(_PLANETS))])))
    groups = list(combinations(range(len(_PLANETS)), 4))
    for i, group in enumerate(groups[::9], start=1):  # 8 of the 70 groups of four
        text = T("Which of these planets is closest to the Sun?", "下列行星中，哪一颗离太阳最近？",
                 "इनमें से कौन-सा ग्रह सूर्य के सबसे निकट है?")
        drafts.append(Draft(f"closest_{i:02d}", text, _PLANETS[group[0]],
                            _three([_PLANETS[other] for other in group[1:]])))
    for i, group in enumerate(groups[4::9], start=1):
        text = T("Which of these planets is farthest from the Sun?", "下列行星中，哪一颗离太阳最远？",
                 "इनमें से कौन-सा ग्रह सूर्य से सबसे दूर है?")
        drafts.append(Draft(f"farthest_{i:02d}", text, _PLANETS[group[-1]],
                            _three([_PLANETS[other] for other in group[:-1]])))
    return drafts + _facts(_ASTRONOMY_FACTS, _SKY)


# --- human biology ---------------------------------------------------------------------------------

_BODY = {
    "heart": T("heart", "心脏", "हृदय"), "lungs": T("lungs", "肺", "फेफड़े"), "kidneys": T("kidneys", "肾脏", "गुर्दे"),
    "liver": T("liver", "肝脏", "यकृत"), "stomach": T("stomach", "胃", "आमाशय"),
    "small_intestine": T("small intestine", "小肠", "छोटी आँत"),
    "large_intestine": T("large intestine", "大肠", "बड़ी आँत"), "brain": T("brain", "大脑", "मस्तिष्क"),
    "pancreas": T("pancreas", "胰腺", "अग्न्याशय"), "skin": T("skin", "皮肤", "त्वचा"),
    "gallbladder": T("gallbladder", "胆囊", "पित्ताशय"), "spleen": T("spleen", "脾脏", "प्लीहा"),
    "bladder": T("urinary bladder", "膀胱", "मूत्राशय"), "thyroid": T("thyroid gland", "甲状腺", "थायरॉइड ग्रंथि"),
    "diaphragm": T("diaphragm", "膈肌", "डायाफ्राम"), "biceps": T("biceps", "肱二头肌", "बाइसेप्स"),
    "triceps": T("triceps", "肱三头肌", "ट्राइसेप्स"), "quadriceps": T("quadriceps", "股四头肌", "क्वाड्रिसेप्स"),
    "femur": T("femur", "股骨", "फीमर"), "stapes": T("stapes", "镫骨", "स्टेपीज़"),
    "humerus": T("humerus", "肱骨", "ह्यूमरस"), "tibia": T("tibia", "胫骨", "टिबिया"),
    "patella": T("patella", "髌骨", "पटेला"), "clavicle": T("clavicle", "锁骨", "हँसली"),
    "scapula": T("scapula", "肩胛骨", "स्कैपुला"), "ribs": T("ribs", "肋骨", "पसलियाँ"),
    "skull": T("skull", "颅骨", "खोपड़ी"), "vertebrae": T("vertebrae", "椎骨", "कशेरुकाएँ"),
    "pelvis": T("pelvis", "骨盆", "श्रोणि"),
    "red_cells": T("red blood cells", "红细胞", "लाल रक्त कोशिकाएँ"),
    "white_cells": T("white blood cells", "白细胞", "श्वेत रक्त कोशिकाएँ"),
    "platelets": T("platelets", "血小板", "प्लेटलेट्स"), "plasma": T("plasma", "血浆", "प्लाज़्मा"),
    "neurons": T("neurons", "神经元", "तंत्रिका कोशिकाएँ"), "nerves": T("nerves", "神经", "तंत्रिकाएँ"),
    "arteries": T("arteries", "动脉", "धमनियाँ"), "veins": T("veins", "静脉", "शिराएँ"),
    "capillaries": T("capillaries", "毛细血管", "केशिकाएँ"),
    "haemoglobin": T("haemoglobin", "血红蛋白", "हीमोग्लोबिन"), "insulin": T("insulin", "胰岛素", "इंसुलिन"),
    "keratin": T("keratin", "角蛋白", "केराटिन"), "collagen": T("collagen", "胶原蛋白", "कोलेजन"),
    "bile": T("bile", "胆汁", "पित्त"), "alveoli": T("alveoli", "肺泡", "कूपिकाएँ (एल्वियोली)"),
    "bronchi": T("bronchi", "支气管", "श्वसनियाँ"), "villi": T("villi", "绒毛", "रसांकुर"),
    "trachea": T("trachea", "气管", "श्वासनली"), "oesophagus": T("oesophagus", "食道", "ग्रासनली"),
    "aorta": T("aorta", "主动脉", "महाधमनी"), "ureter": T("ureter", "输尿管", "मूत्रवाहिनी"),
    "retina": T("retina", "视网膜", "रेटिना"), "cornea": T("cornea", "角膜", "कॉर्निया"),
    "iris": T("iris", "虹膜", "आइरिस"), "lens": T("lens", "晶状体", "लेंस"),
    "oxygen": T("oxygen", "氧气", "ऑक्सीजन"), "carbon_dioxide": T("carbon dioxide", "二氧化碳", "कार्बन डाइऑक्साइड"),
    "hydrogen": T("hydrogen", "氢气", "हाइड्रोजन"), "helium": T("helium", "氦气", "हीलियम"),
    "vitamin_a": T("vitamin A", "维生素 A", "विटामिन A"), "vitamin_c": T("vitamin C", "维生素 C", "विटामिन C"),
    "vitamin_d": T("vitamin D", "维生素 D", "विटामिन D"), "vitamin_k": T("vitamin K", "维生素 K", "विटामिन K"),
    "calcium": T("calcium", "钙", "कैल्शियम"), "iron": T("iron", "铁", "लोहा"),
    "sodium": T("sodium", "钠", "सोडियम"), "potassium": T("potassium", "钾", "पोटैशियम"),
    "o_negative": T("O negative", "O 型 Rh 阴性", "O नेगेटिव"),
    "a_negative": T("A negative", "A 型 Rh 阴性", "A नेगेटिव"),
    "a_positive": T("A positive", "A 型 Rh 阳性", "A पॉज़िटिव"),
    "b_negative": T("B negative", "B 型 Rh 阴性", "B नेगेटिव"),
    "b_positive": T("B positive", "B 型 Rh 阳性", "B पॉज़िटिव"),
    "ab_positive": T("AB positive", "AB 型 Rh 阳性", "AB पॉज़िटिव"),
    **{f"n{n}": same(n) for n in (2, 3, 4, 6, 28, 30, 32, 36, 186, 206, 212, 306)},
    **{f"t{n}": same(f"{n} °C") for n in (35, 37, 39, 41)},
}

_BIOLOGY_FACTS = (
    Fact("pumps_blood", T("Which organ pumps blood around the body?", "哪个器官负责把血液泵送到全身？",
                          "कौन-सा अंग पूरे शरीर में रक्त पंप करता है?"), "heart", ("lungs", "liver", "kidneys")),
    Fact("oxygen_into_blood", T("In which organs does oxygen from the air pass into the blood?",
                                "空气中的氧气在哪个器官进入血液？", "हवा की ऑक्सीजन किस अंग में रक्त में पहुँचती है?"),
         "lungs", ("heart", "stomach", "kidneys")),
    Fact("make_urine", T("Which organs filter the blood and produce urine?", "哪个器官过滤血液并形成尿液？",
                         "कौन-से अंग रक्त को छानकर मूत्र बनाते हैं?"), "kidneys", ("bladder", "liver", "spleen")),
    Fact("makes_bile", T("Which organ produces bile?", "胆汁是由哪个器官产生的？", "पित्त कौन-सा अंग बनाता है?"),
         "liver", ("gallbladder", "pancreas", "stomach")),
    Fact("stores_bile", T("Which organ stores bile until it is needed for digestion?", "哪个器官负责储存胆汁？",
                          "कौन-सा अंग पाचन के लिए ज़रूरत पड़ने तक पित्त को जमा रखता है?"),
         "gallbladder", ("liver", "pancreas", "spleen")),
    Fact("makes_insulin", T("Which organ produces the hormone insulin?", "胰岛素是由哪个器官分泌的？",
                            "इंसुलिन हार्मोन कौन-सा अंग बनाता है?"), "pancreas", ("liver", "thyroid", "kidneys")),
    Fact("absorbs_nutrients", T("In which organ are most nutrients from food absorbed into the blood?",
                                "食物中的大部分营养物质在哪个器官被吸收进入血液？",
                                "भोजन के अधिकांश पोषक तत्व किस अंग में रक्त में अवशोषित होते हैं?"),
         "small_intestine", ("stomach", "large_intestine", "liver")),
    Fact("makes_acid", T("Which organ produces hydrochloric acid to help digest food?",
                         "哪个器官分泌盐酸来帮助消化食物？",
                         "भोजन पचाने में मदद के लिए कौन-सा अंग हाइड्रोक्लोरिक अम्ल बनाता है?"),
         "stomach", ("small_intestine", "liver", "pancreas")),
    Fact("largest_organ", T("What is the largest organ of the human body?", "人体最大的器官是什么？",
                            "मानव शरीर का सबसे बड़ा अंग कौन-सा है?"), "skin", ("liver", "brain", "lungs")),
    Fact("largest_internal_organ", T("What is the largest internal organ of the human body?",
                                     "人体最大的内脏器官是什么？", "मानव शरीर का सबसे बड़ा आंतरिक अंग कौन-सा है?"),
         "liver", ("heart", "stomach", "kidneys")),
    Fact("controls_thought", T("Which organ controls thinking, memory and voluntary movement?",
                               "哪个器官控制思维、记忆和随意运动？",
                               "कौन-सा अंग सोचने, याद रखने और ऐच्छिक गतियों को नियंत्रित करता है?"),
         "brain", ("heart", "liver", "lungs")),
    Fact("breathing_muscle", T("Which muscle is the main muscle of breathing?", "呼吸时起主要作用的肌肉是哪一块？",
                               "साँस लेने की मुख्य पेशी कौन-सी है?"), "diaphragm", ("biceps", "triceps", "quadriceps")),
    Fact("signal_cells", T("What are the cells of the nervous system that carry electrical signals called?",
                           "神经系统中传递电信号的细胞叫什么？",
                           "तंत्रिका तंत्र में विद्युत संकेत ले जाने वाली कोशिकाएँ क्या कहलाती हैं?"),
         "neurons", ("red_cells", "platelets", "white_cells")),
    Fact("longest_bone", T("What is the longest bone in the human body?", "人体最长的骨头是哪一块？",
                           "मानव शरीर की सबसे लंबी हड्डी कौन-सी है?"), "femur", ("tibia", "humerus", "scapula")),
    Fact("smallest_bone", T("What is the smallest bone in the human body?", "人体最小的骨头是哪一块？",
                            "मानव शरीर की सबसे छोटी हड्डी कौन-सी है?"), "stapes", ("patella", "clavicle", "scapula")),
    Fact("bone_count", T("How many bones does a typical adult human skeleton have?", "成年人的骨骼通常由多少块骨头组成？",
                         "एक सामान्य वयस्क मनुष्य के कंकाल में कितनी हड्डियाँ होती हैं?"),
         "n206", ("n186", "n212", "n306")),
    Fact("protects_brain", T("Which bony structure protects the brain?", "哪个骨骼结构保护着大脑？",
                             "कौन-सी अस्थि संरचना मस्तिष्क की रक्षा करती है?"), "skull", ("ribs", "pelvis", "vertebrae")),
    Fact("protects_heart_lungs", T("Which bones form a cage that protects the heart and lungs?",
                                   "哪些骨头围成保护心脏和肺的笼状结构？",
                                   "कौन-सी हड्डियाँ हृदय और फेफड़ों की रक्षा करने वाला पिंजरा बनाती हैं?"),
         "ribs", ("skull", "pelvis", "scapula")),
    Fact("kneecap", T("Which bone is commonly called the kneecap?", "俗称“膝盖骨”的是哪一块骨头？",
                      "आम बोलचाल में 'घुटने की कटोरी' कहलाने वाली हड्डी कौन-सी है?"),
         "patella", ("tibia", "femur", "clavicle")),
    Fact("upper_arm_bone", T("Which bone is in the upper arm?", "上臂中的骨头是哪一块？", "ऊपरी बाँह में कौन-सी हड्डी होती है?"),
         "humerus", ("femur", "tibia", "scapula")),
    Fact("spine_bones", T("Which bones make up the spine?", "脊柱是由哪种骨头组成的？",
                          "रीढ़ (मेरुदंड) किन हड्डियों से बनी होती है?"), "vertebrae", ("ribs", "patella", "clavicle")),
    Fact("carry_oxygen", T("Which blood cells carry oxygen around the body?", "哪种血细胞负责运输氧气？",
                           "कौन-सी रक्त कोशिकाएँ शरीर में ऑक्सीजन ले जाती हैं?"),
         "red_cells", ("white_cells", "platelets", "neurons")),
    Fact("fight_infection", T("Which blood cells fight infection?", "哪种血细胞帮助身体抵抗感染？",
                              "कौन-सी रक्त कोशिकाएँ संक्रमण से लड़ती हैं?"),
         "white_cells", ("red_cells", "platelets", "neurons")),
    Fact("clotting", T("Which small cell fragments in the blood help it to clot?", "血液中帮助血液凝固的细胞碎片叫什么？",
                       "रक्त में मौजूद कौन-से छोटे कोशिका-खंड रक्त का थक्का जमाने में मदद करते हैं?"),
         "platelets", ("red_cells", "white_cells", "neurons")),
    Fact("blood_liquid", T("What is the pale yellow liquid part of blood called?", "血液中淡黄色的液体部分叫什么？",
                           "रक्त का हल्का पीला तरल भाग क्या कहलाता है?"), "plasma", ("platelets", "haemoglobin", "bile")),
    Fact("away_from_heart", T("Which blood vessels carry blood away from the heart?", "哪种血管把血液从心脏运出？",
                              "कौन-सी रक्त वाहिकाएँ रक्त को हृदय से दूर ले जाती हैं?"),
         "arteries", ("veins", "capillaries", "nerves")),
    Fact("back_to_heart", T("Which blood vessels carry blood back to the heart?", "哪种血管把血液运回心脏？",
                            "कौन-सी रक्त वाहिकाएँ रक्त को वापस हृदय तक लाती हैं?"),
         "veins", ("arteries", "capillaries", "nerves")),
    Fact("smallest_vessels", T("What are the smallest blood vessels in the body called?", "人体内最细小的血管叫什么？",
                               "शरीर की सबसे छोटी रक्त वाहिकाएँ क्या कहलाती हैं?"),
         "capillaries", ("arteries", "veins", "nerves")),
    Fact("oxygen_protein", T("Which protein in red blood cells carries oxygen?", "红细胞中负责运输氧气的蛋白质是什么？",
                             "लाल रक्त कोशिकाओं में ऑक्सीजन ले जाने वाला प्रोटीन कौन-सा है?"),
         "haemoglobin", ("insulin", "keratin", "collagen")),
    Fact("universal_donor", T("Which blood type is known as the universal donor for red blood cells?",
                              "哪种血型被称为红细胞的“万能供血者”？",
                              "लाल रक्त कोशिकाओं के लिए किस रक्त समूह को सर्वदाता कहा जाता है?"),
         "o_negative", ("ab_positive", "a_positive", "b_negative")),
    Fact("universal_recipient", T("Which blood type is known as the universal recipient for red blood cells?",
                                  "哪种血型被称为红细胞的“万能受血者”？",
                                  "लाल रक्त कोशिकाओं के लिए किस रक्त समूह को सर्वग्राही कहा जाता है?"),
         "ab_positive", ("o_negative", "a_negative", "b_positive")),
    Fact("heart_chambers", T("How many chambers does the human heart have?", "人的心脏有几个腔？",
                             "मानव हृदय में कितने कक्ष होते हैं?"), "n4", ("n2", "n3", "n6")),
    Fact("adult_teeth", T("How many permanent teeth does an adult have in a full set, wisdom teeth included?",
                          "成年人一副完整的恒牙（包括智齿）共有多少颗？",
                          "अक़्ल दाढ़ सहित एक वयस्क के स्थायी दाँतों के पूरे समूह में कितने दाँत होते हैं?"),
         "n32", ("n28", "n30", "n36")),
    Fact("air_sacs", T("In the lungs, gas exchange takes place in tiny air sacs. What are they called?",
                       "肺中进行气体交换的微小气囊叫什么？",
                       "फेफड़ों में गैसों का आदान-प्रदान जिन छोटी वायु-थैलियों में होता है, उन्हें क्या कहते हैं?"),
         "alveoli", ("bronchi", "villi", "capillaries")),
    Fact("air_tube", T("Which tube carries air from the throat down towards the lungs?", "哪条管道把空气从喉部向下输送到肺部？",
                       "कौन-सी नली गले से हवा को नीचे फेफड़ों की ओर ले जाती है?"),
         "trachea", ("oesophagus", "aorta", "ureter")),
    Fact("food_tube", T("Which tube carries food from the mouth to the stomach?", "哪条管道把食物从口腔输送到胃？",
                        "कौन-सी नली भोजन को मुँह से आमाशय तक ले जाती है?"), "oesophagus", ("trachea", "aorta", "ureter")),
    Fact("light_sensitive_layer", T("Which layer at the back of the eye contains light-sensitive cells?",
                                    "眼球后部含有感光细胞的一层结构叫什么？",
                                    "आँख के पिछले भाग की कौन-सी परत में प्रकाश-संवेदी कोशिकाएँ होती हैं?"),
         "retina", ("cornea", "iris", "lens")),
    Fact("pupil_size", T("Which coloured part of the eye controls the size of the pupil?",
                         "眼睛中有颜色、能调节瞳孔大小的部分是什么？",
                         "आँख का कौन-सा रंगीन भाग पुतली के आकार को नियंत्रित करता है?"),
         "iris", ("retina", "cornea", "lens")),
    Fact("breathed_out", T("Which waste gas does the body get rid of when we breathe out?", "人呼气时排出的代谢废气是什么？",
                           "साँस छोड़ते समय शरीर कौन-सी अपशिष्ट गैस बाहर निकालता है?"),
         "carbon_dioxide", ("oxygen", "hydrogen", "helium")),
    Fact("sunlight_vitamin", T("Which vitamin does human skin make when exposed to sunlight?",
                               "人体皮肤在阳光照射下能合成哪种维生素？", "धूप पड़ने पर मानव त्वचा कौन-सा विटामिन बनाती है?"),
         "vitamin_d", ("vitamin_c", "vitamin_a", "vitamin_k")),
    Fact("scurvy", T("A lack of which vitamin causes scurvy?", "缺乏哪种维生素会导致坏血病？",
                     "किस विटामिन की कमी से स्कर्वी रोग होता है?"), "vitamin_c", ("vitamin_d", "vitamin_a", "vitamin_k")),
    Fact("bone_mineral", T("Which mineral is the most abundant in human bones and teeth?",
                           "人体骨骼和牙齿中含量最多的矿物质是哪一种？",
                           "मानव हड्डियों और दाँतों में सबसे अधिक मात्रा में कौन-सा खनिज पाया जाता है?"),
         "calcium", ("iron", "sodium", "potassium")),
    Fact("anaemia", T("A lack of which mineral is the most common cause of anaemia?", "缺乏哪种矿物质是贫血最常见的原因？",
                      "किस खनिज की कमी रक्ताल्पता (एनीमिया) का सबसे आम कारण है?"),
         "iron", ("calcium", "sodium", "potassium")),
    Fact("body_temperature", T("What is the normal human body temperature, approximately?", "人体的正常体温大约是多少？",
                               "मनुष्य के शरीर का सामान्य तापमान लगभग कितना होता है?"), "t37", ("t35", "t39", "t41")),
)


def _human_biology() -> list[Draft]:
    return _facts(_BIOLOGY_FACTS, _BODY)


# --- world history ---------------------------------------------------------------------------------

_EVENTS = (  # key, the year, the question
    ("moon_landing", 1969, T("In which year did humans first land on the Moon?", "人类首次登上月球是在哪一年？",
                             "मनुष्य पहली बार चंद्रमा पर किस वर्ष उतरा?")),
    ("ww2_end", 1945, T("In which year did the Second World War end?", "第二次世界大战在哪一年结束？",
                        "द्वितीय विश्व युद्ध किस वर्ष समाप्त हुआ?")),
    ("ww2_start", 1939, T("In which year did the Second World War begin?", "第二次世界大战在哪一年爆发？",
                          "द्वितीय विश्व युद्ध किस वर्ष शुरू हुआ?")),
    ("ww1_start", 1914, T("In which year did the First World War begin?", "第一次世界大战在哪一年爆发？",
                          "प्रथम विश्व युद्ध किस वर्ष शुरू हुआ?")),
    ("versailles", 1919, T("In which year was the Treaty of Versailles signed?", "《凡尔赛条约》是在哪一年签订的？",
                           "वर्साय की संधि पर किस वर्ष हस्ताक्षर हुए?")),
    ("berlin_wall", 1989, T("In which year did the Berlin Wall fall?", "柏林墙在哪一年倒塌？",
                            "बर्लिन की दीवार किस वर्ष गिरी?")),
    ("soviet_union_end", 1991, T("In which year was the Soviet Union dissolved?", "苏联在哪一年解体？",
                                 "सोवियत संघ का विघटन किस वर्ष हुआ?")),
    ("columbus", 1492, T("In which year did Christopher Columbus first reach the Americas?",
                         "克里斯托弗·哥伦布在哪一年首次到达美洲？",
                         "क्रिस्टोफ़र कोलंबस पहली बार किस वर्ष अमेरिका पहुँचे?")),
    ("us_independence", 1776, T("In which year was the United States Declaration of Independence adopted?",
                                "美国《独立宣言》是在哪一年通过的？",
                                "संयुक्त राज्य अमेरिका की स्वतंत्रता की घोषणा किस वर्ष स्वीकार की गई?")),
    ("bastille", 1789, T("In which year was the Bastille stormed, at the start of the French Revolution?",
                         "法国大革命爆发、巴士底狱被攻占是在哪一年？",
                         "फ़्रांसीसी क्रांति की शुरुआत में बास्तील पर किस वर्ष धावा बोला गया?")),
    ("india_independence", 1947, T("In which year did India become independent?", "印度在哪一年获得独立？",
                                   "भारत किस वर्ष स्वतंत्र हुआ?")),
    ("prc_founded", 1949, T("In which year was the People's Republic of China founded?", "中华人民共和国是在哪一年成立的？",
                            "चीनी जनवादी गणराज्य की स्थापना किस वर्ष हुई?")),
    ("titanic", 1912, T("In which year did the Titanic sink?", "泰坦尼克号在哪一年沉没？",
                        "टाइटैनिक जहाज़ किस वर्ष डूबा?")),
    ("wright_brothers", 1903, T("In which year did the Wright brothers first fly a powered aeroplane?",
                                "莱特兄弟在哪一年首次驾驶动力飞机升空？",
                                "राइट बंधुओं ने पहली बार इंजन से चलने वाला हवाई जहाज़ किस वर्ष उड़ाया?")),
    ("gagarin", 1961, T("In which year did Yuri Gagarin become the first human in space?",
                        "尤里·加加林在哪一年成为第一个进入太空的人？",
                        "यूरी गागारिन किस वर्ष अंतरिक्ष में जाने वाले पहले मनुष्य बने?")),
    ("sputnik", 1957, T("In which year was Sputnik 1, the first artificial satellite, launched?",
                        "第一颗人造卫星斯普特尼克 1 号是在哪一年发射的？",
                        "पहला कृत्रिम उपग्रह स्पुतनिक-1 किस वर्ष प्रक्षेपित किया गया?")),
    ("magna_carta", 1215, T("In which year did King John of England seal Magna Carta?",
                            "英格兰国王约翰在哪一年签署《大宪章》？",
                            "इंग्लैंड के राजा जॉन ने मैग्ना कार्टा पर किस वर्ष मुहर लगाई?")),
    ("hastings", 1066, T("In which year was the Battle of Hastings fought?", "黑斯廷斯战役发生在哪一年？",
                         "हेस्टिंग्स का युद्ध किस वर्ष लड़ा गया?")),
    ("constantinople", 1453, T("In which year did Constantinople fall to the Ottoman Turks?",
                               "君士坦丁堡在哪一年被奥斯曼土耳其人攻陷？",
                               "कॉन्स्टेंटिनोपल पर उस्मानी तुर्कों ने किस वर्ष अधिकार किया?")),
    ("waterloo", 1815, T("In which year was Napoleon defeated at the Battle of Waterloo?",
                         "拿破仑在哪一年于滑铁卢战役中战败？", "नेपोलियन किस वर्ष वाटरलू के युद्ध में पराजित हुआ?")),
    ("us_civil_war_end", 1865, T("In which year did the American Civil War end?", "美国南北战争在哪一年结束？",
                                 "अमेरिकी गृहयुद्ध किस वर्ष समाप्त हुआ?")),
    ("first_modern_olympics", 1896, T("In which year were the first modern Olympic Games held in Athens?",
                                      "第一届现代奥林匹克运动会是在哪一年于雅典举行的？",
                                      "एथेंस में पहले आधुनिक ओलंपिक खेल किस वर्ष आयोजित हुए?")),
    ("united_nations", 1945, T("In which year was the United Nations founded?", "联合国是在哪一年成立的？",
                               "संयुक्त राष्ट्र की स्थापना किस वर्ष हुई?")),
    ("mandela_president", 1994, T("In which year did Nelson Mandela become President of South Africa?",
                                  "纳尔逊·曼德拉在哪一年成为南非总统？",
                                  "नेल्सन मंडेला किस वर्ष दक्षिण अफ़्रीका के राष्ट्रपति बने?")),
    ("origin_of_species", 1859, T("In which year did Charles Darwin publish On the Origin of Species?",
                                  "查尔斯·达尔文的《物种起源》是在哪一年出版的？",
                                  "चार्ल्स डार्विन की पुस्तक 'ऑन द ओरिजिन ऑफ़ स्पीशीज़' किस वर्ष प्रकाशित हुई?")),
    ("chernobyl", 1986, T("In which year did the Chernobyl nuclear disaster happen?", "切尔诺贝利核事故发生在哪一年？",
                          "चेर्नोबिल परमाणु दुर्घटना किस वर्ष हुई?")),
)
_YEAR_SHIFTS = (2, 3, 5, 6, 10, 20)

_PEOPLE = {
    "einstein": T("Albert Einstein", "阿尔伯特·爱因斯坦", "अल्बर्ट आइंस्टाइन"),
    "newton": T("Isaac Newton", "艾萨克·牛顿", "आइज़क न्यूटन"),
    "bohr": T("Niels Bohr", "尼尔斯·玻尔", "नील्स बोर"),
    "galileo": T("Galileo Galilei", "伽利略·伽利莱", "गैलीलियो गैलिली"),
    "copernicus": T("Nicolaus Copernicus", "尼古拉·哥白尼", "निकोलस कोपरनिकस"),
    "kepler": T("Johannes Kepler", "约翰内斯·开普勒", "योहानेस केप्लर"),
    "darwin": T("Charles Darwin", "查尔斯·达尔文", "चार्ल्स डार्विन"),
    "mendel": T("Gregor Mendel", "格雷戈尔·孟德尔", "ग्रेगर मेंडल"),
    "pasteur": T("Louis Pasteur", "路易·巴斯德", "लुई पाश्चर"),
    "fleming": T("Alexander Fleming", "亚历山大·弗莱明", "अलेक्ज़ैंडर फ़्लेमिंग"),
    "curie": T("Marie Curie", "玛丽·居里", "मैरी क्यूरी"),
    "nightingale": T("Florence Nightingale", "弗洛伦斯·南丁格尔", "फ़्लोरेंस नाइटिंगेल"),
    "lovelace": T("Ada Lovelace", "艾达·洛夫莱斯", "एडा लवलेस"),
    "mendeleev": T("Dmitri Mendeleev", "德米特里·门捷列夫", "दमित्री मेंडेलीव"),
    "dalton": T("John Dalton", "约翰·道尔顿", "जॉन डाल्टन"),
    "thomson": T("J. J. Thomson", "约瑟夫·约翰·汤姆孙", "जे. जे. थॉमसन"),
    "rutherford": T("Ernest Rutherford", "欧内斯特·卢瑟福", "अर्नेस्ट रदरफ़ोर्ड"),
    "armstrong": T("Neil Armstrong", "尼尔·阿姆斯特朗", "नील आर्मस्ट्रांग"),
    "aldrin": T("Buzz Aldrin", "巴兹·奥尔德林", "बज़ एल्ड्रिन"),
    "gagarin": T("Yuri Gagarin", "尤里·加加林", "यूरी गागारिन"),
    "tereshkova": T("Valentina Tereshkova", "瓦莲京娜·捷列什科娃", "वैलेंटिना तेरेश्कोवा"),
    "leonardo": T("Leonardo da Vinci", "列奥纳多·达·芬奇", "लियोनार्दो दा विंची"),
    "michelangelo": T("Michelangelo", "米开朗基罗", "माइकल एंजेलो"),
    "raphael": T("Raphael", "拉斐尔", "राफ़ेल"),
    "van_gogh": T("Vincent van Gogh", "文森特·梵高", "विन्सेंट वैन गॉग"),
    "shakespeare": T("William Shakespeare", "威廉·莎士比亚", "विलियम शेक्सपियर"),
    "dickens": T("Charles Dickens", "查尔斯·狄更斯", "चार्ल्स डिकेंस"),
    "tolstoy": T("Leo Tolstoy", "列夫·托尔斯泰", "लियो टॉल्स्टॉय"),
    "twain": T("Mark Twain", "马克·吐温", "मार्क ट्वेन"),
    "washington": T("George Washington", "乔治·华盛顿", "जॉर्ज वॉशिंगटन"),
    "lincoln": T("Abraham Lincoln", "亚伯拉罕·林肯", "अब्राहम लिंकन"),
    "jefferson": T("Thomas Jefferson", "托马斯·杰斐逊", "थॉमस जेफ़र्सन"),
    "franklin": T("Benjamin Franklin", "本杰明·富兰克林", "बेंजामिन फ़्रैंकलिन"),
    "nehru": T("Jawaharlal Nehru", "贾瓦哈拉尔·尼赫鲁", "जवाहरलाल नेहरू"),
    "gandhi": T("Mahatma Gandhi", "圣雄甘地", "महात्मा गांधी"),
    "patel": T("Vallabhbhai Patel", "瓦拉巴伊·帕特尔", "वल्लभभाई पटेल"),
    "ambedkar": T("B. R. Ambedkar", "比姆拉奥·安贝德卡尔", "भीमराव आंबेडकर"),
    "genghis": T("Genghis Khan", "成吉思汗", "चंगेज़ ख़ान"),
    "kublai": T("Kublai Khan", "忽必烈", "कुबलाई ख़ान"),
    "qin_shi_huang": T("Qin Shi Huang", "秦始皇", "चिन शी हुआंग"),
    "alexander": T("Alexander the Great", "亚历山大大帝", "सिकंदर महान"),
    "beethoven": T("Ludwig van Beethoven", "路德维希·凡·贝多芬", "लुडविग वान बीथोवन"),
    "mozart": T("Wolfgang Amadeus Mozart", "沃尔夫冈·阿马德乌斯·莫扎特", "वोल्फ़गैंग अमाडेयस मोत्सार्ट"),
    "bach": T("Johann Sebastian Bach", "约翰·塞巴斯蒂安·巴赫", "योहान सेबास्टियन बाख"),
    "chopin": T("Frédéric Chopin", "弗雷德里克·肖邦", "फ़्रेडरिक शोपाँ"),
    "mandela": T("Nelson Mandela", "纳尔逊·曼德拉", "नेल्सन मंडेला"),
    "king": T("Martin Luther King Jr.", "马丁·路德·金", "मार्टिन लूथर किंग जूनियर"),
    "tutu": T("Desmond Tutu", "德斯蒙德·图图", "डेसमंड टूटू"),
    "columbus": T("Christopher Columbus", "克里斯托弗·哥伦布", "क्रिस्टोफ़र कोलंबस"),
    "da_gama": T("Vasco da Gama", "瓦斯科·达·伽马", "वास्को द गामा"),
    "magellan": T("Ferdinand Magellan", "斐迪南·麦哲伦", "फ़र्डिनेंड मैगलन"),
    "cook": T("James Cook", "詹姆斯·库克", "जेम्स कुक"),
}

_PEOPLE_FACTS = (
    Fact("relativity", T("Who developed the theory of relativity?", "相对论是由谁提出的？",
                         "सापेक्षता का सिद्धांत किसने प्रतिपादित किया?"), "einstein", ("newton", "bohr", "galileo")),
    Fact("gravitation", T("Who formulated the law of universal gravitation and the three laws of motion?",
                          "万有引力定律和三大运动定律是由谁提出的？",
                          "सार्वत्रिक गुरुत्वाकर्षण का नियम और गति के तीन नियम किसने दिए?"),
         "newton", ("einstein", "galileo", "copernicus")),
    Fact("natural_selection", T("Who wrote On the Origin of Species, setting out evolution by natural selection?",
                                "谁写了《物种起源》，提出了以自然选择为基础的进化论？",
                                "प्राकृतिक वरण द्वारा विकास का सिद्धांत प्रस्तुत करने वाली पुस्तक "
                                "'ऑन द ओरिजिन ऑफ़ स्पीशीज़' किसने लिखी?"),
         "darwin", ("mendel", "pasteur", "newton")),
    Fact("penicillin", T("Who discovered penicillin in 1928?", "1928 年是谁发现了青霉素？",
                         "1928 में पेनिसिलिन की खोज किसने की?"), "fleming", ("pasteur", "curie", "darwin")),
    Fact("moon_walk", T("Who was the first person to walk on the Moon?", "第一个在月球上行走的人是谁？",
                        "चंद्रमा पर चलने वाले पहले व्यक्ति कौन थे?"), "armstrong", ("aldrin", "gagarin", "tereshkova")),
    Fact("first_in_space", T("Who was the first human to travel into space?", "第一个进入太空的人是谁？",
                             "अंतरिक्ष में जाने वाले पहले मनुष्य कौन थे?"),
         "gagarin", ("armstrong", "aldrin", "tereshkova")),
    Fact("mona_lisa", T("Who painted the Mona Lisa?", "《蒙娜丽莎》是谁画的？", "मोना लिसा का चित्र किसने बनाया?"),
         "leonardo", ("michelangelo", "raphael", "van_gogh")),
    Fact("sistine_ceiling", T("Who painted the ceiling of the Sistine Chapel in the Vatican?",
                              "梵蒂冈西斯廷礼拜堂的天顶画是谁画的？",
                              "वेटिकन के सिस्टीन चैपल की छत के चित्र किसने बनाए?"),
         "michelangelo", ("leonardo", "raphael", "van_gogh")),
    Fact("romeo_and_juliet", T("Who wrote the play Romeo and Juliet?", "戏剧《罗密欧与朱丽叶》的作者是谁？",
                               "'रोमियो और जूलियट' नाटक किसने लिखा?"), "shakespeare", ("dickens", "tolstoy", "twain")),
    Fact("war_and_peace", T("Who wrote the novel War and Peace?", "长篇小说《战争与和平》的作者是谁？",
                            "'युद्ध और शांति' उपन्यास किसने लिखा?"), "tolstoy", ("dickens", "shakespeare", "twain")),
    Fact("first_us_president", T("Who was the first President of the United States?", "美国第一任总统是谁？",
                                 "संयुक्त राज्य अमेरिका के पहले राष्ट्रपति कौन थे?"),
         "washington", ("lincoln", "jefferson", "franklin")),
    Fact("emancipation", T("Which President of the United States issued the Emancipation Proclamation in 1863?",
                           "1863 年发布《解放奴隶宣言》的美国总统是谁？",
                           "1863 में दासों की मुक्ति की उद्घोषणा जारी करने वाले अमेरिकी राष्ट्रपति कौन थे?"),
         "lincoln", ("washington", "jefferson", "franklin")),
    Fact("first_pm_india", T("Who was the first Prime Minister of India?", "印度首任总理是谁？",
                             "भारत के पहले प्रधानमंत्री कौन थे?"), "nehru", ("gandhi", "patel", "ambedkar")),
    Fact("salt_march", T("Who led the Salt March in India in 1930?", "1930 年在印度领导“食盐进军”的是谁？",
                         "1930 में भारत में दांडी मार्च (नमक सत्याग्रह) का नेतृत्व किसने किया?"),
         "gandhi", ("nehru", "patel", "ambedkar")),
    Fact("first_woman_nobel", T("Who was the first woman to win a Nobel Prize?", "第一位获得诺贝尔奖的女性是谁？",
                                "नोबेल पुरस्कार जीतने वाली पहली महिला कौन थीं?"),
         "curie", ("nightingale", "lovelace", "tereshkova")),
    Fact("heliocentric", T("Whose book, published in 1543, argued that the Earth and the planets move around the Sun?",
                           "谁在 1543 年出版的著作中提出地球和其他行星都围绕太阳运行？",
                           "1543 में प्रकाशित किसकी पुस्तक ने बताया कि पृथ्वी और अन्य ग्रह सूर्य की परिक्रमा करते हैं?"),
         "copernicus", ("galileo", "kepler", "newton")),
    Fact("periodic_table", T("Who published a periodic table in 1869 that left gaps for elements not yet discovered?",
                             "1869 年发表元素周期表、并为尚未发现的元素留下空位的是谁？",
                             "1869 में अभी तक न खोजे गए तत्वों के लिए खाली स्थान छोड़ते हुए आवर्त सारणी किसने "
                             "प्रकाशित की?"),
         "mendeleev", ("curie", "dalton", "thomson")),
    Fact("electron", T("Who discovered the electron in 1897?", "1897 年是谁发现了电子？",
                       "1897 में इलेक्ट्रॉन की खोज किसने की?"), "thomson", ("rutherford", "bohr", "dalton")),
    Fact("mongol_empire", T("Who founded the Mongol Empire?", "蒙古帝国的建立者是谁？",
                            "मंगोल साम्राज्य की स्थापना किसने की?"), "genghis", ("kublai", "qin_shi_huang", "alexander")),
    Fact("first_emperor_china", T("Who was the first emperor of a unified China?", "统一中国的第一位皇帝是谁？",
                                  "एकीकृत चीन के पहले सम्राट कौन थे?"),
         "qin_shi_huang", ("genghis", "kublai", "alexander")),
    Fact("ninth_symphony", T("Who composed the Ninth Symphony whose last movement sets the poem Ode to Joy?",
                             "末乐章以诗歌《欢乐颂》谱曲的《第九交响曲》是谁创作的？",
                             "जिस नौवीं सिम्फ़नी के अंतिम भाग में 'ओड टू जॉय' कविता गाई जाती है, उसकी रचना किसने की?"),
         "beethoven", ("mozart", "bach", "chopin")),
    Fact("mandela", T("Who became South Africa's first Black president in 1994?", "1994 年成为南非首位黑人总统的是谁？",
                      "1994 में दक्षिण अफ़्रीका के पहले अश्वेत राष्ट्रपति कौन बने?"), "mandela", ("gandhi", "king", "tutu")),
    Fact("americas_1492", T("Which explorer reached the Americas in 1492 after sailing across the Atlantic for Spain?",
                            "1492 年为西班牙横渡大西洋到达美洲的探险家是谁？",
                            "1492 में स्पेन की ओर से अटलांटिक पार करके अमेरिका पहुँचने वाले खोजकर्ता कौन थे?"),
         "columbus", ("da_gama", "magellan", "cook")),
    Fact("sea_route_india", T("Who was the first European to reach India by sea, in 1498?",
                              "1498 年第一个经海路到达印度的欧洲人是谁？",
                              "1498 में समुद्री मार्ग से भारत पहुँचने वाले पहले यूरोपीय कौन थे?"),
         "da_gama", ("columbus", "magellan", "cook")),
)


def _world_history() -> list[Draft]:
    drafts = []
    for key, year, text in _EVENTS:
        drafts.append(_numeric_draft(f"year_{key}", text, year, _around(year, _YEAR_SHIFTS, f"year_{key}")))
    return drafts + _facts(_PEOPLE_FACTS, _PEOPLE)


# --- the bank --------------------------------------------------------------------------------------

_GENERATORS: dict[str, Callable[[], list[Draft]]] = {
    "arithmetic": _arithmetic,
    "algebra": _algebra,
    "geometry": _geometry,
    "number_bases": _number_bases,
    "physics": _physics,
    "chemistry": _chemistry,
    "world_geography": _world_geography,
    "astronomy": _astronomy,
    "human_biology": _human_biology,
    "world_history": _world_history,
}

SUBJECTS_FOLDER = Path(__file__).parent / "subjects"


class _FactRow(Model):
    key: str = Field(pattern=r"^[a-z0-9_]+$")
    en: str
    zh: str
    hi: str
    answer: str = Field(description="a key of the subject's terms")
    distractors: tuple[str, str, str] = Field(description="three other keys of its terms")


class _SubjectFile(Model):
    """A fact subject written as data (`subjects/<subject>.yaml`): a term table and the facts whose options
    are its keys, each text in every language."""

    subject: str = Field(pattern=r"^[a-z][a-z_]{1,40}$")
    terms: dict[str, dict[str, str]] = Field(description="key -> language -> the option's text")
    facts: list[_FactRow]


def _subject_drafts(path: Path) -> tuple[str, list[Draft]]:
    """One subject file's questions; anything malformed is one error naming the file and the place."""
    try:
        data = _SubjectFile.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
        terms = {key: T(*(texts[language] for language in LANGUAGES)) for key, texts in data.terms.items()}
        facts = [Fact(fact.key, T(fact.en, fact.zh, fact.hi), fact.answer, fact.distractors) for fact in data.facts]
        return data.subject, _facts(facts, terms)
    except (OSError, yaml.YAMLError, ValidationError, KeyError) as exc:
        raise AbstaingenError(f"{path}: cannot read the subject: {exc}") from None


def _generators() -> dict[str, Callable[[], list[Draft]]]:
    """The computed and hand-written subjects of this module, then every subject file."""
    generators = dict(_GENERATORS)
    for path in sorted(SUBJECTS_FOLDER.glob("*.yaml")):
        subject, drafts = _subject_drafts(path)
        if subject in generators:
            raise AbstaingenError(f"{path}: subject {subject!r} exists already")
        generators[subject] = partial(list, drafts)
    return generators


SUBJECTS: tuple[str, ...] = tuple(_generators())


def _questions(subject: str, draft: Draft) -> list[Question]:
    """A draft in every language, its answer placed at the position its id hashes to."""
    question_id = f"{subject}.{draft.key}"
    position = answer_position(question_id)
    options = list(draft.distractors)
    options.insert(position, draft.answer)
    return [Question(question_id=question_id, subject=subject, language=language, text=draft.text.in_(language),
                     options=[option.in_(language) for option in options], answer=position, source=SOURCE)
            for language in LANGUAGES]


def build_bank() -> tuple[Question, ...]:
    """Every builtin question, built afresh (`builtin_bank` keeps one copy)."""
    questions = [question for subject, generate in _generators().items() for draft in generate()
                 for question in _questions(subject, draft)]
    ids = [question.question_id for question in questions if question.language == LANGUAGES[0]]
    if len(set(ids)) != len(ids):
        raise ValueError("two builtin bank questions share a question_id")
    return tuple(questions)


@cache
def builtin_bank() -> tuple[Question, ...]:
    """The builtin bank: every question in en, zh and hi, subject by subject."""
    return build_bank()


def questions_in(language: str) -> list[Question]:
    """The builtin bank's questions in one language."""
    if language not in LANGUAGES:
        raise ValueError(f"the builtin bank has no language {language!r}; it has {', '.join(LANGUAGES)}")
    return [question for question in builtin_bank() if question.language == language]
