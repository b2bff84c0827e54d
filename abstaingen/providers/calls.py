"""Every model call of a run goes through one `Caller`: a response cache on disk, a ledger of tokens
and money per stage and model, a budget cap, a limit on requests in flight and a circuit breaker per
provider. The budget is checked as each request is about to go, so it can be overshot by at most the
requests already in flight.

The cache is content-addressed: the key is a hash of what determines the answer — the provider's
kind and endpoint, the model and its sampling settings, the messages and the schema, and the run's
seed — and nothing else (never the key). A rerun of a finished run with the same seed makes no
request; editing one prompt re-runs only the calls whose messages changed; a run with a fresh seed
asks the models again instead of reusing an earlier run's answers.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import Field, ValidationError

from abstaingen.errors import AbstaingenError
from abstaingen.model.common import Model, content_hash
from abstaingen.model.release import CostLine
from abstaingen.providers import (
    ModelConfig,
    Provider,
    ProviderConfig,
    ProviderError,
    StructuredReply,
    StructuredRequest,
    Usage,
    build_provider,
)

if TYPE_CHECKING:
    from abstaingen.config import GenerateConfig


class BudgetExhausted(AbstaingenError):
    """The run has spent its budget: no further call is made, work already done is kept."""


class ProviderUnavailable(AbstaingenError):
    """A provider failed so many times in a row that the run stops asking it."""


class CallRecord(Model):
    stage: str
    model: str = Field(description="the key of [models]")
    usage: Usage
    cost_usd: float
    cached: bool = Field(description="answered from the response cache: no request, no cost")


class ResponseCache:
    """Replies on disk, one JSON file per request, under the hash of what determines the answer."""

    def __init__(self, folder: Path):
        self.folder = folder
        self._stored: set[str] | None = None  # the keys on disk, listed once: a miss then opens no file

    @staticmethod
    def key(provider: ProviderConfig, model: ModelConfig, request: StructuredRequest, seed: int | None = None) -> str:
        return content_hash({
            "seed": seed,
            "endpoint": [provider.kind, provider.base_url],
            "model": [model.name, model.temperature, model.max_output_tokens],
            "request": request.model_dump(mode="json"),
        })

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> StructuredReply | None:
        """The stored reply, or None. A damaged entry counts as a miss and is overwritten later."""
        if self._stored is None:
            self._stored = {entry.stem for entry in self.folder.glob("??/*.json")}
        if key not in self._stored:
            return None
        try:
            return StructuredReply.model_validate_json(self._path(key).read_bytes())
        except (OSError, ValidationError):
            return None

    def put(self, key: str, reply: StructuredReply) -> None:
        path = self._path(key)
        if not path.parent.is_dir():
            path.parent.mkdir(parents=True, exist_ok=True)
        descriptor, staging = tempfile.mkstemp(dir=path.parent, prefix=".incoming-")
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            out.write(reply.model_dump_json())
        os.replace(staging, path)  # whole or absent, also for a reader in another run
        if self._stored is not None:
            self._stored.add(key)


class Caller:
    """Use one per run and event loop: the SDK clients it makes belong to the loop that first used them."""

    def __init__(self, providers: dict[str, ProviderConfig], models: dict[str, ModelConfig],
                 cache: ResponseCache | None = None, budget_usd: float | None = None, breaker_after: int = 5,
                 seed: int | None = None, clients: dict[str, Provider] | None = None):
        """`clients`: providers already built, by their key in `providers` (a test's, served in process);
        the others are built from their config when first used."""
        self.providers = providers
        self.seed = seed
        self.models = models
        self.cache = cache
        self.budget_usd = budget_usd
        self.breaker_after = breaker_after
        self.records: list[CallRecord] = []
        self.spent_usd = 0.0
        self._clients: dict[str, Provider] = dict(clients or {})
        self._slots: dict[str, asyncio.Semaphore] = {}
        self._failures_in_a_row: dict[str, int] = defaultdict(int)
        self._last_failure: dict[str, str] = {}

    async def call(self, stage: str, model_key: str, request: StructuredRequest) -> StructuredReply:
        model = self.models[model_key]
        provider_config = self.providers[model.provider]
        key = ResponseCache.key(provider_config, model, request, self.seed)
        if self.cache is not None and (stored := self.cache.get(key)) is not None:
            self.records.append(CallRecord(stage=stage, model=model_key, usage=stored.usage, cost_usd=0.0, cached=True))
            return stored
        async with self._slot(model.provider):  # budget and breaker are read when the request can really go
            if self.budget_usd is not None and self.spent_usd >= self.budget_usd:
                raise BudgetExhausted(f"the budget of ${self.budget_usd:.2f} is spent (${self.spent_usd:.2f}); "
                                      "no further model calls")
            if self._failures_in_a_row[model.provider] >= self.breaker_after:
                raise ProviderUnavailable(f"provider {model.provider} failed {self._failures_in_a_row[model.provider]} "
                                          f"times in a row, the last: {self._last_failure[model.provider]}")
            try:
                reply = await self._client(model.provider).complete(model, request)
            except ProviderError as exc:
                self._failures_in_a_row[model.provider] += 1
                self._last_failure[model.provider] = str(exc)
                raise
            self._failures_in_a_row[model.provider] = 0
        if self.cache is not None:  # off the event loop: a file system can be slow to create files
            await asyncio.to_thread(self.cache.put, key, reply)
        self.records.append(CallRecord(stage=stage, model=model_key, usage=reply.usage,
                                       cost_usd=reply.usage.cost_usd(model), cached=False))
        self.spent_usd += self.records[-1].cost_usd
        return reply

    async def aclose(self) -> None:
        """Close every provider's client; call it on the loop that made the calls."""
        for client in self._clients.values():
            await client.aclose()
        self._clients.clear()

    def _slot(self, name: str) -> asyncio.Semaphore:
        """The provider's requests in flight: at most its `concurrency`."""
        if name not in self._slots:
            self._slots[name] = asyncio.Semaphore(self.providers[name].concurrency)
        return self._slots[name]

    def _client(self, name: str) -> Provider:
        if name not in self._clients:
            self._clients[name] = build_provider(self.providers[name])
        return self._clients[name]

    def ledger(self) -> list[CostLine]:
        """Calls, tokens and money per stage and model, for the manifest."""
        groups: dict[tuple[str, str], list[CallRecord]] = defaultdict(list)
        for record in self.records:
            groups[(record.stage, record.model)].append(record)
        return [CostLine(stage=stage, model=model, calls=len(group), cached=sum(r.cached for r in group),
                           input_tokens=sum(r.usage.input_tokens for r in group if not r.cached),
                           output_tokens=sum(r.usage.output_tokens for r in group if not r.cached),
                           cost_usd=round(sum(r.cost_usd for r in group), 6))
                for (stage, model), group in sorted(groups.items())]


def caller_for(config: GenerateConfig, budget_usd: float | None) -> Caller:
    """A caller with the config's providers, models, response cache, breaker and seed, and this budget."""
    return Caller(config.providers, config.models,
                  cache=ResponseCache(config.llm.cache_dir) if config.llm.cache_dir else None,
                  budget_usd=budget_usd, breaker_after=config.llm.breaker_after, seed=config.dataset.seed)


__all__ = ["BudgetExhausted", "CallRecord", "Caller", "ProviderUnavailable", "ResponseCache", "caller_for"]
