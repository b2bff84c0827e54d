from __future__ import annotations

import json
import re
import time
import tomllib
from pathlib import Path

import pytest
from pydantic import ValidationError

from abstaingen.config import (
    MAX_INSTRUCTION_CHARS,
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


def test_an_unset_seed_is_drawn_fresh_for_each_run_and_a_given_one_is_kept() -> None:
    drawn = {GenerateConfig().with_seed().dataset.seed for _ in range(5)}
    assert None not in drawn and len(drawn) > 1
    pinned = apply_overrides(GenerateConfig(), seed=11)
    assert pinned.with_seed() is pinned and pinned.dataset.seed == 11


def test_defaults_without_a_file() -> None:
    config = load_config(None)
    assert config == GenerateConfig()
    assert config.dataset.name == "abstaingen-builtin"
    assert config.dataset.output_dir == Path("artifacts")
    assert config.dataset.seed is None  # each run draws a fresh one
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
            default = "llm"
            judge = "builtin"
            task = "llm"
            [sandbox]
            backend = "local"
            """,
        )
    )
    assert (config.dataset.name, config.dataset.output_dir, config.dataset.seed) == ("my-set.v2", Path("out"), 42)
    assert config.generation.domains == (domain,)
    assert config.generation.variants_per_scenario == 3
    assert config.backend_for("judge") == "builtin" and not config.judged()
    assert config.backend_for("task") == "llm"


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


def test_a_setting_added_later_changes_the_fingerprint_only_once_it_is_set() -> None:
    """Releases fingerprinted before `environment_per_seed` existed keep their fingerprint."""
    base = GenerateConfig()
    assert "environment_per_seed" not in json.dumps(base.model_dump(
        mode="json", exclude={"generation": {"environment_per_seed"}}))
    assert base.fingerprint() == GenerateConfig.model_validate(
        {"generation": {"environment_per_seed": False}}).fingerprint()
    assert base.fingerprint() != GenerateConfig.model_validate(
        {"generation": {"environment_per_seed": True}}).fingerprint()


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
    assert "dataset, decontamination, generation" in message  # the known keys are listed


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
    assert f"generation.domains: unknown domain 'mars' (known: {', '.join(DOMAIN_NAMES)};" in message


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
        load_seeds(path, builtin_domains=True)
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


# --- strict sandbox keys: they decide what untrusted code may do --------------------------------


@pytest.mark.parametrize("value", ['"yes"', '"true"', "1", "0", '"false"'])
def test_allow_unsandboxed_takes_only_a_toml_boolean(tmp_path: Path, value: str) -> None:
    message = config_error(tmp_path, f"[sandbox]\nallow_unsandboxed = {value}\n")
    assert "sandbox.allow_unsandboxed: input should be a valid boolean" in message


def test_allow_unsandboxed_true_is_still_accepted(tmp_path: Path) -> None:
    config = load_config(write(tmp_path / "config.toml", "[sandbox]\nallow_unsandboxed = true\n"))
    assert config.sandbox.allow_unsandboxed is True


@pytest.mark.parametrize(("value", "problem"), [
    ("inf", "finite number"), ("+inf", "finite number"), ("nan", "finite number"), ("-inf", "finite number"),
    ("1e12", "less than or equal to 3600"), ("3600.5", "less than or equal to 3600"), ("0", "greater than 0"),
    ("-1.0", "greater than 0"), ("true", "valid number"), ('"10"', "valid number"),
])
def test_call_timeout_must_be_a_finite_sane_number(tmp_path: Path, value: str, problem: str) -> None:
    message = config_error(tmp_path, f"[sandbox]\ncall_timeout_s = {value}\n")
    assert "sandbox.call_timeout_s:" in message and problem in message


def test_call_timeout_takes_integers_and_floats(tmp_path: Path) -> None:
    assert load_config(write(tmp_path / "a.toml", "[sandbox]\ncall_timeout_s = 3600\n")).sandbox.call_timeout_s == 3600
    assert load_config(write(tmp_path / "b.toml", "[sandbox]\ncall_timeout_s = 0.5\n")).sandbox.call_timeout_s == 0.5


@pytest.mark.parametrize(("key", "value"), [
    ("concurrency", "257"), ("concurrency", "1e3"), ("concurrency", "inf"), ("concurrency", "true"),
    ("memory_mb", "65537"), ("memory_mb", "100000000000000000000"), ("memory_mb", "nan"), ("memory_mb", "1024.0"),
])
def test_other_sandbox_limits_are_bounded_integers(tmp_path: Path, key: str, value: str) -> None:
    assert f"sandbox.{key}:" in config_error(tmp_path, f"[sandbox]\n{key} = {value}\n")


# --- user text quoted in errors is cut short ----------------------------------------------------


def test_a_long_unknown_domain_is_cut_in_the_error(tmp_path: Path) -> None:
    message = config_error(tmp_path, f'[generation]\ndomains = ["{"m" * 100_000}"]\n')
    assert "invalid domain name '" in message and "..." in message
    assert len(message) < 400


def test_a_long_dataset_name_is_cut_in_the_error(tmp_path: Path) -> None:
    message = config_error(tmp_path, f'[dataset]\nname = "{"N" * 100_000}"\n')
    assert "invalid dataset name 'NNN" in message
    assert len(message) < 400


def test_a_long_unknown_key_is_cut_in_the_error(tmp_path: Path) -> None:
    message = config_error(tmp_path, f'[dataset]\n{"k" * 100_000} = 1\n')
    assert "unknown key" in message
    assert len(message) < 400


def test_many_problems_are_counted_not_all_listed(tmp_path: Path) -> None:
    keys = "".join(f"k{n} = 1\n" for n in range(1000))
    message = config_error(tmp_path, f"[dataset]\n{keys}")
    assert "and 995 more problems" in message
    assert len(message) < 1500


def test_many_repeated_domains_are_refused_quickly(tmp_path: Path) -> None:
    listed = ",".join([f'"{DOMAIN_NAMES[0]}"'] * 50_000)  # counting each one in the list took minutes
    started = time.monotonic()
    assert "more than once" in config_error(tmp_path, f"[generation]\ndomains = [{listed}]\n")
    assert time.monotonic() - started < 5


def test_deeply_nested_toml(tmp_path: Path) -> None:
    message = config_error(tmp_path, "a = " + "[" * 100_000 + "]" * 100_000 + "\n")
    assert "malformed TOML: arrays or tables nested too deeply" in message


def test_an_oversized_config_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    message = config_error(tmp_path, "# " + "x" * (2 * 1024 * 1024) + "\n")
    assert "larger than 1048576 bytes" in message


def test_a_seeds_file_path_with_a_nul_byte(tmp_path: Path) -> None:
    config = load_config(write(tmp_path / "config.toml", '[generation]\nseeds_file = "a\\u0000b"\n'))
    assert config.generation.seeds_file is not None
    with pytest.raises(AbstaingenError, match="cannot read seeds file: embedded null byte"):
        load_seeds(config.generation.seeds_file)


# --- seeds: size and depth limits ---------------------------------------------------------------


def test_seed_nested_too_deeply_names_the_line(tmp_path: Path) -> None:
    message = seeds_error(tmp_path, '{"instruction": "ok"}\n' + "[" * 100_000 + "\n")
    assert message.endswith("seeds.jsonl:2: JSON nested too deeply (a seed is one flat object)")


def test_seed_instruction_longer_than_the_limit(tmp_path: Path) -> None:
    message = seeds_error(tmp_path, json.dumps({"instruction": "x" * (MAX_INSTRUCTION_CHARS + 1)}) + "\n")
    assert f"seeds.jsonl:1: instruction: string should have at most {MAX_INSTRUCTION_CHARS} characters" in message
    assert len(message) < 400


def test_seed_instruction_at_the_limit_is_taken(tmp_path: Path) -> None:
    path = write(tmp_path / "seeds.jsonl", json.dumps({"instruction": "é" * MAX_INSTRUCTION_CHARS}) + "\r\n")
    assert len(load_seeds(path)[0].instruction) == MAX_INSTRUCTION_CHARS


def test_seed_line_of_five_megabytes_is_refused_with_its_line(tmp_path: Path) -> None:
    message = seeds_error(tmp_path, '{"instruction": "ok"}\n' + json.dumps({"instruction": "x" * 5_000_000}) + "\n")
    assert "seeds.jsonl:2: line is longer than 131072 bytes" in message
    assert len(message) < 400


def test_seed_with_a_long_unknown_domain_or_key(tmp_path: Path) -> None:
    assert len(seeds_error(tmp_path, json.dumps({"instruction": "ok", "domain": "d" * 100_000}) + "\n")) < 400
    assert len(seeds_error(tmp_path, json.dumps({"instruction": "ok", "k" * 100_000: 1}) + "\n")) < 400


def test_seed_lines_split_only_at_newlines(tmp_path: Path) -> None:
    # U+2028 is legal inside a JSON string; str.splitlines() used to cut the line there
    path = write(tmp_path / "seeds.jsonl", '{"instruction": "Rebook\u2028my flight"}\n')
    assert load_seeds(path) == [SeedInstruction(instruction="Rebook\u2028my flight")]


def test_seed_that_is_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "seeds.jsonl"
    path.write_bytes(b'{"instruction": "ok"}\n{"instruction": "\xff"}\n')
    with pytest.raises(AbstaingenError, match=r"seeds\.jsonl:2: not UTF-8 text"):
        load_seeds(path)


def test_the_readme_llm_configs_are_valid_configs() -> None:
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    blocks = re.findall(r"```toml\n(.*?)```", readme, flags=re.S)
    llm = [tomllib.loads(block) for block in blocks if 'default = "llm"' in block]
    assert len(llm) == 3
    for data in llm:
        config = GenerateConfig.model_validate(data)
        assert config.backend_for("perturbation") == "llm" and config.role("generator") is not None
