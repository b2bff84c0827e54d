"""Exporters: a published release written out in the layout another tool reads.

An exporter is a function from a release (read from its folder), an output folder and the
`ExportOptions` to an `ExportReport`, registered under the name `abstaingen export NAME` uses. It writes only into its own
output folder: a release stays exactly what its manifest lists.
"""

from __future__ import annotations

from pathlib import Path

from abstaingen.errata import apply_errata, read_errata
from abstaingen.errors import AbstaingenError
from abstaingen.exporters.base import EXPORTERS, Exporter, ExportOptions, ExportReport, ReleaseContents, exporter


def read_release_contents(folder: Path) -> ReleaseContents:
    """A release, verified first: an export of a damaged release would spread the damage."""
    from abstaingen.pipelines.verify import verify_release
    from abstaingen.store import ENVIRONMENTS_DIR, load_release, read_bundle

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
    return EXPORTERS.find(name)


def _load_builtin_exporters() -> None:
    from abstaingen.exporters import agentabstain, hf, inspect_eval  # noqa: F401  (each registers itself)


__all__ = ["EXPORTERS", "ExportOptions", "ExportReport", "Exporter", "ReleaseContents", "exporter", "get_exporter",
           "read_release_contents"]
