"""All checks for the candidate pairs of one environment, cheap ones first.

Structural checks need no execution. The survivors go through one sandbox session for the
environment: replay of T+ (twice, for determinism), the witness of T-, and the baseline gates.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from abstaingen.model import CheckResult, EnvironmentBundle, FunnelStage, TaskPair, ValidationReport
from abstaingen.model.common import Model
from abstaingen.sandboxes.backends import SandboxBackend
from abstaingen.sandboxes.kept import KeptSessions
from abstaingen.sandboxes.replay import replay
from abstaingen.sandboxes.session import SandboxError, SandboxSession
from abstaingen.sandboxes.trust import implementation_hash, written_by_abstaingen
from abstaingen.store import bundle_in_scratch
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
SANDBOX_ATTEMPTS = 2  # a sandbox that dies or hangs is replaced and the work retried once
INFRASTRUCTURE = "infrastructure"  # a pair's sandbox failed on every attempt
ENV_INFRASTRUCTURE = "env_infrastructure"  # so did the environment checks' sandbox
SANDBOX_POLICY = "sandbox_policy"


class ValidatedBatch(Model):
    accepted: list[TaskPair]
    rejected: list[TaskPair]
    stages: list[FunnelStage]


def _first_failure(report: ValidationReport, names: set[str]) -> str | None:
    return next((c.name for c in report.checks if c.name in names and not c.passed), None)


# The funnel's validation stages, cheapest first: each names the checks whose failure it counts.
LAYERS = {
    "env_checks": {SANDBOX_POLICY, CODE_GATE, ENV_INFRASTRUCTURE, *ENVIRONMENT_CHECKS},
    "structural": {*STRUCTURAL_CHECKS, PRECONDITIONS},
    "replay": {INFRASTRUCTURE, *REPLAY_CHECKS},
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


@dataclass
class SandboxRun:
    """What ran in the sandbox: the environment checks, a report per executed pair, and how often
    each layer's work was retried in a fresh sandbox (layer -> retries)."""

    environment: list[CheckResult] = field(default_factory=list)
    executed: dict[str, ValidationReport] = field(default_factory=dict)
    retried: Counter[str] = field(default_factory=Counter)


Sessions = Callable[[], AbstractAsyncContextManager[SandboxSession]]  # opens the session the work runs in
# Told as pairs' validation ends: how many pairs just ended, and how many of them passed every check.
Validated = Callable[[int, int], Awaitable[None]]


async def _no_one(done: int, passed: int) -> None:
    pass


def _fresh(bundle_dir: Path, backend: SandboxBackend) -> Sessions:
    return lambda: SandboxSession(bundle_dir, backend)


async def _run_in_sandbox(bundle: EnvironmentBundle, sessions: Sessions, pairs: list[TaskPair], check_env: bool = True,
                          on_validated: Validated = _no_one) -> SandboxRun:
    """Environment checks (unless `check_env` is false), then every pair, in one sandbox while it lasts;
    `on_validated` hears of each pair as the next one starts (the pairs are structurally sound: its report
    decides), and of a pair lost with its sandbox; the last is the caller's to tell, once the sandbox is gone.

    A sandbox that dies or stops answering says nothing about the data: it is replaced and the
    work it was doing (the environment checks, or one pair) runs again. Only work whose sandbox
    fails on every attempt is rejected, under a reason that says so (a cancelled run is not a sandbox
    failure and is never retried). Environment checks that fail end the work: every pair would fail."""
    pending = list(pairs)
    run = SandboxRun()
    env_done = not check_env
    attempts: Counter[str] = Counter()
    while pending:
        try:
            async with sessions() as session:
                if not env_done:
                    run.environment = await check_environment(session, bundle)
                    env_done = True
                    if not all(c.passed for c in run.environment):
                        return run
                while pending:
                    report = run.executed[pending[0].pair_id] = await _execute(session, pending[0], bundle)
                    pending.pop(0)
                    if pending:
                        await on_validated(1, int(report.passed))
        except SandboxError as exc:
            work = pending[0].pair_id if env_done else ""
            attempts[work] += 1
            if attempts[work] < SANDBOX_ATTEMPTS:
                layer = "replay" if env_done else "env_checks"
                run.retried[layer] += 1
                continue
            failed = CheckResult(name=INFRASTRUCTURE if env_done else ENV_INFRASTRUCTURE, passed=False,
                                 detail=f"the sandbox failed on {SANDBOX_ATTEMPTS} attempts, the last: {exc}")
            if not env_done:
                run.environment = [failed]
                return run
            run.executed[pending.pop(0).pair_id] = ValidationReport(checks=[failed])
            await on_validated(1, 0)
    return run


def check_sandbox_policy(bundle: EnvironmentBundle, backend: SandboxBackend, allow_unsandboxed: bool) -> CheckResult:
    trusted = written_by_abstaingen(bundle)
    refused = not trusted and not backend.isolated and not allow_unsandboxed
    return CheckResult(name=SANDBOX_POLICY, passed=not refused,
                       detail=f"code abstaingen did not write (origin {bundle.origin}, implementation "
                              f"{implementation_hash(bundle)[:12]}) does not run on the {backend.name} backend "
                              "without sandbox.allow_unsandboxed" if refused
                       else f"{'builtin' if trusted else 'untrusted'} code on {backend.name}")


async def check_candidate_environment(bundle: EnvironmentBundle, backend: SandboxBackend,
                                     allow_unsandboxed: bool = False) -> list[CheckResult]:
    """The environment layer alone, for a bundle still being written (the llm backend's repair loop):
    the sandbox policy, the code gate, then the environment checks in a sandbox."""
    checks = [check_sandbox_policy(bundle, backend, allow_unsandboxed), check_code(bundle)]
    if not all(c.passed for c in checks):
        return checks
    with bundle_in_scratch(bundle) as bundle_dir:
        try:
            async with SandboxSession(bundle_dir, backend) as session:
                return checks + await check_environment(session, bundle)
        except SandboxError as exc:
            return [*checks, CheckResult(name=ENVIRONMENT_CHECKS[0], passed=False, detail=str(exc))]


async def validate_pairs_async(bundle: EnvironmentBundle, pairs: list[TaskPair], backend: SandboxBackend,
                               allow_unsandboxed: bool = False, kept: KeptSessions | None = None,
                               on_validated: Validated = _no_one) -> ValidatedBatch:
    """Validate one environment and its candidate pairs in one sandbox session. With `kept` (the llm
    backend's drafts of twins in an environment it accepted), the environment's kept session serves and
    the environment checks it passed already are not run again (the validate stage runs them once more).
    `on_validated` hears of the pairs as their validation ends: those the cheap layers reject at once, then
    one by one as the sandbox is done with each, and the rest once the environment is found wanting."""
    environment = [check_sandbox_policy(bundle, backend, allow_unsandboxed), check_code(bundle)]
    # both before any sandbox sees the code
    structural = {p.pair_id: [*structural_checks(p, bundle), check_preconditions(p, bundle)] for p in pairs}
    executable = [p for p in pairs if all(c.passed for c in structural[p.pair_id])]
    if len(executable) < len(pairs):
        await on_validated(len(pairs) - len(executable), 0)
    heard = Counter[str]()

    async def tell(done: int, passed: int) -> None:
        heard.update(done=done, passed=passed)
        await on_validated(done, passed)

    run = SandboxRun()
    if all(c.passed for c in environment) and executable:
        if kept is not None:
            run = await _run_in_sandbox(bundle, lambda: kept.session(bundle), executable, check_env=False,
                                        on_validated=tell)
        else:
            with bundle_in_scratch(bundle) as bundle_dir:
                run = await _run_in_sandbox(bundle, _fresh(bundle_dir, backend), executable, on_validated=tell)
            environment += run.environment
    # the sandbox is gone: the last pair it ran, or every pair when the environment failed its checks
    if unheard := len(executable) - heard["done"]:
        await on_validated(unheard, sum(report.passed for report in run.executed.values()) - heard["passed"])

    checked = []
    for pair in pairs:
        executed = run.executed.get(pair.pair_id, ValidationReport())
        report = executed.model_copy(update={"checks": [*environment, *structural[pair.pair_id], *executed.checks],
                                        "sandbox": backend.name, "sandbox_image": backend.image})
        checked.append(pair.model_copy(update={"validation": report}))
    stages, remaining = [], checked
    for layer, names in LAYERS.items():
        rejected = Counter(r for p in remaining if (r := _first_failure(p.validation, names)))
        stages.append(FunnelStage.counted(stage=layer, received=len(remaining), rejected=dict(rejected),
                                 retried=run.retried[layer]))
        remaining = [p for p in remaining if _first_failure(p.validation, names) is None]
    accepted = [p for p in checked if p.validation.passed]
    return ValidatedBatch(accepted=accepted, rejected=[p for p in checked if not p.validation.passed], stages=stages)


def validate_pairs(bundle: EnvironmentBundle, pairs: list[TaskPair], backend: SandboxBackend,
                   allow_unsandboxed: bool = False) -> ValidatedBatch:
    return anyio.run(validate_pairs_async, bundle, pairs, backend, allow_unsandboxed)
