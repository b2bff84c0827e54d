"""The out-of-scope (OOD) dataset: the pipeline (pipeline.py), the system prompts (policy.py), the
checks of a published release (checks.py). Contracts: abstaingen.model.ood; generators:
abstaingen.generators.ood; scoring: abstaingen.ood_scoring."""
