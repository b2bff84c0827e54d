"""Start a sandboxed command under caps its code cannot lift, and take down all it started when it ends.

    python -I confine.py --memory-mb M --max-procs N [--no-cgroup] -- COMMAND [ARG ...]

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
  so the grader sees the stream close the moment COMMAND dies.

Why a limit stopped the tree goes to stderr, which the grader shows in its error.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import resource
import secrets
import signal
import sys
import time
from pathlib import Path

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
WATCH_INTERVAL_S = 0.05
PAGE = os.sysconf("SC_PAGE_SIZE")


def _prctl(option: int, value: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}) failed")


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
    def __init__(self, command: list[str], memory_mb: int, max_procs: int, use_cgroup: bool = True):
        self.command = command
        self.memory_bytes = memory_mb * 2**20
        self.max_procs = max_procs
        self.cgroup = (Cgroup.create(f"abstaingen-{secrets.token_hex(6)}", self.memory_bytes, max_procs)
                       if use_cgroup else None)
        self.child = 0

    def start(self) -> None:
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        self.child = os.fork()
        if self.child == 0:
            self._become_command()
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)
        os.close(devnull)

    def _become_command(self) -> None:
        try:
            os.setsid()
            _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            if self.cgroup is not None:
                self.cgroup.join()
            resource.setrlimit(resource.RLIMIT_NPROC, (self.max_procs, self.max_procs))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                signal.signal(number, signal.SIG_DFL)
            os.execvp(self.command[0], self.command)
        except BaseException as exc:  # noqa: BLE001 - the child must never return into the parent's code
            os.write(2, f"confine: cannot start {self.command[0]}: {exc}\n".encode())
        os._exit(127)

    def tree(self) -> list[int]:
        below = set(_descendants(os.getpid()))
        if self.cgroup is not None:
            below |= self.cgroup.pids()
        return sorted(below)

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memory-mb", type=int, required=True)
    parser.add_argument("--max-procs", type=int, required=True)
    parser.add_argument("--no-cgroup", action="store_true", help="enforce the caps with the watchdog alone")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    options = parser.parse_args(argv)
    command = options.command[1:] if options.command[:1] == ["--"] else options.command
    if not command:
        parser.error("no command to run")

    confinement = Confinement(command, options.memory_mb, options.max_procs, use_cgroup=not options.no_cgroup)
    stopping: list[int] = []
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, lambda signum, _frame: stopping.append(signum))
    confinement.start()
    exit_code = 0
    while True:
        status = confinement.reap()
        if confinement.child == -1:
            exit_code = status if status is not None else 0
            break
        if stopping:
            exit_code = 128 + stopping[0]
            break
        if (reason := confinement.over_limit()) is not None:
            print(f"sandbox stopped: {reason}", file=sys.stderr, flush=True)
            exit_code = 137
            break
        time.sleep(WATCH_INTERVAL_S)
    confinement.kill_all()
    return exit_code if exit_code >= 0 else 128 - exit_code


if __name__ == "__main__":
    sys.exit(main())
