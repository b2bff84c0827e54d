"""The generation config (a TOML file) and seed instructions (a JSONL file).

Config file shape; every section and key is optional:

    [dataset]
    name = "abstaingen-builtin"   # [a-z0-9][a-z0-9._-]*, the release folder's name
    output_dir = "artifacts"       # relative paths resolve against the CURRENT WORKING DIRECTORY
    seed = 7                       # leave out for a fresh seed per run (recorded in the manifest)
    [generation]
    domains = ["travel", "banking"]  # builtin: default every builtin domain (BUILTIN_DOMAINS);
                                    # llm capability stage: any snake_case names, default the seeds' domains
    variants_per_scenario = 2       # pairs per (domain, scenario) the builtin backend tries
    seeds_file = "seeds.jsonl"      # relative paths resolve against the CONFIG FILE's folder
    environment_per_seed = false    # true: an environment per seed; default: seeds of one domain share one
    [backends]
    default = "builtin"             # "builtin" | "llm"
    judge = "llm"                   # optional per-stage override (see STAGES)
    [sandbox]
    backend = "auto"                # auto | docker | bwrap | local (auto: the first usable, in that order)
    concurrency = 4                 # environments validated at once, 1 to 256
    call_timeout_s = 10             # a tool call that takes longer fails its pair; seconds, > 0 and <= 3600
    memory_mb = 1024                # 256 to 65536
    allow_unsandboxed = false       # LLM-written code may run in a plain subprocess only if true
    allow_infrastructure_loss = false  # publish although sandbox failures lost a domain or scenario
    [providers.openai]              # an endpoint, by a name of yours (see abstaingen.providers)
    kind = "openai"                 # openai | anthropic | openai_compatible
    api_key_env = "OPENAI_API_KEY"  # the key is read from this environment variable, never from here
    base_url = "http://127.0.0.1:8000/v1"  # optional: a vLLM, Ollama or llama.cpp server
    concurrency = 8
    [models.writer]                 # a model, by a name of yours
    name = "gpt-5-mini"
    provider = "openai"
    family = "gpt"
    input_usd_per_mtok = 0.25
    output_usd_per_mtok = 2.0
    [roles]
    generator = "writer"
    judge = ["critic", "referee"]   # one model or a list (a committee), each of another family
    [judge]                         # the judge layer runs when roles.judge is set (backends.judge = "builtin" skips it)
    rule = "majority"               # majority | unanimous: how the committee's verdicts on a side combine
    allow_same_family = false       # let a judge share the generator's model family
    [llm]
    cache_dir = "artifacts/llm-cache"  # response cache; relative to the current working directory
    budget_usd = 5.0                # optional: no model call once this much is spent
    max_repair_rounds = 2           # answers sent back with findings before an item is given up
    breaker_after = 5               # a provider failing this many calls in a row ends the run

The sandbox keys guard what untrusted code may do, so they are strict: allow_unsandboxed must be a
TOML boolean (not "yes" or 1), and the limits must be finite numbers within the ranges above (TOML's
inf and nan are refused).

Seeds file shape: one JSON object per line, {"instruction": "...", "domain": "travel"} (domain optional);
blank lines and lines starting with '#' are skipped. An instruction holds at most 16 KiB (16384
characters) and a line at most 128 KiB (131072 bytes, room for escapes); the config file at most 1 MiB.
Longer input is refused with the line it is on, so a runaway file cannot fill memory or an error line.

Every problem a user can put in these files becomes an AbstaingenError with one line naming the
file and the offending key (config) or line (seeds). Values quoted in errors are cut to 60 characters.
"""

from __future__ import annotations

import itertools
import json
import re
import secrets
import tomllib
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from abstaingen.errors import AbstaingenError, read_user_text, shown
from abstaingen.model.common import Model, content_hash
from abstaingen.model.ood import PROMPT_VARIANTS, PromptVariant
from abstaingen.model.release import GENERATION_STAGES
from abstaingen.providers import ModelConfig, ProviderConfig

__all__ = [
    "STAGES",
    "BackendName",
    "BackendsConfig",
    "DatasetConfig",
    "GenerateConfig",
    "GenerationConfig",
    "JudgeConfig",
    "LlmConfig",
    "SandboxConfig",
    "SeedInstruction",
    "apply_overrides",
    "load_config",
    "load_seeds",
]

STAGES: tuple[str, ...] = (*GENERATION_STAGES, "judge")  # the stages [backends] picks a backend for
BackendName = Literal["builtin", "llm"]

_DATASET_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,99}$")

MAX_INSTRUCTION_CHARS = 16 * 1024
MAX_SEED_LINE_BYTES = 128 * 1024
MAX_CONFIG_BYTES = 1024 * 1024
MAX_CALL_TIMEOUT_S = 3600.0
MAX_CONCURRENCY = 256
MAX_MEMORY_MB = 64 * 1024
_MAX_PROBLEMS_SHOWN = 5  # one error line lists this many problems, then counts the rest


# The builtin backend's domains, by name: what a builtin run may name and what `generation.domains` holds by
# default. The config sits below the generators, so it keeps their names as data; a test holds this tuple to
# the blueprints in generators/builtin/domains/ (add a domain there and here).
BUILTIN_DOMAINS: tuple[str, ...] = ("banking", "calendar", "clinical", "crm", "ecommerce", "email", "file_storage",
                                    "hr", "smart_home", "support", "trading", "travel")


_DOMAIN_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
MAX_DOMAIN_CHARS = 40


def _check_domain(domain: str, builtin: bool = False) -> str:
    """A builtin run knows only the builtin domains; an llm run takes any snake_case name."""
    if builtin:
        return builtin_domain(domain)
    if not _DOMAIN_NAME.match(domain) or len(domain) > MAX_DOMAIN_CHARS:
        raise ValueError(f"invalid domain name {shown(domain)}: use lowercase letters, digits and '_', starting with "
                         f"a letter (at most {MAX_DOMAIN_CHARS} characters)")
    return domain


def builtin_domain(domain: str) -> str:
    known = BUILTIN_DOMAINS
    if domain not in known:
        raise ValueError(f"unknown domain {shown(domain)} (known: {', '.join(known)}; the llm backend writes new "
                         "domains: backends.capability = \"llm\")")
    return domain


class DatasetConfig(Model):
    name: StrictStr = "abstaingen-builtin"
    output_dir: Path = Field(default=Path("artifacts"), description="relative to the current working directory")
    seed: StrictInt | None = Field(default=None, ge=0, description="what the generators draw from; unset, each run "
                                                                  "draws a fresh one (the manifest records it)")
    allow_incomplete: StrictBool = Field(
        default=False, description="publish even when a domain or scenario the run was asked for has no pair left "
                                   "(the manifest then says which in its warnings); by default such a release is refused")

    @field_validator("name")
    @classmethod
    def _valid_name(cls, name: str) -> str:
        if not _DATASET_NAME.match(name):
            raise ValueError(
                f"invalid dataset name {shown(name)}: use lowercase letters, digits, '.', '_' and '-', "
                "starting with a letter or digit (at most 100 characters)"
            )
        return name


class GenerationConfig(Model):
    domains: tuple[StrictStr, ...] = Field(default_factory=lambda: BUILTIN_DOMAINS)
    variants_per_scenario: StrictInt = Field(default=2, ge=1)
    seeds_file: Path | None = Field(default=None, description="relative to the config file's folder")
    environment_per_seed: bool = Field(default=False, description=(
        "each seed instruction gets an environment of its own; by default the seeds of one domain share one"))
    environments: tuple[Path, ...] = Field(default=(), description=(
        "bundle folders written by `abstaingen env import`, relative to the config file's folder: the run "
        "generates in these environments only, with no capability or environment stage and no seeds"))

    @field_validator("domains")
    @classmethod
    def _known_unique_domains(cls, domains: tuple[str, ...]) -> tuple[str, ...]:
        if not domains:
            raise ValueError("at least one domain is needed")
        for domain in domains:
            if domain not in BUILTIN_DOMAINS:
                _check_domain(domain)
        repeated = sorted(d for d, n in Counter(domains).items() if n > 1)
        if repeated:
            raise ValueError(f"domain {repeated[0]!r} is listed more than once")
        return domains


class BackendsConfig(Model):
    default: BackendName = "builtin"
    capability: BackendName | None = None
    environment: BackendName | None = None
    task: BackendName | None = None
    perturbation: BackendName | None = None
    judge: BackendName | None = None


class SandboxConfig(Model):
    backend: Literal["auto", "docker", "bwrap", "local"] = "auto"  # auto: the first usable of docker, bwrap, local
    concurrency: StrictInt = Field(default=4, ge=1, le=MAX_CONCURRENCY, description="environments validated at once")
    # strict: a TOML int is taken, a boolean or a string is not; inf and nan are no timeout at all
    call_timeout_s: float = Field(default=10.0, gt=0, le=MAX_CALL_TIMEOUT_S, allow_inf_nan=False, strict=True)
    memory_mb: StrictInt = Field(default=1024, ge=256, le=MAX_MEMORY_MB)
    # only a real boolean: "yes", "false" or 1 must not switch the sandbox off
    allow_unsandboxed: StrictBool = Field(default=False, description="let LLM-written code run in a plain subprocess")
    allow_infrastructure_loss: StrictBool = Field(
        default=False, description="publish even when sandbox failures lost a whole domain or scenario (with a warning)")


class LlmConfig(Model):
    """How the llm backend spends calls."""

    cache_dir: Path | None = Field(default=Path("artifacts/llm-cache"),
                                   description="response cache, relative to the current working directory; "
                                               "a rerun answers from it without a request")
    budget_usd: float | None = Field(default=None, gt=0, allow_inf_nan=False,
                                     description="no model call once the run has spent this much; finished pairs "
                                                 "are kept and published")
    max_repair_rounds: StrictInt = Field(default=2, ge=0, le=10,
                                         description="answers sent back with their findings before an item is lost")
    breaker_after: StrictInt = Field(default=5, ge=1, le=100,
                                     description="calls failing in a row after which a provider is given up and "
                                                 "the run ends")


class RolesConfig(Model):
    """Which model (a key of [models]) plays each role."""

    generator: StrictStr | None = Field(default=None, description="writes environments, tasks and perturbations")
    judge: tuple[StrictStr, ...] = Field(default=(), description="judges labels and replies, one model or a "
                                                                 "committee; each of another family than the generator")

    @field_validator("judge", mode="before")
    @classmethod
    def _one_or_more(cls, judge: object) -> object:
        return (judge,) if isinstance(judge, str) else judge

    @field_validator("judge")
    @classmethod
    def _each_once(cls, judge: tuple[str, ...]) -> tuple[str, ...]:
        repeated = sorted(k for k, n in Counter(judge).items() if n > 1)
        if repeated:
            raise ValueError(f"model {shown(repeated[0])} sits on the committee more than once")
        return judge


class JudgeConfig(Model):
    """How the judge committee decides."""

    rule: Literal["majority", "unanimous"] = Field(
        default="majority", description="majority: a side is accepted when more than half of the verdicts accept it "
                                        "(a tie rejects); unanimous: when every verdict does")
    allow_same_family: StrictBool = Field(default=False, description="let a judge share the generator's family")


class HfTextSource(Model):
    name: StrictStr = Field(description="a Hugging Face dataset name (org/name) or a local dataset folder")
    config: StrictStr | None = Field(default=None, description="the dataset's config, when it has several")
    split: StrictStr = Field(default="test", description="the split to read")


class DecontaminationConfig(Model):
    """Texts the new pairs must not overlap: a pair whose request shares a run of `ngram` words with any of
    them is dropped at dedup (reason overlaps_reference_text)."""

    files: tuple[Path, ...] = Field(default=(), description="relative to the config file's folder; .jsonl and .json: "
                                                            "every string value, anything else: the whole text")
    hf: tuple[HfTextSource, ...] = Field(default=(), description="Hugging Face datasets: every text column")
    ngram: StrictInt = Field(default=13, ge=5, le=50, description="words in a run that counts as overlap")

    def any(self) -> bool:
        return bool(self.files or self.hf)


MAX_DASK_WORKERS = 256


class OrchestrationConfig(Model):
    """Where the validation tasks run."""

    kind: Literal["local", "dask"] = Field(
        default="local",
        description="local: every environment's validation on the flow's own event loop ([sandbox] concurrency at "
                    "once); dask: one Dask task per environment, each in a Dask worker process")
    address: str | None = Field(
        default=None, min_length=1,
        description="dask only: address of a running Dask scheduler (e.g. tcp://10.0.0.5:8786) whose workers run "
                    "the validations; unset: a Dask cluster of `workers` processes on this machine, for the run")
    workers: StrictInt = Field(
        default=2, ge=1, le=MAX_DASK_WORKERS,
        description="dask without an address: worker processes of the run's local cluster, one validation at a "
                    "time each")

    @model_validator(mode="after")
    def _address_is_for_dask(self) -> OrchestrationConfig:
        if self.address is not None and self.kind != "dask":
            raise ValueError("`address` is a Dask scheduler's: set kind = \"dask\" with it")
        return self


class OodBankConfig(Model):
    """Where the off-topic questions of the OOD dataset come from."""

    hf_name: StrictStr | None = Field(
        default=None, min_length=1,
        description="a Hugging Face dataset of multiple-choice questions in the MMLU layout (question, choices, "
                    "answer; e.g. cais/mmlu), or a local folder saved by `datasets`; unset: the bank abstaingen "
                    "ships (offline, en/zh/hi)")
    hf_config: StrictStr | None = Field(default=None, description="the dataset's config (cais/mmlu: \"all\")")
    split: StrictStr = Field(default="test", description="the split to read")
    limit: StrictInt = Field(default=5000, ge=1, le=1_000_000, description="questions read at most")


class OodConfig(Model):
    """The out-of-scope dataset (`abstaingen ood`): scoped assistant roles, their in-scope questions, and
    off-topic questions asked directly, laundered into each role's workflow and recast as its work."""

    name: StrictStr = Field(default="abstaingen-ood", description="the release folder's name")
    backend: BackendName = Field(default="builtin", description="builtin (offline) or llm (roles.generator writes "
                                                                "in-scope questions and frames; roles.judge checks)")
    roles: tuple[StrictStr, ...] = Field(default=(), description="role_ids to write for; empty: every builtin role")
    languages: tuple[Literal["en", "zh", "hi"], ...] = Field(default=("en", "zh", "hi"), min_length=1)
    id_per_role: StrictInt = Field(default=50, ge=2, le=500, description="in-scope questions per role and language")
    ood_per_role: StrictInt = Field(default=12, ge=1, le=500, description="off-topic questions per role and "
                                                                          "language; each is also laundered and recast")
    bank: OodBankConfig = Field(default_factory=OodBankConfig)
    relatedness_threshold: float | None = Field(
        default=None, gt=0, allow_inf_nan=False,
        description="a bank question scoring this or more against a role is dropped for it; unset: 1 vocabulary "
                    "term (builtin) or 5 of 10 (llm gatekeeper)")
    leakage_threshold: float = Field(default=0.65, gt=0.5, le=1, allow_inf_nan=False,
                                     description="refuse a release whose frames' words tell laundered from in-scope "
                                                 "items with more than this held-out accuracy")
    allow_incomplete: StrictBool = Field(default=False, description="publish although a role and language lacks one "
                                                                    "of the item kinds, or the bank ran out for a role")
    prompt_variants: tuple[PromptVariant, ...] = Field(
        default=PROMPT_VARIANTS, min_length=1,
        description="how items' system prompts render the role's policy: ours (names the pretexts laundering uses), "
                    "generic (OffTopicEval's layout, a defence naming none), minimal; each question of a role gets one, "
                    "drawn from the seed, in all its items and languages")

    english_policy_share: float = Field(
        default=0.25, ge=0, le=1, allow_inf_nan=False,
        description="share of the Chinese and Hindi questions whose items get the role's English system prompt "
                    "(OffTopicEval's cross-lingual setting: the policy in English, the user in another language); "
                    "drawn per question, recorded as policy_language")

    multi_turn_share: float = Field(
        default=0.2, ge=0, le=1, allow_inf_nan=False,
        description="share of off-topic items that continue a conversation (OffTopicEval's multi-turn settings): "
                    "after two in-scope questions answered, or, for a laundered or recast message, after the question "
                    "was asked plainly and refused; drawn per item, recorded as multi_turn; in-scope items stay "
                    "single-turn")

    @field_validator("languages", "roles", "prompt_variants")
    @classmethod
    def _no_repeats(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        if len(set(values)) != len(values):
            raise ValueError("lists a value twice")
        return values


class GenerateConfig(Model):
    dataset: DatasetConfig = Field(default_factory=DatasetConfig)
    generation: GenerationConfig = Field(default_factory=GenerationConfig)
    backends: BackendsConfig = Field(default_factory=BackendsConfig)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    providers: dict[str, ProviderConfig] = Field(default_factory=dict, description="endpoints, by a name of yours")
    models: dict[str, ModelConfig] = Field(default_factory=dict, description="models, by a name of yours")
    roles: RolesConfig = Field(default_factory=RolesConfig)
    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    llm: LlmConfig = Field(default_factory=LlmConfig)
    decontamination: DecontaminationConfig = Field(default_factory=DecontaminationConfig)
    orchestration: OrchestrationConfig = Field(default_factory=OrchestrationConfig,
                                               description="where the validation tasks run: this process, or Dask workers")
    ood: OodConfig = Field(default_factory=OodConfig, description="the out-of-scope dataset (abstaingen ood)")

    @model_validator(mode="after")
    def _backends_fit(self) -> GenerateConfig:
        """A builtin stage works only on what builtin stages before it wrote: its tasks need a builtin
        environment, its perturbations a plan it derives from its own positive task."""
        order = ("capability", "environment", "task", "perturbation")
        for before, after in zip(order[1:], order[2:]):
            if self.backend_for(after) == "builtin" and self.backend_for(before) == "llm":
                raise ValueError(f"backends: a builtin {after} stage cannot follow an llm {before} stage (builtin "
                                 "stages work on builtin environments and tasks)")
        if self.generation.environments and "builtin" in (self.backend_for("task"), self.backend_for("perturbation")):
            raise ValueError("generation.environments: tasks in an imported environment are written by the llm "
                             "backend (backends.task and backends.perturbation = \"llm\")")
        if not self.generation.environments and (self.backend_for("capability") == "builtin"
                                                 or self.backend_for("environment") == "builtin"):
            for domain in self.generation.domains:
                try:
                    builtin_domain(domain)
                except ValueError as exc:
                    raise ValueError(f"generation.domains: {exc}") from None
        return self

    @model_validator(mode="after")
    def _references_resolve(self) -> GenerateConfig:
        for key, model in self.models.items():
            if model.provider not in self.providers:
                raise ValueError(f"models.{key}.provider: no provider {shown(model.provider)} in [providers] "
                                 f"(known: {', '.join(self.providers) or 'none'})")
        for role, chosen in [("generator", self.roles.generator), *(("judge", k) for k in self.roles.judge)]:
            if chosen is not None and chosen not in self.models:
                raise ValueError(f"roles.{role}: no model {shown(chosen)} in [models] "
                                 f"(known: {', '.join(self.models) or 'none'})")
        return self

    @model_validator(mode="after")
    def _judges_fit(self) -> GenerateConfig:
        """A judge must be able to disagree with the generator: another family, unless overridden."""
        if self.backends.judge == "llm" and not self.roles.judge:
            raise ValueError("backends.judge = \"llm\" needs roles.judge: one or more keys of [models]")
        writer = self.roles.generator
        if not self.judged() or writer is None or self.judge.allow_same_family:
            return self
        if not any(self.backend_for(stage) == "llm" for stage in STAGES if stage != "judge"):
            return self
        family = self.models[writer].family.lower()
        for key in self.roles.judge:
            if self.models[key].family.lower() == family:
                raise ValueError(f"roles.judge: {shown(key)} is of the family {shown(family)}, like the generator "
                                 f"{shown(writer)}; a judge must come from another family (judge.allow_same_family "
                                 "= true overrides)")
        return self

    def judged(self) -> bool:
        """Whether the judge layer runs: backends.judge when set, else whenever roles.judge names a model."""
        if self.backends.judge is not None:
            return self.backends.judge == "llm"
        return bool(self.roles.judge)

    def role(self, role: str) -> tuple[ModelConfig, ProviderConfig] | None:
        """The model that plays `role` and its provider, or None when the role is not configured (for the
        judge: the committee's first member)."""
        chosen = self.roles.generator if role == "generator" else next(iter(self.roles.judge), None)
        if chosen is None:
            return None
        model = self.models[chosen]
        return model, self.providers[model.provider]

    def backend_for(self, stage: str) -> BackendName:
        if stage not in STAGES:
            raise ValueError(f"unknown stage {stage!r} (stages: {', '.join(STAGES)})")
        override: BackendName | None = getattr(self.backends, stage)
        return override or self.backends.default

    def with_seed(self) -> GenerateConfig:
        """This config with a seed: its own, or a fresh one, so that each run makes new data by default."""
        if self.dataset.seed is not None:
            return self
        return self.model_copy(update={"dataset": self.dataset.model_copy(update={"seed": secrets.randbelow(2**31)})})

    def fingerprint(self, seeds: Sequence[SeedInstruction] = (), environments: Sequence[str] = ()) -> str:
        """sha256 of what determines the generated content: this config, the seeds' content and the imported
        environments' (their bundles' content hashes).

        Where files live (output_dir, the seeds file's path, the environments' folders) is left out, so the same
        config fingerprints the same on every machine; pass the seeds and environments in use to account for
        their content.
        """
        # A setting added after releases were fingerprinted counts only once it is set, so that the same
        # config and seeds keep the fingerprint they had.
        added = set() if self.generation.environment_per_seed else {"environment_per_seed"}
        settings = self.model_dump(
            mode="json", exclude={"dataset": {"output_dir"}, "generation": {"seeds_file", "environments", *added},
                                  "decontamination": {"files"}, "ood": True}
        )
        made_from: dict[str, Any] = {"config": settings, "seeds": [s.model_dump(mode="json") for s in seeds]}
        if environments:  # the imported environments' content hashes (where their folders lie is left out)
            made_from["environments"] = sorted(environments)
        return content_hash(made_from)

    def ood_fingerprint(self) -> str:
        """sha256 of what determines an OOD release: the [ood] section, the seed and the models."""
        return content_hash({"ood": self.ood.model_dump(mode="json"), "seed": self.dataset.seed,
                             "models": {key: model.model_dump(mode="json") for key, model in self.models.items()},
                             "roles": self.roles.model_dump(mode="json")})


class SeedInstruction(Model):
    instruction: Annotated[StrictStr, Field(min_length=1, max_length=MAX_INSTRUCTION_CHARS)]
    domain: StrictStr | None = None

    @field_validator("instruction")
    @classmethod
    def _not_blank(cls, instruction: str) -> str:
        if not instruction.strip():
            raise ValueError("must not be blank")
        return instruction

    @field_validator("domain")
    @classmethod
    def _known_domain(cls, domain: str | None, info: ValidationInfo) -> str | None:
        builtin = bool(info.context and info.context.get("builtin_domains"))
        return None if domain is None else _check_domain(domain, builtin)


# --- loading -------------------------------------------------------------------------------------


def load_config(path: Path | None) -> GenerateConfig:
    """Read a TOML config; None gives the defaults. A relative seeds_file or decontamination file is taken
    from path's folder."""
    if path is None:
        return GenerateConfig()
    data = _read_toml(path)
    try:
        config = GenerateConfig.model_validate(data)
    except ValidationError as exc:
        raise AbstaingenError(f"{path}: {_describe(exc, GenerateConfig)}") from None
    def here(file: Path) -> Path:
        return file if file.is_absolute() else path.parent / file

    seeds_file, generation = config.generation.seeds_file, config.generation
    generation = generation.model_copy(update={"seeds_file": None if seeds_file is None else here(seeds_file),
                                               "environments": tuple(map(here, generation.environments))})
    files = tuple(map(here, config.decontamination.files))
    return config.model_copy(update={"generation": generation,
                                     "decontamination": config.decontamination.model_copy(update={"files": files})})


def apply_overrides(
    config: GenerateConfig,
    *,
    output_dir: Path | None = None,
    domains: Sequence[str] | None = None,
    seed: int | None = None,
    sandbox: str | None = None,
    allow_unsandboxed: bool = False,
) -> GenerateConfig:
    """The config with command-line values put in, validated like the file was."""
    data = config.model_dump()
    if output_dir is not None:
        data["dataset"]["output_dir"] = output_dir
    if domains is not None:
        data["generation"]["domains"] = tuple(domains)
    if seed is not None:
        data["dataset"]["seed"] = seed
    if sandbox is not None:
        data["sandbox"]["backend"] = sandbox
    if allow_unsandboxed:
        data["sandbox"]["allow_unsandboxed"] = True
    try:
        return GenerateConfig.model_validate(data)
    except ValidationError as exc:
        raise AbstaingenError(_describe(exc, GenerateConfig, renames=_OPTION_FOR_KEY)) from None


def apply_ood_overrides(config: GenerateConfig, values: dict[str, Any]) -> GenerateConfig:
    """The config with `abstaingen ood`'s options put in: keys of [ood] (None: not given), plus
    output_dir and seed of [dataset]; validated like the file was."""
    data = config.model_dump()
    for key, value in values.items():
        if value is None:
            continue
        if key in ("output_dir", "seed"):
            data["dataset"][key] = value
        else:
            data["ood"][key] = tuple(value) if isinstance(value, list) else value
    try:
        return GenerateConfig.model_validate(data)
    except ValidationError as exc:
        raise AbstaingenError(_describe(exc, GenerateConfig, renames=_OPTION_FOR_KEY)) from None


_OPTION_FOR_KEY = {"dataset.output_dir": "--output", "generation.domains": "--domains", "dataset.seed": "--seed",
                   "sandbox.backend": "--sandbox", "ood.roles": "--roles", "ood.languages": "--languages",
                   "ood.name": "--name", "ood.backend": "--backend", "ood.id_per_role": "--id-per-role",
                   "ood.ood_per_role": "--ood-per-role"}


def _read_toml(path: Path) -> dict[str, Any]:
    text = read_user_text(path, "config file", max_bytes=MAX_CONFIG_BYTES)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise AbstaingenError(_describe_toml_error(path, exc)) from None
    except RecursionError:
        raise AbstaingenError(f"{path}: malformed TOML: arrays or tables nested too deeply") from None


def _describe_toml_error(path: Path, exc: tomllib.TOMLDecodeError) -> str:
    message = str(exc)
    position = re.search(r"\s*\(at line (\d+), column (\d+)\)$", message)
    if position:
        reason = _cut(message[: position.start()])
        return f"{path}:{position[1]}:{position[2]}: malformed TOML: {reason}"
    return f"{path}: malformed TOML: {_cut(message)}"


def load_seeds(path: Path, builtin_domains: bool = False) -> list[SeedInstruction]:
    """Read JSONL seeds: one object per line; blank lines and lines starting with '#' are skipped.
    `builtin_domains`: a seed may name only a builtin domain (a run whose capability stage is builtin)."""
    seeds = [
        _parse_seed_line(path, number, line, builtin_domains)
        for number, line in _seed_lines(path)
        if line.strip() and not line.lstrip().startswith("#")
    ]
    if not seeds:
        raise AbstaingenError(f"{path}: no seed instructions (the file has no JSON lines)")
    return seeds


def _seed_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(number, text) of each line, read a line at a time so that an overlong line is refused before
    the rest of it is read. Lines end at '\\n' only: JSON strings may hold U+2028 and friends."""
    try:
        stream = path.open("rb")
    except FileNotFoundError:
        raise AbstaingenError(f"{path}: seeds file not found") from None
    except OSError as exc:
        raise AbstaingenError(f"{path}: cannot read seeds file: {exc.strerror or exc}") from None
    except ValueError as exc:  # a NUL byte in a seeds_file path from the config
        raise AbstaingenError(f"{shown(str(path))}: cannot read seeds file: {exc}") from None
    with stream:
        for number in itertools.count(1):
            try:
                data = stream.readline(MAX_SEED_LINE_BYTES + 2)  # + 2: room for a "\r\n" ending
            except OSError as exc:  # a directory, say
                raise AbstaingenError(f"{path}: cannot read seeds file: {exc.strerror or exc}") from None
            if not data:
                return
            if len(data.rstrip(b"\r\n")) > MAX_SEED_LINE_BYTES:
                raise AbstaingenError(f"{path}:{number}: line is longer than {MAX_SEED_LINE_BYTES} bytes "
                                      f"(an instruction holds at most {MAX_INSTRUCTION_CHARS} characters)")
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise AbstaingenError(f"{path}:{number}: not UTF-8 text (byte {exc.start} of the line)") from None
            yield number, text.rstrip("\r\n")


def _parse_seed_line(path: Path, number: int, line: str, builtin_domains: bool) -> SeedInstruction:
    where = f"{path}:{number}"
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        raise AbstaingenError(f"{where}: not valid JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        raise AbstaingenError(f"{where}: JSON nested too deeply (a seed is one flat object)") from None
    if not isinstance(value, dict):
        raise AbstaingenError(f"{where}: expected a JSON object like {{\"instruction\": \"...\"}}, got {_json_kind(value)}")
    try:
        return SeedInstruction.model_validate(value, context={"builtin_domains": builtin_domains})
    except ValidationError as exc:
        raise AbstaingenError(f"{where}: {_describe(exc, SeedInstruction)}") from None


def _json_kind(value: object) -> str:
    kinds = {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return "null" if value is None else kinds.get(type(value), type(value).__name__)


# --- turning pydantic errors into one line -------------------------------------------------------


def _describe(error: ValidationError, root: type[BaseModel], renames: dict[str, str] | None = None) -> str:
    """'key: problem' for the first few errors, joined on one line, then how many more there are."""
    parts = []
    items = error.errors()
    for item in items[:_MAX_PROBLEMS_SHOWN]:
        key = _dotted(item["loc"])
        name = (renames or {}).get(key, key)
        problem = _problem(item, root)
        if not name:  # a check across sections names its key in the message
            for old, new in (renames or {}).items():
                problem = problem.replace(f"{old}: ", f"{new}: ", 1) if problem.startswith(f"{old}: ") else problem
        parts.append(f"{name}: {problem}" if name else problem)
    if len(items) > _MAX_PROBLEMS_SHOWN:
        parts.append(f"and {len(items) - _MAX_PROBLEMS_SHOWN} more problems")
    return "; ".join(parts)


def _dotted(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        name = _cut(str(part))  # an unknown key is the user's text
        text += f"[{part}]" if isinstance(part, int) else (f".{name}" if text else name)
    return text


def _cut(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _problem(item: Any, root: type[BaseModel]) -> str:
    kind = item["type"]
    if kind == "value_error":
        return str(item["ctx"]["error"])
    if kind == "missing":
        return "required key is missing"
    if kind == "extra_forbidden":
        known = _known_keys(root, item["loc"][:-1])
        return f"unknown key (known: {', '.join(known)})" if known else "unknown key"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"must be a table, got {_shown(item['input'])}"
    message = item["msg"][:1].lower() + item["msg"][1:]
    return f"{message} (got {_shown(item['input'])})"


def _known_keys(root: type[BaseModel], loc: tuple[int | str, ...]) -> list[str]:
    model: Any = root
    for part in loc:
        field = model.model_fields.get(part) if isinstance(part, str) else None
        model = field.annotation if field else None
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return []
    return sorted(model.model_fields)


def _shown(value: object) -> str:
    if isinstance(value, (dict, list, tuple)):
        return _json_kind(list(value)) if not isinstance(value, dict) else "a table"
    return shown(value)
