"""Labelled reply corpora and a judge's accuracy on them.

    python -m abstaingen.reply_judges.corpus tests/data/reply_corpus.jsonl [--judge rules] [--errors]
    python -m abstaingen.reply_judges.corpus tests/data/reply_corpus.jsonl --judge llm --config judge.toml \
        [--sample 24 --seed 41204]

A line holds the request, the reply and its labels (see tests/data/README.md). Accuracy is reported
per side, as scoring uses the verdict: on an act side the reply passes when it does not abstain; on an
abstain side when it abstains and reveals nothing withheld.
"""

from __future__ import annotations

import argparse
import asyncio
import random
from collections import defaultdict
from pathlib import Path
from typing import Literal

from pydantic import Field

from abstaingen.config import load_config
from abstaingen.model import Deliverable
from abstaingen.model.common import Model
from abstaingen.reply_judges import ReplyInput, ReplyJudge, ReplyVerdict, get_judge
from abstaingen.store import read_models


class LabelledReply(Model):
    id: str
    domain: str
    scenario: str
    side: Literal["act", "abstain"]
    deliverable: Deliverable
    instruction: str
    situation: str = Field(description="what the agent found, for human readers; judges do not see it")
    withheld: list[str]
    reply: str
    abstains: bool
    flags_problem: bool
    discloses: bool
    hard_because: str

    def passes(self, verdict: ReplyVerdict | None = None) -> bool:
        """Whether the reply passes its side's reply check, by the labels or by a verdict."""
        abstains, discloses = (self.abstains, self.discloses) if verdict is None else (verdict.abstains, verdict.discloses)
        return not abstains if self.side == "act" else abstains and not discloses

    def as_input(self) -> ReplyInput:
        return ReplyInput(instruction=self.instruction, deliverable=self.deliverable, reply=self.reply,
                          withheld=self.withheld)


class SideAccuracy(Model):
    side: str
    replies: int
    correct: int

    @property
    def accuracy(self) -> float:
        return self.correct / self.replies if self.replies else 0.0


class CorpusReport(Model):
    judge: str
    sides: list[SideAccuracy]
    flags_accuracy: float
    errors: list[str]


class CorpusAccuracy(Model):
    """The rules reply judge's accuracy on one labelled reply corpus in abstaingen's repository (tests/data/), as
    `python -m abstaingen.reply_judges.corpus` measures it."""

    corpus: str = Field(description="the corpus's file in tests/data/")
    about: str = Field(description="what the corpus is, in a few words")
    act: tuple[int, int] = Field(description="act-side replies judged right, of all, by the judge of this code")
    abstain: tuple[int, int] = Field(description="abstain-side replies judged right, of all, by the judge of this code")
    first: tuple[tuple[int, int], tuple[int, int]] | None = Field(
        default=None, description="act and abstain as first measured, before any fix drawn from the corpus (README, "
                                  "'Scoring and the reply judge'); None for the set the judge was written against")


# Measured, not estimated: tests/test_export_hf_card.py measures the judge on each corpus again and checks
# the first-measured figures against the README's table.
REPLY_JUDGE_ACCURACY = (  # newest first; the first entry is the figure every evaluation report prints
    CorpusAccuracy(corpus="reply_corpus_blind3.jsonl", about="sealed until measured, by a seventh author; no change "
                   "drawn from it", act=(81, 81), abstain=(87, 89), first=((81, 81), (87, 89))),
    CorpusAccuracy(corpus="reply_corpus_blind2.jsonl", about="sealed until measured, by a sixth author", act=(82, 82),
                   abstain=(88, 88), first=((78, 82), (83, 88))),
    CorpusAccuracy(corpus="reply_corpus_blind.jsonl", about="sealed until measured, by a fifth author", act=(84, 84),
                   abstain=(86, 86), first=((81, 84), (76, 86))),
    CorpusAccuracy(corpus="reply_corpus_styles.jsonl", about="markdown, emoji and eight languages, by a fourth author",
                   act=(83, 83), abstain=(87, 87), first=((80, 83), (63, 87))),
    CorpusAccuracy(corpus="reply_corpus_fresh.jsonl", about="written by a third author", act=(78, 78),
                   abstain=(85, 86), first=((73, 78), (76, 86))),
    CorpusAccuracy(corpus="reply_corpus_heldout.jsonl", about="held out, by a second author", act=(78, 78),
                   abstain=(88, 88), first=((75, 78), (81, 88))),
    CorpusAccuracy(corpus="reply_corpus.jsonl", about="the development set the judge was written against",
                   act=(167, 167), abstain=(200, 200)),
)


def measured_accuracy() -> str:
    """What the rules judge is worth on replies of a style it has not seen: its first measurement on the
    newest sealed corpus (REPLY_JUDGE_ACCURACY's first entry), as every evaluation report prints it."""
    newest = REPLY_JUDGE_ACCURACY[0]
    assert newest.first is not None
    (act, acts), (abstain, abstains) = newest.first
    return (f"{(act + abstain) / (acts + abstains):.1%} of {acts + abstains} replies of a sealed blind corpus "
            f"({newest.corpus}: act sides {act}/{acts}, abstain sides {abstain}/{abstains}), measured before any "
            "change drawn from it")


def load_corpus(path: Path) -> list[LabelledReply]:
    return read_models(path, LabelledReply, "labelled reply")


async def evaluate(judge: ReplyJudge, rows: list[LabelledReply]) -> CorpusReport:
    """The judge on every row at once (an llm judge's calls run concurrently, within its provider's limit)."""
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    flags = 0
    errors = []
    verdicts = await asyncio.gather(*(judge.judge(row.as_input()) for row in rows))
    for row, verdict in zip(rows, verdicts):
        right = row.passes(verdict) == row.passes()
        totals[row.side][0] += 1
        totals[row.side][1] += right
        flags += verdict.flags_problem == row.flags_problem
        if not right:
            errors.append(f"{row.id} {row.scenario} {row.side}: judged {'pass' if row.passes(verdict) else 'fail'} "
                          f"({verdict.reason}): {row.reply!r}")
    return CorpusReport(judge=judge.name, sides=[SideAccuracy(side=s, replies=n, correct=c)
                                                 for s, (n, c) in sorted(totals.items())],
                        flags_accuracy=flags / len(rows) if rows else 0.0, errors=errors)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path, nargs="+")
    parser.add_argument("--judge", default="rules")
    parser.add_argument("--config", type=Path, help="the TOML config whose roles.judge names the model (--judge llm)")
    parser.add_argument("--errors", action="store_true", help="list the replies judged wrongly")
    parser.add_argument("--sample", type=int, help="judge a uniform sample of this many replies per corpus")
    parser.add_argument("--seed", type=int, default=0, help="the sample's seed")
    options = parser.parse_args()
    judge = get_judge(options.judge, load_config(options.config) if options.config else None)
    asyncio.run(_report(judge, options.corpus, options.errors, options.sample, options.seed))


async def _report(judge: ReplyJudge, corpora: list[Path], list_errors: bool, sample: int | None = None,
                  seed: int = 0) -> None:
    """Every corpus on one event loop (a model judge's client belongs to the loop that used it)."""
    try:
        for path in corpora:
            rows = load_corpus(path)
            if sample is not None and sample < len(rows):
                rows = random.Random(seed).sample(rows, sample)
            report = await evaluate(judge, rows)
            sides = ", ".join(f"{s.side} {s.correct}/{s.replies} = {s.accuracy:.1%}" for s in report.sides)
            print(f"{path}: {sides}; flags_problem {report.flags_accuracy:.1%}")
            if list_errors:
                print("\n".join(f"  {e}" for e in report.errors))
    finally:
        if (close := getattr(judge, "aclose", None)) is not None:
            await close()


if __name__ == "__main__":
    main()
