"""Which environment code may run outside an isolating sandbox: code abstaingen wrote, known by its content.

A bundle's `origin` is a label the release writes about itself, so it cannot vouch for the code: a release
rewritten to say `origin: builtin` would otherwise run hostile code as the caller. The builtin generator
writes one implementation per domain, the same text for every seed, and `builtin_implementations.json`
pins the sha256 of each (tests/test_trust.py recomputes them from the generator). Anything else is
untrusted, whatever its label says.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path

from abstaingen.model import EnvironmentBundle

PINNED = Path(__file__).with_name("builtin_implementations.json")


@cache
def builtin_implementation_hashes() -> frozenset[str]:
    return frozenset(json.loads(PINNED.read_text(encoding="utf-8")).values())


def implementation_hash(bundle: EnvironmentBundle) -> str:
    return hashlib.sha256(bundle.implementation.encode()).hexdigest()


def written_by_abstaingen(bundle: EnvironmentBundle) -> bool:
    """The bundle says it is builtin and its code is one of the builtin generator's, byte for byte."""
    return bundle.origin == "builtin" and implementation_hash(bundle) in builtin_implementation_hashes()


def untrusted(bundles: list[EnvironmentBundle]) -> list[str]:
    """The env_ids among `bundles` whose code must run in an isolating sandbox."""
    return sorted(b.env_id for b in bundles if not written_by_abstaingen(b))
