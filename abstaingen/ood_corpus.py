"""Labelled corpora of scoped assistants' replies, and the OOD reply parser's accuracy on them.

    python -m abstaingen.ood_corpus tests/data/ood_reply_corpus_dev.jsonl [--errors] [--second-reader LABELS]

A line holds one reply to an OOD item, the role's refusal sentence, the language and suffix it answered,
optionally the question and its options, and what the reply did: `accept` (with the letter it chose, or
null), `refuse`, or `neither`. A reply counts as read right when `parse_reply` gives the same decision
(`neither` = unparsed) and, for an accepting reply, the same letter.

A second reader's labels of the same replies (read blind, from the rules alone) measure the labels
themselves: how often two people agree, and how the parser reads the replies both label alike.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Literal

from pydantic import Field

from abstaingen.audit import wilson
from abstaingen.errors import AbstaingenError
from abstaingen.model.common import Model
from abstaingen.model.ood import Language
from abstaingen.ood_scoring import ParsedReply, parse_reply
from abstaingen.store import read_models


class LabelledOodReply(Model):
    id: str
    role: str
    language: Language
    suffix: str = Field(description="the evaluation suffix the reply answered: plain, p_ground, q_ground, offtopiceval")
    refusal: str = Field(description="the role's exact refusal sentence in the reply's language")
    question: str = Field(default="", description="the question the reply answers, when the corpus records it")
    options: list[str] = Field(default_factory=list, description="its four options, when the corpus records them")
    reply: str
    label: Literal["accept", "refuse", "neither"] = Field(description="what the reply did, read by a person")
    option: Literal["A", "B", "C", "D"] | None = Field(description="the letter an accepting reply chose")
    note: str = ""

    def read(self) -> ParsedReply:
        return parse_reply(self.reply, self.refusal, self.language, self.options)

    def read_right(self, parsed: ParsedReply) -> bool:
        decision = "unparsed" if self.label == "neither" else self.label
        return parsed.decision == decision and (decision != "accept" or parsed.option == self.option)


class SecondReading(Model):
    """A second reader's label of a corpus line, given blind: the reply, its item and the rules, no label."""

    id: str
    label: Literal["accept", "refuse", "neither"] = Field(description="what the reply did, read by the second reader")
    option: Literal["A", "B", "C", "D"] | None = Field(description="the letter an accepting reply chose, by that reader")
    sure: bool = Field(default=True, description="False where the reader found the rules did not settle the case")
    note: str = ""


def read_corpus(path: Path) -> list[LabelledOodReply]:
    """Every line of a corpus file; a malformed line is one error naming the file and the line."""
    return read_models(path, LabelledOodReply, "labelled reply")


class CorpusAccuracy(Model):
    replies: int
    correct: int
    by_language: dict[str, tuple[int, int]] = Field(description="language -> (read right, replies)")
    errors: list[str] = Field(description="id, what the label says and what the parser read, per misread reply")

    @property
    def accuracy(self) -> float:
        return self.correct / self.replies if self.replies else 0.0


def measure(rows: list[LabelledOodReply]) -> CorpusAccuracy:
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    errors = []
    for row in rows:
        parsed = row.read()
        total[row.language] += 1
        if row.read_right(parsed):
            right[row.language] += 1
        else:
            errors.append(f"{row.id} ({row.language}, {row.suffix}): labelled {row.label} {row.option or ''}, read "
                          f"{parsed.decision} {parsed.option or ''} by {parsed.why}: {row.reply[:160]!r}")
    return CorpusAccuracy(replies=len(rows), correct=sum(right.values()), errors=errors,
                          by_language={language: (right[language], total[language]) for language in sorted(total)})


def _rate(right: int, total: int) -> str:
    low, high = wilson(right, total)
    return f"{right}/{total} ({right / total:.1%}, Wilson 95% {low:.1%}-{high:.1%})" if total else "0/0"


def compare_readers(rows: list[LabelledOodReply], second: list[SecondReading]) -> list[str]:
    """Lines that say how far two readers' labels agree and how the parser reads the lines both label alike;
    then each line the readers label differently. One error when the second reading misses a line."""
    theirs = {reading.id: reading for reading in second}
    if missing := [row.id for row in rows if row.id not in theirs]:
        raise AbstaingenError(f"the second reading has no label for {len(missing)} lines, first {missing[0]}")
    agreed = [row for row in rows if (row.label, row.option) == (theirs[row.id].label, theirs[row.id].option)]
    agreed_ids = {row.id for row in agreed}
    parsed = {row.id: row.read() for row in agreed}
    decided = sum(parsed[row.id].decision == ("unparsed" if row.label == "neither" else row.label) for row in agreed)
    lines = [f"the two readers agree on {_rate(len(agreed), len(rows))}",
             f"on those, the parser reads {_rate(sum(row.read_right(parsed[row.id]) for row in agreed), len(agreed))}"
             f"; the decision alone {_rate(decided, len(agreed))}"]
    for row in rows:
        if row.id not in agreed_ids:
            reading = theirs[row.id]
            first, other = (" ".join(filter(None, (label, option))) for label, option in
                            ((row.label, row.option), (reading.label, reading.option)))
            lines.append(f"{row.id}: first {first}, second {other}{'' if reading.sure else ' (not sure)'}: "
                         f"{reading.note[:160]}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description="The OOD reply parser's accuracy on a labelled corpus")
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--errors", action="store_true", help="list every misread reply")
    parser.add_argument("--second-reader", type=Path, metavar="LABELS",
                        help="a second reader's blind labels of the same lines (id, label, option, sure, note)")
    options = parser.parse_args()
    try:
        rows = read_corpus(options.corpus)
        second = read_models(options.second_reader, SecondReading, "second reading") if options.second_reader else None
        compared = compare_readers(rows, second) if second is not None else []
    except AbstaingenError as error:  # a missing or malformed file, a line without a second label: one line
        sys.exit(f"abstaingen.ood_corpus: {error}")
    result = measure(rows)
    languages = ", ".join(f"{language} {right}/{total}" for language, (right, total) in result.by_language.items())
    print(f"{result.correct}/{result.replies} read right ({result.accuracy:.1%}): {languages}")
    if options.errors:
        print("\n".join(result.errors))
    if compared:
        print("\n".join(compared))


if __name__ == "__main__":
    main()
