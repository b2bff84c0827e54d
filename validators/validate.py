"""All checks for the candidate pairs of one environment, cheap ones first.

Structural checks need no execution. The survivors go through one sandbox session for the
environment: replay of T+ (twice, for determinism), the witness of T-, and the baseline gates.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

import anyio

from abstaingen.model import EnvironmentBundle, TaskPair, ValidationReport
from abstaingen.model.common import Model
from abstaingen.sandboxes.backends import SandboxBackend
from abstaingen.sandboxes.replay import replay
from abstaingen.sandboxes.session import SandboxSession
from abstaingen.store import write_bundle
from abstaingen.validators.baselines import gate_checks, run_baselines
from abstaingen.validators.replay_check import check_positive_replay
from abstaingen.validators.structural import structural_checks
from abstaingen.validators.witness import check_witness

REPLAY_RUNS = 2


class StageCount(Model):
    """What one validation layer did: how many candidates it saw and why it rejected some."""

    stage: str
    received: int
    rejected: dict[str, int] = {}


class ValidatedBatch(Model):
    accepted: list[TaskPair]
    rejected: list[TaskPair]
    stages: list[StageCount]


def _first_failure(report: ValidationReport, names: set[str]) -> str | None:
    return next((c.name for c in report.checks if c.name in names and not c.passed), None)


LAYERS = {
    "structural": {"dag_acyclic", "tool_arguments", "critical_actions", "deliverable_consistent",
                   "single_perturbation", "abstain_labels"},
    "replay": {"replay_steps", "replay_final_state", "replay_deterministic"},
    "witness": {"witness"},
    "gates": {"gate_oracle", "gate_always_act", "gate_always_abstain", "gate_do_nothing", "gate_do_nothing_act"},
}


async def _execute(session: SandboxSession, pair: TaskPair, bundle: EnvironmentBundle,
                   report: ValidationReport) -> ValidationReport:
    runs = await replay(session, [pair.act], REPLAY_RUNS)
    checks = [*report.checks, *check_positive_replay(pair.act, runs)]
    checks.append(await check_witness(session, pair, bundle))
    scores = await run_baselines(session, pair, runs)
    checks.extend(gate_checks(scores))
    return report.model_copy(update={"checks": checks, "baseline_scores": scores,
                                     "replay_trace_hash": runs[0].trace.trace_hash})


async def validate_pairs_async(bundle: EnvironmentBundle, pairs: list[TaskPair], backend: SandboxBackend,
                               servers: int = 1) -> ValidatedBatch:
    """Validate one environment's candidates; `servers` sandboxes of it share the executable pairs."""
    reports = {p.pair_id: ValidationReport(checks=structural_checks(p, bundle), sandbox=backend.name) for p in pairs}
    executable = [p for p in pairs if reports[p.pair_id].passed]

    async def execute_share(bundle_dir: Path, share: list[TaskPair]) -> None:
        async with SandboxSession(bundle_dir, backend) as session:
            for pair in share:
                reports[pair.pair_id] = await _execute(session, pair, bundle, reports[pair.pair_id])

    if executable:
        with tempfile.TemporaryDirectory(prefix="abstaingen-env-") as tmp:
            bundle_dir = Path(tmp) / bundle.env_id
            write_bundle(bundle, bundle_dir)
            async with anyio.create_task_group() as group:
                for index in range(min(servers, len(executable))):
                    group.start_soon(execute_share, bundle_dir, executable[index::servers])

    checked = [p.model_copy(update={"validation": reports[p.pair_id]}) for p in pairs]
    stages, remaining = [], checked
    for layer, names in LAYERS.items():
        rejected = Counter(r for p in remaining if (r := _first_failure(p.validation, names)))
        stages.append(StageCount(stage=layer, received=len(remaining), rejected=dict(rejected)))
        remaining = [p for p in remaining if _first_failure(p.validation, names) is None]
    accepted = [p for p in checked if p.validation.passed]
    return ValidatedBatch(accepted=accepted, rejected=[p for p in checked if not p.validation.passed], stages=stages)


def validate_pairs(bundle: EnvironmentBundle, pairs: list[TaskPair], backend: SandboxBackend,
                   servers: int = 1) -> ValidatedBatch:
    return anyio.run(validate_pairs_async, bundle, pairs, backend, servers)
