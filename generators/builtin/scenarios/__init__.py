"""The builtin scenario recipes, one module per scenario (see README.md); importing this package
registers them all in `abstaingen.generators.builtin.tasks.RECIPES`."""

from abstaingen.generators.builtin.scenarios import (  # noqa: F401
    s1_missing_parameter,
    s2_ambiguous_action,
    s3_conflicting_constraints,
    s4_high_stakes,
    s5_missing_capability,
    s6_tool_failure,
    s7_conflicting_evidence,
    s8_emergent_risk,
)
