"""The generation stages' protocol, the contracts that travel between them, and the registry of backends
(see __init__.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from pydantic import Field

from abstaingen.model import (
    CapabilitySpec,
    EnvironmentBundle,
    Provenance,
    RecordRef,
    Scenario,
    TaskPair,
    TaskVariant,
)
from abstaingen.model.common import JsonValue, Model
from abstaingen.model.release import GenerationReport
from abstaingen.registry import Registry

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
    scope: dict[str, JsonValue] = Field(default_factory=dict, description=(
        "field values that pick out the records the request could mean (the owner's), as TaskPair.scope"))


class NotApplicable(Exception):  # noqa: N818 - an outcome, counted in the funnel, not an error
    """The environment offers nothing this scenario can be written on."""


# ItemLost's reason for an item whose model request kept failing (after the SDK's own retries): lost to the
# infrastructure, not on its merits.
PROVIDER_ERROR = "provider_error"


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
GENERATORS: Registry[str, Factory] = Registry("backend")
register_generator = GENERATORS.register


