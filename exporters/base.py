"""What an exporter reads and reports, and the registry of exporters (see __init__.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pydantic import Field

from abstaingen.errata import Erratum, apply_errata, read_errata
from abstaingen.errors import AbstaingenError
from abstaingen.model import EnvironmentBundle, Release, TaskPair
from abstaingen.model.common import Model
from abstaingen.registry import Registry


class ReleaseContents(Model):
    """Everything a release folder holds, read and checked, with its errata applied."""

    folder: Path = Field(description="the release folder it was read from")
    manifest: Release
    pairs: list[TaskPair]
    bundles: list[EnvironmentBundle] = Field(description="the environments, sorted by env_id")
    errata: list[Erratum] = Field(default_factory=list, description="the release's errata, already applied to "
                                                                    "`pairs` (withdrawn pairs left out)")


class ExportReport(Model):
    exporter: str
    folder: Path = Field(description="where the export was written")
    files: list[str] = Field(description="the files written, relative to the folder")
    rows: dict[str, int] = Field(default_factory=dict, description="rows per table or config, e.g. pairs, tasks")
    notes: list[str] = Field(default_factory=list, description="what a user of the export should know")


class ExportOptions(Model):
    license: str = Field(default="cc-by-4.0", description="the data's licence id, for formats that state one")
    allow_unsandboxed: bool = Field(default=False, description="export environments written by a model to formats "
                                                               "whose harness runs environment code in-process")
    sandbox: str = Field(default="auto", description="where an exporter that replays the reference calls (tau2) runs "
                                                    "the environment: auto, docker or bwrap")


Exporter = Callable[[ReleaseContents, Path, ExportOptions], ExportReport]
EXPORTERS: Registry[str, Exporter] = Registry("exporter")
exporter = EXPORTERS.register


def require_verified(folder: Path) -> None:
    """Refuse a release that does not verify: an export of a damaged release would spread the damage."""
    from abstaingen.pipelines.verify import verify_release

    if problems := verify_release(folder):
        raise AbstaingenError(f"{folder}: the release does not verify ({len(problems)} problems, the first: "
                              f"{problems[0]}); run `abstaingen release verify {folder}`")


def read_release_contents(folder: Path) -> ReleaseContents:
    """A release of task pairs, verified first."""
    from abstaingen.store import ENVIRONMENTS_DIR, load_release, read_bundle

    require_verified(folder)
    manifest, pairs = load_release(folder)
    errata = read_errata(folder, manifest.version)
    environments = folder / ENVIRONMENTS_DIR
    bundles = [read_bundle(d) for d in sorted(environments.iterdir()) if d.is_dir()] if environments.is_dir() else []
    return ReleaseContents(folder=folder, manifest=manifest, pairs=apply_errata(pairs, errata), bundles=bundles,
                           errata=errata)
