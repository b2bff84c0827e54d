"""Importers: an environment someone else built, read into a bundle abstaingen generates in.

An importer is a function from a source folder and the `ImportOptions` to an `EnvironmentBundle` whose
`origin` is "imported" and whose `source` says where it came from, registered under the name
`abstaingen env import KIND` uses. It reads files; it never imports or runs the source's code in this
process: that code becomes the bundle's implementation and runs only in an isolating sandbox.
"""

from __future__ import annotations

from abstaingen.importers.base import IMPORTERS, EnvImporter, ImportOptions, importer


def get_importer(kind: str) -> EnvImporter:
    _load_builtin_importers()
    return IMPORTERS.find(kind)


def importer_kinds() -> list[str]:
    """The kinds by name, whatever order their modules were first imported in (an exporter imports some)."""
    _load_builtin_importers()
    return sorted(IMPORTERS)


def _load_builtin_importers() -> None:
    from abstaingen.importers import agentabstain, bundle, plain, tau2  # noqa: F401  (each registers itself)


__all__ = ["IMPORTERS", "EnvImporter", "ImportOptions", "get_importer", "importer", "importer_kinds"]
