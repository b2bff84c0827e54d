"""`abstaingen ui`: Prefect's server (its UI and API) on this machine, over the project's PREFECT_HOME.

The server runs as `python -m prefect server start` in a child process of its own session, so a
Ctrl-C in the terminal reaches only us; we then stop the child's whole process group and wait for
it. Its own output (a banner, warnings) goes to a log file in PREFECT_HOME, not the terminal.
`start_server` and `PrefectServer` are what tests use to run one on a free port.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, TracebackType

from abstaingen.errors import AbstaingenError

__all__ = ["PrefectServer", "serve_ui", "start_server"]

DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 4200
STARTUP_TIMEOUT_S = 180.0  # the first start in a new PREFECT_HOME migrates its database: slow on 2 loaded cores
STOP_TIMEOUT_S = 20.0
LOG_NAME = "ui-server.log"


def api_answers(api_url: str, timeout_s: float = 5) -> bool:
    """Whether a Prefect API answers GET /health with 200."""
    try:
        with urllib.request.urlopen(f"{api_url}/health", timeout=timeout_s) as response:
            return bool(response.status == 200)
    except OSError:  # URLError is one
        return False


@dataclass
class PrefectServer:
    """A Prefect server running in a child process (the leader of its own process group)."""

    process: subprocess.Popen[bytes]
    host: str
    port: int
    log: Path
    _stopped: bool = field(default=False, repr=False)

    @property
    def url(self) -> str:
        """The UI's address."""
        return f"http://{_url_host(self.host)}:{self.port}"

    @property
    def api_url(self) -> str:
        """What PREFECT_API_URL must be for a run to report here."""
        return f"{self.url}/api"

    def healthy(self) -> bool:
        return api_answers(self.api_url)

    def wait_until_healthy(self, timeout_s: float = STARTUP_TIMEOUT_S) -> None:
        """Return once GET /api/health answers 200; raise if the server exits or the time runs out."""
        deadline = time.monotonic() + timeout_s
        while not self.healthy():
            code = self.process.poll()
            if code is not None:
                raise AbstaingenError(f"the Prefect server exited (code {code}) before it answered; "
                                      f"its log {self.log} ends with: {self.log_tail()}")
            if time.monotonic() > deadline:
                raise AbstaingenError(f"the Prefect server did not answer {self.api_url}/health within "
                                      f"{timeout_s:.0f} s; its log: {self.log}")
            time.sleep(0.5)

    def log_tail(self, lines: int = 5) -> str:
        try:
            text = self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no log)"
        return " | ".join(line.strip() for line in text.strip().splitlines()[-lines:]) or "(empty)"

    def stop(self, timeout_s: float = STOP_TIMEOUT_S) -> None:
        """SIGTERM to the server's process group, SIGKILL after `timeout_s`; returns when it is gone."""
        if self._stopped:
            return
        self._stopped = True
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, sig)  # the group's id is the child's pid (its own session)
            try:
                self.process.wait(timeout=timeout_s)
                break
            except subprocess.TimeoutExpired:
                continue
        self.process.wait()
        with contextlib.suppress(ProcessLookupError):  # anything the server started and left behind
            os.killpg(self.process.pid, signal.SIGKILL)

    def __enter__(self) -> PrefectServer:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()


def start_server(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, home: Path | None = None) -> PrefectServer:
    """Start `prefect server start` on host:port and return at once (see PrefectServer.wait_until_healthy).

    `home` is the server's PREFECT_HOME (its database lives there); by default this process's, which
    the CLI has already set (abstaingen.settings.configure_prefect_defaults).
    """
    _require_free(host, port)
    env = dict(os.environ)
    if home is not None:
        env["PREFECT_HOME"] = str(home)
    prefect_home = Path(env.get("PREFECT_HOME") or Path.home() / ".prefect").expanduser()
    prefect_home.mkdir(parents=True, exist_ok=True)
    env.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    env.setdefault("DO_NOT_TRACK", "1")
    # A PREFECT_API_URL in our environment names a server to report to, maybe another one; the UI would
    # read it as its own API's address. The UI's API is this server's, on the host and port it was given.
    env.pop("PREFECT_API_URL", None)
    env["PREFECT_SERVER_API_HOST"], env["PREFECT_SERVER_API_PORT"] = host, str(port)
    if not (env.get("PREFECT_UI_API_URL") or env.get("PREFECT_SERVER_UI_API_URL")):
        env["PREFECT_SERVER_UI_API_URL"] = f"http://{_url_host(host)}:{port}/api"
    log = prefect_home / LOG_NAME
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "prefect", "server", "start", "--host", host, "--port", str(port)],
            env=env, stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT,
            start_new_session=True, preexec_fn=_die_with_parent,
        )
    return PrefectServer(process=process, host=host, port=port, log=log)


def serve_ui(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> int:
    """The `abstaingen ui` command: serve until Ctrl-C (or SIGTERM, SIGHUP), then stop the server."""
    server = start_server(host, port)
    try:
        with _signals_interrupt():
            server.wait_until_healthy()
            print(f"Prefect UI at {server.url} (PREFECT_HOME={os.environ.get('PREFECT_HOME')}); point runs at it "
                  f"with: export PREFECT_API_URL={server.api_url} — Ctrl-C stops it", flush=True)
            code = server.process.wait()
        raise AbstaingenError(f"the Prefect server stopped by itself (code {code}); "
                              f"its log {server.log} ends with: {server.log_tail()}")
    except KeyboardInterrupt:
        _stop_uninterrupted(server)
        print("abstaingen: Prefect server stopped", flush=True)
        return 0
    finally:
        _stop_uninterrupted(server)


def _stop_uninterrupted(server: PrefectServer) -> None:
    """A second Ctrl-C while the server shuts down does not cut the wait short (the stop is bounded)."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        server.stop()
    finally:
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def _signals_interrupt() -> Iterator[None]:
    """SIGTERM and SIGHUP (a closed terminal) stop the server like Ctrl-C does, instead of orphaning it."""
    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _require_free(host: str, port: int) -> None:
    if not 0 < port < 65536:
        raise AbstaingenError(f"--port {port}: a port is between 1 and 65535")
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror:
        raise AbstaingenError(f"--host {host}: not an address of this machine") from None
    with socket.socket(family, kind, proto) as probe:
        try:
            probe.bind(address)
        except OSError as exc:
            raise AbstaingenError(f"cannot serve on {host}:{port}: {exc.strerror or exc} "
                                  "(another server there? choose another --port)") from None


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _die_with_parent() -> None:
    """In the child: Linux sends it SIGTERM if we die without stopping it (SIGKILL, say)."""
    if sys.platform == "linux":
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
