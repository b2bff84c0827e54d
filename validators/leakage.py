"""Leakage report: can a bag-of-words classifier tell act from abstain instructions, per scenario?

If it can, an agent could learn the label from wording alone. Runtime scenarios keep the
instruction identical by design, so there the classifier must sit at chance. The classifier is a
multinomial naive Bayes, cross-validated with both sides of a pair always in the same fold (a pair's
act and abstain texts share most words, so splitting them would flatter the classifier).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

from abstaingen.model import TaskPair
from abstaingen.model.score import LeakageScore

FOLDS = 5


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.lower())  # numbers and ids carry no label signal by design


class NaiveBayes:
    def __init__(self, docs: Sequence[list[str]], labels: Sequence[int]):
        self.counts: list[Counter[str]] = [Counter(), Counter()]
        self.docs = Counter(labels)
        for words, label in zip(docs, labels):
            self.counts[label].update(words)
        self.vocabulary = set(self.counts[0]) | set(self.counts[1])
        self.totals = [sum(c.values()) for c in self.counts]

    def predict(self, words: list[str]) -> int:
        scores = []
        for label in (0, 1):
            prior = math.log((self.docs[label] + 1) / (sum(self.docs.values()) + 2))
            denominator = self.totals[label] + len(self.vocabulary) + 1
            scores.append(prior + sum(math.log((self.counts[label][w] + 1) / denominator) for w in words))
        return int(scores[1] > scores[0])  # ties go to "act": no evidence, no claim


def cross_validated_accuracy(pairs: Sequence[TaskPair], folds: int = FOLDS) -> float:
    folds = min(folds, len(pairs))
    correct = total = 0
    for fold in range(folds):
        train = [p for i, p in enumerate(pairs) if i % folds != fold]
        test = [p for i, p in enumerate(pairs) if i % folds == fold]
        docs = [_words(v.instruction) for p in train for v in (p.act, p.abstain)]
        model = NaiveBayes(docs, [0, 1] * len(train))
        for pair in test:
            for label, variant in enumerate((pair.act, pair.abstain)):
                correct += model.predict(_words(variant.instruction)) == label
                total += 1
    return correct / total


def leakage_report(pairs: Sequence[TaskPair]) -> list[LeakageScore]:
    report = []
    for scenario in sorted({p.scenario for p in pairs}):
        group = sorted((p for p in pairs if p.scenario == scenario), key=lambda p: p.pair_id)
        if len(group) < 2:
            continue  # nothing to train on
        accuracy = cross_validated_accuracy(group)
        standard_error = math.sqrt(0.25 / (2 * len(group)))
        report.append(LeakageScore(scenario=scenario, pairs=len(group), accuracy=round(accuracy, 4),
                                   at_chance=abs(accuracy - 0.5) <= 2 * standard_error))
    return report
