"""One llm stage run against the stand-in model, as the tests of each stage run it: a caller whose model
`writer` is the stand-in, served in process, closed on the loop that used it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Literal, TypeVar

import anyio
from standin import StandIn

from abstaingen.providers import ModelConfig, Provider, ProviderConfig
from abstaingen.providers.calls import Caller
from abstaingen.providers.repair import RepairFailed

KEY_ENV = "STANDIN_KEY"  # set for every test by tests/conftest.py
T = TypeVar("T")


def writer_caller(standin: StandIn, kind: Literal["openai", "anthropic"] = "openai") -> Caller:
    """The stand-in served in process (through the SDK, on the test's own event loop): a stage test does
    not depend on a server thread keeping up with it."""
    base_url = standin.openai_base_url if kind == "openai" else standin.anthropic_base_url
    config = ProviderConfig(kind=kind, base_url=base_url, api_key_env=KEY_ENV, max_retries=0)
    if kind == "openai":
        import openai

        from abstaingen.providers.openai_api import OpenAIProvider

        provider: Provider = OpenAIProvider(config, standin.sdk_client(openai))
    else:
        import anthropic

        from abstaingen.providers.anthropic_api import AnthropicProvider

        provider = AnthropicProvider(config, standin.sdk_client(anthropic))
    return Caller({"standin": config}, {"writer": ModelConfig(name="stand-in-1", provider="standin", family="standin")},
                  clients={"standin": provider})


def run_stage(standin: StandIn, work: Callable[[Caller], Awaitable[T]], kind: Literal["openai", "anthropic"] = "openai",
              lost: tuple[type[Exception], ...] = (RepairFailed,)) -> T | Exception:
    """What `work` returns, or the exception of a lost item (`lost`) in its place."""
    caller = writer_caller(standin, kind)

    async def once() -> T | Exception:
        try:
            return await work(caller)
        except lost as exc:
            return exc
        finally:
            await caller.aclose()

    return anyio.run(once)
