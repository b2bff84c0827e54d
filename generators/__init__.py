"""The generation stages behind one protocol, one implementation per backend, registered by name.

    capability extraction   seed instruction      -> CapabilitySpec
    environment synthesis   CapabilitySpec         -> EnvironmentBundle (tools, state, handler code)
    positive task           bundle x scenario      -> PositiveTask (T+ with its reference DAG)
    perturbation            PositiveTask x bundle  -> TaskPair (T- with overlay, witness, labels)

The pipeline and the flow know only `Generator`; `[backends]` in the config picks a backend per
stage. Only these contracts travel between stages: what a backend needs to remember between its own
stages it derives again (the builtin backend re-derives a pair's plan from its seed).
See generators/README.md for adding a backend.
"""

from __future__ import annotations

from collections.abc import Callable
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

if TYPE_CHECKING:
    from abstaingen.config import SeedInstruction


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


GENERATORS: dict[str, Callable[[], Generator]] = {}


def register_generator(name: str) -> Callable[[Callable[[], Generator]], Callable[[], Generator]]:
    def register(factory: Callable[[], Generator]) -> Callable[[], Generator]:
        GENERATORS[name] = factory
        return factory
    return register


def get_generator(name: str) -> Generator:
    import abstaingen.generators.builtin.stages  # noqa: F401  (registers the builtin backend)

    if name not in GENERATORS:
        available = ", ".join(sorted(GENERATORS))
        raise AbstaingenError(f"the {name} backend is not available yet (available: {available})")
    return GENERATORS[name]()


__all__ = ["GENERATORS", "Generator", "NotApplicable", "PositiveTask", "get_generator", "register_generator"]
