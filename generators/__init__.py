"""The generation stages behind one protocol, one implementation per backend, registered by name.

    capability extraction   seed instruction      -> CapabilitySpec
    environment synthesis   CapabilitySpec         -> EnvironmentBundle (tools, state, handler code)
    positive task           bundle x scenario      -> PositiveTask (T+ with its reference DAG)
    perturbation            PositiveTask x bundle  -> TaskPair (T- with overlay, witness, labels)

The pipeline and the flow know only `Generator`; `[backends]` in the config picks a backend per
stage. Only these contracts travel between stages: what a backend needs to remember between its own
stages it derives again (the builtin backend re-derives a pair's plan from its seed).

A run opens its generators once (`generators_for_run`), one per backend it uses, made from the run's
config; stages then look them up by name (`get_generator`).
See generators/README.md for adding a backend.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Protocol

from pydantic import Field

from abstaingen.errors import AbstaingenError
from abstaingen.model import (
    CapabilitySpec,
    EnvironmentBundle,
    Provenance,
    RecordRef,
    Scenario,
    TaskPair,
    TaskVariant,
)
from abstaingen.model.common import Model
from abstaingen.model.release import GenerationReport

if TYPE_CHECKING:
    from abstaingen.config import GenerateConfig, SeedInstruction


class PositiveTask(Model):
    """T+ written for one scenario, as every backend hands it to perturbation."""

    pair_id: str
    domain: str
    scenario: Scenario
    variant: int = Field(description="which of the scenario's variants in its environment")
    act: TaskVariant
    target: RecordRef = Field(description="the record the task is about")


class NotApplicable(Exception):  # noqa: N818 - an outcome, counted in the funnel, not an error
    """The environment offers nothing this scenario can be written on."""


class ItemLost(Exception):  # noqa: N818 - an outcome, counted in the funnel, not an error
    """This one item could not be written (the model never gave a usable draft, the budget ran out):
    the funnel counts it under `reason` and the run goes on with the others."""

    def __init__(self, reason: str, detail: str):
        super().__init__(detail)
        self.reason = reason


class Generator(Protocol):
    name: str

    async def extract_capabilities(self, seed: SeedInstruction) -> CapabilitySpec: ...

    async def synthesize_environment(self, spec: CapabilitySpec, seed: int) -> EnvironmentBundle: ...

    async def write_positive_task(self, bundle: EnvironmentBundle, scenario: Scenario, variant: int,
                                  seed: int) -> PositiveTask:
        """Raises NotApplicable when the environment has nothing the scenario can use."""
        ...

    async def perturb(self, positive: PositiveTask, bundle: EnvironmentBundle, provenance: Provenance,
                      seed: int) -> TaskPair: ...

    def report(self) -> GenerationReport:
        """Models, prompts, repairs and cost of the run so far, for the manifest."""
        ...

    async def aclose(self) -> None:
        """Release what the run held (HTTP clients), on the loop that used it."""
        ...


Factory = Callable[["GenerateConfig"], Generator]
GENERATORS: dict[str, Factory] = {}
_OPEN: dict[str, Generator] = {}


def register_generator(name: str) -> Callable[[Factory], Factory]:
    def register(factory: Factory) -> Factory:
        GENERATORS[name] = factory
        return factory
    return register


def _registered() -> dict[str, Factory]:
    import abstaingen.generators.builtin.stages  # noqa: F401  (registers the builtin backend)
    import abstaingen.generators.llm.stages  # noqa: F401  (and the llm one)

    return GENERATORS


def make_generator(name: str, config: GenerateConfig) -> Generator:
    """A generator for a run with this config; a config the backend cannot work with is one clear error."""
    factories = _registered()
    if name not in factories:
        raise AbstaingenError(f"unknown backend {name!r} (available: {', '.join(sorted(factories))})")
    return factories[name](config)


@asynccontextmanager
async def generators_for_run(config: GenerateConfig, stages: tuple[str, ...]) -> AsyncIterator[dict[str, Generator]]:
    """The run's generators, one per backend its stages use, open for `get_generator` until the run ends."""
    made: dict[str, Generator] = {}
    try:
        for backend in dict.fromkeys(config.backend_for(stage) for stage in stages):
            made[backend] = make_generator(backend, config)
        _OPEN.update(made)
        yield made
    finally:
        for opened, generator in made.items():
            _OPEN.pop(opened, None)
            await generator.aclose()


def get_generator(name: str) -> Generator:
    """The open run's generator of this backend."""
    if name not in _OPEN:
        raise AbstaingenError(f"no run has the {name} backend open (see generators_for_run)")
    return _OPEN[name]


__all__ = ["GENERATORS", "Generator", "ItemLost", "NotApplicable", "PositiveTask", "generators_for_run",
           "get_generator", "make_generator", "register_generator"]
