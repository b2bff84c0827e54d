"""Process-wide settings that must be in place before third-party libraries read them."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["configure_prefect_defaults"]


def configure_prefect_defaults(working_dir: Path | None = None) -> None:
    """Keep Prefect's state in the working directory and its analytics off, unless the user chose.

    Prefect reads these variables when it is first imported, so call this before any
    `import prefect` (the CLI does it first thing; flows and tests may call it again: it only sets
    what is still unset).
    """
    base = working_dir if working_dir is not None else Path.cwd()
    os.environ.setdefault("PREFECT_HOME", str(base / ".prefect"))
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    # That is the server's switch; Prefect's client reads only DO_NOT_TRACK, and without it prints a
    # "collects anonymous usage data" notice on a terminal at the first import in a new PREFECT_HOME.
    os.environ.setdefault("DO_NOT_TRACK", "1")
    # The first start in a new PREFECT_HOME builds the server's database, which can outlast the
    # default 20 s timeout on a loaded 2-core machine.
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")
