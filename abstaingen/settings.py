"""Process-wide settings that must be in place before third-party libraries read them."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

__all__ = ["configure_prefect_defaults"]


def prefect_home() -> Path:
    """One Prefect home per user, whatever folder a run starts in: its database keeps every run for the
    UI, and a server starts in it far sooner the second time (the first start builds the database)."""
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "abstaingen" / "prefect"


def configure_prefect_defaults() -> None:
    """Keep Prefect's state in the user's abstaingen folder and its analytics off, unless the user chose.

    Prefect reads these variables when it is first imported, so call this before any
    `import prefect` (the CLI does it first thing; flows and tests may call it again: it only sets
    what is still unset).
    """
    if "PREFECT_HOME" not in os.environ:
        home = prefect_home()
        with contextlib.suppress(OSError):  # Prefect makes the last folder only, and says so when it cannot
            home.mkdir(parents=True, exist_ok=True)
        os.environ["PREFECT_HOME"] = str(home)
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    # That is the server's switch; Prefect's client reads only DO_NOT_TRACK, and without it prints a
    # "collects anonymous usage data" notice on a terminal at the first import in a new PREFECT_HOME.
    os.environ.setdefault("DO_NOT_TRACK", "1")
    # The first start in a new PREFECT_HOME builds the server's database, which can outlast the
    # default 20 s timeout on a loaded 2-core machine.
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")
