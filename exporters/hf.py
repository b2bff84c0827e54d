"""The Hugging Face export: a script-free Hub folder of parquet files with a dataset card.

    OUT/README.md                                   the card: YAML metadata (configs, licence, size) and
                                                    scenarios, counts, funnel, baselines, provenance, canary,
                                                    and every column with its type and description
    OUT/manifest.json                               the release's manifest, unchanged
    OUT/data/pairs/test-00000-of-00001.parquet      one row per pair (every field of TaskPair)
    OUT/data/tasks/test-00000-of-00001.parquet      one row per side (TaskRecord)
    OUT/data/environments/test-00000-of-00001.parquet  one row per environment (EnvironmentRecord)

The column types come from the models (abstaingen.records), so every row of a config has the same
types and `datasets` reads them without inference; `abstaingen.records.from_row(TaskPair, row)`
gives back the published pair.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import yaml
from pydantic import Field

from abstaingen.errors import AbstaingenError, shown
from abstaingen.exporters.base import ExportOptions, ExportReport, ReleaseContents, exporter
from abstaingen.model import EnvironmentBundle, Release, Scenario, TaskPair, TaskVariant
from abstaingen.model.common import Model
from abstaingen.model.perturbation import SCENARIOS
from abstaingen.optional import require
from abstaingen.records import arrow_schema, columns, to_row
from abstaingen.store import counts_for

SPLIT = "test"
LICENSE = "cc-by-4.0"
CONFIGS = ("pairs", "tasks", "environments")

# What the abstain side of each scenario changes, for the card's table.
CHANGES = {
    Scenario.S1: "leaves out a detail, so several of the owner's records fit",
    Scenario.S2: "is worded so that two different actions fit equally well",
    Scenario.S3: "names details that single out different records",
    Scenario.S4: "asks for an irreversible amount above the confirmation threshold, unconfirmed",
    Scenario.S5: "hides every tool that could deliver the outcome",
    Scenario.S6: "makes the critical tool fail on every call",
    Scenario.S7: "has a second system of record disagree beyond the stated tolerance",
    Scenario.S8: "puts a note on the record that restricts the very action asked for",
}


class TaskRecord(TaskVariant):
    """One side of a pair as a row of its own, with what it needs from its pair."""

    pair_id: str = Field(description="the pair the side belongs to; its twin has the same pair_id")
    scenario: str = Field(description="S1 to S8")
    category: str = Field(description="the scenario's category as AgentAbstain names it")
    phase: str = Field(description="pre_execution or runtime: when the reason to stop can be seen")
    dimension: str = Field(description="what the abstain side changed: instruction, env_state, tool_availability or "
                                       "tool_behavior")
    domain: str = Field(description="the environment's domain")
    canary: str = Field(description="the dataset's canary string: filter it out of training data")


class EnvironmentRecord(EnvironmentBundle):
    """An environment as a row: the bundle and the dataset's canary."""

    canary: str = Field(description="the dataset's canary string: filter it out of training data")


def task_records(pair: TaskPair) -> list[TaskRecord]:
    shared = {"pair_id": pair.pair_id, "scenario": pair.scenario,
              "category": SCENARIOS[Scenario(pair.scenario)].category, "phase": str(pair.perturbation.phase),
              "dimension": str(pair.perturbation.dimension), "domain": pair.domain, "canary": pair.canary}
    return [TaskRecord.model_validate({**side.model_dump(), **shared}) for side in (pair.act, pair.abstain)]


class HfExport(Model):
    """The export's content, before it is written."""

    tables: dict[str, Any] = Field(description="config -> pyarrow Table")
    card: str = Field(description="README.md: YAML metadata, then the card in Markdown")


def build_hf_export(contents: ReleaseContents, license_id: str = LICENSE) -> HfExport:
    schemas = {"pairs": arrow_schema(TaskPair), "tasks": arrow_schema(TaskRecord),
               "environments": arrow_schema(EnvironmentRecord)}
    rows = {"pairs": [to_row(p) for p in contents.pairs],
            "tasks": [to_row(t) for p in contents.pairs for t in task_records(p)],
            "environments": [to_row(EnvironmentRecord.model_validate({**b.model_dump(), "canary": contents.manifest.canary}))
                             for b in contents.bundles]}
    tables = {name: pa.Table.from_pylist(rows[name], schema=schemas[name]) for name in CONFIGS}
    return HfExport(tables=tables, card=dataset_card(contents, {k: len(v) for k, v in rows.items()}, license_id))


def data_file(config: str) -> str:
    return f"data/{config}/{SPLIT}-00000-of-00001.parquet"


@exporter("hf")
def export_hf(contents: ReleaseContents, out: Path, options: ExportOptions) -> ExportReport:
    export = build_hf_export(contents, options.license)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for config, table in export.tables.items():
        path = out / data_file(config)
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, path)
        written.append(data_file(config))
    (out / "README.md").write_text(export.card, encoding="utf-8")
    (out / "manifest.json").write_bytes((contents.folder / "manifest.json").read_bytes())
    return ExportReport(exporter="hf", folder=out, files=[*written, "README.md", "manifest.json"],
                        rows={config: table.num_rows for config, table in export.tables.items()},
                        notes=[f"{len(contents.errata)} errata of {contents.manifest.version} applied "
                               f"({contents.manifest.total_pairs - len(contents.pairs)} pairs withdrawn)"]
                        if contents.errata else [])


def _size_category(n: int) -> str:
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < limit:
            return name
    return "n>1M"


def card_metadata(manifest: Release, rows: dict[str, int], license_id: str) -> dict[str, Any]:
    return {
        "license": license_id,
        "pretty_name": f"{manifest.name} {manifest.version}",
        "language": ["en"],
        "task_categories": ["text-generation"],
        "tags": ["agents", "tool-use", "abstention", "mcp", "benchmark", "synthetic"],
        "size_categories": [_size_category(rows["pairs"])],
        "configs": [{"config_name": config, **({"default": True} if config == "pairs" else {}),
                     "data_files": [{"split": SPLIT, "path": data_file(config)}]} for config in CONFIGS],
    }


def dataset_card(contents: ReleaseContents, rows: dict[str, int], license_id: str = LICENSE) -> str:
    manifest = contents.manifest
    metadata = yaml.safe_dump(card_metadata(manifest, rows, license_id), sort_keys=False, allow_unicode=True)
    counts = counts_for(contents.pairs)
    lines = [
        "---", metadata.rstrip(), "---", "",
        f"# {manifest.name} {manifest.version}", "",
        "Paired tasks for testing whether a tool-using agent knows when **not** to act. Each pair has a "
        "should-act task (T+) and a minimally changed twin (T-) where a careful agent stops and asks, refuses or "
        "reports a blocker. Both sides run in an executable environment (an MCP server over a JSON state, in "
        "the `environments` config), and every label was proven by deterministic replay in a sandbox before "
        "the release was published. Made by abstaingen.", "",
        f"**Canary.** Every record carries `{manifest.canary or '(none)'}`. Keep this data out of training "
        "corpora; filter on that string.", "",
        "## Load it", "",
        "```python",
        "from datasets import load_dataset",
        "",
        f'pairs = load_dataset("PATH_OR_REPO", "pairs", split="{SPLIT}")  # one row per pair',
        f'tasks = load_dataset("PATH_OR_REPO", "tasks", split="{SPLIT}")  # one row per side',
        f'environments = load_dataset("PATH_OR_REPO", "environments", split="{SPLIT}")',
        "",
        "from abstaingen.records import from_row",
        "from abstaingen.model import TaskPair",
        "pair = from_row(TaskPair, pairs[0])  # the pair exactly as published",
        "```", "",
        "Columns ending in `_json` hold values that can be any JSON (tool arguments, state values) or one of "
        "several shapes (witnesses, policies) as JSON text; every other column has one type in every row.", "",
        "## Scenarios", "",
        "| scenario | name | AgentAbstain category | phase | T- | pairs |",
        "|---|---|---|---|---|---|",
        *(f"| {s.value} | {SCENARIOS[s].name} | {SCENARIOS[s].category} | {SCENARIOS[s].phase.value} | {CHANGES[s]} "
          f"| {counts.get('scenario', {}).get(s.value, 0)} |" for s in Scenario),
        "",
        "## Counts", "",
        f"{rows['pairs']} pairs ({rows['tasks']} tasks) in {rows['environments']} environments.", "",
        *(f"- **{dimension}**: " + ", ".join(f"{key} {n}" for key, n in sorted(by.items()))
          for dimension, by in counts.items()),
        "",
        "## Funnel", "",
        "What each stage of the run received, passed and rejected (by reason).", "",
        "| stage | received | passed | rejected |", "|---|---|---|---|",
        *(f"| {f.stage} | {f.received} | {f.passed} | "
          f"{', '.join(f'{k} {v}' for k, v in f.rejected.items()) or 'none'} |" for f in manifest.funnel),
        "",
        "## Baselines", "",
        "Scripted agents on the released pairs: the oracle must pass every pair, the others none. The last two "
        "columns score the same runs by AgentAbstain's rules (commits and the reply only; per category x action "
        "type, action types equal, macro over categories), under which a do-nothing agent passes info act tasks.",
        "",
        "| agent | act | abstain | paired | CAR | AgentAbstain paired | AgentAbstain CAR |",
        "|---|---|---|---|---|---|---|",
        *(f"| {m.agent} | {m.act:.1%} | {m.abstain:.1%} | {m.paired:.1%} | "
          f"{'n/a' if m.car is None else f'{m.car:.1%}'} | {_view(manifest, m.agent, 'paired')} | "
          f"{_view(manifest, m.agent, 'car')} |" for m in manifest.baselines),
        "",
        "## Provenance", "",
        *_provenance_lines(manifest),
        "",
        "## Errata", "",
        *([f"- {e.date}, `{e.pair_id}`: `{e.field}` corrected to `{json.dumps(e.correction)}` ({e.reason})"
           for e in contents.errata] or [f"None for {manifest.version}."]),
        "",
        "## Columns", "",
        *_column_tables(),
        "",
        "## Licence", "",
        f"The data is released under {license_id}.",
        "",
    ]
    return "\n".join(lines)


def _view(manifest: Release, agent: str, metric: str) -> str:
    view = next((v for v in manifest.agentabstain_view if v.agent == agent), None)
    return "n/a" if view is None else f"{getattr(view, metric):.1%}"


def _provenance_lines(manifest: Release) -> list[str]:
    judge = manifest.judge
    items = {
        "version": manifest.version + (f" (re-judged from {manifest.derived_from})" if manifest.derived_from else ""),
        "created": manifest.created_at or "unknown",
        "made by": manifest.created_by,
        "seed": str(manifest.seed),
        "config fingerprint": manifest.config_fingerprint,
        "backends": ", ".join(f"{k}: {v}" for k, v in manifest.backends.items()) or "unknown",
        "models": ", ".join(f"{k}: {v}" for k, v in sorted(manifest.models.items())) or "none (builtin backend)",
        "prompt hashes": ", ".join(f"{k} {v[:12]}" for k, v in sorted(manifest.prompts.items())) or "none",
        "judged by": f"{', '.join(judge.models)} ({judge.rule})" if judge.judged else "no judge committee",
        "sandbox": manifest.sandbox + (f" (image {manifest.sandbox_image})" if manifest.sandbox_image else ""),
        "deduplicated against": ", ".join(manifest.checked_against) or "no earlier release",
        "cost": f"${manifest.cost_usd:.2f}",
    }
    return [f"- **{key}**: {value}" for key, value in items.items()] + [f"- **warning**: {w}" for w in manifest.warnings]


def _column_tables() -> list[str]:
    lines = ["In `pairs`, `abstain` has the same columns as `act`.", ""]
    for config, model in (("pairs", TaskPair), ("tasks", TaskRecord), ("environments", EnvironmentRecord)):
        lines += [f"### {config}", "", "| column | type | description |", "|---|---|---|"]
        shown = [c for c in columns(model) if not c.path.startswith("abstain.")]  # the same columns as act.*
        lines += [f"| `{c.path}` | {c.type} | {c.description.replace('|', '/')} |" for c in shown]
        lines.append("")
    return lines



class PushReport(Model):
    repo_id: str = Field(description="the dataset repository on the Hub, org/name")
    revision: str = Field(description="the tag that names this release's commit (its version, e.g. v2)")
    commit: str = Field(description="the commit on main that holds the export")
    url: str


_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")


def require_hub() -> None:
    """--push uploads with huggingface_hub, an extra (abstaingen[hf]): checked before the export is written."""
    require("huggingface_hub", "export hf --push")


def push_to_hub(out: Path, files: list[str], repo_id: str, version: str, private: bool) -> PushReport:
    """Upload an export as one commit on main of the dataset repository `repo_id`, tagged with the release's
    version: main is always the latest release and `revision="v1"` loads an earlier one. The token comes
    from the environment (HF_TOKEN) or `hf auth login`; HF_ENDPOINT points elsewhere than the Hub."""
    require_hub()
    from huggingface_hub import CommitOperationAdd, HfApi, get_token
    from huggingface_hub.errors import HfHubHTTPError

    if not _REPO_ID.match(repo_id):
        raise AbstaingenError(f"--push {shown(repo_id)}: give the dataset repository as org/name")
    if get_token() is None:
        raise AbstaingenError("--push needs a Hugging Face token with write access: set HF_TOKEN")
    api = HfApi()
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        if any(tag.name == version for tag in api.list_repo_refs(repo_id, repo_type="dataset").tags):
            raise AbstaingenError(f"--push {repo_id}: {version} is already on the Hub (tag {version}); a version is "
                                  "published once")
        info = api.create_commit(repo_id, [CommitOperationAdd(path_in_repo=name, path_or_fileobj=str(out / name))
                                           for name in files],
                                 commit_message=f"{version}", repo_type="dataset")
        api.create_tag(repo_id, tag=version, revision=info.oid, repo_type="dataset",
                       tag_message=f"release {version}")
    except HfHubHTTPError as exc:
        said = exc.server_message or str(exc).splitlines()[0]
        raise AbstaingenError(f"--push {repo_id}: the Hub refused (HTTP {exc.response.status_code}): "
                              f"{' '.join(said.split())[:300]}") from None
    return PushReport(repo_id=repo_id, revision=version, commit=info.oid, url=info.repo_url.url)
