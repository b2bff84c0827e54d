"""Start a sandboxed command under caps its code cannot lift, and take down all it started when it ends.

    python -I confine.py --memory-mb M --max-procs N [--no-cgroup] [--cpu-s S] [--map-uid KUID]
                         [--record DIR [--shared-stage]] [--remove-container NAME] -- COMMAND [ARG ...]

This runs on the host, as the grader's child and COMMAND's parent (COMMAND is bwrap, or the runtime
server itself on the local backend). It imports only the standard library: it must start fast and
must not depend on the code it guards.

- Caps for the whole tree, not per process: a cgroup (v2, or the v1 `pids` and `memory`
  hierarchies) with `pids.max` and a memory limit where this process may create one; otherwise
  RLIMIT_NPROC (which binds only non-root users) and a watchdog that sums the resident memory and
  counts the processes of the tree every 50 ms and stops it when either is over.
- Containment in time: this process is a child subreaper, so a daemon that double-forks or calls
  setsid is re-parented here, not to init; COMMAND dies with this process (PDEATHSIG). When COMMAND
  exits, or this process gets SIGTERM, SIGINT or SIGHUP, every process left in the tree (or the
  cgroup) is killed and the cgroup removed.
- The MCP wire stays COMMAND's: this process gives up its own stdin and stdout right after the fork,
  so the grader sees the stream close the moment COMMAND dies. COMMAND's stderr is a pipe this process
  drains into its own, cut after STDERR_BYTES: the tree never holds a descriptor of a host file.
- Nothing of the caller's identity goes in: COMMAND starts in a new session keyring, and with
  `--map-uid KUID` (root only) in a new user namespace where uid and gid 0 are host root, for bwrap to
  set up its mounts, and 65534, the sandbox user the code runs as, is the unprivileged host id KUID.
- Lifetime: this process gets SIGTERM when its parent dies (the grader, or the client of `env serve`),
  and every process of the tree may use at most `--cpu-s` seconds of CPU, so a handler that spins
  cannot outlive its client.
- `--record DIR`: the tree writes its record to a stage (RECORD_STAGE in COMMAND's arguments names it);
  as root the stage is a tmpfs of RECORD_BYTES in a mount namespace of this process alone. Otherwise
  (not root, or `--shared-stage`: Docker's daemon binds it, so it must be a folder of the host's, for uid
  65534) it is a plain folder, and the watchdog stops the tree once it holds more than RECORD_BYTES. When the
  tree is gone, the stage's regular files are copied into DIR as the caller's, mode 0644, no link
  followed, and the stage is removed.
- `--remove-container NAME`: COMMAND is `docker run --name NAME ...`; killing the client does not stop
  a container, so the container is removed when the tree is gone.

Why a limit stopped the tree goes to stderr, which the grader shows in its error.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import resource
import secrets
import select
import signal
import sys
import time
from pathlib import Path

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
WATCH_INTERVAL_S = 0.05
PAGE = os.sysconf("SC_PAGE_SIZE")
CLONE_NEWUSER = 0x10000000
CLONE_NEWNS = 0x00020000
KEYCTL_JOIN_SESSION_KEYRING = 1
KEYCTL = {"x86_64": 250, "aarch64": 219}
SANDBOX_ID = 65534
STDERR_BYTES = 2**20
RECORD_STAGE = "/ABSTAINGEN_RECORD_STAGE"  # replaced in COMMAND's arguments by the stage's path
RECORD_BYTES = 64 * 2**20

LIBC = ctypes.CDLL(None, use_errno=True)


def _prctl(option: int, value: int) -> None:
    if LIBC.prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}) failed")


def _new_session_keyring() -> None:
    """Leave the caller's session keyring: a process possesses its session keyring whatever its uid."""
    import platform

    number = KEYCTL.get(platform.machine())
    if number is None or LIBC.syscall(number, KEYCTL_JOIN_SESSION_KEYRING, None) < 0:
        raise OSError(ctypes.get_errno(), "cannot join a new session keyring")


def _wait_for_namespace(pid: int, timeout_s: float = 10.0) -> None:
    """Until `pid` has left this process's user namespace (its unshare is done)."""
    own = os.readlink("/proc/self/ns/user")
    deadline = time.monotonic() + timeout_s
    while os.readlink(f"/proc/{pid}/ns/user") == own:
        if time.monotonic() > deadline:
            raise OSError("the command did not make its user namespace in time")
        time.sleep(0.001)


def _write_id_maps(pid: int, kuid: int) -> None:
    """Host root stays root of the new namespace (bwrap binds root-owned folders as it); the sandbox
    user 65534 is `kuid`, which owns nothing on the host."""
    Path(f"/proc/{pid}/uid_map").write_text(f"0 0 1\n{SANDBOX_ID} {kuid} 1\n")
    Path(f"/proc/{pid}/gid_map").write_text(f"0 0 1\n{SANDBOX_ID} {kuid} 1\n")


STALE_AFTER_S = 60.0


def remove_stale(parent: Path) -> None:
    """Remove the empty sandbox cgroups a killed launcher left under `parent`. The kernel refuses to
    remove a cgroup that holds a process, and one younger than a minute may be a launcher's that has
    not joined it yet, so neither is touched."""
    with contextlib.suppress(OSError):
        for folder in parent.glob("abstaingen-*"):
            with contextlib.suppress(OSError):
                if time.time() - folder.stat().st_mtime > STALE_AFTER_S and not (folder / "cgroup.procs").read_text().strip():
                    folder.rmdir()


class Cgroup:
    """One fresh cgroup for the sandbox's tree, in v2 or in the v1 pids and memory hierarchies."""

    def __init__(self, folders: list[Path], procs_files: list[Path]):
        self.folders = folders
        self.procs_files = procs_files

    @classmethod
    def create(cls, name: str, memory_bytes: int, max_procs: int) -> Cgroup | None:
        for make in (cls._v2, cls._v1):
            with contextlib.suppress(OSError):
                cgroup = make(name, memory_bytes, max_procs)
                if cgroup is not None:
                    return cgroup
        return None

    @staticmethod
    def _own_path(controller: str) -> str | None:
        """This process's cgroup in the hierarchy of `controller` ('' for v2), from /proc/self/cgroup."""
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            if controller in controllers.split(",") or (controller == "" and controllers == ""):
                return path
        return None

    @classmethod
    def _v2(cls, name: str, memory_bytes: int, max_procs: int) -> Cgroup | None:
        root = Path("/sys/fs/cgroup")
        own = cls._own_path("")
        if own is None or not (root / "cgroup.controllers").is_file():
            return None
        parent = root / own.lstrip("/")
        remove_stale(parent)
        folder = parent / name
        folder.mkdir()
        if not ((folder / "pids.max").exists() and (folder / "memory.max").exists()):
            folder.rmdir()
            return None
        (folder / "pids.max").write_text(str(max_procs))
        (folder / "memory.max").write_text(str(memory_bytes))
        with contextlib.suppress(OSError):
            (folder / "memory.swap.max").write_text("0")
        return cls([folder], [folder / "cgroup.procs"])

    @classmethod
    def _v1(cls, name: str, memory_bytes: int, max_procs: int) -> Cgroup | None:
        folders = []
        try:
            for controller in ("pids", "memory"):
                own = cls._own_path(controller)
                mount = Path("/sys/fs/cgroup") / controller
                if own is None or not mount.is_dir():
                    raise OSError(f"no v1 {controller} hierarchy")
                remove_stale(mount / own.lstrip("/"))
                folder = mount / own.lstrip("/") / name
                folder.mkdir()
                folders.append(folder)
            pids, memory = folders
            (pids / "pids.max").write_text(str(max_procs))
            (memory / "memory.limit_in_bytes").write_text(str(memory_bytes))
            with contextlib.suppress(OSError):  # present only with swap accounting
                (memory / "memory.memsw.limit_in_bytes").write_text(str(memory_bytes))
        except OSError:
            for folder in folders:
                with contextlib.suppress(OSError):
                    folder.rmdir()
            raise
        return cls(folders, [f / "cgroup.procs" for f in folders])

    def join(self) -> None:
        for procs in self.procs_files:
            procs.write_text("0")  # v1 and v2 both read "0" as the writing process

    def pids(self) -> set[int]:
        found: set[int] = set()
        for procs in self.procs_files:
            with contextlib.suppress(OSError):
                found |= {int(p) for p in procs.read_text().split()}
        return found

    def remove(self) -> None:
        for folder in self.folders:
            for _ in range(50):  # a killed process leaves the cgroup once it is reaped
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


def _descendants(root: int) -> list[int]:
    """Every live process below `root`, from the parent links in /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry.name}/stat").read_text()
        except OSError:
            continue
        parent = int(stat[stat.rindex(")") + 2:].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    found, frontier = [], [root]
    while frontier:
        below = children.get(frontier.pop(), [])
        found += below
        frontier += below
    return found


def _resident_bytes(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError, IndexError, ValueError):
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
    return total


class Confinement:
    def __init__(self, command: list[str], memory_mb: int, max_procs: int, use_cgroup: bool = True,
                 cpu_s: int = 0, map_uid: int | None = None):
        self.command = command
        self.memory_bytes = memory_mb * 2**20
        self.max_procs = max_procs
        self.cpu_s = cpu_s
        self.map_uid = map_uid
        self.cgroup = (Cgroup.create(f"abstaingen-{secrets.token_hex(6)}", self.memory_bytes, max_procs)
                       if use_cgroup else None)
        self.child = 0
        self.stderr = -1
        self.stderr_left = STDERR_BYTES
        self.next_check = 0.0

    def start(self) -> None:
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        errors_read, errors_write = os.pipe()
        mapped_read, mapped_write = os.pipe()
        self.child = os.fork()
        if self.child == 0:
            os.close(errors_read)
            os.close(mapped_write)
            os.dup2(errors_write, 2)
            os.close(errors_write)
            self._become_command(mapped_read)
        os.close(errors_write)
        os.close(mapped_read)
        try:
            if self.map_uid is not None:
                _wait_for_namespace(self.child)
                _write_id_maps(self.child, self.map_uid)
            os.write(mapped_write, b"1")
        except OSError as exc:
            print(f"confine: cannot map the sandbox user: {exc}", file=sys.stderr, flush=True)
        os.close(mapped_write)
        os.set_blocking(errors_read, False)
        self.stderr = errors_read
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)
        os.close(devnull)

    def _become_command(self, mapped: int) -> None:
        try:
            os.setsid()
            _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            if self.cgroup is not None:
                self.cgroup.join()
            _new_session_keyring()
            resource.setrlimit(resource.RLIMIT_NPROC, (self.max_procs, self.max_procs))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            if self.cpu_s:
                resource.setrlimit(resource.RLIMIT_CPU, (self.cpu_s, self.cpu_s))
            for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                signal.signal(number, signal.SIG_DFL)
            if self.map_uid is not None and LIBC.unshare(CLONE_NEWUSER) != 0:
                raise OSError(ctypes.get_errno(), "cannot make a user namespace")
            if os.read(mapped, 1) != b"1":  # the launcher wrote the id maps (or had none to write)
                raise OSError("the launcher did not map the sandbox user")
            os.close(mapped)
            os.execvp(self.command[0], self.command)
        except BaseException as exc:  # noqa: BLE001 - the child must never return into the parent's code
            os.write(2, f"confine: cannot start {self.command[0]}: {exc}\n".encode())
        os._exit(127)

    def wait(self, seconds: float) -> None:
        """Sleep up to `seconds`, waking to drain stderr whenever the tree writes to it."""
        if self.stderr < 0:
            time.sleep(seconds)
        elif select.select([self.stderr], [], [], seconds)[0]:
            self.drain_stderr()

    def drain_stderr(self) -> None:
        """Pass on what the tree wrote to stderr, up to STDERR_BYTES; the rest is read and dropped."""
        for _ in range(64):  # at most 4 MiB at a time, so a flood cannot hold up the watchdog
            try:
                chunk = os.read(self.stderr, 65536) if self.stderr >= 0 else b""
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                if self.stderr >= 0:  # every writer has gone
                    os.close(self.stderr)
                    self.stderr = -1
                return
            kept = chunk[: max(self.stderr_left, 0)]
            if kept:
                with contextlib.suppress(OSError):
                    os.write(2, kept)
            if self.stderr_left > 0 >= self.stderr_left - len(chunk):
                with contextlib.suppress(OSError):
                    os.write(2, b"\n[stderr cut here: the sandbox wrote more]\n")
            self.stderr_left -= len(chunk)

    def tree(self) -> list[int]:
        below = set(_descendants(os.getpid()))
        if self.cgroup is not None:
            below |= self.cgroup.pids()
        return sorted(below)

    def checking_now(self) -> bool:
        """True at most once a WATCH_INTERVAL_S: the watchdog's turn to look at the tree."""
        if time.monotonic() < self.next_check:
            return False
        self.next_check = time.monotonic() + WATCH_INTERVAL_S
        return True

    def over_limit(self) -> str | None:
        """Why the tree must stop, when only the watchdog enforces the caps."""
        if self.cgroup is not None:
            return None
        tree = self.tree()
        if len(tree) > self.max_procs:
            return f"{len(tree)} processes, above the limit of {self.max_procs}"
        resident = _resident_bytes(tree)
        if resident > self.memory_bytes:
            return f"{resident // 2**20} MB resident in total, above the limit of {self.memory_bytes // 2**20} MB"
        return None

    def kill_all(self) -> None:
        """SIGKILL until nothing is left: a fork bomb can add processes between two sweeps."""
        for _ in range(200):
            tree = self.tree()
            if not tree:
                break
            for pid in tree:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            self.reap()
            time.sleep(0.005)
        if self.cgroup is not None:
            self.cgroup.remove()

    def reap(self) -> int | None:
        """Collect every exited child (adopted orphans too); the command's exit code once it is gone."""
        status = None
        while True:
            try:
                pid, code = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return status if status is not None else (0 if self.child else None)
            if pid == 0:
                return status
            if pid == self.child:
                status = os.waitstatus_to_exitcode(code)
                self.child = -1


def _stage_record(owner: int, shared: bool) -> Path:
    """An empty folder for the tree's record, for `owner` (the sandbox user's host uid) alone. As root and
    not `shared`: a tmpfs of RECORD_BYTES, mounted in a mount namespace of this process alone."""
    import tempfile

    stage = Path(tempfile.mkdtemp(prefix=f"abstaingen-{os.getpid()}-record-"))  # named as store.scratch_folder
    if os.geteuid() == 0 and shared:
        os.chown(stage, owner, owner)
    elif os.geteuid() == 0:
        if LIBC.unshare(CLONE_NEWNS) != 0:
            raise OSError(ctypes.get_errno(), "cannot make a mount namespace for the record")
        ms_rec, ms_private, ms_nosuid, ms_nodev, ms_noexec = 16384, 1 << 18, 2, 4, 8
        if LIBC.mount(b"none", b"/", None, ms_rec | ms_private, None) != 0:
            raise OSError(ctypes.get_errno(), "cannot make the mounts private")
        options = f"size={RECORD_BYTES},mode=0700,uid={owner},gid={owner}".encode()
        if LIBC.mount(b"tmpfs", str(stage).encode(), b"tmpfs", ms_nosuid | ms_nodev | ms_noexec, options) != 0:
            raise OSError(ctypes.get_errno(), "cannot mount the record's tmpfs")
    return stage


def _stage_over_limit(stage: Path) -> str | None:
    used = 0
    for folder, _, files in os.walk(stage):
        for name in files:
            with contextlib.suppress(OSError):
                used += os.lstat(os.path.join(folder, name)).st_blocks * 512
    return f"the record holds {used // 2**20} MB, above {RECORD_BYTES // 2**20} MB" if used > RECORD_BYTES else None


def _remove_container(name: str) -> None:
    import subprocess

    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        subprocess.run(["docker", "rm", "--force", name], capture_output=True, timeout=60)


def copy_record(stage: Path, out: Path, limit: int = RECORD_BYTES) -> None:
    """The stage's regular files (top level, no link followed), smallest first, into `out` as this
    process's, mode 0644, up to `limit` bytes in all: nothing the sandbox made keeps its owner or a setuid
    bit, and a flood of files does not crowd out the server's own small ones. Then the stage goes."""
    import shutil

    def size(entry: os.DirEntry[str]) -> int:
        try:
            return entry.stat(follow_symlinks=False).st_size
        except OSError:
            return 0

    copied = 0
    for entry in sorted(os.scandir(stage), key=lambda e: (size(e), e.name)):
        if not entry.is_file(follow_symlinks=False) or copied >= limit:
            continue
        with contextlib.suppress(OSError):
            source = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            try:
                target = os.open(out / entry.name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
                try:
                    while copied < limit and (block := os.read(source, min(2**20, limit - copied))):
                        os.write(target, block)
                        copied += len(block)
                    os.fchmod(target, 0o644)
                finally:
                    os.close(target)
            finally:
                os.close(source)
    with contextlib.suppress(OSError):
        LIBC.umount2(str(stage).encode(), 2)  # MNT_DETACH
    shutil.rmtree(stage, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memory-mb", type=int, required=True)
    parser.add_argument("--max-procs", type=int, required=True)
    parser.add_argument("--no-cgroup", action="store_true", help="enforce the caps with the watchdog alone")
    parser.add_argument("--cpu-s", type=int, default=0, help="CPU seconds each process of the tree may use")
    parser.add_argument("--map-uid", type=int, help="run as root: the host uid of the sandbox user 65534")
    parser.add_argument("--record", type=Path, help=f"copy the record staged at {RECORD_STAGE} here at the end")
    parser.add_argument("--shared-stage", action="store_true", help="stage the record in a plain host folder")
    parser.add_argument("--remove-container", metavar="NAME", help="remove this Docker container at the end")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    options = parser.parse_args(argv)
    command = options.command[1:] if options.command[:1] == ["--"] else options.command
    if not command:
        parser.error("no command to run")
    if options.map_uid is not None and (os.geteuid() != 0 or options.map_uid in (0, SANDBOX_ID)):
        parser.error("--map-uid is for root, with an id other than 0 and 65534")

    stopping: list[int] = []
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, lambda signum, _frame: stopping.append(signum))
    parent = os.getppid()
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent or parent == 1:  # the parent was gone before the signal was armed
        stopping.append(signal.SIGTERM)
    stage = None
    if options.record is not None:
        # Who writes the record: the caller itself, unless root starts the sandbox: then bwrap's mapped
        # uid, or Docker's container user.
        owner = os.geteuid() if os.geteuid() != 0 else SANDBOX_ID if options.map_uid is None else options.map_uid
        try:
            stage = _stage_record(owner, options.shared_stage)
        except OSError as exc:
            print(f"confine: cannot stage the record: {exc}", file=sys.stderr, flush=True)
            return 126
        command = [arg.replace(RECORD_STAGE, str(stage)) for arg in command]
    confinement = Confinement(command, options.memory_mb, options.max_procs, use_cgroup=not options.no_cgroup,
                              cpu_s=options.cpu_s, map_uid=options.map_uid)
    confinement.start()
    exit_code = 0
    while True:
        status = confinement.reap()
        confinement.drain_stderr()
        if confinement.child == -1:
            exit_code = status if status is not None else 0
            break
        if stopping:
            exit_code = 128 + stopping[0]
            break
        reason = None
        if confinement.checking_now():
            reason = confinement.over_limit()
            if reason is None and stage is not None and (options.shared_stage or os.geteuid() != 0):
                reason = _stage_over_limit(stage)  # a plain folder, not a capped tmpfs: watched instead
        if reason is not None:
            print(f"sandbox stopped: {reason}", file=sys.stderr, flush=True)
            exit_code = 137
            break
        confinement.wait(WATCH_INTERVAL_S)
    confinement.kill_all()
    confinement.drain_stderr()
    if options.remove_container:
        _remove_container(options.remove_container)
    if stage is not None:
        copy_record(stage, options.record)
    return exit_code if exit_code >= 0 else 128 - exit_code


if __name__ == "__main__":
    sys.exit(main())
