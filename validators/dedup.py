"""Near-duplicate removal: MinHash with banded LSH, confirmed by exact Jaccard.

Two pairs are near-duplicates when they test the same scenario with (almost) the same texts and
perturbation, e.g. two variants that happened to pick the same record. Within a release the first by
pair_id stays. Against the earlier releases of a dataset the same rule applies, and a new pair is
also dropped when its target record (every field, in its environment as the act side starts) was
the target of an earlier pair: a fresh release must not repeat what an earlier one published.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import Field

from abstaingen.errors import AbstaingenError
from abstaingen.model import EnvironmentBundle, TaskPair
from abstaingen.model.common import Model, canonical_json, content_hash
from abstaingen.model.ood import WRAPPED_KINDS, OodItem
from abstaingen.model.release import FunnelStage
from abstaingen.model.task import apply_state_patch, find_record
from abstaingen.store import ENVIRONMENTS_DIR, load_ood_release, load_release, read_bundle, release_versions
from abstaingen.validators.ood import question_block

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


_WORD = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]|[^\W\u3400-\u9fff\uf900-\ufaff]+")


def shingles(text: str, size: int = 3) -> set[str]:
    """Word `size`-grams; a Chinese character counts as a word (Chinese is written without spaces)."""
    words = _WORD.findall(text.lower())
    return {" ".join(words[i:i + size]) for i in range(max(1, len(words) - size + 1))}


def signature(items: set[str]) -> np.ndarray:
    hashes = np.array([int.from_bytes(hashlib.blake2b(s.encode(), digest_size=8).digest(), "big") % PRIME
                       for s in items], dtype=np.uint64)
    return ((np.outer(_A, hashes) + _B[:, None]) % PRIME).min(axis=1)


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def target_key(pair: TaskPair, bundle: EnvironmentBundle) -> str | None:
    """The identity of the pair's target record by content: domain, collection and a hash of the record
    as the act side starts (None when the pair has no target or the record is not there)."""
    if pair.target is None:
        return None
    record = find_record(apply_state_patch(bundle.initial_state, pair.act.overlay.state_patch), pair.target)
    return None if record is None else f"{pair.domain}/{pair.target.collection}/{content_hash(record)[:16]}"


class EarlierReleases(Model):
    """What the earlier releases of a dataset hold, in the form dedup compares new pairs against."""

    versions: list[str] = Field(default_factory=list, description="the versions read, e.g. ['v1', 'v2']")
    texts: list[str] = Field(default_factory=list, description="pair_text of every earlier pair")
    targets: list[str] = Field(default_factory=list, description="target_key of every earlier pair with a target")


class Deduplication(Model):
    kept: list[TaskPair]
    near_duplicate: list[TaskPair] = Field(description="near-duplicates of a pair kept in this release")
    seen_in_earlier_release: list[TaskPair] = Field(description="near-duplicates of a pair of an earlier release")
    same_target_as_earlier: list[TaskPair] = Field(description="their target record was an earlier pair's target")


def remove_near_duplicates(pairs: Sequence[TaskPair], earlier: EarlierReleases | None = None,
                           targets: dict[str, str | None] | None = None) -> Deduplication:
    """Sorted by pair_id, each pair is checked against the earlier releases' pairs, then against the
    pairs kept before it. `targets` maps pair_id to target_key (needed only with `earlier`)."""
    earlier = earlier or EarlierReleases()
    ordered = sorted(pairs, key=lambda p: p.pair_id)
    verdicts = near_duplicate_verdicts([pair_text(p) for p in ordered], earlier.texts)
    seen_targets = set(earlier.targets)
    outcome = Deduplication(kept=[], near_duplicate=[], seen_in_earlier_release=[], same_target_as_earlier=[])
    for pair, verdict in zip(ordered, verdicts, strict=True):
        repeats_target = verdict == "kept" and (targets or {}).get(pair.pair_id) in seen_targets
        getattr(outcome, "same_target_as_earlier" if repeats_target else verdict).append(pair)
    return outcome


Verdict = Literal["kept", "near_duplicate", "seen_in_earlier_release"]


class NearDuplicates:
    """Texts seen so far, indexed by MinHash bands, and whether a new text is a near-duplicate of one of them
    (word 3-shingles with a Jaccard similarity of at least THRESHOLD)."""

    def __init__(self, texts: Sequence[str] = ()) -> None:
        self._sets: list[set[str]] = []
        self._buckets: dict[tuple, list[int]] = defaultdict(list)
        for text in texts:
            self.add(text)

    @staticmethod
    def _bands(items: set[str]) -> list[tuple]:
        rows = signature(items).reshape(BANDS, PERMUTATIONS // BANDS)
        return [(band, *values.tolist()) for band, values in enumerate(rows)]

    def similar(self, text: str) -> bool:
        items = shingles(text)
        candidates = {other for key in self._bands(items) for other in self._buckets[key]}
        return any(jaccard(items, self._sets[other]) >= THRESHOLD for other in candidates)

    def add(self, text: str) -> None:
        items = shingles(text)
        self._sets.append(items)
        for key in self._bands(items):
            self._buckets[key].append(len(self._sets) - 1)


def near_duplicate_verdicts(texts: Sequence[str], earlier_texts: Sequence[str] = ()) -> list[Verdict]:
    """For records of any kind, by their texts in order: each is a near-duplicate of an earlier release's
    text (`seen_in_earlier_release`), else of a text kept before it (`near_duplicate`), else `kept`."""
    earlier, kept = NearDuplicates(earlier_texts), NearDuplicates()
    verdicts: list[Verdict] = []
    for text in texts:
        if earlier.similar(text):
            verdicts.append("seen_in_earlier_release")
        elif kept.similar(text):
            verdicts.append("near_duplicate")
        else:
            verdicts.append("kept")
            kept.add(text)
    return verdicts


def earlier_releases(dataset_dir: Path) -> EarlierReleases:
    """Every published version of a dataset, read for the dedup stage of its next release. A version
    that cannot be read stops the run: skipping it would let the new release repeat its pairs."""
    versions: list[str] = []
    texts: list[str] = []
    targets: list[str] = []
    for folder, _ in release_versions(dataset_dir, "pairs"):
        try:
            _, pairs = load_release(folder)
            bundles = {env_id: read_bundle(folder / ENVIRONMENTS_DIR / env_id, in_release=True)
                       for env_id in sorted({p.act.env_id for p in pairs})}
        except AbstaingenError as exc:
            raise AbstaingenError(f"cannot check the new release against earlier version {folder.name}: {exc}") from None
        versions.append(folder.name)
        texts += [pair_text(p) for p in pairs]
        targets += [key for p in pairs if (key := target_key(p, bundles[p.act.env_id])) is not None]
    return EarlierReleases(versions=versions, texts=texts, targets=targets)


# --- the OOD dataset: the same rule, within groups of one role, language and kind -----------------------


class EarlierItems(Model):
    """What the earlier releases of an OOD dataset asked, in the form dedup compares new items against."""

    versions: list[str] = Field(default_factory=list)
    texts: dict[str, list[str]] = Field(default_factory=dict, description="dedup group -> the question blocks "
                                                                          "(question and options) of earlier items")

    def blocks_of(self, role_id: str) -> set[str]:
        """Every question block an earlier release asked `role_id`, in any language and kind."""
        return {text for group, texts in self.texts.items() if group.split("/")[0] == role_id for text in texts}


def dedup_group(item: OodItem) -> str:
    """Items are compared only with items of the same role, language and kind: the same bank question
    asked of two roles is two items, not a duplicate."""
    return f"{item.role_id}/{item.language}/{item.kind}"


def item_text(item: OodItem) -> str:
    """What an item is compared by: its question and options, not the frame around them, so that a question
    asked again in a new frame is still the same question."""
    return question_block(item.question)


class DeduplicatedItems(Model):
    kept: list[OodItem]
    tally: FunnelStage
    checked_against: list[str] = Field(description="the earlier versions the items were compared with")


def remove_duplicate_items(items: Sequence[OodItem], earlier: EarlierItems | None = None) -> DeduplicatedItems:
    """Near-duplicate questions (abstaingen.validators.dedup) within each group, and against the earlier
    releases' questions. A question's direct, laundered and recast items go together: when one of them is a
    duplicate, its twins are dropped too (counted as `twin_dropped`)."""
    earlier = earlier or EarlierItems()
    groups: dict[str, list[OodItem]] = defaultdict(list)
    for item in sorted(items, key=lambda i: i.item_id):
        groups[dedup_group(item)].append(item)
    dropped: dict[str, str] = {}
    for group, members in sorted(groups.items()):
        reference = earlier.texts.get(group, [])
        for member, verdict in zip(members, near_duplicate_verdicts([item_text(m) for m in members], reference),
                                   strict=True):
            if verdict != "kept":
                dropped[member.item_id] = verdict
    dropped_questions = {(*_twin_key(item), item.kind) for item in items if item.item_id in dropped}
    kept: list[OodItem] = []
    rejected: Counter[str] = Counter()
    for item in sorted(items, key=lambda i: i.item_id):
        twins = [kind for kind in ("direct_ood", *WRAPPED_KINDS) if kind != item.kind] if item.kind != "id" else []
        if item.item_id in dropped:
            rejected[dropped[item.item_id]] += 1
        elif any((*_twin_key(item), kind) in dropped_questions for kind in twins):
            rejected["twin_dropped"] += 1
        else:
            kept.append(item)
    return DeduplicatedItems(kept=kept, tally=FunnelStage.counted(stage="dedup", received=len(items),
                                                                  rejected=dict(rejected)),
                             checked_against=earlier.versions)


def _twin_key(item: OodItem) -> tuple[str, str, str]:
    """What a direct item and its laundered twin share: role, language and question."""
    return item.role_id, item.language, item.question.question_id


def earlier_items(dataset_dir: Path) -> EarlierItems:
    """Every published version's items, by dedup group. A version that cannot be read stops the run."""
    versions, texts = [], defaultdict(list)
    for folder, _ in release_versions(dataset_dir, "ood"):
        try:
            _, items, _ = load_ood_release(folder)
        except AbstaingenError as exc:
            raise AbstaingenError(f"cannot check the new release against earlier version {folder.name}: {exc}") from None
        versions.append(folder.name)
        for item in items:
            texts[dedup_group(item)].append(item_text(item))
    return EarlierItems(versions=versions, texts=dict(texts))
