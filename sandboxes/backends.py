"""Where an environment's MCP server process runs. Each backend turns a bundle folder into a command."""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Protocol, TextIO

from mcp.client._transport import TransportStreams
from mcp.client.stdio import StdioServerParameters, stdio_client
from pydantic import Field

from abstaingen.errors import AbstaingenError
from abstaingen.model.common import Model
from abstaingen.registry import Registry
from abstaingen.sandboxes.confine import RECORD_STAGE
from abstaingen.sandboxes.paths import CONFINE, ENTER, RUNTIME_SERVER

# CPU time any one process of a sandbox may use in all: far above what serving takes, it ends a handler
# that spins after its client has gone (a client of `env serve` may set no deadline of its own).
CPU_SECONDS = 600
OWNER_LABEL = "abstaingen.owner"  # the pid of the run that started a container
STARTED_LABEL = "abstaingen.owner-started"  # and when that process started (see owner_is_gone)
Streams = TransportStreams  # what an MCP client session reads from and writes to


class SandboxLimits(Model):
    call_timeout_s: float = Field(default=10.0, gt=0, description="a tool call that takes longer kills the sandbox")
    episode_timeout_s: float = Field(default=120.0, gt=0, description="so does an episode that takes longer")
    memory_mb: int = Field(default=1024, ge=256, description="memory of the whole sandbox, every process in it")
    max_procs: int = Field(default=64, ge=8, description="processes and threads in the sandbox at once")


class SandboxBackend(Protocol):
    name: str
    limits: SandboxLimits
    isolated: bool  # may run code that an LLM wrote
    image: str | None  # what ran the code, for provenance (docker: the image digest)

    def connect(self, bundle_dir: Path, env: dict[str, str], errlog: TextIO) -> AbstractAsyncContextManager[Streams]:
        """The MCP server for the bundle, running in this sandbox, as a client's stream pair."""
        ...

    def server_parameters(self, bundle_dir: Path, env: dict[str, str],
                          record_dir: Path | None = None) -> StdioServerParameters:
        """A command that serves the bundle on its own stdio, for `abstaingen env serve`."""
        ...


def _runtime_args(runtime: str, bundle_dir: str, limits: SandboxLimits, record_dir: str | None = None) -> list[str]:
    record = ["--record", record_dir] if record_dir else []
    return ["-I", runtime, bundle_dir, "--memory-mb", str(limits.memory_mb),
            "--call-timeout-s", str(limits.call_timeout_s), *record]


def _confined(limits: SandboxLimits, command: list[str], flags: list[str] | None = None) -> list[str]:
    """`command` under the launcher that caps the whole process tree and kills what is left of it."""
    return ["-I", str(CONFINE), "--memory-mb", str(limits.memory_mb), "--max-procs", str(limits.max_procs),
            "--cpu-s", str(CPU_SECONDS), *(flags or []), "--", *command]


class LocalBackend:
    """A plain subprocess of the host's Python, for trusted (builtin) bundles: no isolation, but the
    launcher caps the tree's processes and memory, and kills every process it left when it ends."""

    name = "local"
    isolated = False
    image: str | None = None

    def __init__(self, limits: SandboxLimits | None = None):
        self.limits = limits or SandboxLimits()

    def connect(self, bundle_dir: Path, env: dict[str, str], errlog: TextIO) -> AbstractAsyncContextManager[Streams]:
        return stdio_client(self.server_parameters(bundle_dir, env), errlog=errlog)

    def server_parameters(self, bundle_dir: Path, env: dict[str, str],
                          record_dir: Path | None = None) -> StdioServerParameters:
        record = str(record_dir.resolve()) if record_dir else None
        runtime = [sys.executable, *_runtime_args(str(RUNTIME_SERVER), str(bundle_dir.resolve()), self.limits, record)]
        return StdioServerParameters(command=sys.executable, env=env, cwd=str(bundle_dir.resolve()),
                                     args=_confined(self.limits, runtime))


class BwrapBackend(LocalBackend):
    """bubblewrap, safe to start as root. The code runs as uid 65534 with no capability, in a user
    namespace where that uid is an unprivileged host uid (started by root: a fresh one per sandbox,
    mapped by the launcher; otherwise the caller's own), under a seccomp filter (`enter.py`), in a new
    session keyring, with no network, IPC, PID or UTS sharing, in a new session, and with a view of the
    file system that holds only what the runtime needs, read-only: the system folders under /usr, the
    Python installation, the runtime files and the bundle, and /proc with /proc/sys read-only. No /etc,
    /home, /root's files, /var or /run, so no host socket (Docker's included) is reachable. /tmp and
    /dev/shm are small private tmpfs; `env serve --record` writes to a capped stage the launcher copies
    out (see confine.py)."""

    name = "bwrap"
    isolated = True

    @staticmethod
    @functools.cache
    def available() -> bool:
        """bwrap is installed and the sandbox it makes holds (`sandbox_faults` says what does not)."""
        return shutil.which("bwrap") is not None and not BwrapBackend.sandbox_faults()

    @staticmethod
    def sandbox_faults() -> list[str]:
        """What a probe, started exactly as sandboxed code is, finds wrong with its sandbox: a host uid of 0
        behind its own, capabilities, no seccomp filter, a keyring it can reach, a writable /proc/sys, or
        host folders in view."""
        backend = BwrapBackend(SandboxLimits(memory_mb=256))
        command = backend._launcher(["bwrap", *backend.isolation(), *backend._runtime_view(),
                                     *backend._entered([PYTHON_IN_VIEW, "-I", "-c", SANDBOX_PROBE])])
        try:
            result = subprocess.run([sys.executable, *command], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return [f"the probe did not run: {exc}"]
        if result.returncode != 0:
            return [f"the probe failed: {result.stderr.strip()[-300:]}"]
        return [line for line in result.stdout.splitlines() if line]

    @staticmethod
    def isolation() -> list[str]:
        if os.geteuid() == 0:
            # The launcher made the user namespace (--map-uid); enter.py leaves its root for 65534.
            namespaces = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
                          "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        else:
            namespaces = ["--unshare-all", "--unshare-user", "--disable-userns", "--uid", "65534", "--gid", "65534",
                          "--cap-drop", "ALL"]
        namespaces += ["--die-with-parent", "--new-session", "--hostname", "sandbox"]
        system = []
        for folder in SYSTEM_FOLDERS:
            path = Path(folder)
            if path.is_symlink():
                system += ["--symlink", os.readlink(path), folder]
            elif path.is_dir():
                system += ["--ro-bind", folder, folder]
        scratch = ["--dev", "/dev", "--perms", "1777", "--size", str(SCRATCH_BYTES), "--tmpfs", "/dev/shm",
                   "--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys",
                   "--perms", "1777", "--size", str(SCRATCH_BYTES), "--tmpfs", "/tmp", "--chdir", "/tmp"]
        # After /tmp: a Python installed under /tmp (a clone there, say) is bound back on top of it. The
        # folders above it are made open to the sandbox user (bwrap would copy a 0700 /root's mode).
        python = []
        for root in _python_roots():
            python += [arg for folder in _folders_above(root) for arg in ("--perms", "0755", "--dir", folder)]
            python += ["--ro-bind", root, root]
        return [*namespaces, *system, *scratch, *python]

    def _launcher(self, command: list[str], record_dir: Path | None = None) -> list[str]:
        uid = ["--map-uid", str(sandbox_host_uid())] if os.geteuid() == 0 else []
        record = ["--record", str(record_dir.resolve())] if record_dir else []
        return _confined(self.limits, command, [*uid, *record])

    @staticmethod
    def _runtime_view() -> list[str]:
        return ["--perms", "0755", "--dir", "/opt", "--perms", "0755", "--dir", "/opt/abstaingen",
                "--ro-bind", str(ENTER), ENTER_IN_VIEW, "--ro-bind", str(RUNTIME_SERVER), RUNTIME_IN_VIEW]

    @staticmethod
    def _entered(command: list[str]) -> list[str]:
        return [PYTHON_IN_VIEW, "-I", ENTER_IN_VIEW, "--", *command]

    def server_parameters(self, bundle_dir: Path, env: dict[str, str],
                          record_dir: Path | None = None) -> StdioServerParameters:
        record = ["--bind", RECORD_STAGE, "/record"] if record_dir else []
        view = [*self._runtime_view(), "--ro-bind", str(bundle_dir.resolve()), "/bundle", *record]
        runtime = [PYTHON_IN_VIEW, *_runtime_args(RUNTIME_IN_VIEW, "/bundle", self.limits,
                                                  "/record" if record_dir else None)]
        command = ["bwrap", *self.isolation(), *view, *self._entered(runtime)]
        return StdioServerParameters(command=sys.executable, env=env, args=self._launcher(command, record_dir))


SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SCRATCH_BYTES = 16 * 2**20
RUNTIME_IN_VIEW = "/opt/abstaingen/runtime_server.py"
ENTER_IN_VIEW = "/opt/abstaingen/enter.py"
# The interpreter's path without '..' (started as tests/../.venv/bin/python, it would name a folder
# outside the view) and without resolving its link (a venv's python must keep its own path).
PYTHON_IN_VIEW = os.path.abspath(sys.executable)
# Host uids for sandboxes started by root: a fresh one per sandbox from a range no account uses, so
# that nothing on the host belongs to it and no two sandboxes share one (RLIMIT_NPROC counts per uid).
SANDBOX_UID_BASE = 1_879_048_192
SANDBOX_UID_COUNT = 2**24
# Run inside the sandbox by `sandbox_faults`: one line per fault, nothing when the sandbox holds.
SANDBOX_PROBE = r"""
import ctypes, os, platform
faults = []
inside, outside = os.getuid(), None
for line in open('/proc/self/uid_map'):
    start, host, count = map(int, line.split())
    if start <= inside < start + count:
        outside = host + inside - start
if inside != 65534 or outside in (None, 0):
    faults.append(f'the sandbox user {inside} is host uid {outside}')
status = open('/proc/self/status').read()
if int(status.split('CapEff:')[1].split()[0], 16):
    faults.append('capabilities are left')
if status.split('Seccomp:')[1].split()[0] != '2':
    faults.append('no seccomp filter')
keyctl = {'x86_64': 250, 'aarch64': 219}.get(platform.machine())
if keyctl is None or ctypes.CDLL(None).syscall(keyctl, 0, -3, 0) >= 0:
    faults.append('the session keyring is reachable')
for folder, _, files in os.walk('/proc/sys'):
    if any(os.access(os.path.join(folder, f), os.W_OK) for f in files):
        faults.append(f'{folder} has writable files')
        break
faults += [f'{p} is in view' for p in ('/etc', '/var', '/run', '/home') if os.path.exists(p)]
print('\n'.join(faults))
"""


def sandbox_host_uid() -> int:
    return SANDBOX_UID_BASE + secrets.randbelow(SANDBOX_UID_COUNT)


def _folders_above(path: str) -> list[str]:
    """The folders between / and `path`, outermost first, that neither the system folders nor the
    scratch tmpfs (/tmp, whose mode must stay 1777) provide."""
    parents = [str(p) for p in reversed(Path(path).parents) if str(p) not in ("/", "/tmp")]
    return [p for p in parents if not any(p == s or p.startswith(s + "/") for s in SYSTEM_FOLDERS)]


def _python_roots() -> list[str]:
    """The folders the runtime's interpreter and its packages (mcp, jsonschema, anyio) live in,
    outside /usr, without one that another contains."""
    import anyio
    import jsonschema
    import mcp

    folders = {sys.prefix, sys.base_prefix,
               *(str(Path(m.__file__ or "").resolve().parent.parent) for m in (mcp, jsonschema, anyio))}
    folders = {f for f in folders if f != "/usr" and not f.startswith("/usr/")}
    return sorted(f for f in folders if not any(f != o and f.startswith(o.rstrip("/") + "/") for o in folders))


class DockerBackend:
    """A container per environment: no network, read-only root, tmpfs scratch, an unprivileged
    user, no capabilities, and memory, PID and CPU limits. Graders reach the MCP server over the
    container's stdio through the Docker SDK (`connect`); `env serve` runs the same container with
    `docker run -i` so that its own stdio becomes the server's."""

    name = "docker"
    isolated = True

    def __init__(self, limits: SandboxLimits | None = None):
        from abstaingen.sandboxes.image import docker_client, image_digest, image_tag

        self.limits = limits or SandboxLimits()
        self.client = docker_client()
        self.tag = image_tag()
        self.image = image_digest(self.client, self.tag)
        if self.image is None:
            raise AbstaingenError(f"the sandbox image {self.tag} is not built: run 'abstaingen sandbox build-image'")

    @staticmethod
    def available() -> bool:
        try:
            DockerBackend()
        except AbstaingenError:
            return False
        return True

    def container(self, bundle_dir: Path, env: dict[str, str], record_dir: Path | None = None) -> dict:
        """The container, as keyword arguments of the SDK's `containers.create`."""
        from abstaingen.sandboxes.image import RUNTIME_IN_IMAGE

        memory = f"{self.limits.memory_mb}m"
        volumes = {str(bundle_dir.resolve()): {"bind": "/bundle", "mode": "ro"}}
        # Root runs the code as nobody; anyone else as themselves (so that they can read what it wrote).
        user = "65534:65534" if os.geteuid() == 0 else f"{os.geteuid()}:{os.getegid()}"
        if record_dir is not None:
            # The server writes the log to the launcher's stage (confine.py), never to the user's folder.
            volumes[RECORD_STAGE] = {"bind": "/record", "mode": "rw"}
        return {
            "image": self.tag, "name": f"abstaingen-{secrets.token_hex(8)}",
            "labels": {"abstaingen.sandbox": "1", OWNER_LABEL: str(os.getpid()), STARTED_LABEL: process_start()},
            "command": ["python3", *_runtime_args(RUNTIME_IN_IMAGE, "/bundle", self.limits,
                                                  "/record" if record_dir is not None else None)],
            "network_mode": "none", "read_only": True, "tmpfs": {"/tmp": "rw,size=16m"}, "shm_size": 16 * 2**20,
            "user": user, "cap_drop": ["ALL"], "security_opt": ["no-new-privileges"], "mem_limit": memory,
            "memswap_limit": memory, "pids_limit": self.limits.max_procs, "nano_cpus": 10**9, "volumes": volumes,
            "environment": env,
            # PID 1 is Docker's init: it passes SIGTERM on, so the server dies when `docker run` is told to
            "init": True, "ulimits": [{"Name": "cpu", "Soft": CPU_SECONDS, "Hard": CPU_SECONDS}],
        }

    def sweep(self) -> int:
        """Remove every container this process started that is still there, and those of runs on this
        machine that died without removing theirs (killed, say); how many there were."""
        from abstaingen.sandboxes.docker_transport import remove_now

        left = [c for c in self.client.containers.list(all=True, filters={"label": OWNER_LABEL})
                if c.labels.get(OWNER_LABEL) == str(os.getpid()) or owner_is_gone(c.labels)]
        for container in left:
            remove_now(container)
        return len(left)

    def connect(self, bundle_dir: Path, env: dict[str, str], errlog: TextIO) -> AbstractAsyncContextManager[Streams]:
        from abstaingen.sandboxes.docker_transport import container_stdio

        return container_stdio(self.client, self.container(bundle_dir, env), errlog)

    def server_parameters(self, bundle_dir: Path, env: dict[str, str],
                          record_dir: Path | None = None) -> StdioServerParameters:
        """`docker run -i` under the launcher: it removes the container once the client has gone (a
        killed client leaves a container running), and stages the record (see confine.py)."""
        settings = self.container(bundle_dir, env, record_dir)
        flags = ["--name", settings["name"], "--label", "abstaingen.sandbox=1", "--label",
                 f"{OWNER_LABEL}={settings['labels'][OWNER_LABEL]}", "--label",
                 f"{STARTED_LABEL}={settings['labels'][STARTED_LABEL]}", "--init", "--ulimit", f"cpu={CPU_SECONDS}",
                 "--network", "none", "--read-only",
                 "--tmpfs", "/tmp:" + settings["tmpfs"]["/tmp"], "--shm-size", str(settings["shm_size"]),
                 "--user", settings["user"], "--cap-drop", "ALL",
                 "--security-opt", "no-new-privileges", "--memory", settings["mem_limit"],
                 "--memory-swap", settings["memswap_limit"], "--pids-limit", str(settings["pids_limit"]),
                 "--cpus", "1"]
        flags += [arg for host, mount in settings["volumes"].items()
                  for arg in ("-v", f"{host}:{mount['bind']}:{mount['mode']}")]
        flags += [arg for name in env for arg in ("-e", name)]  # values come from the environment, not argv
        docker_run = ["docker", "run", "-i", "--rm", *flags, settings["image"], *settings["command"]]
        record = ["--record", str(record_dir.resolve()), "--shared-stage"] if record_dir is not None else []
        # The container's own limits hold the code; the launcher watches the client, the record and the end.
        return StdioServerParameters(command=sys.executable, env=env, args=_confined(
            self.limits, docker_run, [*record, "--remove-container", settings["name"], "--no-cgroup"]))


def _start_time(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2:].split()[19]


def process_start(pid: int | None = None) -> str:
    """When a process started, as the machine's boot and the start time: with the pid, it names one
    process, even once the pid has been reused."""
    return f"{_boot_id()}:{_start_time(pid or os.getpid())}"


def owner_is_gone(labels: dict[str, str]) -> bool:
    """True when a container's labels name a process of this machine's boot that no longer runs."""
    return process_is_gone(labels.get(OWNER_LABEL, ""), labels.get(STARTED_LABEL, ""))


def process_is_gone(pid: str, started: str) -> bool:
    """True when `pid`, started at `started` (process_start) in this machine's boot, no longer runs."""
    if not pid.isdigit() or not started.startswith(_boot_id() + ":") or started.endswith(":None"):
        return False  # another machine's (or an older abstaingen's, or a made-up one): not ours to judge
    return process_start(int(pid)) != started


RUN_OWNER_ENV = "ABSTAINGEN_RUN_OWNER"  # pid:start of the run; the processes it starts inherit it


def mark_run_owner() -> None:
    """Label this process's environment, so that what it starts (Prefect's temporary server) can be
    told apart, and ended by a later run, once this process has died without stopping it."""
    os.environ.setdefault(RUN_OWNER_ENV, f"{os.getpid()}:{process_start()}")


def orphans_of_dead_runs() -> list[int]:
    """Processes that carry the owner label of a run that no longer runs."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        for variable in environ.split(b"\0"):
            if variable.startswith(RUN_OWNER_ENV.encode() + b"="):
                pid, _, started = variable.split(b"=", 1)[1].decode(errors="replace").partition(":")
                if process_is_gone(pid, started):
                    found.append(int(entry.name))
    return found


@functools.cache
def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "unknown-boot"


def child_processes(marker: str = "") -> list[int]:
    """This process's children whose command line contains `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            parent = int(stat[stat.rindex(")") + 2:].split()[1])
            if parent == os.getpid() and marker in (entry / "cmdline").read_bytes().decode(errors="replace"):
                found.append(int(entry.name))
        except (OSError, ValueError):
            continue
    return found


def stop_local_sandboxes(wait_s: float = 3.0) -> None:
    """SIGTERM every local or bwrap sandbox this process started; each launcher kills its whole
    tree and exits. Waits up to `wait_s` for them to be gone."""
    launchers = child_processes(str(CONFINE))
    for pid in launchers:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline and any(Path(f"/proc/{pid}").exists() for pid in launchers):
        time.sleep(0.05)


BACKENDS: Registry[str, type[LocalBackend] | type[DockerBackend]] = Registry("sandbox backend")
for _backend in (LocalBackend, BwrapBackend, DockerBackend):
    BACKENDS.register(_backend.name)(_backend)


def select_backend(preference: str, limits: SandboxLimits | None = None) -> SandboxBackend:
    """`auto` takes the strongest isolation this machine offers: docker, bwrap, then a plain subprocess."""
    if preference != "auto":
        return get_backend(preference, limits)
    for candidate in (DockerBackend, BwrapBackend):
        if candidate.available():
            return candidate(limits)
    return LocalBackend(limits)


def get_backend(name: str, limits: SandboxLimits | None = None) -> SandboxBackend:
    backend = BACKENDS.find(name)
    if backend is BwrapBackend and not BwrapBackend.available():
        raise AbstaingenError("sandbox backend 'bwrap' is not usable here: install bubblewrap (Debian: bubblewrap)")
    return backend(limits)
