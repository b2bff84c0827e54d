"""Where an environment's MCP server process runs. Each backend turns a bundle folder into a command."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Protocol

from mcp.client.stdio import StdioServerParameters
from pydantic import Field

from abstaingen.errors import AbstaingenError
from abstaingen.model.common import Model

RUNTIME_SERVER = Path(__file__).with_name("runtime_server.py")


class SandboxLimits(Model):
    call_timeout_s: float = Field(default=10.0, gt=0, description="a tool call that takes longer kills the sandbox")
    memory_mb: int = Field(default=1024, ge=256)


class SandboxBackend(Protocol):
    name: str
    limits: SandboxLimits
    isolated: bool  # may run code that an LLM wrote

    def server_parameters(self, bundle_dir: Path, env: dict[str, str]) -> StdioServerParameters: ...


def _runtime_args(bundle_dir: Path, limits: SandboxLimits) -> list[str]:
    return ["-I", str(RUNTIME_SERVER), str(bundle_dir), "--memory-mb", str(limits.memory_mb)]


class LocalBackend:
    """A plain subprocess of the host's Python: resource limits only, for trusted (builtin) bundles."""

    name = "local"
    isolated = False

    def __init__(self, limits: SandboxLimits | None = None):
        self.limits = limits or SandboxLimits()

    def server_parameters(self, bundle_dir: Path, env: dict[str, str]) -> StdioServerParameters:
        return StdioServerParameters(command=sys.executable, args=_runtime_args(bundle_dir.resolve(), self.limits),
                                     env=env, cwd=str(bundle_dir.resolve()))


class BwrapBackend:
    """bubblewrap: the host's file system read-only, a private /tmp, no network, own PID namespace."""

    name = "bwrap"
    isolated = True

    def __init__(self, limits: SandboxLimits | None = None):
        self.limits = limits or SandboxLimits()

    @staticmethod
    def available() -> bool:
        if shutil.which("bwrap") is None:
            return False
        probe = subprocess.run(["bwrap", *BwrapBackend.isolation(), "true"], capture_output=True, timeout=10)
        return probe.returncode == 0

    @staticmethod
    def isolation() -> list[str]:
        """The host read-only, a private empty /tmp as scratch, no network, IPC or PID sharing."""
        # Python and the runtime may themselves live under /tmp (a clone there, say): bind them back.
        needed = {sys.prefix, sys.base_prefix, str(RUNTIME_SERVER.parent), *(p for p in sys.path if p)}
        rebinds = [arg for path in sorted(needed) if path.startswith("/tmp/") and Path(path).exists()
                   for arg in ("--ro-bind", path, path)]
        return ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", *rebinds,
                "--chdir", "/tmp", "--unshare-all", "--die-with-parent", "--new-session"]

    def server_parameters(self, bundle_dir: Path, env: dict[str, str]) -> StdioServerParameters:
        return StdioServerParameters(command="bwrap", args=[
            *self.isolation(), "--ro-bind", str(bundle_dir.resolve()), "/tmp/bundle",
            sys.executable, *_runtime_args(Path("/tmp/bundle"), self.limits)], env=env)


BACKENDS: dict[str, type[LocalBackend] | type[BwrapBackend]] = {"local": LocalBackend, "bwrap": BwrapBackend}


def select_backend(preference: str, limits: SandboxLimits | None = None) -> SandboxBackend:
    """`auto` takes the strongest isolation this machine offers; any other name must be usable."""
    if preference != "auto":
        return get_backend(preference, limits)
    return BwrapBackend(limits) if BwrapBackend.available() else LocalBackend(limits)


def get_backend(name: str, limits: SandboxLimits | None = None) -> SandboxBackend:
    try:
        backend = BACKENDS[name]
    except KeyError:
        raise AbstaingenError(f"unknown sandbox backend {name!r} (available: {', '.join(BACKENDS)})") from None
    if backend is BwrapBackend and not BwrapBackend.available():
        raise AbstaingenError("sandbox backend 'bwrap' is not usable here: install bubblewrap (Debian: bubblewrap)")
    return backend(limits)
