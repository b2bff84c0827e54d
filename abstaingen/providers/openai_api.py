"""OpenAI's chat completions with structured outputs, and any server that speaks that API
(vLLM, Ollama, llama.cpp server) through `base_url`."""

from __future__ import annotations

import json
import time

import openai
from openai.types.chat import ChatCompletion
from openai.types.shared_params import ResponseFormatJSONSchema

from abstaingen.providers.base import (
    DECLINED,
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


class OpenAIProvider:
    def __init__(self, config: ProviderConfig, http_client: openai.DefaultAsyncHttpxClient | None = None):
        """`http_client`: the SDK's HTTP client to send through (a proxy's, or a test's in process)."""
        self.config = config
        self.client = openai.AsyncOpenAI(api_key=api_key(config), base_url=config.base_url,
                                         timeout=config.timeout_s, max_retries=config.max_retries, http_client=http_client)

    async def aclose(self) -> None:
        await self.client.close()

    async def complete(self, model: ModelConfig, request: StructuredRequest) -> StructuredReply:
        # OpenAI's own API wants max_completion_tokens; compatible servers mostly know only max_tokens.
        own_api = self.config.kind == "openai"
        response_format: ResponseFormatJSONSchema = {"type": "json_schema", "json_schema": {
            "name": request.schema_name, "schema": dict(request.json_schema), "strict": True}}
        body = {"model": model.name, "temperature": model.temperature, "response_format": response_format,
                "messages": [{"role": "system", "content": request.system}, {"role": "user", "content": request.user}],
                "max_completion_tokens" if own_api else "max_tokens": model.max_output_tokens}
        started = time.monotonic()
        try:
            # The same request chat.completions.create sends, through the SDK's own machinery (auth, retries,
            # errors, the typed reply); create() first walks its whole parameter type, which took a fifth of
            # a call's client time (benchmarks/llm_throughput.py).
            completion = await self.client.post("/chat/completions", body=body, cast_to=ChatCompletion)
        except openai.APIStatusError as exc:
            raise ProviderError(f"{model.name}: HTTP {exc.status_code}: {error_message(exc.body, exc.message)}") from None
        except openai.APIConnectionError as exc:
            raise ProviderError(f"{model.name}: {type(exc).__name__}: {exc}") from None
        latency = time.monotonic() - started
        usage = Usage(input_tokens=completion.usage.prompt_tokens if completion.usage else 0,
                      output_tokens=completion.usage.completion_tokens if completion.usage else 0)
        reply = StructuredReply(usage=usage, latency_s=latency, model=completion.model or model.name)
        if not completion.choices:
            return reply.model_copy(update={"problem": "the reply had no choices"})
        choice = completion.choices[0]
        message = choice.message
        if getattr(message, "refusal", None):
            return reply.model_copy(update={"text": message.refusal, "problem": DECLINED})
        text = message.content or ""
        if choice.finish_reason == "length":
            return reply.model_copy(update={"text": text, "problem": cut_off(text)})
        try:
            return reply.model_copy(update={"value": json.loads(text)})
        except json.JSONDecodeError as exc:
            return reply.model_copy(update={"text": text, "problem": f"the reply is not JSON: {exc}"})
