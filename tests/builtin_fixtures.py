"""Real builtin environments and pairs for tests (small, seeded, built once per session)."""

from __future__ import annotations

from functools import cache

from abstaingen.generators.builtin.capability import extract_capabilities
from abstaingen.generators.builtin.domains import DOMAINS
from abstaingen.generators.builtin.environment import synthesize_environment
from abstaingen.generators.builtin.stages import perturb, write_positive_task
from abstaingen.model import EnvironmentBundle, Provenance, Scenario, TaskPair

SEED = 11
PROVENANCE = Provenance(backend={"task": "builtin"}, seed=SEED, code_version="test")


@cache
def builtin_bundle(domain: str = "travel", seed: int = SEED) -> EnvironmentBundle:
    blueprint = DOMAINS[domain]
    return synthesize_environment(blueprint, extract_capabilities(blueprint.seed_instruction, domain), seed)


@cache
def builtin_pair(scenario: Scenario, variant: int = 0, domain: str = "travel", seed: int = SEED) -> TaskPair:
    bundle = builtin_bundle(domain, seed)
    positive = write_positive_task(bundle, DOMAINS[domain], scenario, variant, seed)
    return perturb(positive, bundle, DOMAINS[domain], PROVENANCE, seed)
