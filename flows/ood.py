"""The OOD flow (`generate-ood`): scoped assistant roles in, a published release of in-scope, direct
off-topic, laundered off-topic and recast off-topic items out.

plan -> question bank -> per role: in-scope questions, relatedness gate, framing, recast, consistency checks ->
dedup -> baselines, leakage, coverage -> release

A thin shell over abstaingen.pipelines.ood: one task per stage and role, each named for the UI. Like
the generate flow, it runs the same from the CLI, a schedule or the UI (its parameters have
defaults), and its final state is honest: Completed with a release (with a message and the tag
`degraded` when items were lost to provider failures), Failed when the gates refused the data or the
input was bad.

No `from __future__ import annotations`: Prefect builds the parameter schema from these annotations.
"""

from collections.abc import Awaitable
from typing import Any, TypeVar

from prefect import flow, get_run_logger, task
from prefect.artifacts import acreate_markdown_artifact, acreate_table_artifact
from prefect.cache_policies import NONE
from prefect.states import State
from pydantic import Field

from abstaingen.config import GenerateConfig
from abstaingen.flows.artifacts import (
    OOD_ARTIFACTS,
    ArtifactKeys,
    publish_funnel,
    publish_refusal,
    publish_summary,
    tracked,
)
from abstaingen.flows.shell import (
    API_DEAD,
    EXIT_FAILED,
    ApiProbe,
    RunLabels,
    RunResult,
    code_version,
    in_shell,
    run_name_of,
    start_flow,
    warn_of_losses,
)
from abstaingen.generators.ood import OodGenerator, make_ood_generator
from abstaingen.generators.ood.builtin.roles import builtin_roles
from abstaingen.interrupts import hold_signals, note_published, stop_run
from abstaingen.model.ood import ITEM_KINDS, QuestionBank, RolePolicy
from abstaingen.model.release import OodRelease
from abstaingen.pipelines.ood import Assembled, OodPlan, OodStageRunner, RoleItems, plan_ood, run_ood
from abstaingen.progress import report
from abstaingen.store import (
    ITEMS_FILE,
    ROLES_FILE,
    dataset_canary,
    publish_records,
    release_folder,
    require_writable_dir,
)
from abstaingen.validators.dedup import DeduplicatedItems, EarlierItems, earlier_items

T = TypeVar("T")


class OodResult(RunResult):
    """How an OOD run ended: the flow run's return value (with a Failed state unless published)."""

    release: OodRelease | None = Field(default=None, description="the published manifest")


def plan_run(config: GenerateConfig) -> OodPlan:
    """Pre-flight: the plan, a backend the config can work with, a writable output folder."""
    plan = plan_ood(config, code_version(), [role.policy for role in builtin_roles()])
    make_ood_generator(plan.config.ood.backend, plan.config)
    require_writable_dir(plan.dataset_dir)
    return plan


@task(name="load question bank", task_run_name="load question bank", cache_policy=NONE)
def bank_stage(plan: OodPlan) -> QuestionBank:
    bank = OodStageRunner().bank(plan)
    get_run_logger().info("question bank %s: %d questions", bank.source, len(bank.by_id()))
    return bank


@task(name="write role items", task_run_name="write items {role.role_id}", cache_policy=NONE)
async def role_stage(plan: OodPlan, role: RolePolicy, bank: QuestionBank, generator: OodGenerator,
                     earlier: EarlierItems) -> RoleItems:
    made = await OodStageRunner().role(plan, role, bank, generator, earlier, after=bank)
    kinds = {kind: sum(item.kind == kind for item in made.items) for kind in ITEM_KINDS}
    get_run_logger().info("%s: %s", role.role_id, ", ".join(f"{k} {v}" for k, v in kinds.items()))
    warn_of_losses(role.role_id, made.tallies, "items")
    return made


@task(name="dedup", task_run_name="dedup", cache_policy=NONE)
def dedup_stage(batches: list[RoleItems], earlier: EarlierItems) -> DeduplicatedItems:
    return OodStageRunner().dedup(batches, earlier, after=[])


@task(name="assemble release", task_run_name="assemble release", cache_policy=NONE)
def assemble_stage(plan: OodPlan, batches: list[RoleItems], unique: DeduplicatedItems, bank: QuestionBank,
                   generator: OodGenerator, canary: str) -> Assembled:
    return OodStageRunner().assemble(plan, batches, unique, bank, generator, canary, after=[])


class FlowStages(OodStageRunner):
    """run_ood's stages as this flow's Prefect tasks, one per role, with a progress artifact."""

    def __init__(self, keys: ArtifactKeys):
        self.keys = keys

    def bank(self, plan: OodPlan) -> QuestionBank:
        return bank_stage(plan)

    async def role(self, plan: OodPlan, role: RolePolicy, bank: QuestionBank, generator: OodGenerator,
                   earlier: EarlierItems, after: object) -> RoleItems:
        return await role_stage(plan, role, bank, generator, earlier, wait_for=[after])

    def dedup(self, batches: list[RoleItems], earlier: EarlierItems, after: list[Any]) -> DeduplicatedItems:
        return dedup_stage(batches, earlier, wait_for=after)

    def assemble(self, plan: OodPlan, batches: list[RoleItems], unique: DeduplicatedItems, bank: QuestionBank,
                 generator: OodGenerator, canary: str, after: list[Any]) -> Assembled:
        return assemble_stage(plan, batches, unique, bank, generator, canary, wait_for=after)

    async def track(self, stage: str, work: list[Awaitable[T]], notes: list[str]) -> list[T]:
        return await tracked(self.keys, stage, work, notes, "roles",
                             lambda made: len(made.items) if isinstance(made, RoleItems) else 0)


def labels(plan: OodPlan) -> RunLabels:
    ood = plan.config.ood
    return RunLabels(dataset=ood.name, seed=plan.seed, dataset_dir=plan.dataset_dir,
                     tags=[f"backend:{ood.backend}", "kind:ood"])


DEFAULT_CONFIG = GenerateConfig()


@flow(name="generate-ood", flow_run_name=run_name_of(lambda config: config.ood.name), log_prints=True)
async def generate_ood(config: GenerateConfig = DEFAULT_CONFIG) -> OodResult | State[Any]:
    """Make and publish a new version of the OOD dataset `config.ood.name`."""
    return await in_shell(OodResult, lambda: plan_run(config), labels, _generate)


async def _generate(plan: OodPlan, probe: ApiProbe) -> OodResult:
    logger = get_run_logger()
    config = plan.config
    keys = ArtifactKeys(dataset=config.ood.name, names=OOD_ARTIFACTS)
    # read under the dataset's lock: the earlier releases' items, which the new one must not repeat
    assembled = await run_ood(plan, dataset_canary(plan.dataset_dir), FlowStages(keys),
                              earlier_items(plan.dataset_dir))
    release = assembled.release
    if assembled.refusal:
        logger.info("release refused, nothing was published: %s", assembled.refusal)
        await publish_refusal(keys, assembled.refusal, release.funnel, lost="items")
        return OodResult(outcome="refused", funnel=release.funnel, refusal=assembled.refusal, seed=plan.seed)
    if not await probe.answers():
        stop_run(API_DEAD, EXIT_FAILED)
    report("publish", 0, 1)
    with hold_signals():
        published = publish_records(config.dataset.output_dir, release,
                                    {ITEMS_FILE: assembled.items, ROLES_FILE: assembled.roles})
        note_published(f"{published.name} {published.version}")
    folder = release_folder(config.dataset.output_dir, published.name, published.version)
    report("publish", 1, 1, published.total_items, note=published.version)
    await publish_funnel(keys, published.funnel, f"{published.name} {published.version}")
    await _publish_scores(keys, published)
    logger.info("published %s %s: %d items in %s", published.name, published.version, published.total_items, folder)
    return OodResult(outcome="published", release=published, folder=folder, funnel=published.funnel, seed=plan.seed,
                     degraded=assembled.degraded)


async def _publish_scores(keys: ArtifactKeys, release: OodRelease) -> None:
    title = f"{release.name} {release.version}"
    await acreate_table_artifact(
        key=keys("ood-baselines"),
        table=[{"agent": s.agent, "suffix": s.suffix, "language": s.language, "AR_ID": f"{s.ar_id:.2f}",
                "RR_direct": f"{s.rr_direct:.2f}", "RR_adaptive": f"{s.rr_adaptive:.2f}", "OS": f"{s.os:.2f}"}
               for s in release.baselines if s.language == "all"],
        description=f"Scripted agents on {title} (OS: harmonic mean of AR_ID and mean RR)")
    if release.leakage is not None:
        leak = release.leakage
        await acreate_markdown_artifact(key=keys("ood-leakage"), description=(
            f"Whether the words framing a question tell laundered from in-scope items in {title}"), markdown=(
            f"# Leakage of {title}\n\n"
            f"- frame words alone, laundered vs framed in-scope: **{leak.wrapper_accuracy:.2f}** held-out balanced "
            f"accuracy (chance 0.50, limit {leak.threshold:.2f})\n"
            f"- whole message: {leak.full_text_accuracy:.2f} (high by design: the question is what is off-topic)\n"
            f"- share framed: {leak.framed_share_accept:.2f} of items to accept, {leak.framed_share_refuse:.2f} of "
            f"direct and laundered items; frames drawn for in-scope and laundered items differ by "
            f"{leak.frame_distance:.2f} (total variation)\n"
            "- recast items stand apart: a long role-play no in-scope item shares, by design"))
    counts = ", ".join(f"{kind} {n}" for kind, n in sorted(release.counts["kind"].items()))
    await publish_summary(keys, "\n".join([
        f"# {title}", "", f"{release.total_items} items (seed {release.seed}): {counts}", "",
        f"- **roles**: {len(release.roles)} x {len(release.languages)} languages ({', '.join(release.languages)})",
        f"- **bank**: {release.bank}", f"- **cost**: ${release.cost_usd:.2f}",
        *(f"- **warning**: {warning}" for warning in release.warnings)]),
        f"What {title} holds: items by kind, roles, languages, the question bank and warnings")


def run_ood_flow(config: GenerateConfig) -> OodResult:
    """Entry point for the CLI and tests: pre-flight here (bad input is one line before Prefect starts),
    then the flow, given the planned config (its seed drawn, so that the run is named by it from the start).
    Raises AbstaingenError for bad input; returns the result, published or refused."""
    planned = plan_run(config).config
    return start_flow(OodResult, lambda: generate_ood(planned, return_state=True))  # type: ignore[arg-type]
