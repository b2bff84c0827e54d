"""The builtin backend's task stages: a positive task (T+) for a scenario, then its perturbation into a pair."""

from __future__ import annotations

import random

import abstaingen.generators.builtin.scenarios  # noqa: F401  (registers the recipes)
from abstaingen.generators.builtin.blueprint import DomainBlueprint
from abstaingen.generators.builtin.tasks import RECIPES, DomainContext, PairPlan, perturbation, untouched
from abstaingen.model import EnvironmentBundle, Provenance, RecordRef, Scenario, TaskPair, TaskVariant
from abstaingen.model.common import Model


class PositiveTask(Model):
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


def write_positive_task(bundle: EnvironmentBundle, bp: DomainBlueprint, scenario: Scenario, variant: int,
                        seed: int) -> PositiveTask:
    """T+ for `scenario`; raises NoSuitableRecord when the environment has nothing the scenario can use."""
    recipe = RECIPES[scenario]
    ctx = context(bp, bundle)
    plan = recipe.plan(ctx, variant, random.Random(f"{seed}:{bundle.env_id}:{scenario}:{variant}"))
    pair_id = f"{bundle.env_id}-{scenario.value.lower()}-{variant}"
    return PositiveTask(pair_id=pair_id, domain=bp.name, scenario=scenario, act=recipe.positive(ctx, plan, pair_id),
                        plan=plan)


def perturb(positive: PositiveTask, bundle: EnvironmentBundle, bp: DomainBlueprint, provenance: Provenance,
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
        template=act.template,
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
