"""The builtin backend's stages, and the `builtin` generator: capability extraction and environment
synthesis from a domain blueprint, a positive task (T+) for a scenario, then its perturbation into a pair."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

import abstaingen.generators.builtin.scenarios  # noqa: F401  (registers the recipes)
from abstaingen.generators.base import PositiveTask, register_generator
from abstaingen.generators.builtin.blueprint import DomainBlueprint
from abstaingen.generators.builtin.capability import extract_capabilities
from abstaingen.generators.builtin.domains import DOMAINS
from abstaingen.generators.builtin.environment import synthesize_environment
from abstaingen.generators.builtin.tasks import RECIPES, DomainContext, PairPlan, perturbation, untouched
from abstaingen.model import CapabilitySpec, EnvironmentBundle, Provenance, RecordRef, Scenario, TaskPair, TaskVariant
from abstaingen.model.common import Model
from abstaingen.model.release import GenerationReport

if TYPE_CHECKING:
    from abstaingen.config import GenerateConfig, SeedInstruction


class PlannedTask(Model):
    """T+ with the plan it was written from: the builtin backend's own view, for its tests and preview."""

    pair_id: str
    domain: str
    scenario: Scenario
    act: TaskVariant
    plan: PairPlan


_CONTEXTS: dict[tuple[str, str], DomainContext] = {}


def context(bp: DomainBlueprint, bundle: EnvironmentBundle) -> DomainContext:
    """The environment's context, kept while its pairs are written (its memo spares the recipes repeated work)."""
    key = (bp.name, bundle.content_hash)
    if key not in _CONTEXTS:
        if len(_CONTEXTS) >= 64:
            _CONTEXTS.clear()
        _CONTEXTS[key] = DomainContext(bp, bundle)
    return _CONTEXTS[key]


def plan_for(bundle: EnvironmentBundle, bp: DomainBlueprint, scenario: Scenario, variant: int, seed: int) -> PairPlan:
    """The choices behind one pair: seeded, so perturbation derives the same plan as the positive task."""
    rng = random.Random(f"{seed}:{bundle.env_id}:{scenario}:{variant}")
    return RECIPES[scenario].plan(context(bp, bundle), variant, rng)


def write_positive_task(bundle: EnvironmentBundle, bp: DomainBlueprint, scenario: Scenario, variant: int,
                        seed: int) -> PlannedTask:
    """T+ for `scenario`; raises NoSuitableRecord when the environment has nothing the scenario can use."""
    plan = plan_for(bundle, bp, scenario, variant, seed)
    pair_id = f"{bundle.env_id}-{scenario.value.lower()}-{variant}"
    act = RECIPES[scenario].positive(context(bp, bundle), plan, pair_id)
    return PlannedTask(pair_id=pair_id, domain=bp.name, scenario=scenario, act=act, plan=plan)


def perturb(positive: PlannedTask, bundle: EnvironmentBundle, bp: DomainBlueprint, provenance: Provenance,
            seed: int) -> TaskPair:
    """T- from T+: the scenario's one controlled change, with its witness and labels."""
    ctx = context(bp, bundle)
    act, plan = positive.act, positive.plan
    draft = RECIPES[positive.scenario].perturb(ctx, plan, act, random.Random(f"{seed}:{positive.pair_id}:perturb"))
    abstain = TaskVariant(
        task_id=f"{positive.pair_id}-abstain",
        task_type="abstain",
        env_id=act.env_id,
        instruction=draft.instruction or act.instruction,
        system_prompt=act.system_prompt,
        deliverable=act.deliverable,
        overlay=draft.overlay or act.overlay,
        premise=act.premise,
        template=draft.template or act.template,
        confirmations=act.confirmations if draft.confirmations is None else draft.confirmations,
        controls=draft.controls,
        reference_dag=draft.dag,
        critical_actions=draft.critical if draft.critical is not None else act.critical_actions,
        final_state=untouched(ctx, plan),
        abstention_trigger=draft.trigger,
        earliest_abstain_step=draft.step,
        good_reply=draft.good_reply,
        clarification=draft.clarification,
        withheld=draft.withheld,
    )
    return TaskPair(
        pair_id=positive.pair_id,
        domain=positive.domain,
        scenario=positive.scenario.value,
        act=act,
        abstain=abstain,
        perturbation=perturbation(plan, draft),
        target=RecordRef(collection=bp.collection, record_id=plan.record_id),
        scope={bp.owner_field: plan.owner},
        provenance=provenance,
    )


@register_generator("builtin")
class BuiltinGenerator:
    """The embedded, offline backend: domain blueprints, seeded choices, programmatic perturbations."""

    name = "builtin"

    def __init__(self, config: GenerateConfig | None = None):
        pass  # nothing in the config changes how the builtin backend writes

    def report(self) -> GenerationReport:
        return GenerationReport()

    async def aclose(self) -> None:
        pass

    async def extract_capabilities(self, seed: SeedInstruction) -> CapabilitySpec:
        return extract_capabilities(seed.instruction, seed.domain)

    async def synthesize_environment(self, spec: CapabilitySpec, seed: int) -> EnvironmentBundle:
        return synthesize_environment(DOMAINS[spec.domain], spec, seed)

    async def write_positive_task(self, bundle: EnvironmentBundle, scenario: Scenario, variant: int,
                                  seed: int) -> PositiveTask:
        planned = write_positive_task(bundle, DOMAINS[bundle.domain], scenario, variant, seed)
        return PositiveTask(pair_id=planned.pair_id, domain=planned.domain, scenario=scenario, variant=variant,
                            act=planned.act, target=RecordRef(collection=DOMAINS[bundle.domain].collection,
                                                              record_id=planned.plan.record_id))

    async def perturb(self, positive: PositiveTask, bundle: EnvironmentBundle, provenance: Provenance,
                      seed: int) -> TaskPair:
        bp = DOMAINS[bundle.domain]
        plan = plan_for(bundle, bp, positive.scenario, positive.variant, seed)
        planned = PlannedTask(pair_id=positive.pair_id, domain=positive.domain, scenario=positive.scenario,
                              act=positive.act, plan=plan)
        return perturb(planned, bundle, bp, provenance, seed)
