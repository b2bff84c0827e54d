"""The embedded, offline, seeded backend: domain blueprints with programmatic perturbations."""

DOMAIN_NAMES: tuple[str, ...] = ("travel", "banking", "email")
