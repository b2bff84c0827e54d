"""Language-model providers behind one small interface: send a structured request, get the filled
object back (or what the model said instead), with token usage and latency.

Configuration separates three things (`[providers.*]`, `[models.*]`, `[roles]` in the TOML config):
a provider is an endpoint and the environment variable that holds its key; a model is a name at a
provider, with its family and prices; a role (`generator`, `judge`) names the model that plays it.
Keys are read from the environment when a provider is built and are never stored in a config, a
log, a cache entry or a release.
"""

from __future__ import annotations

from abstaingen.providers.base import (
    ModelConfig,
    Provider,
    ProviderConfig,
    ProviderError,
    StructuredReply,
    StructuredRequest,
    Usage,
    api_key,
    error_message,
    require_sdk,
)


def build_provider(config: ProviderConfig) -> Provider:
    require_sdk(config, f"the {config.kind} provider")
    if config.kind == "anthropic":
        from abstaingen.providers.anthropic_api import AnthropicProvider

        return AnthropicProvider(config)
    from abstaingen.providers.openai_api import OpenAIProvider

    return OpenAIProvider(config)


__all__ = ["ModelConfig", "Provider", "ProviderConfig", "ProviderError", "StructuredReply", "StructuredRequest",
           "Usage", "api_key", "build_provider", "error_message", "require_sdk"]
