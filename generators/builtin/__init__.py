"""The embedded, offline, seeded backend: domain blueprints with programmatic perturbations."""

from abstaingen.generators.builtin.domains import DOMAINS

DOMAIN_NAMES: tuple[str, ...] = tuple(DOMAINS)
