"""Anthropic's messages API: the schema is the input schema of one tool the model must call."""

from __future__ import annotations

import time
from typing import Any, cast

import anthropic
from anthropic.types import ToolParam

from abstaingen.providers.base import (
    DECLINED,
    NOT_A_CALL,
    ModelConfig,
    ProviderConfig,
    ProviderError,
    StructuredReply,
    StructuredRequest,
    Usage,
    api_key,
    cut_off,
    error_message,
)


class AnthropicProvider:
    def __init__(self, config: ProviderConfig, http_client: anthropic.DefaultAsyncHttpxClient | None = None):
        """`http_client`: the SDK's HTTP client to send through (a proxy's, or a test's in process)."""
        self.config = config
        self.client = anthropic.AsyncAnthropic(api_key=api_key(config), base_url=config.base_url,
                                               timeout=config.timeout_s, max_retries=config.max_retries, http_client=http_client)

    async def aclose(self) -> None:
        await self.client.close()

    async def complete(self, model: ModelConfig, request: StructuredRequest) -> StructuredReply:
        started = time.monotonic()
        try:
            # No temperature: the current messages API sets sampling itself.
            message = await self.client.messages.create(
                model=model.name, max_tokens=model.max_output_tokens, system=request.system,
                messages=[{"role": "user", "content": request.user}],
                tools=[ToolParam(name=request.schema_name, description=f"Submit the {request.schema_name}.",
                                 input_schema=cast(Any, request.json_schema))],
                tool_choice={"type": "tool", "name": request.schema_name},
            )
        except anthropic.APIStatusError as exc:
            raise ProviderError(f"{model.name}: HTTP {exc.status_code}: {error_message(exc.body, exc.message)}") from None
        except anthropic.APIConnectionError as exc:
            raise ProviderError(f"{model.name}: {type(exc).__name__}: {exc}") from None
        reply = StructuredReply(usage=Usage(input_tokens=message.usage.input_tokens,
                                            output_tokens=message.usage.output_tokens),
                                latency_s=time.monotonic() - started, model=message.model or model.name)
        text = "".join(block.text for block in message.content if block.type == "text")
        if message.stop_reason == "max_tokens":
            return reply.model_copy(update={"text": text, "problem": cut_off(text)})
        if message.stop_reason == "refusal":
            return reply.model_copy(update={"text": text, "problem": DECLINED})
        calls = [block for block in message.content if block.type == "tool_use" and block.name == request.schema_name]
        if not calls:
            return reply.model_copy(update={"text": text, "problem": NOT_A_CALL})
        return reply.model_copy(update={"value": calls[0].input})
