"""The launcher that caps a local or bwrap sandbox's process tree, in both of its modes: a cgroup
where it can make one, and the watchdog alone (what machines without a writable cgroup get)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from abstaingen.sandboxes.backends import CONFINE

pytestmark = pytest.mark.component

FORKS = """
import os, time
born = 0
try:
    for _ in range(60):
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
        born += 1
except OSError:
    pass
print(born, flush=True)
time.sleep(5)
"""
HOG = "block = b'x' * (400 * 2 ** 20)\nprint('held', flush=True)\nimport time\ntime.sleep(5)\n"
DAEMON = """
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        print(os.getpid(), flush=True)
        time.sleep(60)
    os._exit(0)
os.wait()
time.sleep(0.5)
"""


def confine(code: str, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-I", str(CONFINE), "--memory-mb", "256", "--max-procs", "16", *flags,
                           "--", sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("mode", [[], ["--no-cgroup"]], ids=["cgroup", "watchdog"])
def test_a_fork_bomb_is_held_under_the_process_cap(mode: list[str]) -> None:
    run = confine(FORKS, *mode)
    if mode:  # the watchdog stops the whole tree once it counts too many
        assert run.returncode == 137 and "processes, above the limit of 16" in run.stderr, run.stderr
    else:  # the cgroup makes the fork fail
        assert run.returncode == 0 and int(run.stdout) < 16, (run.stdout, run.stderr)


@pytest.mark.parametrize("mode", [[], ["--no-cgroup"]], ids=["cgroup", "watchdog"])
def test_memory_above_the_cap_stops_the_tree(mode: list[str]) -> None:
    run = confine(HOG, *mode)
    assert run.returncode == 137, (run.stdout, run.stderr)
    if mode:  # the watchdog sees the resident total after the allocation
        assert "MB resident in total, above the limit of 256 MB" in run.stderr
    else:  # the cgroup's OOM killer stops the allocation itself
        assert "held" not in run.stdout


@pytest.mark.parametrize("mode", [[], ["--no-cgroup"]], ids=["cgroup", "watchdog"])
def test_a_setsid_daemon_dies_with_the_session(mode: list[str]) -> None:
    run = confine(DAEMON, *mode)
    daemon = int(run.stdout)
    assert run.returncode == 0
    with pytest.raises(ProcessLookupError):
        os.kill(daemon, 0)


def test_a_killed_launcher_s_cgroup_is_removed_by_the_next(tmp_path: Path) -> None:
    """SIGKILL gives the launcher no chance to remove its cgroup; the next launcher removes it once it
    is empty and old enough, and leaves a young one (another launcher's, not joined yet) alone."""
    import signal as signals

    from abstaingen.sandboxes.confine import remove_stale

    launcher = subprocess.Popen([sys.executable, "-I", str(CONFINE), "--memory-mb", "256", "--max-procs", "16",
                                 "--", sys.executable, "-c", "import time; time.sleep(60)"])
    deadline = time.monotonic() + 30
    folders: list[Path] = []
    while not folders and time.monotonic() < deadline:
        folders = [Path(f) for f in _cgroups_of_children(launcher.pid)]
        time.sleep(0.05)
    if not folders:
        launcher.kill()
        launcher.wait()
        pytest.skip("this machine gives the launcher no cgroup")
    os.kill(launcher.pid, signals.SIGKILL)
    launcher.wait()
    for folder in folders:  # the tree dies with its launcher (PDEATHSIG); the cgroup stays
        while (folder / "cgroup.procs").read_text().strip() and time.monotonic() < deadline:
            time.sleep(0.05)
    assert all(f.is_dir() for f in folders)
    for folder in folders:
        remove_stale(folder.parent)
    assert all(f.is_dir() for f in folders)  # too young to be judged stale
    old = time.time() - 3600
    for folder in folders:
        os.utime(folder, (old, old))
        remove_stale(folder.parent)
    assert not any(f.exists() for f in folders)


def _cgroups_of_children(pid: int) -> list[str]:
    """The abstaingen cgroups the children of `pid` are in."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            if entry.name.isdigit() and int(stat[stat.rindex(")") + 2:].split()[1]) == pid:
                for line in (entry / "cgroup").read_text().splitlines():
                    _, controllers, path = line.split(":", 2)
                    if "abstaingen-" in path:
                        mount = "unified" if controllers == "" else controllers.split(",")[0]
                        root = Path("/sys/fs/cgroup") if Path("/sys/fs/cgroup/cgroup.controllers").exists() \
                            else Path("/sys/fs/cgroup") / mount
                        found.append(str(root / path.lstrip("/")))
        except (OSError, ValueError):
            continue
    return found


HEADERS = {"x86_64": Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
           "aarch64": Path("/usr/include/asm-generic/unistd.h")}


@pytest.mark.parametrize("machine", sorted(HEADERS))
def test_the_seccomp_tables_match_the_kernel_headers(machine: str) -> None:
    """The filter's syscall numbers, for both architectures, are the ones the kernel's headers give
    (only x86_64's can run here, so the aarch64 table is checked this way)."""
    import re

    from abstaingen.sandboxes.enter import SYSCALLS, seccomp_program

    header = HEADERS[machine]
    if not header.is_file():
        pytest.skip(f"{header} is not installed (Debian: linux-libc-dev)")
    text = header.read_text()
    _, numbers = SYSCALLS[machine]
    for name, number in numbers.items():
        found = re.search(rf"#define __NR(?:3264)?_{name}\s+(\d+)", text)
        assert found and int(found.group(1)) == number, (machine, name, number)
    program = seccomp_program(machine)
    jumps = [(i, jt, jf) for i, (code, jt, jf, _) in enumerate(program) if code & 0x07 == 0x05]  # BPF_JMP
    assert jumps and all(i + 1 + max(jt, jf) < len(program) and max(jt, jf) < 256 for i, jt, jf in jumps)
    assert [code for code, *_ in program[-3:]] == [0x06, 0x06, 0x06]  # allow, EPERM, ENOSYS
