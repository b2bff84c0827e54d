"""SIGINT, SIGTERM and SIGHUP during a run: stop within seconds, publish nothing, leave no sandbox behind.

An exception would unwind through Prefect's engine, which reports the crash to its API and, when
that API is gone (a signal to the process group kills Prefect's temporary server too), retries for
minutes. So the handler does the cleanup itself and ends the process: it runs the cleanup the run
registered (stop the sandboxes), prints one line and exits with 128 + the signal's number.
Publishing holds a signal back until the release is complete (`hold_signals`), so a stopped run
has published a whole release or nothing, and its last line says which.

The run ends the same way when its Prefect API dies (`stop_run`): Prefect would retry every state
report for minutes, and a run without its record must not publish.

Prefect installs its own SIGTERM handler while a flow runs; the flow calls `take_signals()` first
thing to put this one back.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, NoReturn, TextIO

# Ctrl-C, kill, and a closed terminal (SIGHUP)
STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_cleanup: list[Callable[[], None]] = []
_holding: list[bool] = []
_held: list[int] = []  # signals that arrived while held
_published: list[str] = []


def _on_signal(signum: int, _frame: FrameType | None) -> None:
    if _holding:
        _held.append(signum)
    else:
        stop_run(f"interrupted by {signal.Signals(signum).name}", 128 + signum)


def stop_run(reason: str, exit_code: int) -> NoReturn:
    """Run the registered cleanup, print one line and end the process now: for a signal, or for a
    failure the run cannot report through Prefect (its API is gone)."""
    for number in STOPPING:
        signal.signal(number, signal.SIG_IGN)  # a second Ctrl-C must not cut the cleanup short
    logging.raiseExceptions = False  # log handlers whose API died (Prefect's) keep quiet from here on
    for step in reversed(_cleanup):
        try:
            step()
        except BaseException as exc:  # noqa: BLE001 - the process ends next; say what could not be cleaned
            _say(f"abstaingen: cleanup failed: {type(exc).__name__}: {exc}")
    outcome = f"after publishing {_published[-1]}" if _published else "nothing was published"
    _say(f"abstaingen: {reason}: {outcome}")
    os._exit(exit_code)


def _say(line: str) -> None:
    """Straight to fd 2 (within a flow Prefect turns print() into a log record with a prefix), on a line
    of its own: Prefect's API log handler writes its error without a newline."""
    sys.stderr.flush()
    fresh = getattr(sys.stderr, "at_line_start", True)
    os.write(2, ("" if fresh else "\n").encode() + (line + "\n").encode())


class LineEnds:
    """A stream that knows whether what was last written to it ended a line; the rest is the stream's."""

    def __init__(self, stream: TextIO):
        self.stream = stream
        self.at_line_start = True

    def write(self, text: str) -> int:
        if text:
            self.at_line_start = text.endswith("\n")
        return self.stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def publishing() -> bool:
    return bool(_holding)


def take_signals() -> None:
    """Make SIGINT and SIGTERM stop the run (again, after a library replaced the handler)."""
    if _cleanup:
        for number in STOPPING:
            signal.signal(number, _on_signal)


@contextmanager
def hold_signals() -> Iterator[None]:
    """A signal that arrives within the block stops the run when the block is over."""
    _holding.append(True)
    try:
        yield
    finally:
        _holding.pop()
        if _held and not _holding:
            _on_signal(_held[0], None)


def note_published(what: str) -> None:
    _published.append(what)


@contextmanager
def stop_on_signals(cleanup: Callable[[], None]) -> Iterator[None]:
    """Within the block, SIGINT or SIGTERM runs `cleanup` and ends the process."""
    _cleanup.append(cleanup)
    _held.clear()
    _published.clear()
    previous = {number: signal.getsignal(number) for number in STOPPING}
    take_signals()
    stderr = sys.stderr
    if not isinstance(stderr, LineEnds):
        sys.stderr = LineEnds(stderr)  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stderr = stderr  # what kept the wrapper meanwhile (a log handler) still writes through it
        _cleanup.remove(cleanup)
        for number, handler in previous.items():
            signal.signal(number, handler)
