"""Start-up cost: how long before a generate run's first stage starts.

Measures, a few times each:
- `abstaingen --help` (the CLI's own imports);
- importing the flow module (Prefect and the pipeline);
- from `abstaingen generate` starting to its flow run beginning (the "Beginning flow run" log line):
  with Prefect's temporary server in a new PREFECT_HOME (what every new working folder paid when the
  home was per folder), in a reused home (one per user, the default now), and against a running
  server (`abstaingen ui`, PREFECT_API_URL).

    python benchmarks/startup.py [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from abstaingen.flows.ui import start_server


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update(PREFECT_SERVER_ANALYTICS_ENABLED="false", DO_NOT_TRACK="1", **extra)
    return env


def timed(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, env=env, check=True, capture_output=True, stdin=subprocess.DEVNULL)
    return time.perf_counter() - started


def until_flow_begins(env: dict[str, str], workdir: Path) -> float:
    """Seconds from the command's start to the flow run's first log line; the run is then stopped."""
    started = time.perf_counter()
    run = subprocess.Popen([sys.executable, "-m", "abstaingen", "generate", "--domains", "travel", "--sandbox", "local",
                            "--output", str(workdir / "out"), "-v"], env=env, cwd=workdir, text=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                           start_new_session=True)
    assert run.stderr is not None
    for line in run.stderr:
        if "Beginning flow run" in line:
            elapsed = time.perf_counter() - started
            break
    else:
        raise RuntimeError("the run ended before its flow began")
    run.terminate()
    run.wait()
    return elapsed


def summary(name: str, values: list[float]) -> str:
    return f"{name:<46} median {statistics.median(values):6.2f} s  (runs: {', '.join(f'{v:.2f}' for v in values)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        home = root / "home"
        env = clean_env(PREFECT_HOME=str(home))
        print(summary("abstaingen --help", [timed([sys.executable, "-m", "abstaingen", "--help"], env)
                                            for _ in range(runs)]))
        print(summary("import abstaingen.flows.generate", [
            timed([sys.executable, "-c", "import abstaingen.flows.generate"], env) for _ in range(runs)]))
        fresh = [until_flow_begins(clean_env(PREFECT_HOME=str(root / f"fresh-{n}")), root) for n in range(runs)]
        print(summary("to the flow: temporary server, new home", fresh))
        until_flow_begins(env, root)  # the shared home's database is built once
        print(summary("to the flow: temporary server, reused home", [until_flow_begins(env, root)
                                                                      for _ in range(runs)]))
        with start_server("127.0.0.1", 4391, root / "server-home") as server:
            server.wait_until_healthy()
            served = clean_env(PREFECT_HOME=str(root / "server-home"), PREFECT_API_URL=server.api_url)
            print(summary("to the flow: running server (abstaingen ui)", [until_flow_begins(served, root)
                                                                          for _ in range(runs)]))
    print(f"machine: {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
