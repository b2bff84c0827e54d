"""Generation in an imported environment, as a user runs it: `abstaingen env import` a bundle, then
`abstaingen generate` with `generation.environments` naming it, against the stand-in model (the pet
clinic, an environment written for the tests, brought in through the `bundle` importer)."""

from __future__ import annotations

import json

import pytest
from clinic import CAPABILITY, ENVIRONMENT, INSTRUCTION, script_clinic
from standin import StandIn
from test_llm_flow import generate, write_config

from abstaingen.config import load_config
from abstaingen.flows.cli import main
from abstaingen.generators.llm.environment import EnvironmentDraft, to_bundle
from abstaingen.model import CapabilitySpec, Scenario
from abstaingen.pipelines.verify import verify_release
from abstaingen.store import load_release, read_bundle, write_bundle

pytestmark = [pytest.mark.flow, pytest.mark.usefixtures("prefect_api")]

SPEC = CapabilitySpec(domain="pet_clinic", seed_instruction=INSTRUCTION, summary=CAPABILITY["summary"],
                      capabilities=CAPABILITY["capabilities"])


@pytest.fixture(scope="module")
def imported_run(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("imported-flow")
    write_bundle(to_bundle(SPEC, EnvironmentDraft(**ENVIRONMENT)), folder / "theirs")
    assert main(["env", "import", "bundle", str(folder / "theirs"), str(folder / "imports" / "clinic"),
                 "--license", "CC-BY-4.0"]) == 0
    with StandIn() as standin:
        script_clinic(standin)
        config = write_config(folder, standin)
        text = config.read_text().replace('seeds_file = "seeds.jsonl"', 'environments = ["imports/clinic"]')
        config.write_text(text)
        run = generate(folder, config)
        asked = {stage: standin.count(stage) for stage in ("capability", "environment", "positive_task")}
    return folder, run, asked


def test_a_release_in_an_imported_environment_names_its_source(imported_run) -> None:
    folder, run, asked = imported_run
    assert run.returncode == 0, run.stderr[-3000:]
    release = folder / "out" / "clinic" / "v1"
    manifest, pairs = load_release(release)
    bundle = read_bundle(folder / "imports" / "clinic")
    assert {p.scenario for p in pairs} == {s.value for s in Scenario}
    assert all(p.validation.passed and p.provenance.environment == bundle.source for p in pairs)
    assert manifest.imported_environments == {bundle.env_id: bundle.source}
    assert bundle.source is not None and bundle.source.license == "CC-BY-4.0"
    assert manifest.backends["capability"] == manifest.backends["environment"] == "imported"
    assert asked == {"capability": 0, "environment": 0, "positive_task": 8}  # no stage rewrote the environment
    published = json.loads(next(release.rglob("environments/*/environment.json")).read_text())
    assert published["origin"] == "imported" and published["source"]["files_hash"] == bundle.source.files_hash
    config = load_config(folder / "llm.toml")
    assert verify_release(release, config) == []  # the fingerprint counts the imported environment's content
    other = bundle.model_copy(update={"description": "another environment in the same folder"})
    write_bundle(other, folder / "imports" / "clinic")
    assert "does not match the config" in " ".join(verify_release(release, config))
