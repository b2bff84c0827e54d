"""The llm backend: drafts a strict structured-output schema can express, one repair loop every
stage goes through, and the stages written so far (capability extraction, environment synthesis,
positive task). Perturbation is not written yet, so the backend is not registered as a generator."""
