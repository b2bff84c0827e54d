"""Decontamination against texts the user names: a pair whose request (either side's instruction)
shares a run of `n` words with any reference text is dropped before validation.

Words are lowercase runs of letters and digits, so punctuation, case and spacing do not hide an
overlap. Long runs (13 words by default) catch copied passages and not shared phrases.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from abstaingen.config import DecontaminationConfig, HfTextSource
from abstaingen.errors import AbstaingenError, read_user_text
from abstaingen.model import TaskPair
from abstaingen.optional import require

_WORD = re.compile(r"\w+")
HF_USER = "decontamination against a Hugging Face dataset (decontamination.hf)"


def word_runs(text: str, n: int) -> Iterator[str]:
    words = _WORD.findall(text.lower())
    for start in range(len(words) - n + 1):
        yield " ".join(words[start:start + n])


class ReferenceIndex:
    """Every n-word run of the reference texts, by hash (held in memory; a run is ~8 bytes plus the set's
    overhead). Not a pydantic model: it can hold millions of entries."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.sources: list[str] = []
        self._runs: set[int] = set()

    def add(self, source: str, records: Iterable[list[str]]) -> None:
        """Each record's texts (a line of a file, a row of a dataset) are indexed one by one, so a run
        never spans two fields."""
        count = 0
        for texts in records:
            for text in texts:
                self._runs.update(hash(run) for run in word_runs(text, self.n))
            count += 1
        self.sources.append(f"{source} ({count} records)")

    def overlaps(self, pair: TaskPair) -> bool:
        return any(hash(run) in self._runs for side in (pair.act, pair.abstain)
                   for run in word_runs(side.instruction, self.n))

    def describe(self) -> list[str]:
        return [f"{self.n}-word runs of {source}" for source in self.sources]


def load_references(config: DecontaminationConfig) -> ReferenceIndex | None:
    """The reference texts a config names, read once per run (None when it names none)."""
    if not config.any():
        return None
    if config.hf:  # before any file is read: the package is an extra (abstaingen[hf])
        require("datasets", HF_USER)
    index = ReferenceIndex(config.ngram)
    for path in config.files:
        index.add(str(path), records_in_file(path))
    for source in config.hf:
        index.add(f"Hugging Face {source.name}" + (f" {source.config}" if source.config else "") + f" [{source.split}]",
                  records_in_hf_dataset(source))
    return index


def records_in_file(path: Path) -> list[list[str]]:
    """.jsonl: each line's strings; .json: each item's strings (of a top-level list, else the whole);
    anything else: the whole text."""
    text = read_user_text(path, "reference file")
    if path.suffix == ".jsonl":
        found: list[list[str]] = []
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    found.append(_strings(json.loads(line)))
                except json.JSONDecodeError as exc:
                    raise AbstaingenError(f"{path}:{number}: not valid JSON: {exc.msg}") from None
        return found
    if path.suffix == ".json":
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise AbstaingenError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from None
        return [_strings(item) for item in value] if isinstance(value, list) else [_strings(value)]
    return [[text]]


def records_in_hf_dataset(source: HfTextSource) -> Iterator[list[str]]:
    require("datasets", HF_USER)
    import datasets

    local = Path(source.name).is_dir()  # a folder on disk: read it as it is now, not from an earlier read's cache
    try:
        with tempfile.TemporaryDirectory(prefix="abstaingen-hf-") if local else nullcontext(None) as cache:
            loaded = datasets.load_dataset(source.name, source.config, split=source.split, cache_dir=cache,
                                           keep_in_memory=local)
    except Exception as exc:  # datasets raises many kinds (missing, offline, bad config); each is the user's to fix
        raise AbstaingenError(f"decontamination: cannot load the Hugging Face dataset {source.name!r}"
                              f"{' (' + source.config + ')' if source.config else ''} split {source.split!r}: "
                              f"{' '.join(str(exc).split())[:300]}") from None
    for row in loaded:
        yield _strings(row)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []
