from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from abstaingen.config import (
    STAGES,
    GenerateConfig,
    SeedInstruction,
    apply_overrides,
    load_config,
    load_seeds,
)
from abstaingen.errors import AbstaingenError
from abstaingen.generators.builtin import DOMAIN_NAMES


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def config_error(tmp_path: Path, toml: str) -> str:
    path = write(tmp_path / "config.toml", toml)
    with pytest.raises(AbstaingenError) as caught:
        load_config(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{path}:"), message
    return message


# --- defaults ------------------------------------------------------------------------------------


def test_defaults_without_a_file() -> None:
    config = load_config(None)
    assert config == GenerateConfig()
    assert config.dataset.name == "abstaingen-builtin"
    assert config.dataset.output_dir == Path("artifacts")
    assert config.dataset.seed == 7
    assert config.generation.domains == tuple(DOMAIN_NAMES)
    assert config.generation.variants_per_scenario == 2
    assert config.generation.seeds_file is None
    assert config.sandbox.backend == "auto"
    assert all(config.backend_for(stage) == "builtin" for stage in STAGES)


def test_empty_file_gives_the_defaults(tmp_path: Path) -> None:
    assert load_config(write(tmp_path / "config.toml", "")) == GenerateConfig()


def test_full_file_is_read(tmp_path: Path) -> None:
    domain = DOMAIN_NAMES[-1]
    config = load_config(
        write(
            tmp_path / "config.toml",
            f"""
            [dataset]
            name = "my-set.v2"
            output_dir = "out"
            seed = 42
            [generation]
            domains = ["{domain}"]
            variants_per_scenario = 3
            [backends]
            default = "builtin"
            judge = "llm"
            [sandbox]
            backend = "local"
            """,
        )
    )
    assert (config.dataset.name, config.dataset.output_dir, config.dataset.seed) == ("my-set.v2", Path("out"), 42)
    assert config.generation.domains == (domain,)
    assert config.generation.variants_per_scenario == 3
    assert config.backend_for("judge") == "llm"
    assert config.backend_for("task") == "builtin"


def test_relative_seeds_file_resolves_against_the_config_folder(tmp_path: Path) -> None:
    folder = tmp_path / "conf"
    folder.mkdir()
    config = load_config(write(folder / "config.toml", '[generation]\nseeds_file = "seeds.jsonl"\n'))
    assert config.generation.seeds_file == folder / "seeds.jsonl"


def test_backend_for_rejects_an_unknown_stage() -> None:
    with pytest.raises(ValueError, match="unknown stage"):
        GenerateConfig().backend_for("painting")


def test_config_is_frozen() -> None:
    config = GenerateConfig()
    with pytest.raises(ValidationError, match="frozen"):
        config.dataset = config.dataset  # type: ignore[misc]


# --- fingerprint ---------------------------------------------------------------------------------


def test_fingerprint_changes_with_content_not_with_location(tmp_path: Path) -> None:
    base = GenerateConfig()
    assert len(base.fingerprint()) == 64
    assert base.fingerprint() == GenerateConfig().fingerprint()
    assert apply_overrides(base, seed=8).fingerprint() != base.fingerprint()
    assert apply_overrides(base, output_dir=tmp_path / "elsewhere").fingerprint() == base.fingerprint()
    seeds = [SeedInstruction(instruction="Book me a flight")]
    assert base.fingerprint(seeds) != base.fingerprint()


# --- bad configs: each names the file and the key ------------------------------------------------


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.toml"
    with pytest.raises(AbstaingenError, match="nope.toml: config file not found"):
        load_config(path)


def test_unreadable_path(tmp_path: Path) -> None:
    with pytest.raises(AbstaingenError, match="cannot read config file"):
        load_config(tmp_path)  # a directory


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(b'[dataset]\nname = "\xff"\n')
    with pytest.raises(AbstaingenError, match="not UTF-8"):
        load_config(path)


def test_malformed_toml_gives_line_and_column(tmp_path: Path) -> None:
    message = config_error(tmp_path, '[dataset]\nname = "ok"\nseed = \n')
    assert "config.toml:3:" in message
    assert "malformed TOML" in message


def test_unknown_section(tmp_path: Path) -> None:
    message = config_error(tmp_path, "[datasets]\nname = 'x'\n")
    assert "datasets: unknown key" in message
    assert "dataset, generation" in message  # the known keys are listed


def test_unknown_key_in_a_section(tmp_path: Path) -> None:
    message = config_error(tmp_path, "[generation]\ndomainz = ['travel']\n")
    assert "generation.domainz: unknown key" in message
    assert "domains" in message


def test_wrong_type(tmp_path: Path) -> None:
    message = config_error(tmp_path, '[dataset]\nseed = "7"\n')
    assert "dataset.seed:" in message
    assert "integer" in message


def test_section_that_is_not_a_table(tmp_path: Path) -> None:
    assert "dataset: must be a table" in config_error(tmp_path, "dataset = 3\n")


def test_variants_must_be_positive(tmp_path: Path) -> None:
    assert "generation.variants_per_scenario:" in config_error(tmp_path, "[generation]\nvariants_per_scenario = 0\n")


def test_unknown_backend(tmp_path: Path) -> None:
    message = config_error(tmp_path, '[backends]\ndefault = "gpt"\n')
    assert "backends.default:" in message
    assert "'gpt'" in message


def test_unknown_stage_override(tmp_path: Path) -> None:
    assert "backends.painting: unknown key" in config_error(tmp_path, '[backends]\npainting = "llm"\n')


def test_unknown_sandbox_backend(tmp_path: Path) -> None:
    assert "sandbox.backend:" in config_error(tmp_path, '[sandbox]\nbackend = "firecracker"\n')


def test_unknown_domain(tmp_path: Path) -> None:
    message = config_error(tmp_path, '[generation]\ndomains = ["mars"]\n')
    assert f"generation.domains: unknown domain 'mars' (known: {', '.join(DOMAIN_NAMES)})" in message


def test_empty_and_repeated_domains(tmp_path: Path) -> None:
    assert "at least one domain" in config_error(tmp_path, "[generation]\ndomains = []\n")
    twice = f'[generation]\ndomains = ["{DOMAIN_NAMES[0]}", "{DOMAIN_NAMES[0]}"]\n'
    assert "more than once" in config_error(tmp_path, twice)


@pytest.mark.parametrize("name", ["My Data", "-dash", "../escape", ""])
def test_bad_dataset_name(tmp_path: Path, name: str) -> None:
    assert "dataset.name: invalid dataset name" in config_error(tmp_path, f'[dataset]\nname = "{name}"\n')


def test_several_problems_stay_on_one_line(tmp_path: Path) -> None:
    message = config_error(tmp_path, '[dataset]\nseed = "x"\n[backends]\ndefault = "gpt"\n')
    assert "dataset.seed:" in message and "backends.default:" in message


# --- command-line overrides ----------------------------------------------------------------------


def test_overrides_replace_values(tmp_path: Path) -> None:
    config = apply_overrides(
        GenerateConfig(), output_dir=tmp_path, domains=[DOMAIN_NAMES[1]], seed=99
    )
    assert (config.dataset.output_dir, config.generation.domains, config.dataset.seed) == (
        tmp_path,
        (DOMAIN_NAMES[1],),
        99,
    )


def test_overrides_are_validated_and_name_the_option() -> None:
    with pytest.raises(AbstaingenError, match=r"^--domains: unknown domain 'mars'"):
        apply_overrides(GenerateConfig(), domains=["mars"])
    with pytest.raises(AbstaingenError, match=r"^--seed:"):
        apply_overrides(GenerateConfig(), seed=-1)


# --- seeds ---------------------------------------------------------------------------------------


def seeds_error(tmp_path: Path, text: str) -> str:
    path = write(tmp_path / "seeds.jsonl", text)
    with pytest.raises(AbstaingenError) as caught:
        load_seeds(path)
    assert "\n" not in str(caught.value)
    return str(caught.value)


def test_seeds_are_read_skipping_blanks_and_comments(tmp_path: Path) -> None:
    domain = DOMAIN_NAMES[0]
    path = write(
        tmp_path / "seeds.jsonl",
        f'# my seeds\n\n{{"instruction": "Help me rebook flights"}}\n   \n{{"instruction": "Pay a bill", "domain": "{domain}"}}\n',
    )
    assert load_seeds(path) == [
        SeedInstruction(instruction="Help me rebook flights"),
        SeedInstruction(instruction="Pay a bill", domain=domain),
    ]


def test_seeds_missing_file(tmp_path: Path) -> None:
    with pytest.raises(AbstaingenError, match="seeds.jsonl: seeds file not found"):
        load_seeds(tmp_path / "seeds.jsonl")


def test_seeds_empty_file(tmp_path: Path) -> None:
    assert "no seed instructions" in seeds_error(tmp_path, "# only a comment\n\n")


def test_seeds_not_json_names_the_line(tmp_path: Path) -> None:
    message = seeds_error(tmp_path, '{"instruction": "ok"}\n# comment\n{instruction: nope}\n')
    assert "seeds.jsonl:3: not valid JSON" in message


def test_seeds_not_an_object_names_the_line(tmp_path: Path) -> None:
    assert "seeds.jsonl:2: expected a JSON object" in seeds_error(tmp_path, '{"instruction": "ok"}\n["a list"]\n')


def test_seeds_missing_instruction_names_the_line(tmp_path: Path) -> None:
    assert "seeds.jsonl:1: instruction: required key is missing" in seeds_error(tmp_path, '{"domain": null}\n')


def test_seeds_blank_instruction(tmp_path: Path) -> None:
    assert "seeds.jsonl:1: instruction:" in seeds_error(tmp_path, '{"instruction": "   "}\n')


def test_seeds_unknown_domain_names_the_line(tmp_path: Path) -> None:
    message = seeds_error(tmp_path, '{"instruction": "ok"}\n\n{"instruction": "go", "domain": "mars"}\n')
    assert "seeds.jsonl:3: domain: unknown domain 'mars'" in message


def test_seeds_unknown_key(tmp_path: Path) -> None:
    assert "seeds.jsonl:1: prompt: unknown key" in seeds_error(tmp_path, '{"instruction": "ok", "prompt": "x"}\n')
