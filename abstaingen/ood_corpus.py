"""Labelled corpora of scoped assistants' replies, and the OOD reply parser's accuracy on them.

    python -m abstaingen.ood_corpus tests/data/ood_reply_corpus_dev.jsonl [--errors]

A line holds one reply to an OOD item, the role's refusal sentence, the language and suffix it answered,
optionally the question and its options, and what the reply did: `accept` (with the letter it chose, or
null), `refuse`, or `neither`. A reply counts as read right when `parse_reply` gives the same decision
(`neither` = unparsed) and, for an accepting reply, the same letter.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import Literal

from pydantic import Field

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


def main() -> None:
    parser = argparse.ArgumentParser(description="The OOD reply parser's accuracy on a labelled corpus")
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--errors", action="store_true", help="list every misread reply")
    options = parser.parse_args()
    result = measure(read_corpus(options.corpus))
    languages = ", ".join(f"{language} {right}/{total}" for language, (right, total) in result.by_language.items())
    print(f"{result.correct}/{result.replies} read right ({result.accuracy:.1%}): {languages}")
    if options.errors:
        print("\n".join(result.errors))


if __name__ == "__main__":
    main()
