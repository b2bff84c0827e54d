"""The terminal of `abstaingen generate` and `abstaingen ood`: what it shows while a run goes, and how it ends.

While the run goes (on stderr):
- on a terminal, a live display: a line while Prefect starts, then a row per stage with its bar,
  items done / total, pairs (or OOD items) kept, kept per second and the time left (`LiveDisplay`);
- elsewhere (CI, pipes), plain lines: one when Prefect is starting, one per stage as it finishes,
  and one a minute for a stage that takes long (`LineDisplay`);
- with -q, nothing (`SilentDisplay`).
Prefect's own console logging keeps its warnings and errors; its info records (a line per finished
task run, the temporary server's start and stop) are held back unless -v (`hush_prefect`). They still
reach the Prefect API, and so the UI.

At the end (on stdout): the human summary (`summary_lines`, `ood_summary_lines`: the same head, funnel,
warnings and next commands), or with --json one `RunSummary` (`abstaingen ood --json`: its OodResult).

The display hears the run through abstaingen.progress; it never reaches into the pipeline.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import re
import shlex
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import IO, TYPE_CHECKING, Literal, cast

from pydantic import Field
from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.spinner import Spinner
from rich.text import Text

from abstaingen.model import FunnelStage, Release
from abstaingen.model.common import Model
from abstaingen.model.release import RejectionSample
from abstaingen.progress import OOD_STAGES, STAGES, Progress

if TYPE_CHECKING:
    from abstaingen.config import GenerateConfig
    from abstaingen.flows.generate import GenerationResult
    from abstaingen.flows.ood import OodResult

__all__ = [
    "Gate",
    "LineDisplay",
    "LiveDisplay",
    "OOD",
    "PAIRS",
    "PrefectChatter",
    "Product",
    "RunDisplay",
    "RunSummary",
    "SilentDisplay",
    "Verbosity",
    "hush_prefect",
    "judged_line",
    "ood_summary_lines",
    "open_display",
    "prefect_api_url",
    "prefect_console_handlers",
    "print_lines",
    "print_summary",
    "temporary_server_line",
    "summarize",
    "summary_lines",
]

Verbosity = Literal["quiet", "normal", "verbose"]



class Product(Model):
    """What a run's display says of the product it makes: what it keeps, its stages in order, the items each
    stage counts (as abstaingen.progress reports them)."""

    kept: str = Field(description="what the run keeps and publishes: pairs, items")
    stages: tuple[str, ...] = Field(description="the stages it reports, in order: a row each")
    units: dict[str, tuple[str, str]] = Field(description="stage -> what its items are, in words and short "
                                                          "(environments, envs unless named)")
    keeping: frozenset[str] = Field(description="the stages whose `accepted` counts what is kept")
    rated: frozenset[str] = Field(description="the slow ones, where kept per second says something")

    def unit(self, stage: str, short: bool = False) -> str:
        return self.units.get(stage, ("environments", "envs"))[short]


PAIRS = Product(kept="pairs", stages=STAGES, units={
    "capability": ("seed instructions", "seeds"), "dedup": ("candidate pairs", "pairs"),
    "validate": ("candidate pairs", "pairs"), "publish": ("release", "")},
    keeping=frozenset({"dedup", "validate", "judge", "publish"}), rated=frozenset({"validate", "judge"}))
OOD = Product(kept="items", stages=OOD_STAGES, units={
    "write items": ("roles", "roles"), "dedup": ("candidate items", "items"), "publish": ("release", "")},
    keeping=frozenset({"write items", "dedup", "publish"}), rated=frozenset({"write items"}))
# The stages whose last note sums the stage up (elsewhere it names the item just finished, and is
# dropped once the stage is done).
SUMMING_NOTES = {"capability", "publish"}
HEARTBEAT_S = 60.0  # a plain line for a stage still going after this long since its last line
SAMPLES_SHOWN = 5  # rejection samples in the human summary of a refused run


def duration(seconds: float, compact: bool = False) -> str:
    """12.3 s, 45 s, 3 min 07 s, 1 h 02 min; compact, for the live rows: 3.2s, 16s, 1m05s, 1h02m."""
    s, m, h, gap = ("s", "m", "h", "") if compact else (" s", " min", " h", " ")
    if seconds < 10:
        return f"{seconds:.1f}{s}"
    whole = round(seconds)
    if whole < 60:
        return f"{whole}{s}"
    if whole < 3600:
        return f"{whole // 60}{m}{gap}{whole % 60:02d}{s}"
    return f"{whole // 3600}{h}{gap}{whole % 3600 // 60:02d}{m}"


# --- Prefect's console logging ------------------------------------------------------------------


RUN_LOGGERS = ("prefect.flow_runs", "prefect.task_runs")


class PrefectChatter(logging.Filter):
    """On Prefect's console handler: lets warnings and errors through, and every record that is not
    Prefect's; holds back Prefect's info records ("Finished in state Completed()", the temporary
    server's start and stop, the flow's own info lines) and its "Finished in state Failed(...)" lines
    (the failure itself is logged on its own, and the summary says how the run ended), unless
    `hold_back` is off (-v).

    It also listens: `on_server_start` hears that Prefect starts its temporary server, `on_flow_run`
    that the flow run began (so Prefect answers), `on_view` the run's page in the UI (a lasting server)."""

    STARTING = "Starting temporary server on "
    BEGINNING = re.compile(r"Beginning (?:flow|subflow) run '(?P<name>[^']*)'")
    VIEW = re.compile(r"View at (?P<url>\S+)")

    def __init__(self, hold_back: bool = True, on_server_start: Callable[[], None] | None = None,
                 on_flow_run: Callable[[str], None] | None = None, on_view: Callable[[str], None] | None = None):
        super().__init__()
        self.hold_back, self.on_server_start, self.on_flow_run = hold_back, on_server_start, on_flow_run
        self.on_view = on_view

    def filter(self, record: logging.LogRecord) -> bool:
        if self.hold_back and record.name in RUN_LOGGERS and record.getMessage().startswith("Finished in state "):
            return False  # at any level: how the run ended is the summary's, with the reason and exit code
        if record.levelno >= logging.WARNING:
            return True
        if not (record.name == "prefect" or record.name.startswith("prefect.")):
            return True
        if record.name == "prefect" and self.on_server_start is not None:
            if record.getMessage().startswith(self.STARTING):
                self.on_server_start()
        elif record.name == "prefect.flow_runs":
            beginning, view = self.BEGINNING.match(record.getMessage()), self.VIEW.match(record.getMessage())
            if beginning and self.on_flow_run is not None:
                self.on_flow_run(beginning["name"])
            if view and self.on_view is not None:
                self.on_view(view["url"])
        return not self.hold_back


def prefect_console_handlers() -> list[logging.Handler]:
    """Prefect's console handler(s) (its logging config shares one between the root logger, uvicorn
    and fastapi). Empty until Prefect is imported."""
    if "prefect.logging.handlers" not in sys.modules:
        return []
    from prefect.logging.handlers import PrefectConsoleHandler

    loggers = [logging.getLogger(), *(item for item in logging.Logger.manager.loggerDict.values()
                                      if isinstance(item, logging.Logger))]
    found: list[logging.Handler] = []
    for logger in loggers:
        found += [h for h in logger.handlers if isinstance(h, PrefectConsoleHandler) and h not in found]
    return found


def hush_prefect(chatter: PrefectChatter) -> Callable[[], None]:
    """Put `chatter` on Prefect's console handler(s); returns what takes it off again.

    The CLI leaves it on for the rest of the process, so that the temporary server's "Stopping" line
    at exit stays held back too."""
    handlers = prefect_console_handlers()
    for handler in handlers:
        for earlier in [f for f in handler.filters if isinstance(f, PrefectChatter)]:
            handler.removeFilter(earlier)  # an earlier command in this process (tests run several)
        handler.addFilter(chatter)

    def undo() -> None:
        for handler in handlers:
            handler.removeFilter(chatter)

    return undo


def prefect_api_url() -> str | None:
    """The Prefect server the run reports to; None: Prefect starts a temporary one. Imports Prefect."""
    from prefect.settings import get_current_settings

    return get_current_settings().api.url


def temporary_server_line() -> str:
    """What the run waits for while Prefect starts its temporary server, and for how long, about."""
    from prefect.settings import get_current_settings

    url = get_current_settings().server.database.connection_url
    text = url.get_secret_value() if url is not None else ""
    database = Path(text.split(":///", 1)[1]) if text.startswith("sqlite") and ":///" in text else None
    if database is not None and not database.exists():
        return "starting Prefect's temporary server (the first start in a new PREFECT_HOME takes about a minute)"
    return "starting Prefect's temporary server (usually 15-45 s)"


# Shown under the wait for the temporary server.
SERVER_TIP = "a server kept running skips this wait: `abstaingen ui`, then export PREFECT_API_URL=http://127.0.0.1:4200/api"


# --- the display while the run goes --------------------------------------------------------------


class _Stage:
    def __init__(self, name: str, now: float, product: Product):
        self.name, self.started = name, now
        self.keeps, self.rated = name in product.keeping, name in product.rated
        self.done = self.total = 0
        self.accepted: int | None = None
        self.note = ""
        self.finished: float | None = None
        self.last_line = now  # LineDisplay: when a line about this stage was last printed

    def elapsed(self, now: float) -> float:
        return (self.finished or now) - self.started

    def kept(self) -> int | None:
        """Pairs (items) kept so far, once the stage has finished an item (before that, 0 says nothing)."""
        if not self.keeps or (not self.done and self.finished is None):
            return None
        return self.accepted

    def rate(self, now: float) -> float | None:
        kept, elapsed = self.kept(), self.elapsed(now)
        return kept / elapsed if self.rated and kept and elapsed > 0.05 else None

    def shown_note(self) -> str:
        return self.note if self.finished is None or self.name in SUMMING_NOTES else ""

    def eta(self, now: float) -> float | None:
        if self.finished is not None or not self.done or self.total <= self.done:
            return None
        return self.elapsed(now) * (self.total - self.done) / self.done


class RunDisplay:
    """What the CLI drives while a run goes:

    - `phase(text)`: what the command is doing before Prefect starts (shown on a terminal only);
    - `status(text)`: what the run waits for, e.g. Prefect's temporary server (a line everywhere);
    - `ready(server_url)`: Prefect answered (the flow run began, or the first stage reported);
    - `update(event)`: a progress event (abstaingen.progress.watching calls it);
    - `abort()`: the run is being stopped, the process ends next: tear down now.

    As a context manager it also sends stray stdout to stderr: stdout is kept for the summary."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, product: Product = PAIRS):
        self.clock, self.product = clock, product
        self.lock = threading.RLock()
        self.stages: dict[str, _Stage] = {}
        self.waiting: str | None = None
        self.waiting_since = clock()
        self.announced = False  # `waiting` was said with status(): Prefect's server is starting
        self.server_url: str | None = None  # the Prefect server used, when not a temporary one
        self.ready_after: float | None = None
        self.run_url: str | None = None  # the run's page in the Prefect UI, on a lasting server
        self._stdout: contextlib.redirect_stdout[IO[str]] | None = None

    def __enter__(self) -> RunDisplay:
        self._stdout = contextlib.redirect_stdout(sys.stderr)
        self._stdout.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close(failed=kind is not None)

    def close(self, failed: bool = False) -> None:
        if self._stdout is not None:
            self._stdout.__exit__(None, None, None)
            self._stdout = None

    def abort(self) -> None:
        """For abstaingen.interrupts: the process ends right after this, without unwinding."""
        self.close(failed=True)

    def phase(self, text: str) -> None:
        with self.lock:
            if self.ready_after is None:
                self.waiting, self.waiting_since, self.announced = text, self.clock(), False

    def status(self, text: str) -> None:
        with self.lock:
            if self.ready_after is None:
                self.waiting, self.waiting_since, self.announced = text, self.clock(), True
                self._said_status(text)

    def _said_status(self, text: str) -> None:
        pass

    def ready(self) -> None:
        with self.lock:
            if self.ready_after is None:
                self.ready_after = self.clock() - self.waiting_since
                self._said_ready()

    def ready_line(self) -> str | None:
        """What to say once Prefect answered: how long its temporary server took, or which server it is."""
        if self.ready_after is None:
            return None
        if self.announced:
            return f"Prefect's temporary server answered after {duration(self.ready_after)}"
        if self.server_url:
            return f"using the Prefect server at {self.server_url}"
        return None

    def _said_ready(self) -> None:
        pass

    def watch_at(self, url: str) -> None:
        """The run's page in the Prefect UI (Prefect names it once the run began, on a lasting server)."""
        with self.lock:
            if self.run_url is None:
                self.run_url = url
                self._said_watch(url)

    def _said_watch(self, url: str) -> None:
        pass

    def update(self, event: Progress) -> None:
        with self.lock:
            self.ready()
            now = self.clock()
            stage = self.stages.get(event.stage)
            if stage is None:
                stage = self.stages[event.stage] = _Stage(event.stage, now, self.product)
            stage.done, stage.total = event.done, event.total
            if event.accepted is not None:
                stage.accepted = event.accepted
            if event.note:
                stage.note = event.note
            finished_now = event.done >= event.total and stage.finished is None
            stage.finished = (stage.finished or now) if event.done >= event.total else None
            self._changed(stage, finished_now, now)

    def _changed(self, stage: _Stage, finished_now: bool, now: float) -> None:
        pass

    def ordered(self) -> list[_Stage]:
        rank = {name: i for i, name in enumerate(self.product.stages)}
        return sorted(self.stages.values(), key=lambda s: (rank.get(s.name, len(rank)), s.started))


class SilentDisplay(RunDisplay):
    """-q: nothing while the run goes."""


class LineDisplay(RunDisplay):
    """Not a terminal: a few plain lines, never a carriage return or a colour."""

    def __init__(self, stream: IO[str], clock: Callable[[], float] = time.monotonic, product: Product = PAIRS):
        super().__init__(clock, product)
        self.stream = stream

    def _say(self, line: str) -> None:
        self.stream.write(line + "\n")
        self.stream.flush()

    def _said_status(self, text: str) -> None:
        self._say(f"{text}... ({SERVER_TIP})" if text.startswith("starting") else f"{text}...")

    def _said_ready(self) -> None:
        line = self.ready_line()
        if line:
            self._say(line)

    def _said_watch(self, url: str) -> None:
        self._say(f"this run in the Prefect UI: {url}")

    def _changed(self, stage: _Stage, finished_now: bool, now: float) -> None:
        if finished_now or (stage.finished is None and now - stage.last_line >= HEARTBEAT_S):
            self._say(self.line(stage, now))
            stage.last_line = now

    def line(self, stage: _Stage, now: float) -> str:
        unit, noun = self.product.unit(stage.name), self.product.kept
        parts = [f"{stage.done}/{stage.total} {unit}".rstrip() + ("" if stage.finished is not None else " so far")]
        kept, rate = stage.kept(), stage.rate(now)
        if kept is not None:
            parts.append(f"{kept} {noun} kept" if stage.name != "publish" else f"{kept} {noun} published")
        if rate is not None:
            parts.append(f"{rate:.1f} {noun}/s")
        eta = stage.eta(now)
        parts.append(duration(stage.elapsed(now)) if eta is None else f"about {duration(eta)} left")
        return f"{stage.name}: {', '.join(parts)}"


class _AboveDisplay(io.TextIOBase):
    """A stream for Prefect's console while the live display runs: each line is printed above it.
    (rich's own FileProxy is unwrapped again by Console.file, so Prefect's console needs this.)"""

    def __init__(self, console: Console, original: IO[str]):
        super().__init__()
        self.console, self.original, self.buffer_ = console, original, ""

    def write(self, text: str) -> int:
        self.buffer_ += text
        *lines, self.buffer_ = self.buffer_.split("\n")
        for line in lines:
            self.console.print(Text.from_ansi(line), soft_wrap=True)
        return len(text)

    def flush(self) -> None:
        if self.buffer_:
            self.console.print(Text.from_ansi(self.buffer_), soft_wrap=True)
            self.buffer_ = ""

    def isatty(self) -> bool:
        return self.original.isatty()

    def fileno(self) -> int:
        return self.original.fileno()


class LiveDisplay(RunDisplay):
    """A terminal: a live region, redrawn four times a second, left in place when the run ends."""

    def __init__(self, console: Console, clock: Callable[[], float] = time.monotonic, product: Product = PAIRS):
        super().__init__(clock, product)
        self.console = console
        self.spinner = Spinner("dots", style="cyan")
        self.live = Live(console=console, refresh_per_second=4, transient=False, redirect_stdout=True,
                         redirect_stderr=True, get_renderable=self.render)
        self.rerouted: list[tuple[Console, IO[str]]] = []
        self.stopped = False  # the run ended without finishing: unfinished stages are marked so

    def __enter__(self) -> LiveDisplay:
        self.live.start(refresh=True)
        return self

    def reroute_prefect(self) -> None:
        """Prefect's console handler writes to the stderr it found at import; send it above the display."""
        with self.lock:
            for handler in prefect_console_handlers():
                console = cast(Console, getattr(handler, "console", None))
                if isinstance(console, Console) and all(c is not console for c, _ in self.rerouted):
                    self.rerouted.append((console, console.file))
                    console.file = cast(IO[str], _AboveDisplay(self.console, console.file))

    def close(self, failed: bool = False) -> None:
        with self.lock:
            if not self.live.is_started:
                return
            # A run that failed before its first stage leaves nothing of the display behind.
            self.live.transient = failed and not self.stages
            self.stopped = failed
            try:
                self.live.stop()
            finally:
                for console, original in self.rerouted:
                    console.file = original
                self.rerouted.clear()

    def render(self) -> RenderableType:
        """A Text per line, each cut to the terminal's width (the columns shrink with it first)."""
        with self.lock:
            now = self.clock()
            lines: list[Text] = []
            if self.ready_after is None:
                # the time waited before the details in brackets, so that a narrow terminal cuts those first
                what, _, detail = (self.waiting or "loading the pipeline").partition(" (")
                lines.append(Text.assemble(self._spinner(), " ", f"{what}... ", duration(now - self.waiting_since),
                                           (f" ({detail}" if detail else "", "dim")))
                if self.announced and self.waiting and self.waiting.startswith("starting"):
                    lines.append(Text(f"  {SERVER_TIP}", style="dim"))
            elif said := self.ready_line():
                lines.append(Text.assemble(("✓ ", "green"), (said, "dim")))
            if self.run_url is not None:
                lines.append(Text.assemble("  this run in the Prefect UI: ", (self.run_url, "cyan underline")))
            lines += self._rows(now, self.console.width)
            for line in lines:
                line.no_wrap, line.overflow = True, "ellipsis"
            return Group(*lines)

    def _spinner(self) -> Text:
        frame = self.spinner.render(self.console.get_time())
        return frame if isinstance(frame, Text) else Text("*")

    def _rows(self, now: float, width: int) -> list[Text]:
        """icon, stage, bar, done/total, pairs kept, pairs/s, time, note: the bar narrows, then the rate and
        the note go, as the terminal narrows."""
        stages = self.ordered()
        if not stages:
            return []
        cells: list[tuple[str, str, str, str]] = []
        noun = self.product.kept
        for stage in stages:
            kept, speed, eta = stage.kept(), stage.rate(now), stage.eta(now)
            cells.append((f"{stage.done}/{stage.total} {self.product.unit(stage.name, short=True)}".rstrip(),
                          f"{kept} {noun}" if kept is not None else "",
                          f"{speed:.1f} {noun}/s" if speed is not None else "",
                          short_duration(stage.elapsed(now)) if eta is None else f"ETA {short_duration(eta)}"))
        name_w = max(len(stage.name) for stage in stages)
        count_w, pairs_w, rate_w, time_w = (max(len(c[i]) for c in cells) for i in range(4))
        room = width - (2 + name_w + 1 + count_w + 1 + pairs_w + 1 + time_w)
        bar_w = 10 if room >= 11 else 0  # first a short bar, then the rate, then the note; the rest widens the bar
        room -= bar_w + 1 if bar_w else 0
        show_rate = rate_w > 0 and room >= rate_w + 1
        room -= rate_w + 1 if show_rate else 0
        notes = min(18, max(len(stage.shown_note()) for stage in stages))
        note_w = min(notes, room - 1) if notes and room - 1 >= 4 else 0
        room -= note_w + 1 if note_w else 0
        bar_w += min(14, room) if bar_w else 0
        rows = []
        for stage, (count, pairs, rate, timing) in zip(stages, cells):
            done = stage.finished is not None
            icon = Text("✓", style="green") if done else Text("✗", style="red") if self.stopped else self._spinner()
            row = Text.assemble(icon, " ", (f"{stage.name:<{name_w}}", "" if done else "bold"), " ")
            if bar_w:
                row.append_text(bar(stage.total if done else stage.done, stage.total, bar_w, done))
                row.append(" ")
            row.append(f"{count:>{count_w}} ")
            row.append(f"{pairs:>{pairs_w}} ", style="bold" if done else "")
            if show_rate:
                row.append(f"{rate:>{rate_w}} ", style="dim")
            row.append(f"{timing:>{time_w}}", style="dim" if eta_free(timing) else "")
            note = stage.shown_note()
            if note and note_w >= 4:
                row.append(" " + (note if len(note) <= note_w else note[: note_w - 1] + "…"), style="dim")
            rows.append(row)
        return rows


def bar(done: int, total: int, width: int, finished: bool) -> Text:
    filled = width if finished or total <= 0 else min(width, round(width * done / total))
    # the track is a thinner line, so that the bar reads right without colours too (NO_COLOR, a plain log)
    return Text.assemble(("━" * filled, "green" if finished else "cyan"), ("─" * (width - filled), "grey35"))


def eta_free(timing: str) -> bool:
    return not timing.startswith("ETA")


def short_duration(seconds: float) -> str:
    return duration(seconds, compact=True)


def open_display(verbosity: Verbosity, stream: IO[str] | None = None, product: Product = PAIRS) -> RunDisplay:
    """-q: silent; a terminal that can redraw: live; anything else: plain lines."""
    stream = stream if stream is not None else sys.stderr
    if verbosity == "quiet":
        return SilentDisplay(product=product)
    # A terminal is a real one: FORCE_COLOR (set in some CI) makes rich call a log file a terminal.
    if _isatty(stream) and os.environ.get("TERM", "") != "dumb":
        return LiveDisplay(Console(file=stream, highlight=False, force_terminal=True), product=product)
    return LineDisplay(stream, product=product)


def _isatty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream
        return False


# --- the summary ---------------------------------------------------------------------------------


class Gate(Model):
    """A baseline gate: a scripted agent's paired accuracy on the released pairs, and what it must be."""

    agent: str = Field(description="the scripted baseline agent, e.g. oracle or always_act")
    pairs: int = Field(description="pairs the agent was scored on")
    act: float = Field(description="share of act sides (T+) it got right")
    abstain: float = Field(description="share of abstain sides (T-) it got right")
    paired: float = Field(description="share of pairs whose both sides it got right")
    required: float = Field(description="the paired accuracy the gate requires: 1.0 for the oracle (every pair can "
                                        "be solved), 0.0 for the others (no pair falls to a fixed strategy)")
    passed: bool = Field(description="whether paired equals required")


class RunSummary(Model):
    """How `abstaingen generate` ended, as `--json` prints it."""

    status: Literal["published", "refused"] = Field(description="published: a new version is out; refused: the "
                                                                "data failed a release gate and nothing was published")
    dataset: str = Field(description="the dataset's name")
    version: str | None = Field(description="the published version, e.g. v3; None when refused")
    folder: str | None = Field(description="the release folder; None when refused")
    seed: int | None = Field(description="the seed the generators drew from (rerun with it to resume a killed run)")
    total_pairs: int = Field(description="pairs in the release (0 when refused)")
    checked_against: list[str] = Field(default_factory=list, description="the earlier versions none of whose pairs "
                                                                         "the release repeats")
    counts: dict[str, dict[str, int]] = Field(description="pairs by scenario, domain, phase and deliverable")
    funnel: list[FunnelStage] = Field(description="per stage: items received, passed, and rejected by reason")
    gates: list[Gate] = Field(description="the baseline gates on the released pairs (empty when refused: the "
                                          "refusal names the gate that failed)")
    judged: str | None = Field(description="whether and by which committee the pairs were judged, in a sentence; "
                                           "None when refused")
    warnings: list[str] = Field(description="what a user of the data must know, e.g. pairs lost to sandbox failures")
    degraded: str | None = Field(default=None, description="why the published release is degraded (its run is "
                                                           "tagged so), in one line; None: it is not, or refused")
    refusal: str | None = Field(description="why nothing was published; None when published")
    rejection_samples: list[RejectionSample] = Field(description="a few rejected pairs of each reason")
    sandbox: str | None = Field(description="the sandbox backend(s) that ran the pairs; None when refused")
    cost_usd: float = Field(description="money spent on model calls (0 for the builtin backend)")
    elapsed_s: float = Field(description="wall-clock seconds of the whole command, Prefect's start included")
    flow_elapsed_s: float = Field(description="wall-clock seconds of the flow run itself")
    flow_run_id: str | None = Field(description="the Prefect flow run")
    ui_url: str | None = Field(description="the flow run's page in the Prefect UI (None on the temporary server, "
                                           "which stops with the command)")
    next_commands: list[str] = Field(description="what to run next on the release")


def gates(release: Release) -> list[Gate]:
    # The rule of abstaingen.pipelines.pairs.assemble: the oracle solves every pair, no other baseline any.
    return [Gate(agent=m.agent, pairs=m.pairs, act=m.act, abstain=m.abstain, paired=m.paired,
                 required=1.0 if m.agent == "oracle" else 0.0,
                 passed=m.paired >= 1.0 if m.agent == "oracle" else m.paired <= 0.0) for m in release.baselines]


def judged_line(release: Release) -> str:
    judge = release.judge
    if not judge.judged:
        return "judged: no (set roles.judge to put pairs before a judge committee)"
    rejected = ", ".join(f"{reason} {n}" for reason, n in judge.rejected.items()) or "none"
    return (f"judged by {', '.join(judge.models)} ({judge.rule}): {judge.pairs} pairs, rejected for {rejected}; "
            f"routes claimed {judge.routes_claimed}, completed {judge.routes_completed}")


def next_commands(release: Release, folder: Path) -> list[str]:
    where = shlex.quote(str(folder))
    return [f"abstaingen release verify {where}",
            f"abstaingen release audit-sample {where}",
            f"abstaingen export hf {where} {shlex.quote(f'{release.name}-{release.version}-hf')}"]


def summarize(result: GenerationResult, config: GenerateConfig, elapsed_s: float) -> RunSummary:
    release, folder = result.release, result.folder
    common = {"funnel": result.funnel, "warnings": result.warnings, "rejection_samples": result.rejection_samples,
              "elapsed_s": round(elapsed_s, 1), "flow_elapsed_s": result.elapsed_s, "flow_run_id": result.flow_run_id,
              "ui_url": result.ui_url}
    if release is None:
        return RunSummary(status="refused", dataset=config.dataset.name, version=None, folder=None,
                          seed=result.seed if result.seed is not None else config.dataset.seed, total_pairs=0,
                          counts={}, gates=[],
                          judged=None, refusal=result.refusal or "no pair survived validation",
                          sandbox=None, cost_usd=0.0, next_commands=[], **common)
    if folder is None:
        folder = config.dataset.output_dir / release.name / release.version
    return RunSummary(status="published", dataset=release.name, version=release.version, folder=str(folder),
                      degraded=result.degraded, seed=release.seed, total_pairs=release.total_pairs, counts=release.counts, gates=gates(release),
                      checked_against=release.checked_against,
                      judged=judged_line(release), refusal=None, sandbox=release.sandbox, cost_usd=release.cost_usd,
                      next_commands=next_commands(release, folder), **common)


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{key} {n}" for key, n in sorted(counts.items())) or "none"


def _funnel_lines(funnel: list[FunnelStage]) -> list[Text]:
    if not funnel:
        return []
    width = max(len("baseline gates") - 2, *(len(f.stage) for f in funnel))
    numbers = max(3, *(len(str(f.received)) for f in funnel))
    lines = [Text(f"{'funnel':<{width + 2}}  {'in':>{numbers}}  {'out':>{numbers}}  rejected", style="bold")]
    for line in funnel:
        extra = [f"{what} {n}" for what, n in (("retried", line.retried), ("repaired", line.repaired)) if n]
        reasons = [f"{reason} {n}" for reason, n in sorted(line.rejected.items(), key=lambda item: -item[1])]
        text = Text(f"  {line.stage:<{width}}  {line.received:>{numbers}}  {line.passed:>{numbers}}  ")
        text.append(", ".join(reasons) or "-", style="yellow" if reasons else "dim")
        if extra:
            text.append(f" ({', '.join(extra)})", style="dim")
        lines.append(text)
    return lines


def _gate_lines(found: list[Gate]) -> list[Text]:
    if not found:
        return []
    width = max(len("baseline gates") - 2, *(len(g.agent) for g in found))
    lines = [Text(f"{'baseline gates':<{width + 2}}  paired  needs", style="bold")]
    for gate in found:
        text = Text(f"  {gate.agent:<{width}}  {gate.paired:>6.1%}  {gate.required:>5.0%}  ")
        text.append("ok" if gate.passed else "FAILED", style="green" if gate.passed else "bold red")
        lines.append(text)
    return lines


def _refused_lines(dataset: str, refusal: str, took: str, warnings: list[Text], verbosity: Verbosity,
                   funnel: list[FunnelStage]) -> tuple[list[Text], bool]:
    """The head of a refused run's summary, and whether that is all (-q)."""
    head = Text.assemble(("release refused", "bold red"), f": nothing was published ({dataset}, {took})")
    reason = Text.assemble(("reason: ", "bold"), refusal)
    if verbosity == "quiet":
        return [head, reason, *warnings], True
    return [head, reason, Text(), *_funnel_lines(funnel)], False


def _published_head(dataset: str, version: str | None, folder: str | Path | None, degraded: str | None) -> list[Text]:
    head = Text.assemble(("published", "bold green"), f" {dataset} {version} at {folder}")
    return [head, *([Text(degraded, style="bold yellow")] if degraded else [])]


def _tail(ui_url: str | None, next_commands: list[str]) -> list[Text]:
    """The run's page, and what to run next on the release."""
    lines = [Text.assemble(("run: ", "bold"), (ui_url, "cyan"))] if ui_url else []
    if next_commands:
        lines += [Text(), Text("next", style="bold"), *(Text.assemble("  ", (c, "cyan")) for c in next_commands)]
    return lines


def _seed(seed: int | None, checked_against: list[str]) -> str:
    return f"seed {seed}" + (f"; none repeats {', '.join(checked_against)}" if checked_against else "")


def summary_lines(summary: RunSummary, verbosity: Verbosity = "normal") -> list[Text]:
    """The human summary, a Text per line (styled; `.plain` for the text alone)."""
    took = duration(summary.elapsed_s)
    warnings = [Text.assemble(("warning: ", "bold yellow"), w) for w in summary.warnings]
    if summary.status == "refused":
        lines, quiet = _refused_lines(summary.dataset, summary.refusal or "", took, warnings, verbosity, summary.funnel)
        if quiet:
            return lines
        samples = summary.rejection_samples[:SAMPLES_SHOWN]
        if samples:
            lines += [Text(), Text(f"rejected pairs ({len(samples)} of {len(summary.rejection_samples)} samples)",
                               style="bold")]
            lines += [Text(f"  {s.pair_id}  {s.scenario} {s.domain}, {s.stage}: {s.reason}") for s in samples]
        lines += [*warnings, *_tail(summary.ui_url, [])]
        lines.append(Text("(-v shows Prefect's log of every task run)", style="dim"))
        return lines
    head = _published_head(summary.dataset, summary.version, summary.folder, summary.degraded)
    if verbosity == "quiet":
        return [*head, *warnings]
    facts = [f"pairs: {summary.total_pairs}", _seed(summary.seed, summary.checked_against), f"sandbox {summary.sandbox}",
             f"took {took}"]
    if summary.cost_usd:
        facts.insert(3, f"${summary.cost_usd:.2f}")
    lines = [*head, Text(", ".join(facts))]
    for dimension in ("scenario", "domain"):
        if dimension in summary.counts:
            lines.append(Text(f"by {dimension}: {_counts(summary.counts[dimension])}"))
    lines.append(Text(summary.judged or ""))
    lines += [Text(), *_funnel_lines(summary.funnel), Text(), *_gate_lines(summary.gates), *warnings]
    return lines + _tail(summary.ui_url, summary.next_commands)


def ood_summary_lines(result: OodResult, config: GenerateConfig, elapsed_s: float,
                      verbosity: Verbosity = "normal") -> list[Text]:
    """The human summary of `abstaingen ood`, in the style of `summary_lines`: where the release is, what it
    holds, its funnel, how the scripted baselines score, whether the frames leak, and what to run next."""
    took = duration(elapsed_s)
    release = result.release
    if result.outcome != "published" or release is None or result.folder is None:
        lines, quiet = _refused_lines(config.ood.name, result.refusal or "", took, [], verbosity, result.funnel)
        return lines if quiet else [*lines, *_tail(result.ui_url, [])]
    warnings = [Text.assemble(("warning: ", "bold yellow"), w) for w in release.warnings]
    head = _published_head(release.name, release.version, result.folder, result.degraded)
    if verbosity == "quiet":
        return [*head, *warnings]
    facts = [f"items: {release.total_items}", _seed(release.seed, release.checked_against), f"took {took}"]
    if release.cost_usd:
        facts.insert(2, f"${release.cost_usd:.2f}")
    lines = [*head, Text(", ".join(facts)), Text(f"by kind: {_counts(release.counts['kind'])}"),
             Text(f"roles: {len(release.roles)} x {len(release.languages)} languages ({', '.join(release.languages)}); "
                  f"bank: {release.bank}"), Text(), *_funnel_lines(result.funnel), Text()]
    plain = [score for score in release.baselines if score.language == "all" and score.suffix == "plain"]
    if plain:
        width = max(len("baselines") - 2, *(len(score.agent) for score in plain))
        lines.append(Text(f"{'baselines':<{width + 2}}    OS  AR_ID  RR_direct  RR_adaptive", style="bold"))
        lines += [Text(f"  {s.agent:<{width}}  {s.os:>4.2f}  {s.ar_id:>5.2f}  {s.rr_direct:>9.2f}  "
                       f"{s.rr_adaptive:>11.2f}") for s in plain]
    if (leak := release.leakage) is not None:
        lines.append(Text(f"leakage: frame words alone {leak.wrapper_accuracy:.2f} (chance 0.50, limit "
                          f"{leak.threshold:.2f}); whole message {leak.full_text_accuracy:.2f}"))
    where = shlex.quote(str(result.folder))
    return [*lines, *warnings, *_tail(result.ui_url, [
        f"abstaingen release verify {where}",
        f"abstaingen export hf {where} {shlex.quote(f'{release.name}-{release.version}-hf')}"])]


def print_lines(lines: list[Text], stream: IO[str] | None = None) -> None:
    console = Console(file=stream if stream is not None else sys.stdout, highlight=False, soft_wrap=True)
    for line in lines:
        console.print(line)


def print_summary(summary: RunSummary, verbosity: Verbosity, stream: IO[str] | None = None) -> None:
    print_lines(summary_lines(summary, verbosity), stream)
