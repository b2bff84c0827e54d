"""The llm backend's building blocks: drafts a strict structured-output schema can express, and the
one repair loop every stage goes through. The stages themselves are not written yet; the backend
is not registered until they are."""
