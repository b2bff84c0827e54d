"""The OOD flow (`generate-ood`): scoped assistant roles in, a published release of in-scope, direct
off-topic and laundered off-topic items out.

plan -> question bank -> per role: in-scope questions, relatedness gate, framing, consistency check ->
dedup -> baselines, leakage, coverage -> release

A thin shell over abstaingen.pipelines.ood: one task per stage and role, each named for the UI. Like
the generate flow, it runs the same from the CLI, a schedule or the UI (its parameters have
defaults), and its final state is honest: Completed with a release, Failed when the gates refused the
data or the input was bad.

No `from __future__ import annotations`: Prefect builds the parameter schema from these annotations.
"""

import asyncio
import time
from pathlib import Path
from typing import Any, Literal

from prefect import flow, get_client, get_run_logger, task
from prefect.artifacts import acreate_markdown_artifact, acreate_table_artifact
from prefect.cache_policies import NONE
from prefect.context import get_run_context
from prefect.states import Failed, State
from pydantic import Field

from abstaingen.checkpoints import DatasetLock
from abstaingen.config import GenerateConfig
from abstaingen.errors import AbstaingenError, HostError
from abstaingen.flows.artifacts import StageProgress, publish_funnel
from abstaingen.flows.generate import (
    EXIT_FAILED,
    clean_up_after_dead_runs,
    code_version,
    take_dataset_lock,
    ui_link,
)
from abstaingen.generators.ood import OodGenerator, make_ood_generator
from abstaingen.generators.ood.bank import load_bank
from abstaingen.generators.ood.builtin.roles import builtin_roles
from abstaingen.interrupts import hold_signals, note_published, stop_on_signals, stop_run, take_signals
from abstaingen.model.common import Model
from abstaingen.model.ood import QuestionBank, RolePolicy
from abstaingen.model.release import FunnelStage, OodRelease
from abstaingen.pipelines.ood import Assembled, OodPlan, RoleItems, assemble, plan_ood, role_items
from abstaingen.progress import report
from abstaingen.sandboxes.backends import mark_run_owner
from abstaingen.store import (
    ITEMS_FILE,
    ROLES_FILE,
    dataset_canary,
    publish_records,
    release_folder,
    require_writable_dir,
)
from abstaingen.validators.dedup import Deduplicated, earlier_items, remove_duplicate_items


class OodResult(Model):
    """How an OOD run ended: the flow run's return value (with a Failed state unless published)."""

    outcome: Literal["published", "refused", "bad_input"]
    release: OodRelease | None = None
    folder: Path | None = None
    funnel: list[FunnelStage] = Field(default_factory=list)
    refusal: str | None = None
    seed: int | None = None
    flow_run_id: str | None = None
    ui_url: str | None = None
    elapsed_s: float = 0.0


def plan_run(config: GenerateConfig) -> OodPlan:
    """Pre-flight: the plan, a backend the config can work with, a writable output folder."""
    plan = plan_ood(config, code_version(), [role.policy for role in builtin_roles()])
    make_ood_generator(plan.config.ood.backend, plan.config)
    require_writable_dir(plan.dataset_dir)
    return plan


@task(name="load question bank", cache_policy=NONE)
def bank_stage(plan: OodPlan) -> QuestionBank:
    bank = load_bank(plan.config.ood.bank, plan.languages)
    get_run_logger().info("question bank %s: %d questions", bank.source, len(bank.by_id()))
    return bank


@task(name="write role items", task_run_name="write items {role.role_id}", cache_policy=NONE)
async def role_stage(plan: OodPlan, role: RolePolicy, bank: QuestionBank, generator: OodGenerator) -> RoleItems:
    made = await role_items(plan, role, bank, generator, generator.report())
    kinds = {kind: sum(item.kind == kind for item in made.items) for kind in ("id", "direct_ood", "laundered_ood")}
    get_run_logger().info("%s: %s", role.role_id, ", ".join(f"{k} {v}" for k, v in kinds.items()))
    return made


@task(name="remove near-duplicates", cache_policy=NONE)
def dedup_stage(batches: list[RoleItems], dataset_dir: Path) -> Deduplicated:
    earlier = earlier_items(dataset_dir)
    return remove_duplicate_items([item for batch in batches for item in batch.items], earlier)


@task(name="assemble release", cache_policy=NONE)
def assemble_stage(plan: OodPlan, batches: list[RoleItems], unique: Deduplicated, bank: QuestionBank,
                   generator: OodGenerator, canary: str, checked_against: list[str]) -> Assembled:
    tallies = [tally for batch in batches for tally in batch.tallies] + [unique.tally]
    return assemble(plan, unique.kept, tallies, bank.source, generator.relatedness_threshold, generator.report(),
                    canary, checked_against, f"abstaingen {plan.code_version}")


async def label_run(plan: OodPlan) -> None:
    """Name and tag the flow run by what it makes."""
    flow_run = get_run_context().flow_run  # type: ignore[union-attr]
    if flow_run is None:
        return
    ood = plan.config.ood
    labels = [f"dataset:{ood.name}", f"backend:{ood.backend}", "kind:ood"]
    async with get_client() as client:
        await client.update_flow_run(flow_run.id, name=f"{ood.name} seed {plan.seed}",
                                     tags=sorted({*flow_run.tags, *labels}))


DEFAULT_CONFIG = GenerateConfig()


@flow(name="generate-ood", log_prints=True)
async def generate_ood(config: GenerateConfig = DEFAULT_CONFIG) -> OodResult | State[Any]:
    """Make and publish a new version of the OOD dataset `config.ood.name`."""
    take_signals()
    started = time.monotonic()
    try:
        plan = plan_run(config)
    except AbstaingenError as exc:
        get_run_logger().error("bad input: %s", exc)
        return Failed(message=f"bad input: {exc}", data=OodResult(outcome="bad_input", refusal=str(exc)))
    await label_run(plan)
    lock = DatasetLock(plan.dataset_dir)
    try:
        await take_dataset_lock(lock)
        result = await _generate(plan)
    except HostError as exc:
        stop_run(f"error: {exc}", EXIT_FAILED)
    except AbstaingenError as exc:
        get_run_logger().error("bad input: %s", exc)
        result = OodResult(outcome="bad_input", refusal=str(exc), seed=plan.seed)
    finally:
        lock.release()
    result = result.model_copy(update={"elapsed_s": round(time.monotonic() - started, 1)})
    if result.outcome == "published":
        return result
    prefix = "release refused" if result.outcome == "refused" else "bad input"
    return Failed(message=f"{prefix}: {result.refusal}", data=result)


async def _generate(plan: OodPlan) -> OodResult:
    logger = get_run_logger()
    config = plan.config
    generator = make_ood_generator(config.ood.backend, config)
    try:
        bank = bank_stage(plan)
        bar = await StageProgress("write items", len(plan.roles)).start()

        async def one(role: RolePolicy) -> RoleItems:
            made = await role_stage(plan, role, bank, generator, wait_for=[bank])
            await bar.advance(len(made.items), role.role_id)
            return made

        batches = list(await asyncio.gather(*(one(role) for role in plan.roles)))
    finally:
        await generator.aclose()
    unique = dedup_stage(batches, plan.dataset_dir, wait_for=batches)
    earlier = unique.checked_against
    assembled = assemble_stage(plan, batches, unique, bank, generator, dataset_canary(plan.dataset_dir), earlier,
                               wait_for=[unique])
    release = assembled.release
    title = f"{release.name} (seed {plan.seed})"
    if assembled.refusal:
        logger.info("release refused, nothing was published: %s", assembled.refusal)
        await publish_funnel(release.funnel, f"the refused release of {title}")
        await acreate_markdown_artifact(key="release-summary", markdown=f"# {release.name}: release refused\n\n"
                                        f"Nothing was published.\n\n**Reason**: {assembled.refusal}")
        return OodResult(outcome="refused", funnel=release.funnel, refusal=assembled.refusal, seed=plan.seed)
    report("publish", 0, 1)
    with hold_signals():
        published = publish_records(config.dataset.output_dir, release,
                                    {ITEMS_FILE: assembled.items, ROLES_FILE: assembled.roles})
        note_published(f"{published.name} {published.version}")
    folder = release_folder(config.dataset.output_dir, published.name, published.version)
    report("publish", 1, 1, published.total_items, note=published.version)
    await publish_funnel(published.funnel, f"{published.name} {published.version}")
    await _publish_scores(published)
    logger.info("published %s %s: %d items in %s", published.name, published.version, published.total_items, folder)
    return OodResult(outcome="published", release=published, folder=folder, funnel=published.funnel, seed=plan.seed)


async def _publish_scores(release: OodRelease) -> None:
    await acreate_table_artifact(
        key="ood-baselines",
        table=[{"agent": s.agent, "suffix": s.suffix, "language": s.language, "AR_ID": f"{s.ar_id:.2f}",
                "RR_direct": f"{s.rr_direct:.2f}", "RR_adaptive": f"{s.rr_adaptive:.2f}", "OS": f"{s.os:.2f}"}
               for s in release.baselines if s.language == "all"],
        description=f"Scripted agents on {release.name} {release.version} (OS: harmonic mean of AR_ID and mean RR)")
    if release.leakage is not None:
        leak = release.leakage
        await acreate_markdown_artifact(key="ood-leakage", markdown=(
            f"# Leakage of {release.name} {release.version}\n\n"
            f"- frame words alone, laundered vs framed in-scope: **{leak.wrapper_accuracy:.2f}** held-out balanced "
            f"accuracy (chance 0.50, limit {leak.threshold:.2f})\n"
            f"- whole message: {leak.full_text_accuracy:.2f} (high by design: the question is what is off-topic)\n"
            f"- share framed: {leak.framed_share_accept:.2f} of items to accept, {leak.framed_share_refuse:.2f} of "
            "items to refuse"))


def run_ood_flow(config: GenerateConfig) -> OodResult:
    """Entry point for the CLI and tests: pre-flight here (bad input is one line before Prefect starts),
    then the flow. Raises AbstaingenError for bad input; returns the result, published or refused."""
    plan_run(config)
    mark_run_owner()
    clean_up_after_dead_runs()
    with stop_on_signals(lambda: None):
        state: State[Any] = asyncio.run(generate_ood(config, return_state=True))  # type: ignore[arg-type]
    result = state.result(raise_on_failure=False)
    if isinstance(result, BaseException):
        raise result
    assert isinstance(result, OodResult)
    if result.outcome == "bad_input":
        raise AbstaingenError(result.refusal or "bad input")
    run_id = str(state.state_details.flow_run_id) if state.state_details.flow_run_id else None
    return result.model_copy(update={"flow_run_id": run_id, "ui_url": ui_link(run_id) if run_id else None})
