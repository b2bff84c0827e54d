"""Exporters: a published release written out in the layout another tool reads.

An exporter is a function from a release (read from its folder), an output folder and the
`ExportOptions` to an `ExportReport`, registered under the name `abstaingen export NAME` uses. It writes only into its own
output folder: a release stays exactly what its manifest lists.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pydantic import Field

from abstaingen.errata import Erratum, apply_errata, read_errata
from abstaingen.errors import AbstaingenError
from abstaingen.model import EnvironmentBundle, Release, TaskPair
from abstaingen.model.common import Model


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


Exporter = Callable[[ReleaseContents, Path, ExportOptions], ExportReport]
EXPORTERS: dict[str, Exporter] = {}


def exporter(name: str) -> Callable[[Exporter], Exporter]:
    def register(function: Exporter) -> Exporter:
        EXPORTERS[name] = function
        return function
    return register


def read_release_contents(folder: Path) -> ReleaseContents:
    """A release, verified first: an export of a damaged release would spread the damage."""
    from abstaingen.store import ENVIRONMENTS_DIR, load_release, read_bundle, verify_release

    problems = verify_release(folder)
    if problems:
        raise AbstaingenError(f"{folder}: the release does not verify ({len(problems)} problems, the first: "
                              f"{problems[0]}); run `abstaingen release verify {folder}`")
    manifest, pairs = load_release(folder)
    errata = read_errata(folder, manifest.version)
    environments = folder / ENVIRONMENTS_DIR
    bundles = [read_bundle(d) for d in sorted(environments.iterdir()) if d.is_dir()] if environments.is_dir() else []
    return ReleaseContents(folder=folder, manifest=manifest, pairs=apply_errata(pairs, errata), bundles=bundles,
                           errata=errata)


def get_exporter(name: str) -> Exporter:
    _load_builtin_exporters()
    if name not in EXPORTERS:
        raise AbstaingenError(f"unknown exporter {name!r} (known: {', '.join(sorted(EXPORTERS))})")
    return EXPORTERS[name]


def _load_builtin_exporters() -> None:
    from abstaingen.exporters import agentabstain, hf, inspect_eval  # noqa: F401  (each registers itself)


__all__ = ["EXPORTERS", "ExportOptions", "ExportReport", "Exporter", "ReleaseContents", "exporter", "get_exporter",
           "read_release_contents"]
