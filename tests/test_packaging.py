"""The repo's top-level folders install under the abstaingen namespace, every package of them."""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_folder_is_listed_and_importable() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    mapping = project["tool"]["setuptools"]["package-dir"]
    listed = set(project["tool"]["setuptools"]["packages"])
    on_disk = set()
    for namespace, folder in mapping.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / folder).parts
            on_disk.add(".".join((namespace, *relative)))
    assert on_disk - listed == set(), "add these to [tool.setuptools] packages"
    for name in sorted(on_disk):
        assert importlib.import_module(name).__file__.startswith(str(ROOT))
