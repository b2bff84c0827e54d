"""Capability extraction for the builtin backend: map a seed instruction onto a domain blueprint."""

from __future__ import annotations

import re

from abstaingen.errors import AbstaingenError, shown
from abstaingen.generators.builtin.blueprint import DomainBlueprint
from abstaingen.generators.builtin.domains import DOMAINS
from abstaingen.model import CapabilitySpec


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower()))


def match_domain(instruction: str, domain: str | None) -> DomainBlueprint:
    """The named domain, or the blueprint whose own description shares most words with the instruction."""
    if domain is not None:
        if domain not in DOMAINS:
            raise AbstaingenError(f"unknown domain {shown(domain)} (known: {', '.join(DOMAINS)})")
        return DOMAINS[domain]
    words = _words(instruction)
    scored = sorted(
        ((len(words & _words(" ".join((bp.seed_instruction, bp.collection, *bp.capabilities)))), bp.name)
         for bp in DOMAINS.values()),
        reverse=True,
    )
    best_score, best = scored[0]
    if best_score == 0:
        raise AbstaingenError(f"no builtin domain matches the seed instruction {shown(instruction)}; name one with 'domain'")
    return DOMAINS[best]


def extract_capabilities(instruction: str, domain: str | None) -> CapabilitySpec:
    bp = match_domain(instruction, domain)
    return CapabilitySpec(
        domain=bp.name,
        seed_instruction=instruction,
        summary=f"Sandbox for {bp.assistant}.",
        capabilities=list(bp.capabilities),
    )


def default_seeds() -> list[tuple[str, str]]:
    """(instruction, domain) for every builtin domain: what runs when the user gives no seed file."""
    return [(bp.seed_instruction, bp.name) for bp in DOMAINS.values()]
