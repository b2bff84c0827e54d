"""All checks for the candidate pairs of one environment, cheap ones first.

Structural checks need no execution. The survivors go through one sandbox session for the
environment: replay of T+ (twice, for determinism), the witness of T-, and the baseline gates.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

import anyio

from abstaingen.model import CheckResult, EnvironmentBundle, TaskPair, ValidationReport
from abstaingen.model.common import Model
from abstaingen.sandboxes.backends import SandboxBackend
from abstaingen.sandboxes.replay import replay
from abstaingen.sandboxes.session import SandboxError, SandboxSession
from abstaingen.store import write_bundle
from abstaingen.validators.baselines import GATE_CHECKS, gate_checks, run_baselines
from abstaingen.validators.code_gate import CHECK as CODE_GATE
from abstaingen.validators.code_gate import check_code
from abstaingen.validators.environment_checks import CHECKS as ENVIRONMENT_CHECKS
from abstaingen.validators.environment_checks import check_environment
from abstaingen.validators.policy import CHECK as ACT_POLICIES
from abstaingen.validators.policy import check_act_policies
from abstaingen.validators.preconditions import CHECK as PRECONDITIONS
from abstaingen.validators.preconditions import check_preconditions
from abstaingen.validators.replay_check import CHECKS as REPLAY_CHECKS
from abstaingen.validators.replay_check import check_positive_replay
from abstaingen.validators.structural import CHECKS as STRUCTURAL_CHECKS
from abstaingen.validators.structural import structural_checks
from abstaingen.validators.witness import CHECK as WITNESS
from abstaingen.validators.witness import check_witness

REPLAY_RUNS = 2
SANDBOX = "sandbox"  # the sandbox itself failed: a call hung, or the server died
SANDBOX_POLICY = "sandbox_policy"


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


# The funnel's validation stages, cheapest first: each names the checks whose failure it counts.
LAYERS = {
    "env_checks": {SANDBOX_POLICY, CODE_GATE, *ENVIRONMENT_CHECKS},
    "structural": {*STRUCTURAL_CHECKS, PRECONDITIONS},
    "replay": {SANDBOX, *REPLAY_CHECKS},
    "policy": {ACT_POLICIES},
    "witness": {WITNESS},
    "gates": set(GATE_CHECKS),
}


async def _execute(session: SandboxSession, pair: TaskPair, bundle: EnvironmentBundle) -> ValidationReport:
    runs = await replay(session, [pair.act], REPLAY_RUNS)
    checks = check_positive_replay(pair.act, runs)
    checks.append(check_act_policies(pair, bundle, runs[0]))
    checks.append(await check_witness(session, pair, bundle))
    scores = await run_baselines(session, pair, runs)
    checks.extend(gate_checks(scores))
    return ValidationReport(checks=checks, baseline_scores=scores, replay_trace_hash=runs[0].trace.trace_hash)


async def _run_in_sandbox(bundle: EnvironmentBundle, bundle_dir: Path, backend: SandboxBackend,
                          pairs: list[TaskPair], executed: dict[str, ValidationReport]) -> list[CheckResult]:
    """Environment checks, then every pair, in one sandbox; fills `executed` and returns the
    environment checks. A sandbox that hangs or dies fails the pair it was running and is replaced
    by a fresh one for the rest; one that fails the environment checks ends the work."""
    pending = list(pairs)
    environment: list[CheckResult] = []
    while pending:
        try:
            async with SandboxSession(bundle_dir, backend) as session:
                if not environment:
                    environment = await check_environment(session, bundle)
                    if not all(c.passed for c in environment):
                        return environment  # every pair would fail; running them proves nothing
                while pending:
                    executed[pending[0].pair_id] = await _execute(session, pending[0], bundle)
                    pending.pop(0)
        except SandboxError as exc:
            if not environment:
                return [CheckResult(name=ENVIRONMENT_CHECKS[0], passed=False, detail=f"sandbox: {exc}")]
            failed = pending.pop(0)
            executed[failed.pair_id] = ValidationReport(checks=[CheckResult(name=SANDBOX, passed=False,
                                                                            detail=str(exc))])
    return environment


def check_sandbox_policy(bundle: EnvironmentBundle, backend: SandboxBackend, allow_unsandboxed: bool) -> CheckResult:
    refused = bundle.origin == "llm" and not backend.isolated and not allow_unsandboxed
    return CheckResult(name=SANDBOX_POLICY, passed=not refused,
                       detail=f"LLM-written code does not run on the {backend.name} backend without "
                              "sandbox.allow_unsandboxed" if refused else f"{bundle.origin} code on {backend.name}")


async def validate_pairs_async(bundle: EnvironmentBundle, pairs: list[TaskPair], backend: SandboxBackend,
                               allow_unsandboxed: bool = False) -> ValidatedBatch:
    """Validate one environment and its candidate pairs in one sandbox session."""
    environment = [check_sandbox_policy(bundle, backend, allow_unsandboxed), check_code(bundle)]
    # both before any sandbox sees the code
    structural = {p.pair_id: [*structural_checks(p, bundle), check_preconditions(p, bundle)] for p in pairs}
    executable = [p for p in pairs if all(c.passed for c in structural[p.pair_id])]
    executed: dict[str, ValidationReport] = {}
    if all(c.passed for c in environment) and executable:
        with tempfile.TemporaryDirectory(prefix="abstaingen-env-") as tmp:
            bundle_dir = Path(tmp) / bundle.env_id
            write_bundle(bundle, bundle_dir)
            environment += await _run_in_sandbox(bundle, bundle_dir, backend, executable, executed)

    checked = []
    for pair in pairs:
        run = executed.get(pair.pair_id, ValidationReport())
        report = run.model_copy(update={"checks": [*environment, *structural[pair.pair_id], *run.checks],
                                        "sandbox": backend.name, "sandbox_image": backend.image})
        checked.append(pair.model_copy(update={"validation": report}))
    stages, remaining = [], checked
    for layer, names in LAYERS.items():
        rejected = Counter(r for p in remaining if (r := _first_failure(p.validation, names)))
        stages.append(StageCount(stage=layer, received=len(remaining), rejected=dict(rejected)))
        remaining = [p for p in remaining if _first_failure(p.validation, names) is None]
    accepted = [p for p in checked if p.validation.passed]
    return ValidatedBatch(accepted=accepted, rejected=[p for p in checked if not p.validation.passed], stages=stages)


def validate_pairs(bundle: EnvironmentBundle, pairs: list[TaskPair], backend: SandboxBackend,
                   allow_unsandboxed: bool = False) -> ValidatedBatch:
    return anyio.run(validate_pairs_async, bundle, pairs, backend, allow_unsandboxed)
