"""The shortcut gate: within a scenario, no single surface feature may tell act from abstain.

If one word of the instruction, or one field of the target record as the agent reads it, separates
the sides, an agent can score on the scenario without understanding anything ("or earlier" means
abstain; a non-empty note means abstain). For each scenario this finds the best one-feature rule and
its balanced accuracy (the mean of its recall on act and on abstain sides, in its better direction):

- instruction: every word, every pair of words that occur together, every sentence as a template
  (its words with names, numbers and identifiers masked, so "I've verified Rosa Jimenez's identity."
  and "I've verified Ana Lima's identity." are one feature), and thresholds on its length in words and
  sentences (a side that is always shorter is a shortcut too), and every part of the template id the
  side records (which templates produced its words: a request template, a decoy, a sign-off);
- target record (the environment's initial state with the side's overlay applied): every field's
  emptiness, every exact value, every word of a text field, and every threshold on a number field.

A release is refused when a scenario's best rule exceeds `LIMIT`, or when a record field is non-empty
(or true) only on abstain sides. With fewer than `MIN_PAIRS` pairs a scenario is reported but not
gated: a few pairs separate by chance.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import combinations

from abstaingen.model import EnvironmentBundle, JsonValue, TaskPair, TaskVariant
from abstaingen.model.score import ShortcutScore
from abstaingen.model.task import apply_state_patch, find_record
from abstaingen.validators.routes import Mentions

LIMIT = 0.80
MIN_PAIRS = 20


def instruction_features(text: str) -> set[str]:
    words = sorted(set(re.findall(r"[a-z]+", text.lower())))
    return {*words, *(f"{a} + {b}" for a, b in combinations(words, 2)),
            *(f"sentence '{template}'" for template in sentence_templates(text))}


def side_features(variant: TaskVariant) -> set[str]:
    """The instruction's features and the parts of the side's template id."""
    return instruction_features(variant.instruction) | {
        f"template {part}" for part in re.split(r"[/+]", variant.template) if part}


def bare_reference(pair: TaskPair, variant: TaskVariant, record: dict | None) -> bool:
    """Whether the instruction names the record by its owner alone: it says the pair's scope (the owner) and no
    other value of the target record, neither a text field nor its date or month in any common form."""
    if record is None or not pair.scope:
        return False
    text, said = variant.instruction.lower(), Mentions(variant.instruction)
    if not all(str(v).lower() in text for v in pair.scope.values()):
        return False
    details = [v for f, v in record.items() if isinstance(v, str) and v and f not in {"id", "status", "notes", *pair.scope}]
    months = {d[:7] for d in said.dates}
    return not any(v.lower() in text or v in said.dates or (len(v) == 10 and v[:7] in months) for v in details)


def sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]


def sentence_templates(text: str) -> list[str]:
    """Each sentence with what varies from pair to pair masked: a word with a digit or a capital (after the
    first) is a name, an identifier, a date or a month, and becomes '_'."""
    templates = []
    for sentence in sentences(text):
        words = sentence.split()
        masked = [w if i == 0 or not re.search(r"[0-9A-Z$€£]", w) else "_" for i, w in enumerate(words)]
        templates.append(re.sub(r"_( _)+", "_", " ".join(masked)).lower())
    return templates


def instruction_length(text: str) -> dict[str, int]:
    """The numbers a length rule splits on."""
    return {"instruction words": len(text.split()), "instruction sentences": len(sentences(text))}


def _filled(value: JsonValue) -> bool:
    """Non-empty, true or non-zero: what a field 'set only on abstain sides' means."""
    return value not in ("", None, False, 0, [], {})


def record_features(record: dict[str, JsonValue] | None) -> set[str]:
    if record is None:
        return {"<no record>"}
    found = set()
    for field, value in record.items():
        if field == "id":
            continue
        found.add(f"{field} {'non-empty' if _filled(value) else 'empty'}")
        found.add(f"{field} = {value!r}")
        if isinstance(value, str):
            found.update(f"{field} has '{word}'" for word in set(re.findall(r"[a-z]+", value.lower())))
    return found


def best_rule(act: Sequence[set[str]], abstain: Sequence[set[str]]) -> tuple[str, float]:
    """The feature whose presence (or absence) best separates the two sides, and its balanced accuracy."""
    counts = [Counter(f for features in side for f in features) for side in (act, abstain)]
    best, score = "-", 0.5
    for feature in sorted(set(counts[0]) | set(counts[1]), key=lambda f: (f.count(" + "), f)):  # ties: the simpler
        gap = abs(counts[1][feature] / len(abstain) - counts[0][feature] / len(act))
        if 0.5 + gap / 2 > score:
            best, score = feature, 0.5 + gap / 2
    return best, score


def best_split(act: Sequence[dict], abstain: Sequence[dict]) -> tuple[str, float]:
    """The best threshold rule on a number field of the record."""
    best, score = "-", 0.5
    fields = {f for record in (*act, *abstain) for f, v in record.items()
              if isinstance(v, int | float) and not isinstance(v, bool)}
    for field in sorted(fields):
        values = sorted({r[field] for r in (*act, *abstain) if isinstance(r.get(field), int | float)})
        for low, high in zip(values, values[1:]):
            cut = (low + high) / 2
            above = [sum(r.get(field, cut) > cut for r in side) / len(side) for side in (act, abstain)]
            if 0.5 + abs(above[1] - above[0]) / 2 > score:
                best, score = f"{field} > {cut:g}", 0.5 + abs(above[1] - above[0]) / 2
    return best, score


def target_record(pair: TaskPair, variant: TaskVariant, bundles: dict[str, EnvironmentBundle]) -> dict | None:
    bundle = bundles.get(variant.env_id)
    if bundle is None or pair.target is None:
        return None
    return find_record(apply_state_patch(bundle.initial_state, variant.overlay.state_patch), pair.target)


def abstain_only(act: Iterable[dict], abstain: Iterable[dict]) -> list[str]:
    def filled(records: Iterable[dict]) -> set[str]:
        return {f for r in records for f, v in r.items() if _filled(v)}

    return sorted(filled(abstain) - filled(act))


def shortcut_report(pairs: Sequence[TaskPair], bundles: Sequence[EnvironmentBundle]) -> list[ShortcutScore]:
    by_env = {b.env_id: b for b in bundles}
    report = []
    for scenario in sorted({p.scenario for p in pairs}):
        group = [p for p in pairs if p.scenario == scenario]
        act = [target_record(p, p.act, by_env) or {} for p in group]
        abstain = [target_record(p, p.abstain, by_env) or {} for p in group]

        def features(pair: TaskPair, variant: TaskVariant, record: dict) -> set[str]:
            return side_features(variant) | ({"reference: the owner alone"} if bare_reference(pair, variant, record) else set())

        word, word_score = best_rule([features(p, p.act, r) for p, r in zip(group, act)],
                                     [features(p, p.abstain, r) for p, r in zip(group, abstain)])
        length, length_score = best_split([instruction_length(p.act.instruction) for p in group],
                                          [instruction_length(p.abstain.instruction) for p in group])
        if length_score > word_score:
            word, word_score = length, length_score
        field, field_score = best_rule([record_features(r) for r in act], [record_features(r) for r in abstain])
        split, split_score = best_split(act, abstain)
        if split_score > field_score:
            field, field_score = split, split_score
        only = abstain_only(act, abstain)
        gated = len(group) >= MIN_PAIRS
        report.append(ShortcutScore(
            scenario=scenario, pairs=len(group), instruction_feature=word, instruction_accuracy=round(word_score, 4),
            record_feature=field, record_accuracy=round(field_score, 4), abstain_only_fields=only, limit=LIMIT, gated=gated,
            passed=not gated or (word_score <= LIMIT and field_score <= LIMIT and not only),
        ))
    return report
