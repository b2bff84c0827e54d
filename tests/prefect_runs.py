"""CLI runs that report to the test session's Prefect server (conftest.prefect_api), and what that
server says about them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

# A command as a terminal starts it in the foreground: Ctrl-C (SIGINT) at its default, whatever this
# test session inherited (a suite started in the background, `cmd &` or nohup, ignores SIGINT, and an
# ignored signal stays ignored across exec). Prefix it to the command line of a process a test stops with
# Ctrl-C.
FOREGROUND = [sys.executable, "-c", "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
              "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"]


def flow_env(api_url: str | None = None, **extra: str) -> dict[str, str]:
    """The environment of a run reporting to `api_url`, by default the session's server (a test using
    this default asks for the prefect_api fixture)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update(PREFECT_API_URL=api_url or os.environ["ABSTAINGEN_TEST_PREFECT_API"], PREFECT_SERVER_ANALYTICS_ENABLED="false", DO_NOT_TRACK="1", **extra)
    return env


def abstaingen(api_url: str, cwd: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "abstaingen", *args], cwd=cwd, env=flow_env(api_url),
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def flow_runs(api_url: str, tag: str) -> list[dict[str, Any]]:
    """Flow runs carrying `tag` that have started, newest first, as the API returns them (an interval
    schedule keeps dozens of future runs that would fill the page)."""
    body = {"flow_runs": {"tags": {"all_": [tag]}, "state": {"type": {"not_any_": ["SCHEDULED", "PENDING"]}}},
            "sort": "START_TIME_DESC", "limit": 50}
    return list(httpx.post(f"{api_url}/flow_runs/filter", json=body, timeout=30).raise_for_status().json())


def artifacts_of(api_url: str, flow_run_id: str) -> dict[str, dict[str, Any]]:
    body = {"artifacts": {"flow_run_id": {"any_": [flow_run_id]}}, "limit": 200}
    found = httpx.post(f"{api_url}/artifacts/filter", json=body, timeout=30).raise_for_status().json()
    return {a["key"]: a for a in found if a.get("key")}


def artifacts_in_order(api_url: str, flow_run_id: str) -> list[dict[str, Any]]:
    """A flow run's artifacts with a key, in the order they were made."""
    body = {"artifacts": {"flow_run_id": {"any_": [flow_run_id]}}, "limit": 200}
    found = httpx.post(f"{api_url}/artifacts/filter", json=body, timeout=30).raise_for_status().json()
    return sorted((a for a in found if a.get("key")), key=lambda a: a["created"])


def logs_of(api_url: str, flow_run_id: str) -> list[dict[str, Any]]:
    """Every log line of a flow run and its task runs that reached the API, oldest first (flush Prefect's log
    handler first: it sends in batches)."""
    body = {"logs": {"flow_run_id": {"any_": [flow_run_id]}}, "sort": "TIMESTAMP_ASC", "limit": 200}
    found: list[dict[str, Any]] = []
    while page := httpx.post(f"{api_url}/logs/filter", json={**body, "offset": len(found)},
                             timeout=30).raise_for_status().json():
        found += page
    return found


def task_run_names(api_url: str, flow_run_id: str) -> list[str]:
    body = {"task_runs": {"flow_run_id": {"any_": [flow_run_id]}}, "limit": 200}
    return [t["name"] for t in httpx.post(f"{api_url}/task_runs/filter", json=body, timeout=30).raise_for_status().json()]


def process_states(root: int) -> str:
    """`ps` lines of `root` and every process below it (state, kernel wait channel, age): what a test
    shows when a process it signalled has not exited in time."""
    table = subprocess.run(["ps", "-eo", "pid,ppid,pgid,stat,wchan:24,etimes,args"], capture_output=True,
                           text=True).stdout.splitlines()
    rows = [line.split(None, 6) for line in table[1:]]
    below, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        for row in rows:
            if row[1] == str(parent) and int(row[0]) not in below:
                below.add(int(row[0]))
                frontier.append(int(row[0]))
    return "\n".join([table[0], *(line for line, row in zip(table[1:], rows) if int(row[0]) in below)])
