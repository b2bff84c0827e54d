"""Errata: corrections to a published release, kept beside it since a release never changes.

    <output_dir>/<name>/errata/<version>.jsonl    one Erratum per line, in the order they were made

An erratum names a pair, a field (a dotted path into the pair, list items by index, e.g.
`abstain.good_reply` or `act.final_state.0.equals`) and the corrected value; the field `withdrawn`
with the value true takes the pair out. Exports apply the errata of the release they export, and a
version derived from a release (`release judge`) starts from the corrected pairs.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from abstaingen.errors import AbstaingenError, shown
from abstaingen.model import TaskPair
from abstaingen.model.common import JsonValue, Model
from abstaingen.store import read_models

ERRATA_DIR = "errata"
WITHDRAWN = "withdrawn"


class Erratum(Model):
    version: str = Field(description="the release version corrected, e.g. v3")
    pair_id: str = Field(description="the pair corrected")
    field: str = Field(description="a dotted path into the pair (list items by index), or 'withdrawn'")
    correction: JsonValue = Field(description="the field's correct value (for 'withdrawn': true)")
    reason: str = Field(description="why, in a sentence")
    date: str = Field(description="when the erratum was made (UTC, ISO 8601 date)")


def errata_file(release_folder: Path, version: str) -> Path:
    return release_folder.parent / ERRATA_DIR / f"{version}.jsonl"


def read_errata(release_folder: Path, version: str) -> list[Erratum]:
    path = errata_file(release_folder, version)
    if not path.is_file():
        return []
    return read_models(path, Erratum, "erratum")


def corrected(pair: TaskPair, erratum: Erratum) -> TaskPair | None:
    """The pair with the correction made (None when withdrawn); an erratum that does not fit is an error."""
    if erratum.field == WITHDRAWN:
        if erratum.correction is not True:
            raise AbstaingenError(f"erratum for {erratum.pair_id}: 'withdrawn' takes the value true")
        return None
    data = pair.model_dump(mode="json")
    *parents, last = erratum.field.split(".")
    holder: Any = data
    for part in parents:
        holder = _step(holder, part, erratum)
    _step(holder, last, erratum)  # the field must exist: an erratum corrects, it does not add
    if isinstance(holder, list):
        holder[int(last)] = erratum.correction
    else:
        holder[last] = erratum.correction
    try:
        return TaskPair.model_validate(data)
    except ValidationError as exc:
        raise AbstaingenError(f"erratum for {erratum.pair_id}: {erratum.field} = {shown(json.dumps(erratum.correction))} "
                              f"does not make a valid pair: {exc.errors()[0]['msg']}") from None


def _step(holder: Any, part: str, erratum: Erratum) -> Any:
    if isinstance(holder, dict) and part in holder:
        return holder[part]
    if isinstance(holder, list) and part.isdigit() and int(part) < len(holder):
        return holder[int(part)]
    raise AbstaingenError(f"erratum for {erratum.pair_id}: the pair has no field {shown(erratum.field)}")


def apply_errata(pairs: list[TaskPair], errata: list[Erratum]) -> list[TaskPair]:
    """The pairs with every erratum made, in order; withdrawn pairs are left out."""
    by_id: dict[str, TaskPair | None] = {p.pair_id: p for p in pairs}
    for erratum in errata:
        if erratum.pair_id not in by_id:
            raise AbstaingenError(f"erratum for {erratum.pair_id}: no such pair in {erratum.version}")
        current = by_id[erratum.pair_id]
        if current is not None:
            by_id[erratum.pair_id] = corrected(current, erratum)
    return [p for p in by_id.values() if p is not None]


def add_erratum(release_folder: Path, pairs: list[TaskPair], version: str, pair_id: str, field: str,
                correction: JsonValue, reason: str) -> Erratum:
    """Check the erratum against the corrected release so far, then append it to the release's errata file."""
    erratum = Erratum(version=version, pair_id=pair_id, field=field, correction=correction, reason=reason,
                      date=datetime.now(UTC).date().isoformat())
    earlier = read_errata(release_folder, version)
    apply_errata(pairs, [*earlier, erratum])
    path = errata_file(release_folder, version)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as stream:
        stream.write(erratum.model_dump_json() + "\n")
    return erratum
