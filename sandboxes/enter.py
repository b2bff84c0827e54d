"""The first process inside a bwrap sandbox: become the sandbox user for good, then run the command.

    python -I enter.py -- COMMAND [ARG ...]

bwrap starts this with the mounts already in place. When the sandbox was started by root, this runs as
the user namespace's root (mapped to host root only so that bwrap could bind root-owned folders), with
CAP_SETUID and CAP_SETGID alone; it switches to uid and gid 65534, which the launcher mapped to an
unprivileged host uid, so no capability and no host root identity is left. Either way it then:

- sets no_new_privs and loads a seccomp filter that refuses the calls sandboxed code never needs and that
  reach the kernel's shared state: the keyrings, ptrace, mounts and namespaces, BPF, userfaultfd,
  perf events, io_uring, module loading, kexec, reboot, swap, quotas, syslog, file handles;
- closes every descriptor but stdin, stdout and stderr;
- replaces itself with COMMAND.

It imports only the standard library and runs no code of the bundle: nothing can have changed the
interpreter before the filter is in place. A step that fails ends the sandbox (exit 126) with one line.
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct
import sys

SANDBOX_ID = 65534
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
RET_ALLOW = 0x7FFF0000
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
EPERM, ENOSYS = 1, 38
# clone(2) flags that make a namespace: refused, so the code cannot build a user namespace of its own.
NAMESPACE_FLAGS = 0x7E020080
X32_SYSCALL_BIT = 0x40000000

# What a tool handler never needs; each number per architecture (asm/unistd_64.h, asm-generic/unistd.h).
DENIED = ("keyctl", "add_key", "request_key", "ptrace", "mount", "umount2", "pivot_root", "chroot", "bpf",
          "userfaultfd", "perf_event_open", "unshare", "setns", "kexec_load", "kexec_file_load", "init_module",
          "finit_module", "delete_module", "swapon", "swapoff", "reboot", "acct", "quotactl", "open_by_handle_at",
          "name_to_handle_at", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree",
          "mount_setattr", "process_vm_readv", "process_vm_writev", "syslog", "fanotify_init", "vhangup",
          "lookup_dcookie", "io_uring_setup", "io_uring_enter", "io_uring_register", "personality", "iopl", "ioperm")
SYSCALLS = {
    "x86_64": (0xC000003E, {
        "keyctl": 250, "add_key": 248, "request_key": 249, "ptrace": 101, "mount": 165, "umount2": 166,
        "pivot_root": 155, "chroot": 161, "bpf": 321, "userfaultfd": 323, "perf_event_open": 298, "unshare": 272,
        "setns": 308, "kexec_load": 246, "kexec_file_load": 320, "init_module": 175, "finit_module": 313,
        "delete_module": 176, "swapon": 167, "swapoff": 168, "reboot": 169, "acct": 163, "quotactl": 179,
        "open_by_handle_at": 304, "name_to_handle_at": 303, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
        "fspick": 433, "move_mount": 429, "open_tree": 428, "mount_setattr": 442, "process_vm_readv": 310,
        "process_vm_writev": 311, "syslog": 103, "fanotify_init": 300, "vhangup": 153, "lookup_dcookie": 212,
        "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "personality": 135,
        "iopl": 172, "ioperm": 173, "clone": 56, "clone3": 435}),
    "aarch64": (0xC00000B7, {
        "keyctl": 219, "add_key": 217, "request_key": 218, "ptrace": 117, "mount": 40, "umount2": 39,
        "pivot_root": 41, "chroot": 51, "bpf": 280, "userfaultfd": 282, "perf_event_open": 241, "unshare": 97,
        "setns": 268, "kexec_load": 104, "kexec_file_load": 294, "init_module": 105, "finit_module": 273,
        "delete_module": 106, "swapon": 224, "swapoff": 225, "reboot": 142, "acct": 89, "quotactl": 60,
        "open_by_handle_at": 265, "name_to_handle_at": 264, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
        "fspick": 433, "move_mount": 429, "open_tree": 428, "mount_setattr": 442, "process_vm_readv": 270,
        "process_vm_writev": 271, "syslog": 116, "fanotify_init": 262, "vhangup": 58, "lookup_dcookie": 18,
        "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "personality": 92,
        "clone": 220, "clone3": 435}),
}


def seccomp_program(machine: str) -> list[tuple[int, int, int, int]]:
    """The classic-BPF filter for `machine` as (code, jt, jf, k) rows. A call from another architecture
    (x32, i386 on x86_64) kills the process; clone3 says ENOSYS so the C library falls back to clone,
    whose namespace flags are then refused."""
    if machine not in SYSCALLS:
        raise OSError(f"no seccomp filter for the {machine} architecture")
    arch, numbers = SYSCALLS[machine]
    ld_w, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    denied = sorted({numbers[name] for name in DENIED if name in numbers})  # aarch64 has no iopl, ioperm
    # Rows whose jump names a label; the labels are the three returns that close the program.
    rows: list[tuple[int, str | int, str | int, int]] = [
        (ld_w, 0, 0, 4), (jeq, 1, 0, arch), (ret, 0, 0, RET_KILL_PROCESS), (ld_w, 0, 0, 0),
        (jge, "eperm", 0, X32_SYSCALL_BIT),
        *[(jeq, "eperm", 0, nr) for nr in denied],
        (jeq, "enosys", 0, numbers["clone3"]),
        (jeq, 0, "allow", numbers["clone"]),
        (ld_w, 0, 0, 16),  # clone's flags: the low 32 bits of its first argument on little-endian machines
        (jset, "eperm", "allow", NAMESPACE_FLAGS),
    ]
    labels = {"allow": len(rows), "eperm": len(rows) + 1, "enosys": len(rows) + 2}
    rows += [(ret, 0, 0, RET_ALLOW), (ret, 0, 0, RET_ERRNO | EPERM), (ret, 0, 0, RET_ERRNO | ENOSYS)]

    def offset(index: int, target: str | int) -> int:  # jumps count from the row after the jump
        return labels[target] - index - 1 if isinstance(target, str) else target

    return [(code, offset(i, jt), offset(i, jf), k) for i, (code, jt, jf, k) in enumerate(rows)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def load_seccomp() -> None:
    rows = seccomp_program(platform.machine())
    program = b"".join(struct.pack("=HBBI", *row) for row in rows)
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(rows), ctypes.cast(buffer, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")


def become_sandbox_user() -> None:
    """Leave the namespace's root for uid and gid 65534 for good: setuid from 0 clears every capability."""
    if os.getuid() == 0 or os.geteuid() == 0:
        os.setgroups([])
        os.setresgid(SANDBOX_ID, SANDBOX_ID, SANDBOX_ID)
        os.setresuid(SANDBOX_ID, SANDBOX_ID, SANDBOX_ID)
    if 0 in os.getresuid() or 0 in os.getresgid():
        raise OSError("still root after the switch")
    capabilities = open("/proc/self/status").read().split("CapEff:")[1].split()[0]  # noqa: SIM115
    if int(capabilities, 16) != 0:
        raise OSError(f"capabilities left after the switch: {capabilities}")


def main(argv: list[str]) -> None:
    command = argv[1:] if argv[:1] == ["--"] else argv
    if not command:
        raise SystemExit("enter: no command to run")
    try:
        become_sandbox_user()
        load_seccomp()
        os.closerange(3, 1 << 16)
        os.execv(command[0], command)
    except OSError as exc:
        os.write(2, f"sandbox entry failed: {exc}\n".encode())
        os._exit(126)


if __name__ == "__main__":
    main(sys.argv[1:])
