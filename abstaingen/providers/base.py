"""What a provider is and what it sends and receives (see __init__.py for building one)."""

from __future__ import annotations

import os
from typing import Literal, Protocol

from pydantic import Field, StrictInt, StrictStr

from abstaingen.errors import AbstaingenError
from abstaingen.model.common import JsonValue, Model
from abstaingen.optional import require

ProviderKind = Literal["openai", "anthropic", "openai_compatible"]


class ProviderConfig(Model):
    """Where requests go and how hard to try."""

    kind: ProviderKind = Field(description="the HTTP API: openai, anthropic, or any OpenAI-compatible server")
    base_url: StrictStr | None = Field(default=None, description="endpoint; None for the provider's own")
    api_key_env: StrictStr = Field(description="name of the environment variable that holds the key")
    timeout_s: float = Field(default=120.0, gt=0, le=3600, allow_inf_nan=False, description="per request")
    max_retries: StrictInt = Field(default=4, ge=0, le=20, description="SDK retries on 429, 5xx and timeouts")
    concurrency: StrictInt = Field(default=8, ge=1, le=1024, description="requests in flight at once")


class ModelConfig(Model):
    """One model at one provider."""

    name: StrictStr = Field(min_length=1, description="the model id the API takes")
    provider: StrictStr = Field(description="a key of [providers]")
    family: StrictStr = Field(min_length=1, description="who trained it (gpt, claude, llama, ...): a judge must "
                                                        "come from another family than the generator")
    input_usd_per_mtok: float = Field(default=0.0, ge=0, allow_inf_nan=False, description="price per 1M input tokens")
    output_usd_per_mtok: float = Field(default=0.0, ge=0, allow_inf_nan=False, description="price per 1M output tokens")
    max_output_tokens: StrictInt = Field(default=8192, ge=16, le=200_000)
    temperature: float = Field(default=0.7, ge=0, le=2, allow_inf_nan=False)


class Usage(Model):
    input_tokens: int = 0
    output_tokens: int = 0

    def cost_usd(self, model: ModelConfig) -> float:
        return (self.input_tokens * model.input_usd_per_mtok + self.output_tokens * model.output_usd_per_mtok) / 1e6


class StructuredRequest(Model):
    """Fill `schema` (a strict JSON schema) following the system and user messages."""

    system: str
    user: str
    schema_name: str = Field(pattern=r"^[a-zA-Z0-9_-]{1,64}$", description="the schema's name; also the tool's name")
    json_schema: dict[str, JsonValue]


class StructuredReply(Model):
    """What came back. `value` is the filled object when the model produced one that parses; else
    `text` holds what it said instead, and `problem` why that is not an answer."""

    value: JsonValue = None
    text: str | None = None
    problem: str | None = Field(default=None, description="not JSON, refused, cut off, or no tool call")
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    model: str = ""


# Why a reply is no answer, as the repair round tells the model (what to do about it included).
DECLINED = ("the model declined; the records and people are fictional test data for a benchmark of tool-using "
            "assistants: answer with the object the schema asks for")
NOT_A_CALL = "the answer was text, not a call of the tool: call the tool with the whole object as its input"


def cut_off(text: str | None) -> str:
    return (f"the reply was cut off at the output limit after {len(text or '')} characters: answer again more "
            "briefly (shorter descriptions and code, fewer records), still the whole object")


class ProviderError(AbstaingenError):
    """The provider could not be reached or refused the request after the SDK's retries."""


class Provider(Protocol):
    config: ProviderConfig

    async def complete(self, model: ModelConfig, request: StructuredRequest) -> StructuredReply:
        """One structured request; raises ProviderError when no reply could be had."""
        ...

    async def aclose(self) -> None:
        """Close the HTTP client, on the event loop that used it."""
        ...


def error_message(body: object, fallback: str) -> str:
    """The message of an API error body (both APIs put it at error.message), cut short."""
    error = body.get("error", body) if isinstance(body, dict) else body
    return str(error.get("message") if isinstance(error, dict) else error or fallback)[:300]


def api_key(config: ProviderConfig) -> str:
    key = os.environ.get(config.api_key_env, "")
    if not key:
        raise AbstaingenError(f"the environment variable {config.api_key_env} (the API key for this provider) "
                              "is not set")
    return key


SDK_OF: dict[ProviderKind, str] = {"openai": "openai", "openai_compatible": "openai", "anthropic": "anthropic"}


def require_sdk(config: ProviderConfig, needed_by: str) -> None:
    """Check that the provider's client package (an extra: abstaingen[llm]) is installed, so that a
    missing one is one clear line before any work rather than a failure at the first call."""
    require(SDK_OF[config.kind], needed_by)


