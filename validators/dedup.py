"""Near-duplicate removal within a release: MinHash with banded LSH, confirmed by exact Jaccard.

Two pairs are near-duplicates when they test the same scenario with (almost) the same texts and
perturbation, e.g. two variants that happened to pick the same record. The first by pair_id stays.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from abstaingen.model import TaskPair
from abstaingen.model.common import canonical_json

THRESHOLD = 0.9  # Jaccard similarity of word 3-shingles
PERMUTATIONS = 64
BANDS = 16  # 16 bands of 4 rows: pairs above ~0.5 Jaccard become candidates
PRIME = (1 << 31) - 1
_rng = np.random.default_rng(20261129)
_A = _rng.integers(1, PRIME, PERMUTATIONS, dtype=np.uint64)
_B = _rng.integers(0, PRIME, PERMUTATIONS, dtype=np.uint64)


def pair_text(pair: TaskPair) -> str:
    return " ".join([pair.scenario, pair.act.instruction, "||", pair.abstain.instruction, "||",
                     canonical_json(pair.abstain.overlay)])


def shingles(text: str, size: int = 3) -> set[str]:
    words = re.findall(r"\w+", text.lower())
    return {" ".join(words[i:i + size]) for i in range(max(1, len(words) - size + 1))}


def signature(items: set[str]) -> np.ndarray:
    hashes = np.array([int.from_bytes(hashlib.blake2b(s.encode(), digest_size=8).digest(), "big") % PRIME
                       for s in items], dtype=np.uint64)
    return ((np.outer(_A, hashes) + _B[:, None]) % PRIME).min(axis=1)


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def remove_near_duplicates(pairs: Sequence[TaskPair]) -> tuple[list[TaskPair], list[TaskPair]]:
    """(kept, removed), both in pair_id order."""
    ordered = sorted(pairs, key=lambda p: p.pair_id)
    sets = [shingles(pair_text(p)) for p in ordered]
    buckets: dict[tuple, list[int]] = defaultdict(list)
    rows = PERMUTATIONS // BANDS
    removed: set[int] = set()
    for index, items in enumerate(sets):
        bands = signature(items).reshape(BANDS, rows)
        candidates = {other for band, values in enumerate(bands) for other in buckets[(band, *values.tolist())]}
        if any(jaccard(items, sets[other]) >= THRESHOLD for other in candidates if other not in removed):
            removed.add(index)
            continue
        for band, values in enumerate(bands):
            buckets[(band, *values.tolist())].append(index)
    return ([p for i, p in enumerate(ordered) if i not in removed], [p for i, p in enumerate(ordered) if i in removed])
