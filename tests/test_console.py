"""The terminal of `abstaingen generate`: the summary, --json, the progress display and Prefect's chatter."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console
from rich.text import Text

from abstaingen.config import GenerateConfig
from abstaingen.flows import cli, console
from abstaingen.flows import generate as generate_flow
from abstaingen.flows.generate import GenerationResult
from abstaingen.flows.ood import OodResult
from abstaingen.model import FunnelStage, Release
from abstaingen.model.ood import OodLeakage, OodScore
from abstaingen.model.release import OodRelease, RejectionSample
from abstaingen.model.score import AgentMetrics
from abstaingen.progress import Progress

FUNNEL = [
    FunnelStage(stage="capability", received=2, passed=2),
    FunnelStage(stage="dedup", received=34, passed=32, rejected={"near_duplicate": 2}),
    FunnelStage(stage="replay", received=32, passed=30, rejected={"replay_final_state": 1, "sandbox_infrastructure": 1},
                retried=3),
]


def metrics(agent: str, paired: float) -> AgentMetrics:
    return AgentMetrics(agent=agent, pairs=30, act=1.0 if agent != "always_abstain" else 0.0,
                        abstain=1.0 if agent in ("oracle", "always_abstain") else 0.0, paired=paired, car=None,
                        post_hoc_abstentions=0, implicit_abstentions=0)


def published(tmp_path: Path) -> GenerationResult:
    release = Release(
        name="demo", version="v2", created_by="test", config_fingerprint="f" * 64, seed=1234, sandbox="local",
        counts={"scenario": {"S5": 14, "S1": 16}, "domain": {"travel": 30}}, total_pairs=30, funnel=FUNNEL,
        baselines=[metrics("oracle", 1.0), metrics("always_act", 0.0), metrics("always_abstain", 0.0)],
        warnings=["1 pairs were rejected because their sandbox failed on every attempt"],
    )
    return GenerationResult(outcome="published", release=release, folder=tmp_path / "out" / "demo" / "v2",
                            funnel=FUNNEL, warnings=release.warnings, flow_run_id="run-1",
                            ui_url="http://127.0.0.1:4200/runs/flow-run/run-1", elapsed_s=41.5)


def refused() -> GenerationResult:
    samples = [RejectionSample(pair_id=f"travel-s3-{i}", scenario="S3", domain="travel", stage="replay",
                               reason="replay_final_state: the act side leaves bookings.status unchanged")
               for i in range(7)]
    return GenerationResult(outcome="refused", funnel=FUNNEL, refusal="oracle paired accuracy 96.7%",
                            rejection_samples=samples, elapsed_s=12.0)


@pytest.fixture(autouse=True)
def no_chatter_left() -> Iterator[None]:
    """The CLI leaves its filter on Prefect's console handler for the rest of the process; not here."""
    yield
    for handler in console.prefect_console_handlers():
        for chatter in [f for f in handler.filters if isinstance(f, console.PrefectChatter)]:
            handler.removeFilter(chatter)


# --- the summary ---------------------------------------------------------------------------------


def test_the_summary_of_a_published_release_has_the_funnel_gates_time_and_next_commands(tmp_path: Path) -> None:
    result = published(tmp_path)
    summary = console.summarize(result, GenerateConfig(), elapsed_s=95.2)
    text = "\n".join(line.plain for line in console.summary_lines(summary))
    folder = tmp_path / "out" / "demo" / "v2"

    assert text.splitlines()[0] == f"published demo v2 at {folder}"
    assert "pairs: 30, seed 1234, sandbox local, took 1 min 35 s" in text
    assert "by scenario: S1 16, S5 14" in text
    assert "judged: no" in text
    funnel = [line for line in text.splitlines() if line.lstrip().startswith(("dedup", "replay"))]
    assert funnel[0].split() == ["dedup", "34", "32", "near_duplicate", "2"]
    assert "replay_final_state 1, sandbox_infrastructure 1 (retried 3)" in funnel[1]
    gates = {line.split()[0]: line.split()[1:] for line in text.splitlines()[text.splitlines().index(
        next(line for line in text.splitlines() if line.startswith("baseline gates"))) + 1:][:3]}
    assert gates == {"oracle": ["100.0%", "100%", "ok"], "always_act": ["0.0%", "0%", "ok"],
                     "always_abstain": ["0.0%", "0%", "ok"]}
    assert "warning: 1 pairs were rejected because their sandbox failed on every attempt" in text
    assert "run: http://127.0.0.1:4200/runs/flow-run/run-1" in text
    assert f"  abstaingen release verify {folder}" in text
    assert f"  abstaingen release audit-sample {folder}" in text
    assert f"  abstaingen export hf {folder} demo-v2-hf" in text
    quiet = [line.plain for line in console.summary_lines(summary, "quiet")]
    assert quiet == [f"published demo v2 at {folder}", f"warning: {result.warnings[0]}"]


def test_a_gate_that_did_not_hold_is_shown_failed(tmp_path: Path) -> None:
    release = published(tmp_path).release
    assert release is not None
    gates = console.gates(release.model_copy(update={"baselines": [metrics("oracle", 0.9), metrics("always_act", 0.1),
                                                                   metrics("do_nothing", 0.0)]}))
    assert [(g.agent, g.required, g.passed) for g in gates] == [("oracle", 1.0, False), ("always_act", 0.0, False),
                                                               ("do_nothing", 0.0, True)]
    lines = [line.plain for line in console._gate_lines(gates)]
    assert lines[1].split()[-1] == "FAILED" and lines[3].split()[-1] == "ok"


def test_the_summary_of_a_refused_release_says_why_with_the_funnel_and_a_few_samples() -> None:
    summary = console.summarize(refused(), GenerateConfig(), elapsed_s=30)
    lines = [line.plain for line in console.summary_lines(summary)]

    assert lines[0] == "release refused: nothing was published (abstaingen-builtin, 30 s)"
    assert lines[1] == "reason: oracle paired accuracy 96.7%"
    assert any(line.split()[:3] == ["dedup", "34", "32"] for line in lines)
    assert "rejected pairs (5 of 7 samples)" in lines
    assert sum(line.startswith("  travel-s3-") for line in lines) == 5
    assert "  travel-s3-0  S3 travel, replay: replay_final_state: the act side leaves bookings.status unchanged" \
        in lines
    assert not any("abstaingen release verify" in line for line in lines)


def test_a_degraded_release_says_so_under_its_head(tmp_path: Path) -> None:
    result = published(tmp_path).model_copy(update={"degraded": "degraded: 1 of 32 pairs lost to infrastructure"})
    summary = console.summarize(result, GenerateConfig(), elapsed_s=95.2)
    for verbosity in ("normal", "quiet"):
        lines = [line.plain for line in console.summary_lines(summary, verbosity)]  # type: ignore[arg-type]
        assert lines[1] == "degraded: 1 of 32 pairs lost to infrastructure", lines
    assert summary.degraded == result.degraded


OOD_FUNNEL = [FunnelStage(stage="relatedness", received=30, passed=24, rejected={"too_close_to_role": 6}),
              FunnelStage(stage="dedup", received=72, passed=70, rejected={"near_duplicate": 2})]


def ood_published(tmp_path: Path) -> OodResult:
    scores = [OodScore(agent=agent, suffix="plain", language="all", items=72, ar_id=ar, rr_direct=rr, rr_adaptive=rr,
                       os=os_, id_accuracy=0.5, unparsed=0)
              for agent, ar, rr, os_ in (("always_accept", 1.0, 0.0, 0.0), ("scope_aware", 1.0, 0.95, 0.97))]
    release = OodRelease(
        name="abstaingen-ood", version="v3", created_by="test", config_fingerprint="f" * 64, seed=21,
        checked_against=["v1", "v2"], counts={"kind": {"id": 24, "direct_ood": 23, "laundered_ood": 23}},
        funnel=OOD_FUNNEL, total_items=70, roles=["retail_banking", "travel_booking"], languages=["en", "zh", "hi"],
        bank="builtin", relatedness_threshold=0.5, baselines=scores, warnings=["incomplete: 1 role and language"],
        leakage=OodLeakage(framed_share_accept=0.5, framed_share_refuse=0.5, wrapper_accuracy=0.52,
                           full_text_accuracy=0.97, threshold=0.7, folds=5, items=46))
    return OodResult(outcome="published", release=release, folder=tmp_path / "out" / "abstaingen-ood" / "v3",
                     funnel=OOD_FUNNEL, seed=21, ui_url="http://127.0.0.1:4200/runs/flow-run/run-2")


def test_the_ood_summary_has_the_style_of_the_generate_summary(tmp_path: Path) -> None:
    result = ood_published(tmp_path)
    folder = tmp_path / "out" / "abstaingen-ood" / "v3"
    lines = [line.plain for line in console.ood_summary_lines(result, GenerateConfig(), elapsed_s=62)]

    assert lines[0] == f"published abstaingen-ood v3 at {folder}"  # the head generate's summary has
    assert lines[1] == "items: 70, seed 21; none repeats v1, v2, took 1 min 02 s"
    assert "by kind: direct_ood 23, id 24, laundered_ood 23" in lines
    funnel = lines[lines.index(next(line for line in lines if line.startswith("funnel"))):]
    assert funnel[0].split() == ["funnel", "in", "out", "rejected"]  # generate's funnel table
    assert funnel[1].split() == ["relatedness", "30", "24", "too_close_to_role", "6"]
    baselines = next(i for i, line in enumerate(lines) if line.startswith("baselines"))
    assert lines[baselines].split() == ["baselines", "OS", "AR_ID", "RR_direct", "RR_adaptive"]
    assert lines[baselines + 2].split() == ["scope_aware", "0.97", "1.00", "0.95", "0.95"]
    assert "warning: incomplete: 1 role and language" in lines
    assert "run: http://127.0.0.1:4200/runs/flow-run/run-2" in lines
    assert lines[-3:] == ["next", f"  abstaingen release verify {folder}",
                          f"  abstaingen export hf {folder} abstaingen-ood-v3-hf"]
    quiet = [line.plain for line in console.ood_summary_lines(result, GenerateConfig(), 62, "quiet")]
    assert quiet == [f"published abstaingen-ood v3 at {folder}", "warning: incomplete: 1 role and language"]


def test_a_refused_ood_release_says_why_as_a_refused_generate_does() -> None:
    result = OodResult(outcome="refused", funnel=OOD_FUNNEL, refusal="no item survived the checks", seed=4)
    lines = [line.plain for line in console.ood_summary_lines(result, GenerateConfig(), elapsed_s=30)]
    assert lines[:2] == ["release refused: nothing was published (abstaingen-ood, 30 s)",
                         "reason: no item survived the checks"]
    assert any(line.split()[:3] == ["dedup", "72", "70"] for line in lines)


def test_the_ood_run_shows_its_own_stages_in_order_with_items_and_roles() -> None:
    stream, clock = io.StringIO(), Clock()
    display = console.LineDisplay(stream, clock, product=console.OOD)
    display.update(Progress(stage="write items", done=0, total=2, accepted=0))
    clock.now += 4
    display.update(Progress(stage="write items", done=2, total=2, accepted=72, note="travel_booking"))
    display.update(Progress(stage="dedup", done=72, total=72, accepted=70))
    display.update(Progress(stage="publish", done=1, total=1, accepted=70, note="v3"))
    assert stream.getvalue().splitlines() == ["write items: 2/2 roles, 72 items kept, 18.0 items/s, 4.0 s",
                                              "dedup: 72/72 candidate items, 70 items kept, 0.0 s",
                                              "publish: 1/1 release, 70 items published, 0.0 s"]
    live, _ = live_display(Clock(), console.OOD)
    live.update(Progress(stage="publish", done=0, total=1))
    live.update(Progress(stage="write items", done=1, total=2, accepted=30))
    rows = [row.plain for row in live._rows(live.clock(), 120)]
    assert rows[0].split()[1:2] == ["write"] and "1/2 roles" in rows[0] and "30 items" in rows[0], rows
    assert rows[1].split()[1] == "publish", rows  # in the order of the OOD stages, not of the events


# --- the command ---------------------------------------------------------------------------------


@pytest.fixture
def flow_returns(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    def use(result: GenerationResult, noise: str = "") -> None:
        def run_generate_flow(config: object, seeds_path: Path | None = None) -> GenerationResult:
            if noise:
                print(noise)  # something in the run printing to stdout must not spoil the JSON
            return result
        monkeypatch.setattr(generate_flow, "run_generate_flow", run_generate_flow)

    monkeypatch.chdir(tmp_path)
    return use


def test_json_prints_one_object_with_every_field(flow_returns, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    flow_returns(published(tmp_path), noise="stray line")
    assert cli.main(["generate", "--json"]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)  # the whole of stdout is the one object

    assert set(data) == set(console.RunSummary.model_fields)
    assert data["status"] == "published" and data["dataset"] == "demo" and data["version"] == "v2"
    assert data["folder"] == str(tmp_path / "out" / "demo" / "v2")
    assert data["seed"] == 1234 and data["total_pairs"] == 30 and data["counts"]["scenario"] == {"S5": 14, "S1": 16}
    assert data["funnel"][2]["rejected"] == {"replay_final_state": 1, "sandbox_infrastructure": 1}
    assert [(g["agent"], g["passed"]) for g in data["gates"]] == [("oracle", True), ("always_act", True),
                                                                  ("always_abstain", True)]
    assert data["refusal"] is None and data["sandbox"] == "local" and data["flow_elapsed_s"] == 41.5
    assert data["ui_url"].endswith("/flow-run/run-1") and data["flow_run_id"] == "run-1"
    assert data["next_commands"][0] == f"abstaingen release verify {tmp_path / 'out' / 'demo' / 'v2'}"
    assert data["elapsed_s"] >= 0
    assert "stray line" in captured.err
    assert all(field.description for field in console.RunSummary.model_fields.values())


def test_a_refused_release_exits_3_with_its_summary_on_stderr(flow_returns,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    flow_returns(refused())
    assert cli.main(["generate"]) == 3
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("release refused: nothing was published")
    assert "reason: oracle paired accuracy 96.7%" in captured.err

    assert cli.main(["generate", "--json", "-q"]) == 3
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == "refused" and data["refusal"] == "oracle paired accuracy 96.7%"
    assert len(data["rejection_samples"]) == 7 and data["rejection_samples"][0]["stage"] == "replay"
    assert data["version"] is None and data["gates"] == [] and data["next_commands"] == []


def test_verbose_and_quiet_go_not_together(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["generate", "-v", "-q"]) == 2
    assert "not allowed with argument" in capsys.readouterr().err


# --- the display while the run goes --------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_off_a_terminal_the_display_prints_a_plain_line_per_finished_stage() -> None:
    stream, clock = io.StringIO(), Clock()
    display = console.LineDisplay(stream, clock)
    with display:
        display.phase("loading the pipeline")  # terminal only
        display.status("starting Prefect's temporary server (about 30 s)")
        clock.now += 31
        display.ready()
        display.update(Progress(stage="capability", done=0, total=2))
        clock.now += 0.5
        display.update(Progress(stage="capability", done=2, total=2, note="2 capability specs"))
        display.update(Progress(stage="validate", done=0, total=32, accepted=0))
        clock.now += 8
        display.update(Progress(stage="validate", done=16, total=32, accepted=16, note="travel"))
        clock.now += 8
        display.update(Progress(stage="validate", done=32, total=32, accepted=32, note="banking"))
        display.update(Progress(stage="validate", done=32, total=32, accepted=32))  # said once
        display.update(Progress(stage="judge", done=0, total=2, accepted=0))
        clock.now += 61
        display.update(Progress(stage="judge", done=1, total=2, accepted=10))  # a minute on: a line

    assert stream.getvalue().splitlines() == [
        f"starting Prefect's temporary server (about 30 s)... ({console.SERVER_TIP})",
        "Prefect's temporary server answered after 31 s",
        "capability: 2/2 seed instructions, 0.5 s",
        "validate: 32/32 candidate pairs, 32 pairs kept, 2.0 pairs/s, 16 s",
        "judge: 1/2 environments so far, 10 pairs kept, 0.2 pairs/s, about 1 min 01 s left",
    ]


def test_off_a_terminal_a_given_server_is_named_once_it_answers() -> None:
    stream = io.StringIO()
    display = console.LineDisplay(stream)
    display.server_url = "http://127.0.0.1:4200/api"
    display.phase("checking the config")
    display.update(Progress(stage="capability", done=0, total=1))
    display.watch_at("http://127.0.0.1:4200/runs/flow-run/1")
    display.watch_at("http://127.0.0.1:4200/runs/flow-run/1")
    assert stream.getvalue().splitlines() == ["using the Prefect server at http://127.0.0.1:4200/api",
                                              "this run in the Prefect UI: http://127.0.0.1:4200/runs/flow-run/1"]


def test_the_display_is_chosen_by_the_stream_and_verbosity(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich would call a log file a terminal; a live display needs a real one
    assert isinstance(console.open_display("normal", io.StringIO()), console.LineDisplay)
    assert isinstance(console.open_display("quiet", io.StringIO()), console.SilentDisplay)

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert isinstance(console.open_display("normal", Terminal()), console.LiveDisplay)
    assert isinstance(console.open_display("verbose", Terminal()), console.LiveDisplay)
    monkeypatch.setenv("TERM", "dumb")
    assert isinstance(console.open_display("normal", Terminal()), console.LineDisplay)


def live(clock: Clock) -> tuple[console.LiveDisplay, io.StringIO]:
    return live_display(clock, console.PAIRS)


def live_display(clock: Clock, product: console.Product) -> tuple[console.LiveDisplay, io.StringIO]:
    stream = io.StringIO()
    return console.LiveDisplay(Console(file=stream, force_terminal=True, width=120), clock, product), stream


def test_on_a_terminal_each_stage_has_a_row_with_counts_pairs_rate_and_time_left() -> None:
    clock = Clock()
    display, _ = live(clock)
    display.update(Progress(stage="validate", done=16, total=64, accepted=16, note="travel"))
    display.update(Progress(stage="capability", done=2, total=2))
    clock.now += 8
    out = Console(file=io.StringIO(), width=120)
    with out.capture() as capture:
        out.print(display.render())
    rows = capture.get().splitlines()

    assert not any("Prefect" in row for row in rows)  # no server was started or named: nothing said of it
    capability, validate = (next(r for r in rows if name in r) for name in ("capability", "validate"))
    assert rows.index(capability) < rows.index(validate)  # in the order of the stages, not of the events
    assert "2/2 seeds" in capability and capability.lstrip().startswith("✓")
    assert "16/64 pairs" in validate and "16 pairs" in validate and "2.0 pairs/s" in validate
    assert "ETA 24s" in validate and "travel" in validate
    narrow = [line.plain for line in display._rows(clock.now, 53)]  # the bar narrows, the rate and note go
    assert all(len(line) <= 53 for line in narrow), narrow
    icon, name, bar, *rest = narrow[1].split()
    assert (name, rest) == ("validate", ["16/64", "pairs", "16", "pairs", "ETA", "24s"])
    assert 10 <= len(bar) < 24 and bar == "━" * round(len(bar) / 4) + "─" * (len(bar) - round(len(bar) / 4))


def test_on_a_terminal_the_display_is_torn_down_and_the_cursor_shown_again() -> None:
    display, stream = live(Clock())
    with display:
        display.update(Progress(stage="capability", done=1, total=2))
    assert not display.live.is_started
    assert stream.getvalue().endswith("\x1b[?25h")  # the cursor, hidden while the display ran

    stopped, stream = live(Clock())
    with stopped:
        stopped.update(Progress(stage="validate", done=1, total=2, accepted=5))
        stopped.abort()  # Ctrl-C: the unfinished stage is marked, the rows stay
    assert not stopped.live.is_started and "✗ validate" in Text.from_ansi(stream.getvalue()).plain

    failed, stream = live(Clock())
    with pytest.raises(RuntimeError), failed:
        raise RuntimeError("bad input before any stage")
    assert not failed.live.is_started and failed.live.transient  # the spinner line is cleared away


def test_an_interrupt_ends_the_display_then_says_one_line(tmp_path: Path) -> None:
    script = tmp_path / "interrupted.py"
    script.write_text(
        "import os, signal, sys, time\n"
        "from rich.console import Console\n"
        "from abstaingen.flows.console import LiveDisplay\n"
        "from abstaingen.interrupts import stop_on_signals\n"
        "from abstaingen.progress import Progress\n"
        "display = LiveDisplay(Console(file=sys.stderr, force_terminal=True, width=100))\n"
        "with display, stop_on_signals(display.abort):\n"
        "    display.update(Progress(stage='validate', done=1, total=2, accepted=5))\n"
        "    time.sleep(0.5)\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    time.sleep(10)\n"
        "print('not reached')\n"
    )
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 130
    assert run.stdout == ""
    before, _, last = run.stderr.rpartition("\x1b[?25h")  # the cursor is shown again, then one line
    assert "validate" in before
    assert last.strip("\r\n") == "abstaingen: interrupted by SIGINT: nothing was published"


# --- Prefect's console chatter -------------------------------------------------------------------


def record(name: str, level: int, message: str) -> logging.LogRecord:
    return logging.LogRecord(name, level, __file__, 1, message, None, None)


def test_the_chatter_filter_holds_back_prefects_info_but_passes_warnings() -> None:
    heard: list[str] = []
    chatter = console.PrefectChatter(on_server_start=lambda: heard.append("server"),
                                     on_flow_run=lambda name: heard.append(name), on_view=heard.append)

    assert not chatter.filter(record("prefect.task_runs", logging.INFO, "Finished in state Completed()"))
    assert not chatter.filter(record("prefect.flow_runs", logging.INFO, "Finished in state Completed()"))
    assert not chatter.filter(record("prefect", logging.INFO, "Starting temporary server on http://127.0.0.1:8317"))
    assert not chatter.filter(record("prefect.flow_runs", logging.INFO,
                                     "Beginning flow run 'serious-barracuda' for flow 'generate-release'"))
    assert not chatter.filter(record("prefect.flow_runs", logging.INFO, "View at http://127.0.0.1:4200/runs/flow-run/1"))
    assert chatter.filter(record("prefect.flow_runs", logging.WARNING, "2 containers could not be removed"))
    assert chatter.filter(record("prefect.task_runs", logging.ERROR, "Task run failed with exception: boom"))
    assert not chatter.filter(record("prefect.flow_runs", logging.ERROR, "Finished in state Failed('release "
                                                                         "refused: oracle paired accuracy 0.0%')"))
    assert chatter.filter(record("httpx", logging.INFO, "not Prefect's"))
    assert heard == ["server", "serious-barracuda", "http://127.0.0.1:4200/runs/flow-run/1"]
    verbose = console.PrefectChatter(hold_back=False)
    assert verbose.filter(record("prefect.task_runs", logging.INFO, "Finished in state Completed()"))


def test_the_chatter_filter_sits_on_prefects_console_handler() -> None:
    handlers = console.prefect_console_handlers()
    assert handlers  # Prefect was imported (by the flow module) and configured its console logging
    undo = console.hush_prefect(console.PrefectChatter())
    try:
        console.hush_prefect(console.PrefectChatter())  # a second command replaces the first's
        for handler in handlers:
            assert sum(isinstance(f, console.PrefectChatter) for f in handler.filters) == 1
            assert not handler.filter(record("prefect.task_runs", logging.INFO, "Finished in state Completed()"))
            assert handler.filter(record("prefect.flow_runs", logging.WARNING, "release refused"))
    finally:
        undo()
        for handler in handlers:
            for chatter in [f for f in handler.filters if isinstance(f, console.PrefectChatter)]:
                handler.removeFilter(chatter)
    assert all(handler.filter(record("prefect.task_runs", logging.INFO, "Finished")) for handler in handlers)


def test_prefects_usage_data_notice_is_off_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    from abstaingen.settings import configure_prefect_defaults

    monkeypatch.setattr(os, "environ", {k: v for k, v in os.environ.items() if k != "DO_NOT_TRACK"})  # restored after
    configure_prefect_defaults()
    assert os.environ["DO_NOT_TRACK"] == "1"  # Prefect's client shows its notice unless DO_NOT_TRACK is set
    os.environ["DO_NOT_TRACK"] = "0"
    configure_prefect_defaults()
    assert os.environ["DO_NOT_TRACK"] == "0"  # the user's choice stands


def test_on_a_terminal_the_wait_for_prefect_shows_the_time_waited_before_the_details() -> None:
    clock = Clock()
    display, _ = live(clock)
    display.status("starting Prefect's temporary server (the first start in a new PREFECT_HOME takes about a minute)")
    clock.now += 12
    display.console.width = 60
    out = Console(file=io.StringIO(), width=60)
    with out.capture() as capture:
        out.print(display.render())
    first, tip = capture.get().splitlines()
    assert first[2:].startswith("starting Prefect's temporary server... 12 s (the first") and len(first) <= 60
    assert tip.startswith("  a server kept running skips this wait")
    display.ready()
    with out.capture() as capture:
        out.print(display.render())
    assert capture.get().splitlines() == ["✓ Prefect's temporary server answered after 12 s"]
