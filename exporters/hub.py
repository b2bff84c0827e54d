"""Uploading an export to the Hugging Face Hub (`abstaingen export hf --push`), of either kind (task pairs,
abstaingen.exporters.hf; OOD items, abstaingen.exporters.hf_ood).

`check_export_folder` proves that a folder is such an export (for pushing one written earlier),
`check_hub` asks the Hub about the token and the target before anything is written, and `push_to_hub`
makes the repository's `main` exactly the export and tags it with the release's version.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import Field

from abstaingen.errors import AbstaingenError, HostError, shown
from abstaingen.exporters.base import read_release_contents, require_verified
from abstaingen.exporters.hf import (
    CARD_FILE,
    LICENSE,
    RELEASE_DIR,
    HfExport,
    build_hf_export,
    card_metadata_of,
    data_file,
    require_arrow,
)
from abstaingen.model import Release
from abstaingen.model.common import Model
from abstaingen.model.release import OodRelease
from abstaingen.optional import require
from abstaingen.store import MANIFEST_FILE


def export_of_release(folder: Path, license_id: str = LICENSE, repo_id: str | None = None) -> HfExport:
    """The export of the release in `folder`, of either kind (task pairs or OOD items), once it verifies."""
    from abstaingen.store import read_manifest

    if read_manifest(folder).kind == "ood":
        from abstaingen.exporters.hf_ood import build_ood_export

        require_verified(folder)
        return build_ood_export(folder, license_id, repo_id)
    return build_hf_export(read_release_contents(folder), license_id, repo_id)  # verifies first


class ExportFolder(Model):
    """A folder that check_export_folder found to be an export as `export hf` writes it."""

    manifest: Release | OodRelease = Field(description="the manifest of the release it carries")
    files: list[str] = Field(description="the export's files, relative to the folder: what a push uploads")
    card: str = Field(description="its dataset card, README.md (which may have been edited)")


def check_export_folder(folder: Path) -> ExportFolder:
    """Prove that `folder` holds an export of abstaingen before it is pushed: the release it carries verifies and
    its manifest is the one at the top, every config holds exactly the rows that release gives (errata applied),
    the card's metadata lists the export's configs, and no file is missing, extra or a link (hidden ones, such as
    the .cache of a download, aside). The card's text may have been edited."""
    require_arrow()
    import pyarrow as pa
    import pyarrow.parquet as pq

    from abstaingen.store import read_manifest

    def refused(why: str) -> AbstaingenError:
        return AbstaingenError(f"--from-folder {folder}: {why}")

    if not folder.is_dir():
        raise refused("no such folder")
    try:
        manifest = read_manifest(folder)
    except AbstaingenError as exc:
        raise refused(f"not an export of abstaingen ({exc})") from None
    release = folder / RELEASE_DIR / manifest.name / manifest.version
    if not (release / MANIFEST_FILE).is_file():
        raise refused(f"not an export of abstaingen as this version writes it: no {RELEASE_DIR}/{manifest.name}/"
                      f"{manifest.version}/ (export the release again)")
    if (release / MANIFEST_FILE).read_bytes() != (folder / MANIFEST_FILE).read_bytes():
        raise refused(f"{MANIFEST_FILE} is not the manifest of {RELEASE_DIR}/{manifest.name}/{manifest.version}/")
    try:
        expected = export_of_release(release)
    except AbstaingenError as exc:
        raise refused(str(exc)) from None
    files = [*(data_file(config) for config in expected.tables), CARD_FILE, *expected.carried]
    present, links = set(), []
    for root, folders, names in os.walk(folder):
        folders[:] = [name for name in folders if not name.startswith(".")]
        for name in [*names, *folders]:
            path = Path(root, name)
            if path.is_symlink():
                links.append(path.relative_to(folder).as_posix())
            elif name in names and not name.startswith("."):
                present.add(path.relative_to(folder).as_posix())
    if links:
        raise refused(f"{links[0]} is a link; an export holds only its own files")
    if missing := sorted(set(files) - present):
        raise refused(f"{missing[0]} is missing ({len(missing)} files in all)")
    if extra := sorted(present - set(files)):
        raise refused(f"{extra[0]} is not part of the export ({len(extra)} such files); move it out first")
    for config, table in expected.tables.items():
        try:
            held = pq.read_table(folder / data_file(config))
        except (OSError, pa.ArrowException) as exc:
            raise refused(f"{data_file(config)}: not a parquet file ({' '.join(str(exc).split())[:200]})") from None
        if not held.equals(table):
            raise refused(f"{data_file(config)} does not hold the rows of the release it carries")
    card = (folder / CARD_FILE).read_text(encoding="utf-8", errors="replace")
    metadata = card_metadata_of(card)
    if metadata is None or metadata.get("configs") != (card_metadata_of(expected.card) or {}).get("configs"):
        raise refused(f"{CARD_FILE}'s metadata does not list the export's configs ({', '.join(expected.tables)})")
    return ExportFolder(manifest=manifest, files=files, card=card)


def names_repository(card: str, repo_id: str) -> bool:
    """Whether a card's commands name the dataset repository `repo_id` (a card written by --push does)."""
    return re.search(rf"(?<![\w./-]){re.escape(repo_id)}(?![\w./-])", card) is not None


class PushReport(Model):
    repo_id: str = Field(description="the dataset repository on the Hub, org/name")
    revision: str = Field(description="the tag that names this release's commit (its version, e.g. v2)")
    commit: str = Field(description="the commit on main that holds the export")
    url: str = Field(description="the repository's page on the Hub")


class HubTarget(Model):
    """What the Hub said about a push's target, before anything was written."""

    repo_id: str = Field(description="the dataset repository, org/name")
    user: str = Field(description="the account the token belongs to")
    exists: bool = Field(description="whether the repository is there already (else the push creates it)")


_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")


def require_hub() -> None:
    """--push uploads with huggingface_hub, an extra (abstaingen[hf]): checked before the export is written."""
    require("huggingface_hub", "export hf --push")


@contextmanager
def hub_errors(repo_id: str) -> Iterator[None]:
    """What the Hub, or the way to it, fails with, as one line: its refusal (exit 2), or that it cannot be reached
    (a HostError, exit 1)."""
    from huggingface_hub import constants
    from huggingface_hub.errors import HfHubHTTPError, HTTPError, OfflineModeIsEnabled

    try:
        yield
    except HfHubHTTPError as exc:
        said = exc.server_message or str(exc).splitlines()[0]
        raise AbstaingenError(f"--push {repo_id}: the Hub refused (HTTP {exc.response.status_code}): "
                              f"{' '.join(said.split())[:300]}") from None
    except OfflineModeIsEnabled:
        raise HostError(f"--push {repo_id}: HF_HUB_OFFLINE is set, so the Hub is not asked; unset it to push") from None
    except (HTTPError, OSError) as exc:
        said = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise HostError(f"--push {repo_id}: cannot reach the Hub at {constants.ENDPOINT} ({said})") from None


def write_problem(whoami: Mapping[str, Any], repo_id: str) -> str | None:
    """Why the token `whoami` describes (the Hub's answer to /api/whoami-v2) cannot write to `repo_id`, when the
    answer tells; None otherwise (a fine-grained token's scopes are left to the Hub to enforce)."""
    user = str(whoami.get("name", "?"))
    namespace = repo_id.split("/")[0]
    token = (whoami.get("auth") or {}).get("accessToken") or {}
    roles = {str(org.get("name")): org.get("roleInOrg") for org in whoami.get("orgs") or []}
    if token.get("role") == "read":
        return f"the token of {user} is read-only; make one with write access (https://huggingface.co/settings/tokens)"
    if namespace != user and namespace not in roles:
        return f"{user} cannot write there: {namespace} is neither that account nor one of its organisations"
    if roles.get(namespace) == "read":
        return f"{user} may only read in the organisation {namespace}"
    return None


def check_hub(repo_id: str, version: str) -> HubTarget:
    """Before anything is written: a token, a Hub that answers and knows it, that it may write to the repository's
    namespace, and that `version` is not on the repository yet (a version is published once)."""
    require_hub()
    from huggingface_hub import HfApi, get_token
    from huggingface_hub.errors import HfHubHTTPError

    if not _REPO_ID.match(repo_id):
        raise AbstaingenError(f"--push {shown(repo_id)}: give the dataset repository as org/name")
    if get_token() is None:
        raise AbstaingenError(f"--push {repo_id}: no Hugging Face token; set HF_TOKEN or run `hf auth login` (a token "
                              "with write access)")
    api = HfApi()
    with hub_errors(repo_id):
        whoami = api.whoami()
        if problem := write_problem(whoami, repo_id):
            raise AbstaingenError(f"--push {repo_id}: {problem}")
        try:
            tags = api.list_repo_refs(repo_id, repo_type="dataset").tags
        except HfHubHTTPError as exc:
            if exc.response.status_code != 404:  # 404: no such repository (yet), which the push creates
                raise
            return HubTarget(repo_id=repo_id, user=whoami["name"], exists=False)
    if any(tag.name == version for tag in tags):
        raise AbstaingenError(f"--push {repo_id}: {version} is already on the Hub (tag {version}); a version is "
                              "published once")
    return HubTarget(repo_id=repo_id, user=whoami["name"], exists=True)


def push_to_hub(out: Path, files: list[str], repo_id: str, version: str, private: bool) -> PushReport:
    """Upload an export as one commit on main of the dataset repository `repo_id`, tagged with the release's
    version: main is always the latest release, exactly (an earlier version's files that this export does not
    have are deleted in the same commit), and `revision="v1"` loads an earlier one. The token comes from the
    environment (HF_TOKEN) or `hf auth login`; HF_ENDPOINT points elsewhere than the Hub. Call check_hub first."""
    require_hub()
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi
    from huggingface_hub.errors import HfHubHTTPError

    api = HfApi()
    with hub_errors(repo_id):
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        try:
            before = api.list_repo_files(repo_id, repo_type="dataset")
        except HfHubHTTPError as exc:
            if exc.response.status_code != 404:  # 404: nothing committed yet
                raise
            before = []
        stale = sorted(set(before) - set(files) - {".gitattributes"})
        info = api.create_commit(repo_id, [*(CommitOperationAdd(path_in_repo=name, path_or_fileobj=str(out / name))
                                             for name in files),
                                           *(CommitOperationDelete(path_in_repo=name) for name in stale)],
                                 commit_message=f"{version}", repo_type="dataset")
        api.create_tag(repo_id, tag=version, revision=info.oid, repo_type="dataset",
                       tag_message=f"release {version}")
    return PushReport(repo_id=repo_id, revision=version, commit=info.oid, url=info.repo_url.url)
