"""Errors a user can cause. The CLI turns them into one clear line and a non-zero exit."""

from __future__ import annotations

from pathlib import Path


class AbstaingenError(Exception):
    """A problem with the user's input or machine, explained in the message."""


def read_user_text(path: Path, what: str = "file") -> str:
    """A UTF-8 text file the user pointed at; every way it can fail becomes one clear error."""
    try:
        with path.open(encoding="utf-8", newline="") as stream:
            return stream.read()
    except FileNotFoundError:
        raise AbstaingenError(f"{path}: {what} not found") from None
    except UnicodeDecodeError as exc:
        raise AbstaingenError(f"{path}: {what} is not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise AbstaingenError(f"{path}: cannot read {what}: {exc.strerror or exc}") from None
