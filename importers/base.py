"""What an importer reads and returns, the registry of importers (see __init__.py), and the pieces they share."""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path

from pydantic import Field

from abstaingen.errors import AbstaingenError
from abstaingen.model import EnvironmentBundle, EnvironmentSource
from abstaingen.model.common import Model
from abstaingen.registry import Registry


class ImportOptions(Model):
    name: str | None = Field(default=None, description="the environment or domain to read, for a source that holds "
                                                       "several (a tau2-bench checkout: its domain, e.g. retail)")
    license: str | None = Field(default=None, description="the source's license, when its LICENSE file does not say")


EnvImporter = Callable[[Path, ImportOptions], EnvironmentBundle]
IMPORTERS: Registry[str, EnvImporter] = Registry("environment importer")
importer = IMPORTERS.register


def files_hash(root: Path, paths: Iterable[Path]) -> str:
    """sha256 over the files read, each by its path relative to `root` and its bytes, in path order."""
    digest = hashlib.sha256()
    for path in sorted(paths, key=lambda p: p.relative_to(root).as_posix()):
        data = path.read_bytes()
        digest.update(f"{path.relative_to(root).as_posix()}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def git_revision(folder: Path) -> str | None:
    """The commit checked out in `folder`, when it is the top of a git work tree (a folder inside another
    project's checkout has no revision of its own); read by git, nothing run from the folder."""
    try:
        done = subprocess.run(["git", "-C", str(folder), "rev-parse", "--show-toplevel", "HEAD"], capture_output=True,
                              text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = done.stdout.split("\n")
    if done.returncode != 0 or len(lines) < 2 or Path(lines[0]).resolve() != folder.resolve():
        return None
    return lines[1] if len(lines[1]) == 40 else None


def stated_license(root: Path, given: str | None) -> str | None:
    """The license the user gave, else the first non-empty line of the source's LICENSE file."""
    if given:
        return given
    for name in ("LICENSE", "LICENSE.md", "LICENSE.txt", "LICENCE", "COPYING"):
        path = root / name
        if path.is_file():
            return next((line.strip() for line in path.read_text(encoding="utf-8", errors="replace").splitlines()
                         if line.strip()), None)
    return None


def source_of(kind: str, root: Path, read: Iterable[Path], options: ImportOptions) -> EnvironmentSource:
    return EnvironmentSource(kind=kind, location=root.resolve().name, name=options.name, revision=git_revision(root),
                             files_hash=files_hash(root, read), license=stated_license(root, options.license))


def require_file(path: Path, what: str) -> Path:
    if not path.is_file():
        raise AbstaingenError(f"{path}: no such file ({what})")
    return path


def env_id_for(domain: str, source: EnvironmentSource) -> str:
    """An imported environment's id: its domain and the hash of what was read."""
    return f"{domain}-imported-{source.files_hash[:10]}"
