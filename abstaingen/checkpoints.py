"""What lets a run be stopped at any point and started again: a lock per dataset and a checkpoint per
finished unit of work.

- `DatasetLock`: one run of a dataset at a time (an exclusive `flock` on `<dataset>/.run.lock`).
  A second run waits for the first: both read the earlier releases to avoid repeating them, so two
  at once would publish versions that repeat each other. The kernel drops the lock when its process
  ends, however it ends, so a killed run never leaves a stale lock.
- `Checkpoints`: the results of finished environments, one JSON file each under
  `<dataset>/.checkpoints/<run key>/`, written atomically. A rerun with the same config, seeds and
  seed has the same run key, reads them back instead of validating those environments again, and
  deletes the folder once it has published (or refused). Model calls need no checkpoint: the
  response cache already answers a rerun without a request.

  A checkpoint is trusted no more than the folder it sits in: each carries an HMAC over the run key,
  the code version, its stage and item and its result, under a key kept beside them (`.key`, mode
  0600) that must be a regular file of the running user's. A checkpoint that was edited, written by
  another code version or for another plan, or signed under another key is not read: its work is
  redone.
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import json
import os
import secrets
import shutil
import stat
import tempfile
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from abstaingen.errors import AbstaingenError, host_error
from abstaingen.model.common import content_hash

__all__ = ["Checkpoints", "DatasetLock"]

M = TypeVar("M", bound=BaseModel)
LOCK_FILE = ".run.lock"
CHECKPOINTS_DIR = ".checkpoints"
KEY_FILE = ".key"
MAX_CHECKPOINT_BYTES = 256 * 2**20


class DatasetLock:
    def __init__(self, dataset_dir: Path):
        self.path = dataset_dir / LOCK_FILE
        self._fd: int | None = None

    def try_acquire(self) -> bool:
        """Take the lock if no other run holds it; True when this process now holds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:  # never through a link: in a shared folder it could point at any file this user may write
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
        except OSError as exc:
            raise AbstaingenError(f"{self.path}: cannot open the run lock ({exc.strerror}); "
                                  "a link or another kind of file stands there") from None
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
            os.close(fd)
            raise AbstaingenError(f"{self.path}: the run lock is not a regular file of this user's; remove it")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return True

    def holder(self) -> str:
        """The process id the holder wrote, for the message of a run that waits."""
        try:
            return self.path.read_text().strip() or "?"
        except OSError:
            return "?"

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


class Checkpoints:
    def __init__(self, folder: Path, code_version: str = ""):
        self.folder = folder
        self.code_version = code_version

    @classmethod
    def for_run(cls, dataset_dir: Path, plan_fingerprint: str, code_version: str = "") -> Checkpoints:
        """The checkpoints of every run of one plan (config with its seed, and seeds) by one code version."""
        return cls(dataset_dir / CHECKPOINTS_DIR / plan_fingerprint[:24], code_version)

    @staticmethod
    def key(*parts: object) -> str:
        return content_hash([str(part) for part in parts])[:16]

    def _file(self, stage: str, item: str) -> Path:
        return self.folder / f"{stage}-{item}.json"

    def _secret(self, create: bool) -> bytes | None:
        """The signing key, made on first use; None when the file there is not this user's own."""
        path = self.folder.parent / KEY_FILE
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except FileNotFoundError:
            if not create:
                return None
            path.parent.mkdir(parents=True, exist_ok=True)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            except OSError:
                return None
            with os.fdopen(fd, "wb") as stream:
                stream.write(secrets.token_bytes(32))
            return self._secret(create=False)
        except OSError:
            return None
        with os.fdopen(fd, "rb") as stream:
            info = os.fstat(stream.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
                return None
            secret = stream.read(64)
        return secret if len(secret) == 32 else None

    def _mac(self, secret: bytes, stage: str, item: str, result: bytes) -> str:
        bound = json.dumps([self.folder.name, self.code_version, stage, item]).encode()
        return hmac.new(secret, bound + b"\n" + result, hashlib.sha256).hexdigest()

    def load(self, stage: str, item: str, model: type[M]) -> M | None:
        """The saved result, or None when there is none or it cannot be trusted (the work is redone)."""
        secret = self._secret(create=False)
        if secret is None:
            return None
        try:
            fd = os.open(self._file(stage, item), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            with os.fdopen(fd, "rb") as stream:
                if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
                    return None
                mac, _, result = stream.read(MAX_CHECKPOINT_BYTES + 1).partition(b"\n")
            if len(result) > MAX_CHECKPOINT_BYTES or not hmac.compare_digest(
                    mac.decode("ascii", errors="replace"), self._mac(secret, stage, item, result)):
                return None
            return model.model_validate_json(result)
        except (OSError, ValidationError, ValueError):
            return None

    def save(self, stage: str, item: str, result: BaseModel) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self._file(stage, item)
        secret = self._secret(create=True)
        if secret is None:
            raise AbstaingenError(f"{self.folder.parent / KEY_FILE}: the checkpoints' key is not a private file of "
                                  "this user's; remove it")
        body = result.model_dump_json().encode()
        try:
            with tempfile.NamedTemporaryFile("wb", dir=self.folder, prefix=".", delete=False) as stream:
                stream.write(self._mac(secret, stage, item, body).encode() + b"\n" + body)
                stream.flush()
                os.fsync(stream.fileno())
            os.replace(stream.name, path)
        except OSError as exc:
            raise host_error(path, exc, "cannot write a checkpoint") from None

    def saved(self, stage: str) -> int:
        return len(list(self.folder.glob(f"{stage}-*.json"))) if self.folder.is_dir() else 0

    def clear(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
        parent = self.folder.parent
        if parent.is_dir() and not any(p.name != KEY_FILE for p in parent.iterdir()):
            shutil.rmtree(parent, ignore_errors=True)
