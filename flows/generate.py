"""The generation flow: seed instructions in, a validated, published release out.

capability extraction -> environment synthesis -> positive tasks + DAGs -> perturbation
-> validation (structural, replay in the sandbox) -> release

A Prefect task here is a stage over one environment (or the whole seed list), never a single tool
call: each one is worth far more than Prefect's per-task overhead, and each shows in the UI.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections import Counter
from pathlib import Path

from prefect import flow, get_run_logger, task, unmapped
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NONE

import abstaingen
from abstaingen.config import GenerateConfig, SeedInstruction
from abstaingen.errors import AbstaingenError
from abstaingen.generators.builtin.capability import default_seeds, extract_capabilities
from abstaingen.generators.builtin.domains import DOMAINS
from abstaingen.generators.builtin.environment import synthesize_environment
from abstaingen.generators.builtin.perturb import perturb
from abstaingen.generators.builtin.tasks import NoSuitableRecord, PositiveTask, write_positive_task
from abstaingen.model import (
    CapabilitySpec,
    EnvironmentBundle,
    FunnelStage,
    Provenance,
    Release,
    Scenario,
    TaskPair,
    ValidationReport,
)
from abstaingen.model.common import Model
from abstaingen.sandboxes.backends import get_backend
from abstaingen.sandboxes.replay import replay_in_sandbox
from abstaingen.store import publish_release, write_bundle
from abstaingen.validators.replay_check import check_positive_replay
from abstaingen.validators.structural import structural_checks

STAGES = ("capability", "environment", "task", "perturbation", "structural", "replay")


class StageBatch(Model):
    """What one stage did to one environment's candidates: survivors and why the others were dropped."""

    stage: str
    received: int
    rejected: dict[str, int] = {}


class PositiveBatch(Model):
    tasks: list[PositiveTask]
    funnel: StageBatch


class PairBatch(Model):
    pairs: list[TaskPair]
    funnel: list[StageBatch]


class GenerationResult(Model):
    release: Release | None  # None when no pair survived validation
    funnel: list[FunnelStage]


def code_version() -> str:
    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=Path(__file__).parent,
                             capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        sha = ""
    return f"{abstaingen.__version__}+{sha}" if sha else abstaingen.__version__


@task(name="extract capabilities", cache_policy=NONE)
def extract_capabilities_stage(seeds: list[SeedInstruction]) -> list[CapabilitySpec]:
    return [extract_capabilities(s.instruction, s.domain) for s in seeds]


@task(name="synthesize environment", cache_policy=NONE)
def synthesize_environment_stage(spec: CapabilitySpec, seed: int) -> EnvironmentBundle:
    return synthesize_environment(DOMAINS[spec.domain], spec, seed)


@task(name="write positive tasks", cache_policy=NONE)
def positive_tasks_stage(bundle: EnvironmentBundle, variants: int, seed: int) -> PositiveBatch:
    tasks, rejected = [], Counter[str]()
    for scenario in Scenario:
        for variant in range(variants):
            try:
                tasks.append(write_positive_task(bundle, DOMAINS[bundle.domain], scenario, variant, seed))
            except NoSuitableRecord as exc:
                rejected[f"{scenario.value}: {exc}"] += 1
    return PositiveBatch(tasks=tasks, funnel=StageBatch(stage="task", received=len(tasks) + sum(rejected.values()),
                                                        rejected=dict(rejected)))


@task(name="perturb", cache_policy=NONE)
def perturb_stage(positives: PositiveBatch, provenance: Provenance, seed: int) -> list[TaskPair]:
    return [perturb(p, DOMAINS[p.domain], provenance, seed) for p in positives.tasks]


@task(name="validate", cache_policy=NONE)
def validate_stage(bundle: EnvironmentBundle, pairs: list[TaskPair], sandbox: str) -> PairBatch:
    """Structural checks first (cheap); replay the act side of the survivors in one sandbox."""
    structural_rejects, survivors = Counter[str](), []
    for pair in pairs:
        checks = structural_checks(pair, bundle)
        failed = [c.name for c in checks if not c.passed]
        if failed:
            structural_rejects.update(failed)
        else:
            survivors.append(pair.model_copy(update={"validation": ValidationReport(checks=checks)}))

    backend = get_backend(sandbox)
    with tempfile.TemporaryDirectory(prefix="abstaingen-env-") as tmp:
        bundle_dir = Path(tmp) / bundle.env_id
        write_bundle(bundle, bundle_dir)
        runs = replay_in_sandbox(bundle_dir, [p.act for p in survivors], backend, runs=2) if survivors else {}

    replay_rejects, accepted = Counter[str](), []
    for pair in survivors:
        act_runs = runs[pair.act.task_id]
        checks = check_positive_replay(pair.act, act_runs)
        report = ValidationReport(checks=[*pair.validation.checks, *checks],
                                  replay_trace_hash=act_runs[0].trace.trace_hash, sandbox=backend.name)
        if report.passed:
            accepted.append(pair.model_copy(update={"validation": report}))
        else:
            replay_rejects.update(c.name for c in report.failures())
    return PairBatch(pairs=accepted, funnel=[
        StageBatch(stage="structural", received=len(pairs), rejected=dict(structural_rejects)),
        StageBatch(stage="replay", received=len(survivors), rejected=dict(replay_rejects)),
    ])


def merge_funnel(batches: list[StageBatch]) -> list[FunnelStage]:
    stages: dict[str, FunnelStage] = {}
    for batch in batches:
        previous = stages.get(batch.stage, FunnelStage(stage=batch.stage, received=0, passed=0))
        rejected = Counter(previous.rejected) + Counter(batch.rejected)
        received = previous.received + batch.received
        stages[batch.stage] = FunnelStage(stage=batch.stage, received=received,
                                          passed=received - sum(rejected.values()), rejected=dict(rejected))
    return [stages[s] for s in STAGES if s in stages]


def publish_prefect_artifacts(release: Release, folder: Path) -> None:
    create_table_artifact(
        key="stage-funnel",
        table=[{"stage": f.stage, "received": f.received, "passed": f.passed,
                "rejected": ", ".join(f"{k}: {v}" for k, v in f.rejected.items()) or "-"} for f in release.funnel],
        description=f"Stage funnel of {release.name} {release.version}",
    )
    lines = [f"# {release.name} {release.version}", "", f"{release.total_pairs} pairs in `{folder}`", ""]
    for dimension, counts in release.counts.items():
        lines.append(f"- **{dimension}**: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    lines.append(f"- **cost**: ${release.cost_usd:.2f} (builtin backend)")
    create_markdown_artifact(key="release-summary", markdown="\n".join(lines))


@flow(name="generate-release", log_prints=True)
def generate_release(config: GenerateConfig, seeds: list[SeedInstruction]) -> GenerationResult:
    logger = get_run_logger()
    seed = config.dataset.seed
    provenance = Provenance(backend={stage: config.backend_for(stage) for stage in
                                     ("capability", "environment", "task", "perturbation")},
                            seed=seed, code_version=code_version())

    specs = extract_capabilities_stage(seeds)
    logger.info("%d seed instructions -> %d capability specs", len(seeds), len(specs))
    bundles = synthesize_environment_stage.map(specs, unmapped(seed)).result()
    positives = positive_tasks_stage.map(bundles, unmapped(config.generation.variants_per_scenario),
                                         unmapped(seed)).result()
    candidates = perturb_stage.map(positives, unmapped(provenance), unmapped(seed)).result()
    validated = [validate_stage.submit(b, c, config.sandbox.backend) for b, c in zip(bundles, candidates)]
    batches = [v.result() for v in validated]

    pairs = [p for batch in batches for p in batch.pairs]
    funnel = merge_funnel([p.funnel for p in positives] + [f for batch in batches for f in batch.funnel])
    funnel.insert(0, FunnelStage(stage="environment", received=len(specs), passed=len(bundles)))
    logger.info("validated %d of %d candidate pairs", len(pairs), sum(len(c) for c in candidates))
    if not pairs:
        logger.warning("no pair survived validation; nothing is published")
        return GenerationResult(release=None, funnel=funnel)

    manifest = Release(
        name=config.dataset.name, version="", created_by=f"abstaingen {code_version()}",
        config_fingerprint=config.fingerprint(seeds), sandbox=config.sandbox.backend,
        counts={}, total_pairs=0, funnel=funnel,
    )
    release = publish_release(config.dataset.output_dir, manifest, pairs, bundles)
    folder = config.dataset.output_dir / release.name / release.version
    publish_prefect_artifacts(release, folder)
    logger.info("published %s %s: %d pairs in %s", release.name, release.version, release.total_pairs, folder)
    return GenerationResult(release=release, funnel=funnel)


def run_generate(config: GenerateConfig, seeds: list[SeedInstruction] | None = None) -> Release:
    """Entry point for the CLI and tests: checks what the flow cannot do yet, then runs it."""
    llm_stages = [s for s in ("capability", "environment", "task", "perturbation") if config.backend_for(s) == "llm"]
    if llm_stages:
        raise AbstaingenError(f"the llm backend is not available yet (configured for: {', '.join(llm_stages)}); "
                              "use backend 'builtin'")
    if not seeds:
        seeds = [SeedInstruction(instruction=text, domain=domain) for text, domain in default_seeds()]
    in_scope = [s for s in seeds if extract_capabilities(s.instruction, s.domain).domain in config.generation.domains]
    if not in_scope:
        raise AbstaingenError("no seed instruction belongs to the configured domains "
                              f"({', '.join(config.generation.domains)})")
    result = generate_release(config, in_scope)
    if result.release is None:
        rejected = "; ".join(f"{f.stage}: {f.rejected}" for f in result.funnel if f.rejected)
        raise AbstaingenError(f"no pair survived validation, nothing was published ({rejected})")
    return result.release
