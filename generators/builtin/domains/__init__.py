"""The builtin domain library: every module in this folder defines one `BLUEPRINT` (see README.md)."""

from __future__ import annotations

import importlib
import pkgutil

from abstaingen.generators.builtin.blueprint import DomainBlueprint


def _discover() -> dict[str, DomainBlueprint]:
    found: dict[str, DomainBlueprint] = {}
    for module in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        blueprint = importlib.import_module(f"{__name__}.{module.name}").BLUEPRINT
        if blueprint.name in found:
            raise ValueError(f"two builtin domains are named {blueprint.name!r}")
        found[blueprint.name] = blueprint
    return found


DOMAINS: dict[str, DomainBlueprint] = _discover()
