"""`abstaingen ui`: a real generate reports to the server it starts, and the pages a person opens show
the run's task runs and artifacts, as headless Chromium renders them (the UI is a single-page app:
only a browser running its JavaScript puts them in the page).

Screenshots go to $ABSTAINGEN_TEST_OUTPUT (default: test-output/ at the repository root). Without
Chromium the browser test is skipped, unless ABSTAINGEN_REQUIRE_BROWSER is set (CI sets it).
"""

from __future__ import annotations

import contextlib
import html
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from prefect_runs import FOREGROUND, process_states

from abstaingen.flows.artifacts import PAIRS_ARTIFACTS, ArtifactKeys
from abstaingen.flows.ui import PrefectServer, start_server

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[1]
# The pages the lead's flow must show once its task runs and artifacts are renamed.
TASK_RUNS_SHOWN = ["validate travel"]
KEY = ArtifactKeys(dataset="abstaingen-builtin", names=PAIRS_ARTIFACTS)
ARTIFACTS_SHOWN = [KEY("stage-funnel"), KEY("release-summary")]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def output_folder() -> Path:
    folder = Path(os.environ.get("ABSTAINGEN_TEST_OUTPUT") or ROOT / "test-output")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def chromium_or_skip() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("ABSTAINGEN_REQUIRE_BROWSER"):
            pytest.fail("ABSTAINGEN_REQUIRE_BROWSER is set but chromium is not installed (apt-get install chromium)")
        pytest.skip("chromium is not installed (set ABSTAINGEN_REQUIRE_BROWSER to make this a failure)")
    return found


def run_chromium(chromium: str, profile: Path, budget_ms: int, *flags: str) -> str:
    """One headless Chromium run in its own process group, all of which is ended if it outlasts its time."""
    browser = subprocess.Popen(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
         f"--virtual-time-budget={budget_ms}", "--window-size=1400,1000", *flags],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True,
        start_new_session=True,
    )
    try:
        return browser.communicate(timeout=180)[0]
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(browser.pid, signal.SIGKILL)
        browser.wait()


def visible_text(dom: str) -> str:
    """The page's text, as a reader sees it: no scripts or styles, tags gone, whitespace collapsed."""
    text = re.sub(r"<(script|style)\b.*?</\1>", " ", dom, flags=re.S | re.I)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", text)).split())


def render(chromium: str, profile: Path, url: str, expected: list[str], shot: Path) -> str:
    """The text of `url` once it shows every `expected` string (or after the longest wait), and its screenshot."""
    for budget_ms in (15_000, 30_000, 60_000):
        dom = run_chromium(chromium, profile, budget_ms, "--dump-dom", url)
        text = visible_text(dom)
        if all(item in text for item in expected):
            break
    shot.with_suffix(".html").write_text(dom, encoding="utf-8")  # what was asserted on, beside the picture
    shot.unlink(missing_ok=True)
    run_chromium(chromium, profile, budget_ms, f"--screenshot={shot}", url)
    assert shot.is_file() and shot.stat().st_size > 10_000, f"no screenshot of {url}"
    return text


def api(server: PrefectServer, path: str, body: dict) -> list[dict]:
    response = httpx.post(f"{server.api_url}{path}", json=body, timeout=30)
    response.raise_for_status()
    return response.json()


@pytest.fixture(scope="module")
def prefect_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One PREFECT_HOME for the module: its database is built (migrated) once, by the first server."""
    return tmp_path_factory.mktemp("prefect-home")


@pytest.fixture
def chromium() -> str:
    return chromium_or_skip()


@pytest.fixture
def server(prefect_home: Path):
    with start_server(port=free_port(), home=prefect_home) as started:
        started.wait_until_healthy()
        yield started
    assert started.process.poll() is not None


def test_a_generate_shows_its_task_runs_and_artifacts_in_the_ui(chromium: str, server: PrefectServer, tmp_path: Path,
                                                               prefect_home: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update(PREFECT_HOME=str(prefect_home), PREFECT_API_URL=server.api_url,
               PREFECT_SERVER_ANALYTICS_ENABLED="false", DO_NOT_TRACK="1")
    run = subprocess.run(
        [sys.executable, "-m", "abstaingen", "generate", "--domains", "travel", "--sandbox", "local", "--seed", "7",
         "--output", str(tmp_path / "artifacts")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 0, run.stderr[-3000:]

    # The run reported to this server (not to a temporary one of its own): it is in this server's database.
    flow_runs = api(server, "/flow_runs/filter", {"flows": {"name": {"any_": ["generate-release"]}}})
    assert [r["state_type"] for r in flow_runs] == ["COMPLETED"]
    flow_run = flow_runs[0]
    task_runs = api(server, "/task_runs/filter", {"flow_runs": {"id": {"any_": [flow_run["id"]]}}})
    artifacts = api(server, "/artifacts/filter", {"artifacts": {"flow_run_id": {"any_": [flow_run["id"]]}}})
    known = f"task runs {sorted(r['name'] for r in task_runs)}, artifacts {sorted(a['key'] for a in artifacts)}"

    # Prefect's default UI (v2) honours ?tab= on a flow run's page; the v1 pages fall back to Logs.
    page = f"{server.url}/v2/runs/flow-run/{flow_run['id']}"
    folder, profile = output_folder(), tmp_path / "chromium-profile"
    shots = [folder / "ui-flow-run-task-runs.png", folder / "ui-flow-run-artifacts.png",
             folder / "ui-artifact-stage-funnel.png"]
    task_runs_text = render(chromium, profile, f"{page}?tab=TaskRuns", TASK_RUNS_SHOWN, shots[0])
    artifacts_text = render(chromium, profile, f"{page}?tab=Artifacts", ARTIFACTS_SHOWN, shots[1])
    funnel = next((a for a in artifacts if a["key"] == KEY("stage-funnel")), None)
    funnel_text = render(chromium, profile, f"{server.url}/v2/artifacts/artifact/{funnel['id']}",
                         ["stage", "received", "passed"], shots[2]) if funnel else ""
    with capsys.disabled():
        print("\nUI screenshots:", *shots, sep="\n  ")

    assert flow_run["name"] in task_runs_text, f"the flow run's page did not render ({shots[0]})"
    assert f"{len(task_runs)} Task runs" in task_runs_text, f"{known}; page: {task_runs_text[:1500]}"
    for name in TASK_RUNS_SHOWN:
        assert name in task_runs_text, f"task run {name!r} not on the Task Runs tab ({shots[0]}); {known}"
    for key in ARTIFACTS_SHOWN:
        assert key in artifacts_text, f"artifact {key!r} not on the Artifacts tab ({shots[1]}); {known}"
    # The artifact's own page renders its table, not only its key: the funnel's columns.
    assert funnel is not None, known
    assert all(column in funnel_text for column in ("received", "passed", "rejected")), funnel_text[:1500]


def start_cli(port: int, home: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env["PREFECT_HOME"] = str(home)
    return subprocess.Popen([*FOREGROUND, "-m", "abstaingen", "ui", "--port", str(port)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
                            start_new_session=True)  # its own process group, as a terminal gives a command


def descendants(root: int) -> list[int]:
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError, ValueError):
            if entry.name.isdigit():
                stat = (entry / "stat").read_text()
                parents.setdefault(int(stat[stat.rindex(")") + 2:].split()[1]), []).append(int(entry.name))
    found, frontier = [], [root]
    while frontier:
        children = parents.get(frontier.pop(), [])
        found += children
        frontier += children
    return found


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_ui_command_serves_until_ctrl_c_then_stops_everything(prefect_home: Path) -> None:
    port = free_port()
    ui = start_cli(port, prefect_home)
    try:
        assert ui.stdout is not None
        line = ui.stdout.readline()  # printed once the server answers /api/health
        assert f"http://127.0.0.1:{port}" in line and f"export PREFECT_API_URL=http://127.0.0.1:{port}/api" in line, \
            (line, ui.stderr.read() if ui.poll() is not None and ui.stderr else "")
        assert httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=10).json() is True
        assert (prefect_home / "prefect.db").is_file()  # the server's database is in the PREFECT_HOME it was given
        assert (prefect_home / "ui-server.log").is_file()
        below = descendants(ui.pid)
        assert below, "the server is not a child of abstaingen ui"
        started = time.monotonic()
        os.killpg(ui.pid, signal.SIGINT)  # Ctrl-C: the terminal signals the foreground process group
        try:
            out, err = ui.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail(f"abstaingen ui has not exited 60 s after Ctrl-C:\n{process_states(ui.pid)}\n"
                        f"{(prefect_home / 'ui-server.log').read_text()[-3000:]}")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(ui.pid, signal.SIGKILL)
    assert ui.returncode == 0, err
    assert out.strip() == "abstaingen: Prefect server stopped", out
    assert "Traceback" not in err and err.strip() == "", err
    assert time.monotonic() - started < 30
    assert [pid for pid in below if alive(pid)] == []
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=5)


def test_ui_on_a_port_in_use_is_one_error_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        ui = start_cli(taken.getsockname()[1], tmp_path / "prefect-home")
        out, err = ui.communicate(timeout=60)
    assert ui.returncode == 2, (out, err)
    assert err.startswith("abstaingen: error: cannot serve on 127.0.0.1:") and "--port" in err, err
    assert len(err.strip().splitlines()) == 1 and out == "", (out, err)
