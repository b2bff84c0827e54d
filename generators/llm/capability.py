"""Capability extraction by a model: a seed instruction becomes a CapabilitySpec, in any domain."""

from __future__ import annotations

import json

from abstaingen.model import CapabilitySpec
from abstaingen.prompts import render
from abstaingen.providers.calls import Caller
from abstaingen.providers.drafts import CapabilityDraft, strict_schema
from abstaingen.providers.repair import RepairLog, draft

STAGE = "capability"


async def extract_capabilities(caller: Caller, model_key: str, instruction: str, domain: str | None,
                               max_rounds: int = 2, log: RepairLog | None = None) -> CapabilitySpec:
    """The spec for `instruction`; a domain the seed names is kept."""

    async def keeps_the_domain(candidate: CapabilityDraft) -> list[str]:
        return [f"domain: the domain is given as {domain!r}; keep it"] if domain and candidate.domain != domain else []

    prompt = render(STAGE, schema=json.dumps(strict_schema(CapabilityDraft)), instruction=instruction, domain=domain)
    accepted = await draft(caller, STAGE, model_key, prompt, CapabilityDraft, keeps_the_domain, max_rounds, log)
    return CapabilitySpec(domain=accepted.domain, seed_instruction=instruction, summary=accepted.summary,
                          capabilities=accepted.capabilities)
