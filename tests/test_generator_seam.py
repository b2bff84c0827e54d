"""The generation stages behind the `Generator` protocol: the builtin backend through it writes what
its own functions write, nothing backend-private travels between stages, and a backend that does not
exist yet is one clear line before any work."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from builtin_fixtures import PROVENANCE, builtin_bundle, builtin_pair

from abstaingen.config import GenerateConfig, SeedInstruction
from abstaingen.errors import AbstaingenError
from abstaingen.flows import cli
from abstaingen.generators import NotApplicable, PositiveTask, make_generator
from abstaingen.generators.builtin.domains import DOMAINS
from abstaingen.model import Scenario


@pytest.mark.parametrize("scenario", list(Scenario))
def test_the_builtin_generator_writes_what_its_own_stages_write(scenario: Scenario) -> None:
    generator = make_generator("builtin", GenerateConfig())
    bundle = builtin_bundle("travel")

    async def through_the_protocol() -> object:
        positive = await generator.write_positive_task(bundle, scenario, 1, 11)
        return await generator.perturb(positive, bundle, PROVENANCE, 11)

    assert anyio.run(through_the_protocol) == builtin_pair(scenario, 1, "travel")


def test_a_positive_task_carries_only_the_shared_contract() -> None:
    assert set(PositiveTask.model_fields) == {"pair_id", "domain", "scenario", "variant", "act", "target", "scope"}


def test_the_builtin_generator_extracts_and_synthesizes_like_its_blueprints() -> None:
    generator = make_generator("builtin", GenerateConfig())
    blueprint = DOMAINS["banking"]

    async def stages() -> object:
        spec = await generator.extract_capabilities(SeedInstruction(instruction=blueprint.seed_instruction))
        return await generator.synthesize_environment(spec, 7)

    bundle = anyio.run(stages)
    assert bundle.domain == "banking" and bundle.origin == "builtin" and bundle == builtin_bundle("banking", 7)


def test_a_scenario_the_environment_cannot_carry_is_not_applicable() -> None:
    generator = make_generator("builtin", GenerateConfig())
    bundle = builtin_bundle("travel")
    bare = bundle.model_copy(update={"initial_state": {k: [] for k in bundle.initial_state}})

    async def write() -> object:
        return await generator.write_positive_task(bare, Scenario.S1, 0, 11)

    with pytest.raises(NotApplicable):
        anyio.run(write)


def test_an_llm_backend_without_a_model_is_one_line_before_any_work(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(AbstaingenError, match="unknown backend 'gpt'"):
        make_generator("gpt", GenerateConfig())
    config = tmp_path / "llm.toml"
    config.write_text("[backends]\ndefault = \"llm\"\n")
    assert cli.main(["generate", "--config", str(config), "--output", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.strip() == (
        "abstaingen: error: the llm backend needs a model: set roles.generator to a key of [models]")


def test_a_builtin_stage_cannot_follow_an_llm_one() -> None:
    with pytest.raises(ValueError, match="a builtin task stage cannot follow an llm environment stage"):
        GenerateConfig.model_validate({"backends": {"environment": "llm"}})
    with pytest.raises(ValueError, match="unknown domain 'pet_clinic'"):
        GenerateConfig.model_validate({"generation": {"domains": ["pet_clinic"]}})
    mixed = GenerateConfig.model_validate({"backends": {"task": "llm", "perturbation": "llm"}})
    assert [mixed.backend_for(s) for s in ("environment", "task")] == ["builtin", "llm"]


def test_a_changed_copy_of_a_bundle_has_its_own_content_hash() -> None:
    bundle = builtin_bundle("travel")
    changed = bundle.model_copy(update={"implementation": bundle.implementation + "\n# changed\n"})
    assert bundle.content_hash  # cached on the original before the copy
    assert changed.content_hash != bundle.content_hash
    assert bundle.model_copy().content_hash == bundle.content_hash


def test_seeds_of_one_domain_share_an_environment_unless_the_config_says_otherwise(tmp_path: Path) -> None:
    """The first real model made four environments of one domain from its four seeds."""
    import asyncio
    import json

    from abstaingen.pipelines.pairs import plan_run, run_pairs

    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text("".join(json.dumps({"instruction": text, "domain": "travel"}) + "\n" for text in (
        DOMAINS["travel"].seed_instruction, "Cancel my flight to Oslo and refund it to my card.")))

    def environments(per_seed: bool) -> list[object]:
        config = GenerateConfig.model_validate({
            "dataset": {"output_dir": str(tmp_path / "out"), "seed": 3}, "sandbox": {"backend": "local"},
            "generation": {"domains": ["travel"], "variants_per_scenario": 1, "environment_per_seed": per_seed}})
        run = asyncio.run(run_pairs(plan_run(config, seeds), "test"))
        return [(spec.domain, spec.other_instructions) for spec in run.specs] + [len(run.bundles)]

    assert environments(False) == [("travel", ["Cancel my flight to Oslo and refund it to my card."]), 1]
    assert environments(True) == [("travel", []), ("travel", []), 2]
