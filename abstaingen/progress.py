"""How far a run has got, told to whoever watches it in this process: the terminal display of the
CLI, and the flow's own Prefect progress artifacts. The pipeline reports; it never draws anything.

    with watching(callback):
        ...  # every report(...) made meanwhile reaches callback(Progress)
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from pydantic import Field

from abstaingen.model.common import Model
from abstaingen.model.release import GENERATION_STAGES

__all__ = ["OOD_STAGES", "STAGES", "Progress", "report", "watching"]

# The stages a generation run reports, in order (the terminal shows one line each).
STAGES = (*GENERATION_STAGES, "dedup", "validate", "judge", "publish")
# The stages an OOD run reports, in order.
OOD_STAGES = ("write items", "dedup", "publish")


class Progress(Model):
    stage: str = Field(description="one of STAGES")
    done: int = Field(ge=0, description="items of the stage finished so far (environments for most stages, candidate "
                                        "pairs for dedup and validate, roles for the OOD run's write items)")
    total: int = Field(ge=0, description="items the stage has in all, as far as known now")
    accepted: int | None = Field(default=None, description="pairs (OOD items) kept so far, for the stages that keep "
                                                           "or drop them")
    note: str = Field(default="", description="a short word on the item just finished, e.g. its environment")


_watchers: list[Callable[[Progress], None]] = []


def report(stage: str, done: int, total: int, accepted: int | None = None, note: str = "") -> None:
    """Tell every watcher; a watcher that fails is dropped rather than allowed to stop the run."""
    event = Progress(stage=stage, done=done, total=total, accepted=accepted, note=note)
    for watcher in list(_watchers):
        try:
            watcher(event)
        except Exception:  # noqa: BLE001 - a display must never end a run
            _watchers.remove(watcher)


@contextlib.contextmanager
def watching(callback: Callable[[Progress], None]) -> Iterator[None]:
    _watchers.append(callback)
    try:
        yield
    finally:
        if callback in _watchers:
            _watchers.remove(callback)
