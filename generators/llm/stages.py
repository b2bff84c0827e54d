"""The `llm` generator: every stage written by the model that plays the `generator` role, each draft
taken only once it passed its stage's checks (repair.py has the loop, each stage's module its checks).
One per run: its caller holds the run's cache, ledger, budget and breaker. Model-written code runs
only in an isolating sandbox."""

from __future__ import annotations

from collections.abc import Awaitable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TypeVar

from abstaingen.errors import AbstaingenError
from abstaingen.generators.base import PROVIDER_ERROR, ItemLost, NotApplicable, PositiveTask, register_generator
from abstaingen.generators.llm import capability, environment, overlay, perturbation, positive
from abstaingen.model import CapabilitySpec, EnvironmentBundle, Provenance, Scenario, TaskPair
from abstaingen.model.release import GenerationReport
from abstaingen.prompts import template_hash
from abstaingen.providers import ProviderError, api_key, require_sdk
from abstaingen.providers.calls import BudgetExhausted, caller_for
from abstaingen.providers.repair import RepairFailed, RepairLog
from abstaingen.sandboxes.backends import SandboxLimits, get_backend
from abstaingen.sandboxes.kept import KeptSessions

if TYPE_CHECKING:
    from abstaingen.config import GenerateConfig, SeedInstruction

T = TypeVar("T")


@contextmanager
def counted_as_lost() -> Iterator[None]:
    """A draft the model never got right, a call the budget no longer allows, a request that failed:
    this item is lost (and counted), the run goes on with the others."""
    try:
        yield
    except RepairFailed as exc:
        raise ItemLost("repair_failed", str(exc)) from None
    except BudgetExhausted as exc:
        raise ItemLost("budget_exhausted", str(exc)) from None
    except ProviderError as exc:  # after the SDK's own retries; the breaker ends the run if it keeps happening
        raise ItemLost(PROVIDER_ERROR, str(exc)) from None


@register_generator("llm")
class LlmGenerator:
    name = "llm"

    def __init__(self, config: GenerateConfig):
        chosen = config.role("generator")
        if chosen is None:
            raise AbstaingenError("the llm backend needs a model: set roles.generator to a key of [models]")
        self.model_key = config.roles.generator or ""
        self.model = chosen[0]
        require_sdk(chosen[1], "the llm backend")  # the client package is an extra: abstaingen[llm]
        api_key(chosen[1])  # a missing key is one line now, not a failure in every stage
        self.caller = caller_for(config, config.llm.budget_usd)
        self.rounds = config.llm.max_repair_rounds
        self.variants = config.generation.variants_per_scenario
        self.backend = get_backend(config.sandbox.backend, SandboxLimits(call_timeout_s=config.sandbox.call_timeout_s,
                                                                         memory_mb=config.sandbox.memory_mb))
        self.sessions = KeptSessions(self.backend)  # drafts of one environment are checked in one sandbox
        self.allow_unsandboxed = config.sandbox.allow_unsandboxed
        if not self.backend.isolated and not self.allow_unsandboxed:
            raise AbstaingenError(f"the llm backend runs model-written code only in an isolating sandbox (docker or "
                                  f"bwrap), not on {self.backend.name}; sandbox.allow_unsandboxed overrides this")
        self.log = RepairLog()
        self.templates: set[str] = {"repair"}

    async def _run(self, template: str, work: Awaitable[T]) -> T:
        self.templates.add(template)
        with counted_as_lost():
            return await work

    async def extract_capabilities(self, seed: SeedInstruction) -> CapabilitySpec:
        return await self._run(capability.STAGE, capability.extract_capabilities(
            self.caller, self.model_key, seed.instruction, seed.domain, self.rounds, self.log))

    async def synthesize_environment(self, spec: CapabilitySpec, seed: int) -> EnvironmentBundle:
        bundle = await self._run(environment.STAGE, environment.synthesize_environment(
            self.caller, self.model_key, spec, self.backend, self.rounds, self.log, self.allow_unsandboxed))
        return bundle.model_copy(update={"written_by": {"model": self.model.name, "family": self.model.family,
                                                        "prompt": template_hash(environment.STAGE)}})

    async def extend_environment(self, bundle: EnvironmentBundle) -> EnvironmentBundle:
        """An imported bundle with an overlay for the scenarios it cannot carry (`abstaingen env overlay`);
        the llm backend's alone, since only a model can say what someone else's environment leaves unstated."""
        return await self._run(overlay.STAGE, overlay.extend_environment(
            self.caller, self.model_key, bundle, self.backend, self.sessions, self.rounds, self.log,
            {"model": self.model.name, "family": self.model.family, "prompt": template_hash(overlay.STAGE)}))

    async def write_positive_task(self, bundle: EnvironmentBundle, scenario: Scenario, variant: int,
                                  seed: int) -> PositiveTask:
        if reason := perturbation.unsupported(bundle, scenario):
            raise NotApplicable(reason)
        return await self._run(positive.STAGE, positive.write_positive_task(
            self.caller, self.model_key, bundle, scenario, variant, self.sessions, self.rounds, self.log,
            self.variants))

    async def perturb(self, positive_task: PositiveTask, bundle: EnvironmentBundle, provenance: Provenance,
                      seed: int) -> TaskPair:
        stage = perturbation.stage_of(positive_task.scenario)
        written = [key for key, backend in provenance.backend.items() if backend == self.name]
        templates = {"capability": capability.STAGE, "environment": environment.STAGE, "task": positive.STAGE,
                     "perturbation": stage}
        provenance = provenance.model_copy(update={
            "models": {**provenance.models, **dict.fromkeys(written, self.model.name)},
            "prompt_hashes": {**provenance.prompt_hashes,
                              **{templates[key]: template_hash(templates[key]) for key in written if key in templates},
                              "repair": template_hash("repair")}})
        return await self._run(stage, perturbation.perturb(
            self.caller, self.model_key, positive_task, bundle, provenance, self.sessions, self.rounds, self.log,
            self.allow_unsandboxed))

    def report(self) -> GenerationReport:
        return GenerationReport(models={self.model_key: f"{self.model.name} ({self.model.family})"},
                                prompts={name: template_hash(name) for name in sorted(self.templates)},
                                repairs=self.log.counts(), cost=self.caller.ledger())

    async def aclose(self) -> None:
        await self.sessions.aclose()
        await self.caller.aclose()
