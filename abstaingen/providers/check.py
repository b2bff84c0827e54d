"""`abstaingen models check`: one tiny structured request per configured role, so that a key, an
endpoint and structured output can be checked in seconds before a long run."""

from __future__ import annotations

import asyncio

from abstaingen.errors import AbstaingenError
from abstaingen.model.common import Model
from abstaingen.providers import ModelConfig, ProviderConfig, StructuredRequest, build_provider

ROLES = ("generator", "judge")
PROBE = StructuredRequest(
    system="You check that structured output works. Answer with the object the schema asks for.",
    user="Set ok to true and word to the word 'ready'.",
    schema_name="readiness_check",
    json_schema={"type": "object", "additionalProperties": False, "required": ["ok", "word"],
                 "properties": {"ok": {"type": "boolean"}, "word": {"type": "string"}}},
)


class RoleCheck(Model):
    role: str
    model: str
    provider: str
    works: bool
    detail: str


async def check_role(role: str, key: str, model: ModelConfig, provider_key: str,
                     provider: ProviderConfig) -> RoleCheck:
    where = {"role": role, "model": f"{key} ({model.name}, family {model.family})",
             "provider": f"{provider_key} ({provider.kind}{', ' + provider.base_url if provider.base_url else ''})"}
    try:
        client = build_provider(provider)
        try:
            reply = await client.complete(model, PROBE)
        finally:
            await client.aclose()
    except AbstaingenError as exc:
        return RoleCheck(**where, works=False, detail=str(exc))
    cost = reply.usage.cost_usd(model)
    spent = f"{reply.latency_s:.2f} s, {reply.usage.input_tokens}+{reply.usage.output_tokens} tokens, ${cost:.5f}"
    if reply.problem is not None:
        return RoleCheck(**where, works=False, detail=f"{reply.problem} ({spent}): {(reply.text or '')[:120]!r}")
    if not isinstance(reply.value, dict) or reply.value.get("ok") is not True:
        return RoleCheck(**where, works=False, detail=f"the answer does not fill the schema ({spent}): {reply.value!r}"[:300])
    return RoleCheck(**where, works=True, detail=f"structured output works ({spent})")


async def check_roles(models: dict[str, ModelConfig], providers: dict[str, ProviderConfig],
                      roles: list[tuple[str, str | None]]) -> list[RoleCheck]:
    """Every (role, model key) given; a judge committee gives one per member."""
    chosen = [(role, key) for role, key in roles if key is not None]
    if not chosen:
        raise AbstaingenError("no model is configured for any role: set [roles] generator and judge in the config")
    return list(await asyncio.gather(*(check_role(role, key, models[key], models[key].provider,
                                                  providers[models[key].provider]) for role, key in chosen)))


def format_checks(checks: list[RoleCheck]) -> str:
    return "\n".join(f"{c.role}: {c.model} via {c.provider}: {'ok' if c.works else 'FAILED'}: {c.detail}"
                     for c in checks)
