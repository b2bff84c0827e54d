"""The llm backend: drafts a strict structured-output schema can express, one repair loop every stage
goes through, and the four stages (capability.py, environment.py, positive.py, perturbation.py); the
`llm` generator that runs them for a flow is in stages.py."""
