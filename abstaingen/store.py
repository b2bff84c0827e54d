"""Artifacts on disk: environment bundle folders and immutable, versioned releases.

A bundle folder is what the runtime serves:

    <folder>/environment.json     the bundle without its implementation (pretty, sorted keys)
    <folder>/implementation.py    the tool implementation source

A release is published once and never changed:

    <output_dir>/<name>/<version>/pairs.jsonl                 one TaskPair per line
    <output_dir>/<name>/<version>/environments/<env_id>/      one bundle folder per environment
    <output_dir>/<name>/<version>/manifest.json               the Release, listing every other file
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
import stat
import tempfile
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from abstaingen.errors import AbstaingenError, host_error, read_user_text, shown
from abstaingen.model import EnvironmentBundle, Release, ReleaseFile, TaskPair
from abstaingen.model.ood import OodItem, RolePolicy
from abstaingen.model.release import Manifest, OodRelease, canary_string

__all__ = [
    "ENVIRONMENT_FILE",
    "IMPLEMENTATION_FILE",
    "ITEMS_FILE",
    "MANIFEST_FILE",
    "PAIRS_FILE",
    "ROLES_FILE",
    "counts_for",
    "counts_for_items",
    "dataset_canary",
    "existing_versions",
    "file_problems",
    "load_ood_release",
    "load_release",
    "publish_records",
    "publish_release",
    "read_manifest",
    "read_bundle",
    "read_models",
    "read_pairs",
    "release_folder",
    "require_writable_dir",
    "write_bundle",
]

M = TypeVar("M", bound=BaseModel)
MF = TypeVar("MF", bound=Manifest)
MANIFEST_TYPES: dict[str, type[Release] | type[OodRelease]] = {"pairs": Release, "ood": OodRelease}

ENVIRONMENT_FILE = "environment.json"
IMPLEMENTATION_FILE = "implementation.py"
PAIRS_FILE = "pairs.jsonl"
MANIFEST_FILE = "manifest.json"
ENVIRONMENTS_DIR = "environments"
ITEMS_FILE = "items.jsonl"  # an OOD release's
ROLES_FILE = "roles.jsonl"

_VERSION = re.compile(r"^v([1-9][0-9]*)$")
# Names that become folder names must not be able to climb out of the release or hide as dotfiles.
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_MAX_VERSION_ATTEMPTS = 1000


# --- bundles -------------------------------------------------------------------------------------


def write_bundle(bundle: EnvironmentBundle, folder: Path) -> None:
    _require_safe_name(bundle.env_id, "env_id")
    folder.mkdir(parents=True, exist_ok=True)
    spec = bundle.model_dump(mode="json", exclude={"implementation"})
    _write_text(folder / ENVIRONMENT_FILE, json.dumps(spec, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    _write_text(folder / IMPLEMENTATION_FILE, bundle.implementation)


def read_bundle(folder: Path, in_release: bool = False) -> EnvironmentBundle:
    """A bundle folder; `in_release`: one of a release's, whose files must be regular files, not links."""
    if not folder.is_dir():
        raise AbstaingenError(f"{folder}: not a bundle folder (no such directory)")
    spec_path, source_path = folder / ENVIRONMENT_FILE, folder / IMPLEMENTATION_FILE
    for required in (spec_path, source_path):
        if in_release:
            require_release_file(required)
        if not required.is_file():
            raise AbstaingenError(f"{folder}: not a bundle folder ({required.name} is missing)")
    spec = _read_json(spec_path)
    if not isinstance(spec, dict):
        raise AbstaingenError(f"{spec_path}: expected a JSON object")
    try:
        return EnvironmentBundle.model_validate({**spec, "implementation": read_user_text(source_path)})
    except ValidationError as exc:
        raise AbstaingenError(f"{spec_path}: invalid environment: {_first_error(exc)}") from None


# --- pairs ---------------------------------------------------------------------------------------


def read_pairs(path: Path) -> list[TaskPair]:
    """TaskPairs from a JSONL file (blank lines skipped); errors name the line."""
    return read_models(path, TaskPair, "task pair")


def read_models(path: Path, model: type[M], what: str) -> list[M]:
    """One `model` per line of a JSONL file (blank lines skipped); an invalid line is an error naming it."""
    found = []
    for number, line in enumerate(read_user_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            found.append(model.model_validate_json(line))
        except ValidationError as exc:
            raise AbstaingenError(f"{path}:{number}: invalid {what}: {_first_error(exc)}") from None
    return found


def counts_for(pairs: Iterable[TaskPair]) -> dict[str, dict[str, int]]:
    """How many pairs per scenario, domain, phase and (act side) deliverable, keys sorted."""
    tallies: dict[str, Counter[str]] = {k: Counter() for k in ("scenario", "domain", "phase", "deliverable")}
    for pair in pairs:
        tallies["scenario"][str(pair.scenario)] += 1
        tallies["domain"][pair.domain] += 1
        tallies["phase"][str(pair.perturbation.phase)] += 1
        tallies["deliverable"][str(pair.act.deliverable)] += 1
    return {kind: dict(sorted(tally.items())) for kind, tally in tallies.items()}


def counts_for_items(items: Sequence[OodItem]) -> dict[str, dict[str, int]]:
    """How many OOD items per kind, role, language and (off-topic items) subject, keys sorted."""
    tallies: dict[str, Counter[str]] = {key: Counter() for key in ("kind", "role", "language", "subject")}
    for item in items:
        tallies["kind"][item.kind] += 1
        tallies["role"][item.role_id] += 1
        tallies["language"][item.language] += 1
        if item.kind != "id":
            tallies["subject"][item.question.subject] += 1
    return {key: dict(sorted(tally.items())) for key, tally in tallies.items()}


# --- releases ------------------------------------------------------------------------------------


def release_folder(output_dir: Path, name: str, version: str) -> Path:
    return output_dir / name / version


def require_writable_dir(path: Path) -> None:
    """Create the folder `path` if needed and prove that a file can be made in it, before any work
    that would end in writing there; every way it can fail becomes one clear error."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise AbstaingenError(f"{path}: cannot be used as a folder: {_blocking_file(path)} is a file") from None
    except NotADirectoryError:
        raise AbstaingenError(f"{path}: cannot create this folder: {_blocking_file(path)} is a file") from None
    except OSError as exc:
        raise AbstaingenError(f"{path}: cannot create this folder: {exc.strerror or exc}") from None
    except ValueError as exc:  # a NUL byte in output_dir from the config
        raise AbstaingenError(f"{shown(str(path))}: cannot create this folder: {exc}") from None
    try:
        descriptor, probe = tempfile.mkstemp(prefix=".write-test-", dir=path)
    except OSError as exc:
        raise AbstaingenError(f"{path}: cannot write in this folder: {exc.strerror or exc}") from None
    os.close(descriptor)
    os.unlink(probe)


def _blocking_file(path: Path) -> Path:
    """The first part of `path` that exists and is not a folder (what stops mkdir -p)."""
    for part in reversed([path, *path.parents]):
        if part.exists() and not part.is_dir():
            return part
    return path


def existing_versions(dataset_dir: Path) -> list[int]:
    """Published version numbers under <output_dir>/<name>, ascending."""
    if not dataset_dir.is_dir():
        return []
    return sorted(int(m[1]) for p in dataset_dir.iterdir() if (m := _VERSION.match(p.name)))


def dataset_canary(dataset_dir: Path) -> str:
    """The canary string of the dataset: the latest release's, or a new GUID for its first release."""
    for number in reversed(existing_versions(dataset_dir)):
        canary = read_manifest(dataset_dir / f"v{number}").canary
        if canary:
            return canary
    return canary_string(str(uuid.uuid4()))


def publish_release(
    output_dir: Path,
    release: Release,
    pairs: Sequence[TaskPair],
    bundles: Sequence[EnvironmentBundle],
) -> Release:
    """Write a new version of the task-pair dataset `release.name` and return its manifest: pairs.jsonl,
    one bundle folder per environment, and the manifest with `counts` and `total_pairs` recomputed."""
    bundles_by_env = _bundles_by_env(bundles)
    _require_environments_for(pairs, bundles_by_env)

    def write_environments(staging: Path) -> None:
        for env_id, bundle in sorted(bundles_by_env.items()):
            write_bundle(bundle, staging / ENVIRONMENTS_DIR / env_id)

    content = release.model_copy(update={"counts": counts_for(pairs), "total_pairs": len(pairs)})
    return publish_records(output_dir, content, {PAIRS_FILE: pairs}, write_environments)


def publish_records(
    output_dir: Path,
    manifest: MF,
    tables: Mapping[str, Sequence[BaseModel]],
    write_more: Callable[[Path], None] | None = None,
) -> MF:
    """Write a new version of the dataset `manifest.name`, whatever its records: one JSONL file per entry
    of `tables` (file name -> records, one per line), what `write_more` adds to the folder, and the
    manifest, whose `version` and `files` are replaced by what was written.

    Everything is staged in a hidden folder next to the versions and renamed into place in one step,
    so a version folder is either complete or absent; an existing version is never touched.
    """
    _require_safe_name(manifest.name, "release name")
    dataset_dir = output_dir / manifest.name
    try:
        dataset_dir.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=dataset_dir))
    except OSError as exc:
        raise host_error(dataset_dir, exc, "cannot publish") from None
    try:
        # mkdtemp makes the folder 0700 whatever the umask; a release is for others to read, so the
        # published folder gets the mode any folder gets here (its files and subfolders already do).
        os.chmod(staging, 0o777 & ~process_umask())
        for file_name, records in tables.items():
            _write_text(staging / file_name, "".join(record.model_dump_json() + "\n" for record in records))
        if write_more is not None:
            write_more(staging)
        return _move_into_next_version(staging, dataset_dir, manifest.model_copy(update={"files": _file_list(staging)}))
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise host_error(dataset_dir, exc, "cannot publish") from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def process_umask() -> int:
    """The process's umask. os.umask can only set it (returning the old one), which for a moment changes
    the mode of files other threads create; so Linux's /proc/self/status is read first, and the mask is
    set and restored only where that is missing, to the strictest owner-usable value meanwhile."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8) & 0o777
    except (OSError, ValueError, IndexError):
        pass
    current = os.umask(0o077)
    os.umask(current)
    return current


def _move_into_next_version(staging: Path, dataset_dir: Path, content: MF) -> MF:
    number = max(existing_versions(dataset_dir), default=0) + 1
    for _ in range(_MAX_VERSION_ATTEMPTS):
        published = content.model_copy(update={"version": f"v{number}"})
        _write_text(staging / MANIFEST_FILE, _manifest_json(published))
        _fsync_dir(staging)
        target = dataset_dir / published.version
        # rename(2) silently replaces an EMPTY directory, so a folder someone created is skipped first.
        if not os.path.lexists(target):
            try:
                os.rename(staging, target)
            except OSError as exc:
                if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR):
                    raise
            else:
                _fsync_dir(dataset_dir)
                return published
        number += 1  # another publisher took this version meanwhile
    raise AbstaingenError(f"{dataset_dir}: could not find a free version folder")


def require_release_file(path: Path) -> Path:
    """`path` is a regular file, not a link (a release's files are never followed out of it, nor read
    from a FIFO or a device that would block or never end)."""
    try:
        info = path.lstat()
    except OSError:
        return path  # missing: the reader says so in its own words
    if not stat.S_ISREG(info.st_mode):
        kind = "a symbolic link" if stat.S_ISLNK(info.st_mode) else "not a regular file"
        raise AbstaingenError(f"{path}: is {kind}; a release holds regular files only")
    return path


def load_release(folder: Path) -> tuple[Release, list[TaskPair]]:
    """A task-pair release: its manifest and pairs."""
    manifest = read_manifest(folder)
    if not isinstance(manifest, Release):
        raise AbstaingenError(f"{folder}: holds {manifest.kind} records, not task pairs")
    return manifest, read_pairs(require_release_file(folder / PAIRS_FILE))


def load_ood_release(folder: Path) -> tuple[OodRelease, list[OodItem], list[RolePolicy]]:
    manifest = read_manifest(folder)
    if not isinstance(manifest, OodRelease):
        raise AbstaingenError(f"{folder}: holds {manifest.kind} records, not OOD items")
    return (manifest, read_models(folder / ITEMS_FILE, OodItem, "OOD item"),
            read_models(folder / ROLES_FILE, RolePolicy, "role"))


def file_problems(folder: Path) -> tuple[Release | OodRelease | None, list[str]]:
    """The manifest of a published release and the problems with its files (none when intact), one line each:
    every manifest entry is a plain relative path to a regular file whose sha256 and size match; nothing else is
    in the folder; nothing in it is a symbolic link (no file outside the release is ever opened). The manifest is
    None when it cannot be read. What the files hold is checked by abstaingen.pipelines.verify."""
    if (folder / MANIFEST_FILE).is_symlink():
        return None, [f"{MANIFEST_FILE}: is a symbolic link; a release holds only regular files"]
    try:
        manifest = read_manifest(folder)
    except AbstaingenError as exc:
        return None, [str(exc)]
    try:
        files, odd = _walk_release(folder)
    except OSError as exc:
        return manifest, [f"cannot list the release folder: {exc.strerror or exc}"]
    problems = [odd[name] for name in sorted(odd)]
    listed = set()
    for entry in manifest.files:
        name = _shown_path(entry.path)
        if not _is_plain_relative(entry.path):
            problems.append(f"{name}: the manifest lists a path that is not inside the release (absolute, "
                            "'..', '.' or empty parts); it was not opened")
            continue
        if entry.path in listed:
            problems.append(f"{name}: listed twice in the manifest")
            continue
        listed.add(entry.path)
        if entry.path not in files:
            if not any(entry.path == p or entry.path.startswith(p + "/") for p in odd):  # reported as a link
                problems.append(f"{name}: missing")
            continue
        try:
            actual, size = _sha256_and_size(folder / entry.path)
        except OSError as exc:
            problems.append(f"{name}: cannot read: {exc.strerror or exc}")
            continue
        if actual != entry.sha256:
            problems.append(f"{name}: sha256 {actual} does not match the manifest's {_shown_path(entry.sha256)}")
        elif size != entry.bytes:
            problems.append(f"{name}: {size} bytes, the manifest says {entry.bytes}")
    for extra in sorted(files - listed - {MANIFEST_FILE}):
        problems.append(f"{_shown_path(extra)}: not listed in the manifest")
    if (folder_name := folder.resolve().name) != manifest.version:
        problems.append(f"{MANIFEST_FILE}: version {shown(manifest.version)} but the folder is {shown(folder_name)}")
    if not _SAFE_NAME.match(manifest.name):
        problems.append(f"{MANIFEST_FILE}: name {shown(manifest.name)} cannot be a dataset folder's name")
    return manifest, problems


def _walk_release(folder: Path) -> tuple[set[str], dict[str, str]]:
    """The regular files under `folder` as relative POSIX paths, and a problem for every symbolic link
    or other non-regular entry, by path. Links are never followed, so nothing outside the folder is reached."""
    files: set[str] = set()
    problems: dict[str, str] = {}
    pending = [""]
    while pending:
        relative = pending.pop()
        with os.scandir(folder / relative if relative else folder) as entries:
            for entry in entries:
                name = f"{relative}/{entry.name}" if relative else entry.name
                if entry.is_symlink():
                    problems[name] = f"{_shown_path(name)}: is a symbolic link; a release holds only regular files"
                elif entry.is_dir(follow_symlinks=False):
                    pending.append(name)
                elif entry.is_file(follow_symlinks=False):
                    files.add(name)
                else:
                    problems[name] = f"{_shown_path(name)}: is not a regular file"
    return files, problems


def _is_plain_relative(path: str) -> bool:
    return not path.startswith("/") and all(part not in ("", ".", "..") for part in path.split("/"))


def _shown_path(path: str) -> str:
    """A path from the release or its manifest as one short line (names may hold newlines)."""
    return path if path.isprintable() and len(path) <= 200 else shown(path, 200)


def read_manifest(folder: Path) -> Release | OodRelease:
    """The manifest of a release folder, as the model of its kind (a manifest without `kind` is a task-pair
    release's, from before there were other kinds)."""
    if not folder.is_dir():
        raise AbstaingenError(f"{folder}: no such release folder")
    path = folder / MANIFEST_FILE
    if not path.is_file():
        raise AbstaingenError(f"{folder}: not a release ({MANIFEST_FILE} is missing)")
    data = _read_json(require_release_file(path))
    kind = data.get("kind", "pairs") if isinstance(data, dict) else "pairs"
    manifest_type = MANIFEST_TYPES.get(kind) if isinstance(kind, str) else None
    if manifest_type is None:
        raise AbstaingenError(f"{path}: invalid manifest: unknown kind {shown(str(kind))} "
                              f"(known: {', '.join(MANIFEST_TYPES)})")
    try:
        return manifest_type.model_validate(data)
    except ValidationError as exc:
        raise AbstaingenError(f"{path}: invalid manifest: {_first_error(exc)}") from None


def release_versions(dataset_dir: Path, kind: str) -> list[tuple[Path, Release | OodRelease]]:
    """Every published version of a dataset with its manifest, oldest first. A dataset holds one kind of
    record: a version of another kind means the name was reused, and is an error."""
    found = []
    for number in existing_versions(dataset_dir):
        folder = dataset_dir / f"v{number}"
        manifest = read_manifest(folder)
        if manifest.kind != kind:
            raise AbstaingenError(f"{folder}: holds {manifest.kind} records, not {kind}; give this dataset "
                                  "another name")
        found.append((folder, manifest))
    return found


def _manifest_json(release: Manifest) -> str:
    return json.dumps(release.model_dump(mode="json"), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _bundles_by_env(bundles: Sequence[EnvironmentBundle]) -> dict[str, EnvironmentBundle]:
    by_env: dict[str, EnvironmentBundle] = {}
    for bundle in bundles:
        _require_safe_name(bundle.env_id, "env_id")
        known = by_env.setdefault(bundle.env_id, bundle)
        if known.content_hash != bundle.content_hash:
            raise ValueError(f"two different environments share env_id {bundle.env_id!r}")
    return by_env


def _require_environments_for(pairs: Sequence[TaskPair], bundles: dict[str, EnvironmentBundle]) -> None:
    used = {variant.env_id for pair in pairs for variant in (pair.act, pair.abstain)}
    missing = sorted(used - set(bundles))
    if missing:
        raise ValueError(f"pairs use environments that are not in the release: {missing}")


def _file_list(folder: Path) -> list[ReleaseFile]:
    return [
        ReleaseFile(path=relative, sha256=_sha256(folder / relative), bytes=(folder / relative).stat().st_size)
        for relative in _relative_files(folder)
        if relative != MANIFEST_FILE
    ]


def _relative_files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _sha256_and_size(path: Path) -> tuple[str, int]:
    """Of a regular file, opened without following a link in its last part (a link swapped in after
    the folder was listed fails here instead of being read)."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(descriptor, "rb") as stream:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        digest = hashlib.sha256()
        size = 0
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
            size += len(block)
    return digest.hexdigest(), size


def _require_safe_name(name: str, what: str) -> None:
    if not _SAFE_NAME.match(name):
        raise ValueError(f"{what} {name!r} cannot be used as a folder name")


# --- scratch folders ----------------------------------------------------------------------------


def scratch_folder(purpose: str) -> tempfile.TemporaryDirectory[str]:
    """A temporary folder named after this process, so that `remove_scratch` can find it when the
    run is stopped before the folder's own cleanup runs."""
    return tempfile.TemporaryDirectory(prefix=f"abstaingen-{os.getpid()}-{purpose}-")


@contextmanager
def bundle_in_scratch(bundle: EnvironmentBundle) -> Iterator[Path]:
    """The bundle's folder, written in a scratch folder of this process and removed afterwards."""
    with scratch_folder("env") as tmp:
        folder = Path(tmp) / bundle.env_id
        write_bundle(bundle, folder)
        yield folder


def remove_scratch(pid: int | None = None) -> None:
    """Remove the scratch folders of this process, or of `pid`."""
    for folder in Path(tempfile.gettempdir()).glob(f"abstaingen-{pid or os.getpid()}-*"):
        shutil.rmtree(folder, ignore_errors=True)


def scratch_owners() -> set[int]:
    """The process ids that scratch folders are named after (this process's and the sandbox launchers')."""
    owners = set()
    for folder in Path(tempfile.gettempdir()).glob("abstaingen-*-*"):
        owner = folder.name.split("-")[1]
        if owner.isdigit():
            owners.add(int(owner))
    return owners


# --- small file helpers --------------------------------------------------------------------------


def _write_text(path: Path, text: str) -> None:
    """Write UTF-8 exactly as given (no newline translation) and flush it to disk."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as stream:
        stream.write(text)
        stream.flush()
        os.fsync(stream.fileno())


def _fsync_dir(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _read_json(path: Path) -> object:
    try:
        return json.loads(read_user_text(path))
    except json.JSONDecodeError as exc:
        raise AbstaingenError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from None
    except RecursionError:
        raise AbstaingenError(f"{path}: JSON nested too deeply") from None


def _first_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(part) if len(str(part)) <= 60 else str(part)[:57] + "..." for part in first["loc"])
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{where}: {first['msg']}{more}" if where else f"{first['msg']}{more}"
