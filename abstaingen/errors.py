"""Errors a user can cause. The CLI turns them into one clear line and a non-zero exit."""

from __future__ import annotations

import errno
from pathlib import Path

SHOWN_CHARS = 60  # how much of a user's value an error message quotes


class AbstaingenError(Exception):
    """A problem with the user's input or machine, explained in the message."""


class HostError(AbstaingenError):
    """The machine failed the run, not the input: a full disk, a folder made read-only. Exit 1, not 2."""


# What a write can fail with that is the machine's doing.
HOST_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO, errno.EACCES, errno.EPERM})


def host_error(where: Path | str, exc: OSError, doing: str = "cannot write") -> HostError | OSError:
    """`exc` as one line naming `where`, when the machine caused it; otherwise `exc` itself."""
    if exc.errno not in HOST_ERRNOS:
        return exc
    return HostError(f"{where}: {doing} ({exc.strerror or exc})")


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """repr(value), cut to `limit` characters: error lines quote user text, never all of it."""
    if isinstance(value, str) and len(value) > limit:
        value = value[:limit]  # a 200 MB string is not repr'd whole just to be cut
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def read_user_text(path: Path, what: str = "file", max_bytes: int | None = None) -> str:
    """A UTF-8 text file the user pointed at; every way it can fail becomes one clear error.

    With `max_bytes`, a longer file (or an endless one, like /dev/zero) is refused after reading
    one byte more than that, instead of filling memory.
    """
    try:
        with path.open("rb") as stream:
            data = stream.read() if max_bytes is None else stream.read(max_bytes + 1)
    except FileNotFoundError:
        raise AbstaingenError(f"{path}: {what} not found") from None
    except OSError as exc:
        raise AbstaingenError(f"{path}: cannot read {what}: {exc.strerror or exc}") from None
    except ValueError as exc:  # a path with a NUL byte, say (it can come from a config value)
        raise AbstaingenError(f"{shown(str(path))}: cannot read {what}: {exc}") from None
    if max_bytes is not None and len(data) > max_bytes:
        raise AbstaingenError(f"{path}: {what} is larger than {max_bytes} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AbstaingenError(f"{path}: {what} is not UTF-8 text (byte {exc.start})") from None
