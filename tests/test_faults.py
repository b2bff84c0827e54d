"""Infrastructure faults during a real `abstaingen generate`: a sandbox killed from outside, and a
signal to the whole process group. Neither may change what gets published: the killed sandbox's
work is retried, and a signalled run publishes nothing and leaves nothing running."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from sandbox_backends import BWRAP, DOCKER

from abstaingen.sandboxes.backends import OWNER_LABEL
from abstaingen.store import load_release

pytestmark = pytest.mark.flow

DATASET = "abstaingen-builtin"


def start(workdir: Path, prefect_home: Path, backend: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env["PREFECT_HOME"] = str(prefect_home)
    return subprocess.Popen(
        [sys.executable, "-m", "abstaingen", "generate", "--domains", "travel", "--sandbox", backend,
         "--output", str(workdir / "artifacts")],
        cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
        start_new_session=True,  # its own process group, as a shell gives a command
    )


def left_in(dataset: Path) -> list[Path]:
    """What a run left in its dataset folder, but the lock file (it stays, and holds no lock once its
    process is gone) and the checkpoints a rerun resumes from (abstaingen.checkpoints)."""
    return [p for p in dataset.iterdir() if p.name not in (".run.lock", ".checkpoints")] if dataset.exists() else []


def descendants(root: int) -> list[tuple[int, str]]:
    """(pid, command line) of every process below `root`."""
    children: dict[int, list[int]] = {}
    commands: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit():
                stat = (entry / "stat").read_text()
                children.setdefault(int(stat[stat.rindex(")") + 2:].split()[1]), []).append(int(entry.name))
                commands[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
    found, frontier = [], [root]
    while frontier:
        for child in children.get(frontier.pop(), []):
            found.append((child, commands.get(child, "")))
            frontier.append(child)
    return found


def sandboxes_of(run: subprocess.Popen[str], backend: str) -> list[str]:
    """The live sandboxes of a run: runtime servers below it, or its containers."""
    if backend == "docker":
        import docker

        containers = docker.from_env().containers.list(filters={"label": f"{OWNER_LABEL}={run.pid}"})
        return [c.id for c in containers]
    return [str(pid) for pid, command in descendants(run.pid) if "runtime_server.py" in command
            and "confine.py" not in command and not command.startswith("bwrap")]


def wait_for_sandbox(run: subprocess.Popen[str], backend: str, timeout_s: float = 120) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and run.poll() is None:
        if found := sandboxes_of(run, backend):
            return found[0]
        time.sleep(0.05)
    raise AssertionError(f"no sandbox of the run appeared; stderr: {run.stderr.read() if run.stderr else ''}")


def scratch_of(run: subprocess.Popen[str]) -> list[Path]:
    """Temporary folders the run made (bundles for its sandboxes, its seeds) and left behind."""
    return list(Path(tempfile.gettempdir()).glob(f"abstaingen-{run.pid}-*"))


def alive(pid: int) -> bool:
    """Running, or stopped: not gone and not a zombie waiting for init to reap it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def kill_sandbox(backend: str, sandbox: str) -> None:
    if backend == "docker":
        import docker

        docker.from_env().containers.get(sandbox).kill()
    else:
        os.kill(int(sandbox), signal.SIGKILL)


@pytest.fixture(scope="module")
def prefect_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("prefect-home")


@pytest.fixture(scope="module")
def undisturbed(tmp_path_factory: pytest.TempPathFactory, prefect_home: Path) -> int:
    """How many pairs the run publishes when nothing goes wrong."""
    workdir = tmp_path_factory.mktemp("undisturbed")
    run = start(workdir, prefect_home, "local")
    _, stderr = run.communicate(timeout=600)
    assert run.returncode == 0, stderr[-3000:]
    manifest, _ = load_release(workdir / "artifacts" / DATASET / "v1")
    return manifest.total_pairs


@pytest.mark.parametrize("backend", [BWRAP, DOCKER])
def test_a_sandbox_killed_mid_run_is_replaced_and_the_release_keeps_every_pair(
        backend: str, tmp_path: Path, prefect_home: Path, undisturbed: int) -> None:
    run = start(tmp_path, prefect_home, backend)
    killed: list[str] = []

    def killer() -> None:
        sandbox = wait_for_sandbox(run, backend)
        # into its work (the environment checks or the first pairs), and well before it ends: at 1.5 s a
        # fast run had sometimes finished the environment's work, and nothing was left to retry
        time.sleep(0.3)
        kill_sandbox(backend, sandbox)
        killed.append(sandbox)

    thread = threading.Thread(target=killer)
    thread.start()
    _, stderr = run.communicate(timeout=600)
    thread.join()
    assert killed, "the test did not kill a sandbox"
    assert run.returncode == 0, stderr[-3000:]
    manifest, pairs = load_release(tmp_path / "artifacts" / DATASET / "v1")
    assert manifest.total_pairs == len(pairs) == undisturbed
    assert sum(stage.retried for stage in manifest.funnel) >= 1
    assert not any("infrastructure" in reason for stage in manifest.funnel for reason in stage.rejected)
    assert manifest.warnings == []


@pytest.mark.parametrize(("signum", "backend"), [
    pytest.param(signal.SIGTERM, "bwrap", marks=BWRAP.marks, id="SIGTERM-bwrap"),
    pytest.param(signal.SIGTERM, "docker", marks=DOCKER.marks, id="SIGTERM-docker"),
    pytest.param(signal.SIGINT, "local", id="SIGINT-local"),  # Ctrl-C in a terminal
])
def test_a_signal_to_the_process_group_stops_the_run_and_publishes_nothing(
        signum: signal.Signals, backend: str, tmp_path: Path, prefect_home: Path) -> None:
    run = start(tmp_path, prefect_home, backend)
    wait_for_sandbox(run, backend)
    time.sleep(1.0)
    running = descendants(run.pid)  # sandboxes, launchers, Prefect's server
    signalled = time.monotonic()
    os.killpg(run.pid, signum)
    _, stderr = run.communicate(timeout=60)
    stopped_after = time.monotonic() - signalled

    assert run.returncode == 128 + signum, stderr[-3000:]
    assert stopped_after < 15, f"took {stopped_after:.1f} s"
    assert stderr.strip().splitlines()[-1] == f"abstaingen: interrupted by {signum.name}: nothing was published"
    dataset = tmp_path / "artifacts" / DATASET
    assert left_in(dataset) == []  # no version, no staging folder
    time.sleep(0.5)
    assert [(pid, command) for pid, command in running if alive(pid)] == []
    assert scratch_of(run) == []
    if backend == "docker":
        import docker

        assert docker.from_env().containers.list(all=True, filters={"label": f"{OWNER_LABEL}={run.pid}"}) == []


def test_a_run_whose_prefect_api_dies_publishes_nothing(tmp_path: Path, prefect_home: Path) -> None:
    run = start(tmp_path, prefect_home, "local")
    wait_for_sandbox(run, "local")
    [server] = [pid for pid, command in descendants(run.pid) if "uvicorn" in command and "prefect" in command]
    os.kill(server, signal.SIGKILL)
    _, stderr = run.communicate(timeout=120)

    assert run.returncode == 1, stderr[-3000:]
    last = stderr.strip().splitlines()[-1]
    assert last == "abstaingen: error: the Prefect API stopped answering during the run: nothing was published"
    dataset = tmp_path / "artifacts" / DATASET
    assert left_in(dataset) == []
    assert scratch_of(run) == []


@pytest.mark.parametrize("backend", [DOCKER])
def test_a_container_that_cannot_be_removed_does_not_end_the_run(backend: str,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import requests
    from builtin_fixtures import builtin_bundle, builtin_pair

    from abstaingen.model import Scenario
    from abstaingen.sandboxes import docker_transport
    from abstaingen.sandboxes.backends import get_backend
    from abstaingen.validators.validate import validate_pairs

    really_remove = docker_transport.remove_now
    refusals: list[str] = []

    def slow_engine(container: object) -> None:
        if not refusals:  # the first removal times out, as with a 30 MB state on a busy engine
            refusals.append(str(container))
            raise requests.exceptions.ReadTimeout("the engine did not answer in time")
        really_remove(container)

    monkeypatch.setattr(docker_transport, "remove_now", slow_engine)
    left_before = len(docker_transport.LEFTOVERS)
    batch = validate_pairs(builtin_bundle("travel"), [builtin_pair(Scenario.S1)], get_backend(backend))
    assert len(batch.accepted) == 1 and refusals
    assert len(docker_transport.LEFTOVERS) == left_before + 1 and "ReadTimeout" in docker_transport.LEFTOVERS[-1]

    import docker

    engine = docker.from_env()
    deadline = time.monotonic() + 20
    while engine.containers.list(all=True, filters={"label": f"{OWNER_LABEL}={os.getpid()}"}):
        assert time.monotonic() < deadline, "the container was not removed in the background"
        time.sleep(0.5)
