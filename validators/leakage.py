"""Leakage report: can a bag-of-words classifier tell act from abstain instructions, per scenario?

If it can, an agent could learn the label from wording alone, from many words together even where no
single one gives it away (the shortcut gate's job). Runtime scenarios keep the instruction identical by
design, so there the classifier must sit at chance; in every scenario with at least MIN_PAIRS pairs it
must stay at or below LIMIT. The classifier is a
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
from abstaingen.validators.shortcuts import MIN_PAIRS

FOLDS = 5
LIMIT = 0.70


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.lower())  # numbers and ids carry no label signal by design


class NaiveBayes:
    """Multinomial naive Bayes over two labels, with add-one smoothing and class priors from the training
    documents: the one classifier both leakage reports train (this one and the OOD dataset's)."""

    def __init__(self, documents: Sequence[Counter[str]], labels: Sequence[bool]):
        self.counts: dict[bool, Counter[str]] = {True: Counter(), False: Counter()}
        self.prior = Counter(labels)
        for document, label in zip(documents, labels):
            self.counts[label].update(document)
        vocabulary = set(self.counts[True]) | set(self.counts[False])
        self.size = {label: sum(self.counts[label].values()) + len(vocabulary) + 1 for label in (True, False)}

    def log_odds(self, document: Counter[str]) -> float:
        """log P(True | document) - log P(False | document); above 0 says True, and a tie says False."""
        score = math.log((self.prior[True] + 1) / (self.prior[False] + 1))
        for word, n in document.items():
            score += n * (math.log((self.counts[True][word] + 1) / self.size[True])
                          - math.log((self.counts[False][word] + 1) / self.size[False]))
        return score


def cross_validated_accuracy(pairs: Sequence[TaskPair], folds: int = FOLDS) -> float:
    """How often the classifier, trained on the other folds, tells a pair's abstain side from its act side."""
    folds = min(folds, len(pairs))
    correct = total = 0
    for fold in range(folds):
        train = [p for i, p in enumerate(pairs) if i % folds != fold]
        test = [p for i, p in enumerate(pairs) if i % folds == fold]
        docs = [Counter(_words(v.instruction)) for p in train for v in (p.act, p.abstain)]
        model = NaiveBayes(docs, [False, True] * len(train))
        for pair in test:
            for abstains, variant in ((False, pair.act), (True, pair.abstain)):
                correct += (model.log_odds(Counter(_words(variant.instruction))) > 0) == abstains
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
                                   at_chance=abs(accuracy - 0.5) <= 2 * standard_error, limit=LIMIT,
                                   gated=len(group) >= MIN_PAIRS))
    return report
