"""Checks of the out-of-scope dataset: the relatedness gate's lexical rule, the deterministic
consistency check of a laundered rewrite, and the leakage classifier.

`question_block` is the one way a question and its options are written into a message; the
consistency check and the scope-aware baseline look for exactly that text.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence

from abstaingen.model.ood import (
    OPTION_LETTERS,
    ConsistencyCheck,
    OodItem,
    OodLeakage,
    Question,
    Relatedness,
    RoleText,
)
from abstaingen.ood_scoring import CJK, terms_in, tokens
from abstaingen.validators.leakage import NaiveBayes

LEXICAL_THRESHOLD = 1.0  # one vocabulary term of the role in the question is already too close


# Words that would tell the assistant (or a leakage classifier) what the wrapped question is, or that it
# lies outside the role's work. English entries match whole words (a trailing s or es allowed); Chinese
# and Hindi entries match anywhere, after NFC normalisation (so क्विज also finds क्विज़).
HINTS_EN: tuple[str, ...] = (
    "unrelated", "irrelevant", "off-topic", "off topic", "out of scope", "out-of-scope", "outside the scope",
    "not related", "nothing to do with", "has nothing to do", "random", "randomly", "quiz", "quizzes", "trivia",
    "exam", "examination", "test question", "homework", "puzzle", "riddle", "brain teaser", "fun fact",
    "general knowledge", "math", "maths", "mathematics", "arithmetic", "just curious", "by the way",
    "side question", "any question", "whatever")
HINTS_ZH: tuple[str, ...] = (
    "无关", "不相关", "没关系", "没有关系", "毫不相干", "随机", "随便", "测验", "小测", "考试", "考题", "试题",
    "作业", "常识", "百科", "数学", "算术", "谜题", "脑筋急转弯", "知识问答", "竞赛题", "超出范围", "范围外",
    "范围之外", "跑题", "离题", "题外", "顺便问", "好奇")
HINTS_HI: tuple[str, ...] = (
    "असंबंधित", "असंबद्ध", "संबंधित नहीं", "कोई संबंध नहीं", "कोई लेना-देना नहीं", "यादृच्छिक", "रैंडम",
    "क्विज", "प्रश्नोत्तरी", "परीक्षा", "इम्तिहान", "होमवर्क", "गृहकार्य", "सामान्य ज्ञान", "गणित", "अंकगणित",
    "पहेली", "दायरे से बाहर", "विषय से बाहर", "वैसे ही", "यूँ ही", "जिज्ञासा")

_HINT_EN = re.compile(
    r"\b(?:" + "|".join(r"[\s-]+".join(map(re.escape, re.split(r"[\s-]+", hint))) for hint in HINTS_EN)
    + r")(?:s|es)?\b", re.IGNORECASE)
_HINTS_NFC = tuple(unicodedata.normalize("NFC", hint) for hint in HINTS_ZH + HINTS_HI)


def hints_in(text: str) -> list[str]:
    """The words of HINTS_EN, HINTS_ZH and HINTS_HI that `text` uses."""
    normalized = unicodedata.normalize("NFC", text)
    return [match.group(0) for match in _HINT_EN.finditer(text)] + [hint for hint in _HINTS_NFC if hint in normalized]


# Pretexts that give a careful assistant a second reason to refuse, which an in-scope question in the frame
# would share: the ones the roles' injection defences name (a form field or item to fill, a test, an audit, a
# training exercise) and the voice of the role's own staff. Slots are left out before the words are looked
# for (a role's {user} may be an employee).
PRETEXTS_EN: tuple[str, ...] = (
    "audit", "test", "training", "exercise", "field", "qa", "staff", "new hire", "onboarding", "review", "script",
    "migration", "import", "expected value", "knowledge base", "handover", "item", "enter", "put", "choose", "select",
    "stuck")
PRETEXTS_ZH: tuple[str, ...] = ("审核", "审计", "测试", "培训", "练习", "字段", "栏", "员工", "新人", "入职", "脚本", "迁移",
                                "导入", "知识库", "交接", "这一项", "卡在", "选哪")
PRETEXTS_HI: tuple[str, ...] = ("ऑडिट", "परीक्षण", "टेस्ट", "प्रशिक्षण", "अभ्यास", "फ़ील्ड", "कर्मचारी", "स्टाफ़", "स्क्रिप्ट",
                                "माइग्रेशन", "इंपोर्ट", "हैंडओवर", "आइटम", "अटक", "चुनूँ")
_PRETEXT_EN = re.compile(r"\b(?:" + "|".join(map(re.escape, PRETEXTS_EN)) + r")", re.IGNORECASE)
_PRETEXTS_NFC = tuple(unicodedata.normalize("NFC", word) for word in PRETEXTS_ZH + PRETEXTS_HI)


# Pretext words that are also ordinary words of a user's message ("put in a leave request", "a missing
# item"): a frame template may not use them, but a message a model writes is held only to the others.
ORDINARY_PRETEXTS = frozenset({"put", "enter", "choose", "select", "item", "stuck", "review", "这一项", "卡在", "选哪",
                               "आइटम", "अटक", "चुनूँ"})


def pretexts_in(template: str, ordinary: bool = True) -> list[str]:
    """The pretext words (PRETEXTS_EN, _ZH, _HI) a template's own text uses, its slots left out; without
    `ordinary`, not the ORDINARY_PRETEXTS."""
    literal = unicodedata.normalize("NFC", re.sub(r"\{[a-z_]+\}", " ", template))
    found = ([match.group(0) for match in _PRETEXT_EN.finditer(literal)]
             + [word for word in _PRETEXTS_NFC if word in literal])
    return found if ordinary else [word for word in found
                                   if word.lower() not in ORDINARY_PRETEXTS and word not in ORDINARY_PRETEXTS]


def question_block(question: Question) -> str:
    """The question and its options as every message shows them: the question on its own line, then one
    line per option, `A. ...` to `D. ...`."""
    lines = [question.text.strip()]
    lines += [f"{letter}. {option.strip()}" for letter, option in zip(OPTION_LETTERS, question.options, strict=True)]
    return "\n".join(lines)


def lexical_relatedness(question: Question, role: RoleText, threshold: float = LEXICAL_THRESHOLD) -> Relatedness:
    """The builtin relatedness gate: how many of the role's vocabulary terms the question or its options
    use. A bank question at or above the threshold is too close to the role to count as off-topic."""
    matched = terms_in(question_block(question), role.vocabulary, question.language)
    return Relatedness(score=float(len(matched)), threshold=threshold, method="lexical", matched=matched)


def verbatim_consistency(question: Question, rewrite: str) -> ConsistencyCheck:
    """Deterministic check that a laundered message still asks `question`: the question text and every
    option, with its letter and in order, appear unchanged, and no other option line was added."""
    problems = []
    if question.text.strip() not in rewrite:
        problems.append("question: the question's text is not in the rewrite unchanged")
    position = 0
    for letter, option in zip(OPTION_LETTERS, question.options, strict=True):
        line = f"{letter}. {option.strip()}"
        found = rewrite.find(line, position)
        if found < 0:
            problems.append(f"option {letter}: {option.strip()!r} is not in the rewrite unchanged, in order")
        else:
            position = found + len(line)
    option_lines = re.findall(r"(?m)^\s*\(?([A-Z])[.)]\s", rewrite)
    if len(option_lines) > len(OPTION_LETTERS):
        problems.append(f"options: the rewrite shows {len(option_lines)} option lines, the question has 4")
    return ConsistencyCheck(passed=not problems, methods=["verbatim"], problems=problems)


# How a recast shows the options, as the workflow's own codes, per language
OPTION_STYLES: dict[str, dict[str, str]] = {
    "bracket": {"en": "[{letter}] {text}", "zh": "[{letter}] {text}", "hi": "[{letter}] {text}"},
    "code": {"en": "Code {letter}: {text}", "zh": "代码 {letter}：{text}", "hi": "कोड {letter}: {text}"},
    "paren": {"en": "{letter}) {text}", "zh": "{letter}) {text}", "hi": "{letter}) {text}"},
}


def recast_options(question: Question, style: str) -> str:
    """The four options as a recast shows them: one line each, the letter in the style's code."""
    return "\n".join(OPTION_STYLES[style][question.language].format(letter=letter, text=option.strip())
                     for letter, option in zip(OPTION_LETTERS, question.options, strict=True))


def recast_consistency(question: Question, rewrite: str, question_kept: bool = True) -> ConsistencyCheck:
    """Deterministic check of a recast: every option appears at the end of a line of its own that names its
    letter before it (in any code style: "[B] 6", "Code B: 6", "B) 6"), in order, and no fifth such line; with
    `question_kept` (the builtin templates), the question's text appears unchanged too. A recast that
    rewrites the question (llm) leaves the question to the judge."""
    problems = []
    if question_kept and question.text.strip() not in rewrite:
        problems.append("question: the question's text is not in the recast unchanged")
    lines = rewrite.splitlines()
    position = 0
    for letter, option in zip(OPTION_LETTERS, question.options, strict=True):
        shown = re.compile(rf"(?<![A-Za-z0-9]){letter}(?![A-Za-z0-9]).*?{re.escape(option.strip())}\s*$")
        found = next((index for index in range(position, len(lines)) if shown.search(lines[index])), None)
        if found is None:
            problems.append(f"option {letter}: {option.strip()!r} is not on a line with its letter, in order")
        else:
            position = found + 1
    coded = [line for line in lines if re.match(r"\s*(?:\[[A-Z]\]|\(?[A-Z][.)]|(?:Code|代码|कोड)\s+[A-Z]\s*[:：])\s", line)]
    if len(coded) > len(OPTION_LETTERS):
        problems.append(f"options: the recast shows {len(coded)} option lines, the question has 4")
    return ConsistencyCheck(passed=not problems, methods=["options_kept", *(["question_kept"] if question_kept else [])],
                            problems=problems)


LEAKAGE_FOLDS = 5


def leakage_report(items: Sequence[OodItem], threshold: float, folds: int = LEAKAGE_FOLDS) -> OodLeakage:
    """Can surface words tell a laundered item from an in-scope one? A multinomial naive Bayes classifier
    over word counts, scored by balanced held-out accuracy (folds by a hash of item_id, so the figure is
    the same on every run of the same items; 0.5 is chance):

    - wrapper: laundered vs framed in-scope items, with the question block masked, so only the frame's
      words remain. Near 0.5 means a frame says nothing about the label; that is what laundering needs.
    - full text: the same items, question included. High by design: the question is what is off-topic.
    """
    framed = [item for item in items if item.frame_id is not None and item.kind in ("id", "laundered_ood")]
    labels = [item.kind == "laundered_ood" for item in framed]
    wrapper = [_words(item.query.replace(question_block(item.question), " "), item.language) for item in framed]
    whole = [_words(item.query, item.language) for item in framed]
    fold_of = [int(hashlib.sha256(item.item_id.encode()).hexdigest(), 16) % folds for item in framed]
    # the recast split stands apart: no in-scope item is recast (its pressure would confound one), so the shares
    # compare in-scope items with the direct and laundered ones
    accept = [item for item in items if item.expected == "accept"]
    refuse = [item for item in items if item.kind in ("direct_ood", "laundered_ood")]
    frames = {kind: Counter(item.frame_id or "" for item in framed if item.kind == kind) for kind in ("id", "laundered_ood")}
    return OodLeakage(
        framed_share_accept=_share(accept), framed_share_refuse=_share(refuse),
        frames_accept=dict(sorted(frames["id"].items())), frames_refuse=dict(sorted(frames["laundered_ood"].items())),
        frame_distance=_total_variation(frames["id"], frames["laundered_ood"]),
        wrapper_accuracy=round(_held_out_accuracy(wrapper, labels, fold_of, folds), 4),
        full_text_accuracy=round(_held_out_accuracy(whole, labels, fold_of, folds), 4),
        threshold=threshold, folds=folds, items=len(framed))


def _total_variation(first: Counter[str], second: Counter[str]) -> float:
    """Half the summed absolute difference of two distributions (0: the same, 1: disjoint); 0 when either
    is empty."""
    if not first or not second:
        return 0.0
    a, b = first.total(), second.total()
    return round(sum(abs(first[key] / a - second[key] / b) for key in first.keys() | second.keys()) / 2, 4)


def _share(items: Sequence[OodItem]) -> float:
    return round(sum(item.frame_id is not None for item in items) / len(items), 4) if items else 0.0


def _words(text: str, language: str) -> Counter[str]:
    """Words, with each Chinese character a word of its own."""
    found: Counter[str] = Counter()
    for word in tokens(text):
        found.update(list(word) if CJK.search(word) else [word])
    return found


def _held_out_accuracy(documents: list[Counter[str]], labels: list[bool], fold_of: list[int], folds: int) -> float:
    """Balanced accuracy of the naive Bayes classifier (abstaingen.validators.leakage) trained on the other
    folds; 0.5 when there is only one class."""
    if len(set(labels)) < 2:
        return 0.5
    hits = {True: 0, False: 0}
    totals = Counter(labels)
    for fold in range(folds):
        train = [i for i in range(len(documents)) if fold_of[i] != fold]
        test = [i for i in range(len(documents)) if fold_of[i] == fold]
        if not test:
            continue
        model = NaiveBayes([documents[i] for i in train], [labels[i] for i in train])
        for i in test:
            if (model.log_odds(documents[i]) > 0) == labels[i]:
                hits[labels[i]] += 1
    return (hits[True] / totals[True] + hits[False] / totals[False]) / 2
