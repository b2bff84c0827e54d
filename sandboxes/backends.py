"""Where an environment's MCP server process runs. Each backend turns a bundle folder into a command."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Protocol

from mcp.client.stdio import StdioServerParameters

from abstaingen.errors import AbstaingenError

RUNTIME_SERVER = Path(__file__).with_name("runtime_server.py")


class SandboxBackend(Protocol):
    name: str

    def server_parameters(self, bundle_dir: Path, env: dict[str, str]) -> StdioServerParameters: ...


class LocalBackend:
    """A plain subprocess of the host's Python: no isolation, for trusted (builtin) bundles."""

    name = "local"

    def server_parameters(self, bundle_dir: Path, env: dict[str, str]) -> StdioServerParameters:
        return StdioServerParameters(
            command=sys.executable,
            args=["-I", str(RUNTIME_SERVER), str(bundle_dir.resolve())],
            env=env,
            cwd=str(bundle_dir.resolve()),
        )


BACKENDS: dict[str, type[SandboxBackend]] = {"local": LocalBackend}


def get_backend(name: str) -> SandboxBackend:
    try:
        return BACKENDS[name]()
    except KeyError:
        raise AbstaingenError(f"unknown sandbox backend {name!r} (available: {', '.join(BACKENDS)})") from None
