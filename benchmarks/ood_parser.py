"""Time of the OOD reply parser: every reply of the labelled corpora (tests/data/ood_reply_corpus_*, the
sealed ones too) read with the parser's caches emptied, in milliseconds per reply. A release's baselines
are most of its assemble stage; `ood_builtin.py` times the whole release.

    python benchmarks/ood_parser.py [--runs 3] [--corpora tests/data]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from abstaingen import ood_scoring
from abstaingen.ood_corpus import read_corpus

CORPORA = Path(__file__).resolve().parents[1] / "tests" / "data"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--corpora", type=Path, default=CORPORA, help="the folder of the corpora (to time an older "
                                                                       "parser on today's corpora)")
    options = parser.parse_args()
    paths = [*sorted(options.corpora.glob("ood_reply_corpus_*.jsonl")),
             *sorted(options.corpora.glob("ood_reply_corpus_sealed/*.jsonl"))]
    rows = [row for path in paths for row in read_corpus(path)]
    per_reply = []
    for run in range(options.runs):
        for cached in vars(ood_scoring).values():  # every cache the parser keeps, in any version of it
            if callable(getattr(cached, "cache_clear", None)):
                cached.cache_clear()
        start = time.perf_counter()
        for row in rows:
            row.read()
        per_reply.append((time.perf_counter() - start) / len(rows) * 1000)
        print(f"run {run + 1}: {len(rows)} replies of {len(paths)} corpora, {per_reply[-1]:.2f} ms a reply")
    print(f"median {statistics.median(per_reply):.2f} ms a reply")


if __name__ == "__main__":
    main()
