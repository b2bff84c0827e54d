"""Operations, on CLI runs reporting to one Prefect server: scheduled regeneration (each run then evaluated),
resume after SIGKILL, and one run of a dataset at a time (the states, task runs and artifacts a run leaves in
Prefect are test_flows.py's).

The scheduler is started first (module fixture) and checked last, so its ticks (30 s apart) pass while
the other tests run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from prefect_runs import FOREGROUND, abstaingen, artifacts_of, flow_env, flow_runs, process_states
from releases import published_pairs

from abstaingen.checkpoints import DatasetLock
from abstaingen.model import EnvironmentBundle, TaskPair
from abstaingen.pipelines.pairs import assemble, missing_coverage

pytestmark = pytest.mark.flow

# three domains validated one at a time, so that a run can be killed between environments
CONFIG = '[generation]\ndomains = ["travel", "banking", "email"]\nvariants_per_scenario = 1\n' \
         '[sandbox]\nbackend = "local"\nconcurrency = 1\n'
DATASET = "abstaingen-builtin"
SCHEDULE_LOG = "schedule.log"


@pytest.fixture(scope="module")
def scheduler(prefect_api: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    workdir = tmp_path_factory.mktemp("scheduled")
    # Its output goes to a file: a pipe nobody reads until the end fills up over the module's runs, and
    # a scheduler blocked writing to it can neither run on nor stop.
    with (workdir / SCHEDULE_LOG).open("w") as log:
        process = subprocess.Popen(
            [*FOREGROUND, "-m", "abstaingen", "schedule", "--every", "30", "--domains", "travel",
             "--sandbox", "local", "--output", "out", "--evaluate", "abstaingen/oracle", "--evaluate-sample", "2"],
            cwd=workdir, env=flow_env(prefect_api), stdin=subprocess.DEVNULL, stdout=log,
            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    yield process, workdir
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@pytest.fixture(scope="module")
def uninterrupted(prefect_api: str, tmp_path_factory: pytest.TempPathFactory,
                  scheduler: tuple[subprocess.Popen[str], Path]) -> Path:
    """A release made in one go, seed 5 (the scheduler fixture is named so that it starts first)."""
    workdir = tmp_path_factory.mktemp("uninterrupted")
    (workdir / "config.toml").write_text(CONFIG)
    run = abstaingen(prefect_api, workdir, "generate", "--config", "config.toml", "--seed", "5", "--output", "out")
    assert run.returncode == 0, run.stderr[-3000:]
    return workdir


def test_a_run_killed_mid_validation_resumes_to_the_same_pairs(prefect_api: str, uninterrupted: Path,
                                                                tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(CONFIG)
    command = [sys.executable, "-m", "abstaingen", "generate", "--config", "config.toml", "--seed", "5", "--output",
               "out", "-v"]
    killed = subprocess.Popen(command, cwd=tmp_path, env=flow_env(prefect_api), stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    checkpoints = tmp_path / "out" / DATASET / ".checkpoints"
    deadline = time.monotonic() + 300
    while not list(checkpoints.glob("*/validate-*.json")):
        assert killed.poll() is None, "the run ended before it could be killed"
        assert time.monotonic() < deadline, "no environment was validated within 300 s"
        time.sleep(0.2)
    os.killpg(killed.pid, signal.SIGKILL)  # the run, its sandboxes, all of it, with no chance to clean up
    killed.wait()
    done_before = len(list(checkpoints.glob("*/validate-*.json")))
    assert 1 <= done_before < 3 and not (tmp_path / "out" / DATASET / "v1").exists()

    resumed = subprocess.run(command, cwd=tmp_path, env=flow_env(prefect_api), capture_output=True, text=True,
                             timeout=600, stdin=subprocess.DEVNULL)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    # the environments validated before the kill were not validated again
    log = resumed.stdout + resumed.stderr
    assert log.count("validated by an earlier, interrupted run") == done_before, log[-3000:]
    assert log.count("candidate pairs in the local sandbox") == 3 - done_before
    assert published_pairs(tmp_path / "out" / DATASET / "v1") == published_pairs(uninterrupted / "out" / DATASET / "v1")
    assert not checkpoints.exists() or not any(checkpoints.iterdir())  # cleared once published


def test_one_run_of_a_dataset_at_a_time(tmp_path: Path) -> None:
    first, second = DatasetLock(tmp_path), DatasetLock(tmp_path)
    assert first.try_acquire()
    assert not second.try_acquire()
    assert first.holder() == str(os.getpid())
    first.release()
    assert second.try_acquire()
    second.release()
    # a holder that is killed leaves no stale lock behind
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from pathlib import Path; "
                               "from abstaingen.checkpoints import DatasetLock; "
                               "assert DatasetLock(Path(sys.argv[1])).try_acquire(); print('held', flush=True); "
                               "time.sleep(60)", str(tmp_path)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    assert not first.try_acquire()
    holder.kill()
    holder.wait()
    assert first.try_acquire()
    first.release()


@pytest.mark.e2e
def test_the_schedule_makes_two_fresh_releases_unattended(prefect_api: str,
                                                          scheduler: tuple[subprocess.Popen[str], Path]) -> None:
    process, workdir = scheduler
    dataset = workdir / "out" / DATASET
    deadline = time.monotonic() + 420  # two ticks 30 s apart and their runs, with a loaded machine's slack
    while not (dataset / "v2" / "manifest.json").exists():
        assert process.poll() is None, (workdir / SCHEDULE_LOG).read_text()[-3000:]
        assert time.monotonic() < deadline, "the schedule did not publish two releases within 7 minutes"
        time.sleep(2)
    first, second = (json.loads((dataset / v / "manifest.json").read_text()) for v in ("v1", "v2"))
    assert first["seed"] != second["seed"] and second["checked_against"] == ["v1"]
    assert not set(json.loads(line)["pair_id"] for line in (dataset / "v1" / "pairs.jsonl").read_text().splitlines()) \
        & set(json.loads(line)["pair_id"] for line in (dataset / "v2" / "pairs.jsonl").read_text().splitlines())
    # the run reports Completed after its artifacts, a few seconds after v2's folder appears
    deadline = time.monotonic() + 120
    while len(runs := [r for r in flow_runs(prefect_api, "scheduled") if r["state_type"] == "COMPLETED"]) < 2:
        assert time.monotonic() < deadline, f"{len(runs)} scheduled runs Completed 2 minutes after v2 was published"
        time.sleep(2)
    assert all(r["deployment_id"] for r in runs)
    # each run evaluated the release it published (--evaluate abstaingen/oracle --evaluate-sample 2)
    for version in ("v1", "v2"):
        report = json.loads((workdir / "out" / "evals" / f"{DATASET}-{version}" / "abstaingen_oracle" /
                             "report.json").read_text())
        assert report["samples"] == 4 and report["headline"]["paired"]["value"] == 1.0
    assert all(any(k.startswith("eval-") for k in artifacts_of(prefect_api, r["id"])) for r in runs)
    process.send_signal(signal.SIGINT)  # Ctrl-C: the scheduler stops, with its server
    try:
        assert process.wait(timeout=60) == 0
    except subprocess.TimeoutExpired:
        pytest.fail(f"abstaingen schedule has not exited 60 s after Ctrl-C:\n{process_states(process.pid)}")
    assert "abstaingen: schedule stopped" in (workdir / SCHEDULE_LOG).read_text()


def test_two_runs_of_one_dataset_at_once_publish_two_versions_that_do_not_repeat_each_other(
        prefect_api: str, tmp_path: Path) -> None:
    """Two runs of one dataset wait while another run holds its lock (here the test, so that they meet it
    on any machine), then take it in turn: v1 and v2, and the later checked its pairs against v1."""
    dataset = tmp_path / "out" / DATASET
    held = DatasetLock(dataset)
    assert held.try_acquire()
    command = [sys.executable, "-m", "abstaingen", "generate", "--domains", "travel", "--sandbox", "local",
               "--output", "out", "-v"]
    logs = [tmp_path / f"run-{seed}.log" for seed in ("21", "22")]
    runs = []
    for log in logs:
        with log.open("w") as sink:
            runs.append(subprocess.Popen([*command, "--seed", log.stem.removeprefix("run-")], cwd=tmp_path,
                                         env=flow_env(prefect_api), stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=sink))
    try:
        deadline = time.monotonic() + 300
        while not all("waiting for it to finish" in log.read_text() for log in logs):
            assert all(run.poll() is None for run in runs), [log.read_text()[-2000:] for log in logs]
            assert time.monotonic() < deadline, "the runs did not wait for the held lock within 5 minutes"
            time.sleep(1)
        assert not (dataset / "v1").exists()  # nothing is published while another run holds the lock
        held.release()
        codes = [run.wait(timeout=600) for run in runs]
    finally:
        held.release()
        for run in runs:
            run.kill()
    assert codes == [0, 0], [log.read_text()[-2000:] for log in logs]
    first, second = (json.loads((dataset / v / "manifest.json").read_text()) for v in ("v1", "v2"))
    assert {first["seed"], second["seed"]} == {21, 22} and second["checked_against"] == ["v1"]


def test_a_release_missing_a_domain_or_scenario_it_was_asked_for_is_refused_unless_allowed(
        make_pair: Callable[..., TaskPair], tiny_bundle: EnvironmentBundle) -> None:
    kept = [make_pair(1)]  # travel, S5
    assert missing_coverage(kept, ["travel", "banking"], ["S5", "S3"]) == ["domain banking", "scenario S3"]
    refused = assemble(kept, [tiny_bundle], expected_domains=["travel", "banking"], expected_scenarios=["S5", "S3"])
    assert refused.refusal is not None and "no pair of domain banking, scenario S3 was kept" in refused.refusal
    allowed = assemble(kept, [tiny_bundle], expected_domains=["travel", "banking"], expected_scenarios=["S5", "S3"],
                       allow_incomplete=True)
    assert "no pair of" not in (allowed.refusal or "")
    assert "published without domain banking, scenario S3: no pair of them was kept" in allowed.warnings


def test_the_run_lock_never_follows_a_link(tmp_path: Path) -> None:
    """A link named .run.lock in a shared output folder must not get its target truncated."""
    from abstaingen.checkpoints import LOCK_FILE
    from abstaingen.errors import AbstaingenError

    target = tmp_path / "precious.txt"
    target.write_text("keep me\n")
    (tmp_path / LOCK_FILE).symlink_to(target)
    with pytest.raises(AbstaingenError, match="run lock"):
        DatasetLock(tmp_path).try_acquire()
    assert target.read_text() == "keep me\n"


def test_an_edited_checkpoint_is_not_read(tmp_path: Path) -> None:
    """A checkpoint someone changed, or one of another code version, is redone, not published."""
    from abstaingen.checkpoints import Checkpoints
    from abstaingen.model import CheckResult

    saved = Checkpoints.for_run(tmp_path, "f" * 64, "1.0+abc")
    saved.save("validate", "env-1", CheckResult(name="replay", passed=True, detail="an instruction"))
    assert saved.load("validate", "env-1", CheckResult) == CheckResult(name="replay", passed=True, detail="an instruction")
    assert Checkpoints.for_run(tmp_path, "f" * 64, "1.1+def").load("validate", "env-1", CheckResult) is None

    path = saved.folder / "validate-env-1.json"
    path.write_bytes(path.read_bytes().replace(b"an instruction", b"POISONED: transfer the balance"))
    assert saved.load("validate", "env-1", CheckResult) is None


def test_what_a_killed_run_left_is_cleaned_up_by_the_next(tmp_path: Path) -> None:
    """A run killed with SIGKILL leaves Prefect's temporary server serving and its scratch folders; the
    next run ends and removes them, by the owner label they carry, and leaves a live run's alone."""
    import shutil
    import tempfile

    from abstaingen.flows.shell import clean_up_after_dead_runs
    from abstaingen.sandboxes.backends import RUN_OWNER_ENV, process_start

    dead_run = subprocess.run([sys.executable, "-c", "import os; from abstaingen.sandboxes.backends import "
                               "process_start; print(os.getpid(), process_start())"], capture_output=True, text=True)
    dead_pid, dead_start = dead_run.stdout.split()
    dead_label = f"{dead_pid}:{dead_start}"  # the label a run made of itself; it has ended since
    live_label = f"{os.getpid()}:{process_start()}"
    sleeper = [sys.executable, "-c", "import time; time.sleep(120)"]
    orphan = subprocess.Popen(sleeper, env={**os.environ, RUN_OWNER_ENV: dead_label})
    kept = subprocess.Popen(sleeper, env={**os.environ, RUN_OWNER_ENV: live_label})
    dead_scratch = Path(tempfile.mkdtemp(prefix=f"abstaingen-{dead_pid}-env-"))
    live_scratch = Path(tempfile.mkdtemp(prefix=f"abstaingen-{os.getpid()}-env-"))
    try:
        clean_up_after_dead_runs()
        assert orphan.wait(timeout=30) == -signal.SIGTERM
        assert kept.poll() is None
        assert not dead_scratch.exists() and live_scratch.exists()
    finally:
        for process in (orphan, kept):
            process.kill()
            process.wait()
        shutil.rmtree(live_scratch, ignore_errors=True)
        shutil.rmtree(dead_scratch, ignore_errors=True)
