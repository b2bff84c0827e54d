"""The whole pipeline, as a user runs it: `abstaingen generate` on the builtin backend, twice."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sandbox_backends import DOCKER, usable

from abstaingen.diff import ReleaseDiff
from abstaingen.generators.builtin.domains import DOMAINS
from abstaingen.model import Scenario
from abstaingen.model.perturbation import SCENARIOS
from abstaingen.pipelines.verify import verify_release
from abstaingen.sandboxes.backends import select_backend
from abstaingen.store import load_release
from abstaingen.validators.dedup import remove_near_duplicates

pytestmark = pytest.mark.e2e

EXECUTED_CHECKS = {"replay_steps", "replay_final_state", "replay_deterministic", "witness", "gate_oracle",
                   "gate_always_act", "gate_always_abstain", "gate_do_nothing", "gate_do_nothing_act"}


SECOND_RUN_SANDBOX = "docker" if usable("docker") else "local"


def generate(workdir: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env["PREFECT_HOME"] = str(workdir.parent / "prefect-home")  # shared by both runs, like a user's
    return subprocess.run(
        [sys.executable, "-m", "abstaingen", "generate", "--output", str(workdir / "artifacts"), *extra],
        cwd=workdir, env=env, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
    )


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory):
    workdir = tmp_path_factory.mktemp("e2e")
    first = generate(workdir)
    v1 = workdir / "artifacts" / "abstaingen-builtin" / "v1"
    v1_manifest = hashlib.sha256((v1 / "manifest.json").read_bytes()).hexdigest() if v1.exists() else None
    second = generate(workdir, "--domains", "travel", "--sandbox", SECOND_RUN_SANDBOX)
    return workdir, first, second, v1_manifest


def test_generate_prints_no_traceback_and_no_telemetry_error(two_runs) -> None:
    _, first, second, _ = two_runs
    for run in (first, second):
        assert run.returncode == 0, run.stderr[-3000:]
        output = run.stdout + run.stderr
        assert "Traceback" not in output
        assert "telemetry" not in output.lower() and "analytics" not in output.lower()
        assert "ERROR" not in output
    assert "published abstaingen-builtin v1" in first.stdout


def test_scenario_categories_are_agentabstains() -> None:
    assert [SCENARIOS[s].category for s in Scenario] == [
        "missing_critical_parameter", "ambiguous_action_specification", "conflicting_constraints", "high_stakes_action",
        "insufficient_tool_capability", "critical_tool_failure", "conflicting_evidence", "emergent_risk_discovery"]


def test_release_has_replay_verified_pairs_for_every_scenario_and_domain(two_runs) -> None:
    workdir, *_ = two_runs
    folder = workdir / "artifacts" / "abstaingen-builtin" / "v1"
    manifest, pairs = load_release(folder)
    assert manifest.total_pairs == len(pairs) >= 24
    assert manifest.seed is not None and {p.provenance.seed for p in pairs} == {manifest.seed}  # drawn fresh
    assert {(p.provenance.created_at, p.provenance.config_fingerprint) for p in pairs} == {
        (manifest.created_at, manifest.config_fingerprint)}
    assert manifest.checked_against == [] and "canary GUID" in manifest.canary
    assert manifest.backends == {"capability": "builtin", "environment": "builtin", "task": "builtin",
                                 "perturbation": "builtin", "judge": "none"}
    assert {p.canary for p in pairs} == {manifest.canary}
    created = datetime.fromisoformat(manifest.created_at or "")
    assert created.utcoffset() == timedelta(0) and abs(datetime.now(UTC) - created) < timedelta(hours=1)
    assert manifest.sandbox == select_backend("auto").name  # recorded as what auto chose on this machine
    assert {p.scenario for p in pairs} == {s.value for s in Scenario}
    assert {p.domain for p in pairs} == set(DOMAINS)
    assert {p.act.deliverable.value for p in pairs} == {"op", "info"}
    for pair in pairs:
        report = pair.validation
        assert report.passed and report.sandbox == manifest.sandbox
        assert {c.name for c in report.checks} >= EXECUTED_CHECKS
        assert {s.agent for s in report.baseline_scores} == {"oracle", "always_act", "always_abstain", "do_nothing"}
        assert report.replay_trace_hash and len(report.replay_trace_hash) == 64
        assert (folder / "environments" / pair.act.env_id / "implementation.py").is_file()
    assert manifest.counts["scenario"] == {s.value: sum(p.scenario == s.value for p in pairs) for s in Scenario}
    funnel = {stage.stage: stage for stage in manifest.funnel}
    assert list(funnel) == ["capability", "environment", "task", "perturbation", "dedup", "env_checks", "structural",
                            "replay", "policy", "witness", "gates"]
    assert funnel["gates"].passed == len(pairs)
    assert funnel["dedup"].received == funnel["task"].passed
    assert funnel["env_checks"].received == funnel["dedup"].passed
    paired = {m.agent: m.paired for m in manifest.baselines}
    assert paired == {"oracle": 1.0, "always_act": 0.0, "always_abstain": 0.0, "do_nothing": 0.0}
    leakage = {score.scenario: score for score in manifest.leakage}
    assert all(leakage[s].at_chance for s in ("S6", "S7", "S8"))
    runtime_abstain = [p.abstain for p in pairs if p.scenario in ("S6", "S7", "S8")]
    assert all(v.earliest_abstain_step and v.earliest_abstain_step > 0 for v in runtime_abstain)
    assert verify_release(folder) == []


def test_a_second_run_writes_a_new_version_and_leaves_the_first_alone(two_runs) -> None:
    workdir, _, second, v1_manifest = two_runs
    dataset = workdir / "artifacts" / "abstaingen-builtin"
    assert sorted(p.name for p in dataset.iterdir() if not p.name.startswith(".")) == ["v1", "v2"]
    assert hashlib.sha256((dataset / "v1" / "manifest.json").read_bytes()).hexdigest() == v1_manifest
    manifest, pairs = load_release(dataset / "v2")
    first, first_pairs = load_release(dataset / "v1")
    assert {p.domain for p in pairs} == {"travel"} and manifest.seed not in (None, first.seed)
    assert manifest.config_fingerprint != first.config_fingerprint
    assert manifest.checked_against == ["v1"] and manifest.canary == first.canary
    assert "published abstaingen-builtin v2" in second.stdout and f"seed {manifest.seed}; none repeats v1" in second.stdout
    # nothing of v2 is a near-duplicate of v1, by the rule dedup applies within a release
    pooled = remove_near_duplicates([*first_pairs, *pairs])
    assert pooled.near_duplicate == [] and len(pooled.kept) == len(first_pairs) + len(pairs)
    assert verify_release(dataset / "v2") == []


def test_release_diff_explains_the_two_runs(two_runs) -> None:
    workdir, *_ = two_runs
    dataset = workdir / "artifacts" / "abstaingen-builtin"
    shown = subprocess.run([sys.executable, "-m", "abstaingen", "release", "diff", str(dataset / "v1"),
                            str(dataset / "v2"), "--json"], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    difference = ReleaseDiff.model_validate_json(shown.stdout)
    first, first_pairs = load_release(dataset / "v1")
    second, pairs = load_release(dataset / "v2")
    assert difference.removed == sorted(p.pair_id for p in first_pairs)  # a fresh seed: every pair is new
    assert difference.added == sorted(p.pair_id for p in pairs) and difference.changed == []
    assert {c.setting: (c.before, c.after) for c in difference.settings}["seed"] == (str(first.seed), str(second.seed))
    assert {(c.dimension, c.key): (c.before, c.after) for c in difference.counts}[("domain", "banking")] == (
        first.counts["domain"]["banking"], 0)
    assert difference.checked_against == ["v1"]
    text = subprocess.run([sys.executable, "-m", "abstaingen", "release", "diff", str(dataset / "v1"),
                           str(dataset / "v2")], capture_output=True, text=True, timeout=60).stdout
    assert f"seed: {first.seed} -> {second.seed}" in text and "was deduplicated against v1" in text


@pytest.mark.parametrize("backend", [DOCKER])
def test_with_sandbox_docker_every_pair_ran_in_a_container(two_runs, backend: str) -> None:
    workdir, *_ = two_runs
    manifest, pairs = load_release(workdir / "artifacts" / "abstaingen-builtin" / "v2")
    assert manifest.sandbox == "docker" and manifest.sandbox_image.startswith("sha256:")
    assert {(p.validation.sandbox, p.validation.sandbox_image) for p in pairs} == {("docker", manifest.sandbox_image)}
    assert all(p.validation.passed for p in pairs)
