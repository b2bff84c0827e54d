"""The llm backend through the whole flow, as a user runs it: `abstaingen generate --config` against the
stand-in model server, in the pet clinic (a domain none of the builtin ones covers)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from clinic import CODE, ENVIRONMENT, INSTRUCTION, PERTURBATION, script_clinic
from prefect_runs import flow_env
from standin import Answer, Raw, StandIn, Status

from abstaingen.generators.builtin.domains import DOMAINS
from abstaingen.generators.llm.perturbation import stage_of
from abstaingen.model import Scenario
from abstaingen.prompts import template_hash
from abstaingen.store import load_release

pytestmark = [pytest.mark.flow, pytest.mark.usefixtures("prefect_api")]  # flow runs report to the session's server

PRICES = "input_usd_per_mtok = 1.0\noutput_usd_per_mtok = 4.0\n"


def write_config(folder: Path, standin: StandIn, *, llm: str = "", concurrency: int = 8, dataset: str = "") -> Path:
    (folder / "seeds.jsonl").write_text(json.dumps({"instruction": INSTRUCTION}) + "\n")
    config = folder / "llm.toml"
    config.write_text(f"""
[dataset]
name = "clinic"
seed = 5
output_dir = "{folder / 'out'}"
{dataset}
[generation]
variants_per_scenario = 1
seeds_file = "seeds.jsonl"
[backends]
default = "llm"
[sandbox]
backend = "bwrap"
[providers.standin]
kind = "anthropic"
base_url = "{standin.anthropic_base_url}"
api_key_env = "STANDIN_KEY"
max_retries = 0
concurrency = {concurrency}
[models.writer]
name = "stand-in-1"
provider = "standin"
family = "standin"
{PRICES}
[roles]
generator = "writer"
[llm]
cache_dir = "{folder / 'cache'}"
{llm}
""")
    return config


def generate(folder: Path, config: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = flow_env(STANDIN_KEY="sk-standin")  # reports to the session's Prefect server
    return subprocess.run([sys.executable, "-m", "abstaingen", "generate", "--config", str(config), *extra],
                          cwd=folder,
                          env=env, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("llm-flow")
    with StandIn() as standin:
        script_clinic(standin)
        # one answer of each stage is wrong first, so the funnel has repairs to count
        standin.script("environment", Answer({**ENVIRONMENT, "implementation": "import os\n" + CODE}))
        standin.script(stage_of(Scenario.S1), Answer({**PERTURBATION[Scenario.S1], "lookup": {
            "tool": "find_visits", "arguments_json": json.dumps({"owner": "Ana Ruiz", "pet": "Biscuit"})}}))
        config = write_config(folder, standin)
        first = generate(folder, config)
        requests_first = standin.count()
        second = generate(folder, config, "--output", str(folder / "again"))  # the same run, elsewhere
        requests_second = standin.count() - requests_first
    return folder, first, second, requests_first, requests_second


@pytest.mark.e2e
def test_a_release_in_a_new_domain_passes_the_same_validators(two_runs) -> None:
    folder, first, _, requests, _ = two_runs
    assert first.returncode == 0, first.stderr[-3000:]
    assert "Traceback" not in first.stderr
    manifest, pairs = load_release(folder / "out" / "clinic" / "v1")
    assert "pet_clinic" not in DOMAINS and {p.domain for p in pairs} == {"pet_clinic"}
    assert {p.scenario for p in pairs} == {s.value for s in Scenario}
    for pair in pairs:
        assert pair.validation.passed and pair.validation.sandbox == "bwrap"
        assert pair.provenance.models == {stage: "stand-in-1" for stage in
                                          ("capability", "environment", "task", "perturbation")}
        assert pair.provenance.prompt_hashes[stage_of(Scenario(pair.scenario))] == template_hash(
            stage_of(Scenario(pair.scenario)))
    bundle = json.loads(next((folder / "out" / "clinic" / "v1").rglob("environments/*/environment.json")).read_text())
    assert bundle["origin"] == "llm" and bundle["written_by"]["model"] == "stand-in-1"
    assert requests == 1 + 2 + 8 + 9  # capability, environment (one repair), 8 T+, 8 T- (one repair)


def test_the_manifest_has_models_prompts_repairs_and_cost(two_runs) -> None:
    folder, *_ = two_runs
    manifest, pairs = load_release(folder / "out" / "clinic" / "v1")
    assert manifest.models == {"writer": "stand-in-1 (standin)"}
    assert manifest.prompts["perturb_s1"] == template_hash("perturb_s1") and "repair" in manifest.prompts
    funnel = {line.stage: line for line in manifest.funnel}
    assert funnel["environment"].repaired == 1 and funnel["environment"].sent_back == {"code_gate": 1}
    assert funnel["perturbation"].repaired == 1 and funnel["perturbation"].sent_back == {"S1 witness": 1}
    assert funnel["task"].passed == 8 and funnel["perturbation"].passed == 8
    assert sum(line.calls for line in manifest.cost) == 20 and manifest.cost_usd > 0
    assert manifest.cost_usd == pytest.approx(sum(line.cost_usd for line in manifest.cost))
    assert manifest.cost_per_pair_usd == pytest.approx(manifest.cost_usd / len(pairs), rel=1e-3)
    assert "sk-standin" not in (folder / "out" / "clinic" / "v1" / "manifest.json").read_text()


def test_a_second_run_makes_no_request(two_runs) -> None:
    folder, _, second, _, requests = two_runs
    assert second.returncode == 0, second.stderr[-3000:]
    assert requests == 0
    manifest, pairs = load_release(folder / "again" / "clinic" / "v1")
    assert len(pairs) == 8 and manifest.cost_usd == 0 and all(line.cached == line.calls for line in manifest.cost)


def test_a_budget_hit_mid_run_keeps_every_finished_pair(tmp_path: Path, standin: StandIn) -> None:
    script_clinic(standin)
    # one request at a time, so the budget runs out part way through the perturbations
    config = write_config(tmp_path, standin, llm="budget_usd = 0.027", concurrency=1)
    result = generate(tmp_path, config)
    assert result.returncode == 0, result.stderr[-3000:]
    manifest, pairs = load_release(tmp_path / "out" / "clinic" / "v1")
    funnel = {line.stage: line for line in manifest.funnel}
    lost = sum(n for line in manifest.funnel for reason, n in line.rejected.items() if "budget_exhausted" in reason)
    assert lost > 0 and pairs, (lost, len(pairs))
    assert len(pairs) == funnel["perturbation"].passed  # every perturbed pair that was finished is released
    assert any("budget of $0.027 ran out" in w for w in manifest.warnings)


def test_a_provider_that_keeps_failing_ends_the_run_with_one_line(tmp_path: Path, standin: StandIn) -> None:
    standin.otherwise("capability", Status(503))
    config = write_config(tmp_path, standin, llm="breaker_after = 2", concurrency=1)
    (tmp_path / "seeds.jsonl").write_text("".join(json.dumps({"instruction": f"{INSTRUCTION} ({n})"}) + "\n"
                                                  for n in range(4)))
    result = generate(tmp_path, config)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "error: provider standin failed 2 times in a row, the last: stand-in-1: HTTP 503" in result.stderr
    assert standin.count() == 2 and not (tmp_path / "out" / "clinic" / "v1").exists()


def test_an_item_the_model_never_gets_right_is_lost_alone(tmp_path: Path, standin: StandIn) -> None:
    script_clinic(standin)
    standin.otherwise(stage_of(Scenario.S3), Answer({**PERTURBATION[Scenario.S3], "together": {
        "tool": "find_visits", "arguments_json": json.dumps({"owner": "Ana Ruiz", "pet": "Biscuit"})}}))
    standin.script("capability", Raw('{"domain": "pet_clinic", "summ'))  # malformed JSON first, then right
    refused = generate(tmp_path, write_config(tmp_path, standin, llm="max_repair_rounds = 1"))
    # the release lacks S3: refused (exit 3) by default, published with a warning when allowed
    assert refused.returncode == 3 and "no pair of scenario S3 was kept" in refused.stderr, refused.stderr[-3000:]
    result = generate(tmp_path, write_config(tmp_path, standin, llm="max_repair_rounds = 1",
                                             dataset="allow_incomplete = true"))
    assert result.returncode == 0, result.stderr[-3000:]
    manifest, pairs = load_release(tmp_path / "out" / "clinic" / "v1")
    assert manifest.warnings == ["published without scenario S3: no pair of them was kept"]
    funnel = {line.stage: line for line in manifest.funnel}
    assert funnel["perturbation"].rejected == {"S3: repair_failed": 1}
    assert funnel["perturbation"].sent_back == {"S3 witness": 2}
    assert funnel["capability"].repaired == 1 and funnel["capability"].sent_back == {"reply": 1}
    assert sorted(p.scenario for p in pairs) == [s.value for s in Scenario if s != Scenario.S3]
