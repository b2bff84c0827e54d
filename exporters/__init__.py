"""Exporters: a published release written out in the layout another tool reads.

An exporter is a function from a release (read from its folder), an output folder and the
`ExportOptions` to an `ExportReport`, registered under the name `abstaingen export NAME` uses. It writes only into its own
output folder: a release stays exactly what its manifest lists.
"""

from __future__ import annotations

from abstaingen.exporters.base import (
    EXPORTERS,
    Exporter,
    ExportOptions,
    ExportReport,
    ReleaseContents,
    exporter,
    read_release_contents,
    require_verified,
)


def get_exporter(name: str) -> Exporter:
    _load_builtin_exporters()
    return EXPORTERS.find(name)


def _load_builtin_exporters() -> None:
    from abstaingen.exporters import agentabstain, hf, inspect_eval, tau2  # noqa: F401  (each registers itself)


__all__ = ["EXPORTERS", "ExportOptions", "ExportReport", "Exporter", "ReleaseContents", "exporter", "get_exporter",
           "read_release_contents", "require_verified"]
