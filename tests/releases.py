"""Releases made in the test process by the Prefect-free composition (abstaingen.pipelines.pairs.run_pairs)
and published as the generate flow publishes them: what a test needs when the release, not the flow run
around it, is its subject; and a release's pairs as two runs of one plan must both publish them."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

from abstaingen.config import GenerateConfig
from abstaingen.flows.shell import code_version
from abstaingen.pipelines.pairs import plan_run, release_of, run_pairs
from abstaingen.store import dataset_canary, publish_release, release_folder
from abstaingen.validators.decontaminate import load_references
from abstaingen.validators.dedup import earlier_releases


def publish_pairs(config: GenerateConfig, seeds_file: Path | None = None) -> Path:
    """The next version of the config's dataset, from the plan `abstaingen generate` would make; its folder."""
    plan = plan_run(config, seeds_file)
    dataset_dir = plan.config.dataset.output_dir / plan.config.dataset.name
    run = asyncio.run(run_pairs(plan, code_version(), earlier=earlier_releases(dataset_dir),
                                references=load_references(plan.config.decontamination)))
    assert run.refusal is None, run.refusal
    manifest, pairs = release_of(run, dataset_canary(dataset_dir), datetime.now(UTC).isoformat(timespec="seconds"))
    release = publish_release(plan.config.dataset.output_dir, manifest, pairs, run.bundles)
    return release_folder(plan.config.dataset.output_dir, release.name, release.version)


def published_pairs(folder: Path) -> list[dict[str, object]]:
    """The pairs of a release, without the run's stamp (its creation time, the code's commit) and the
    canary (each dataset folder draws its own at its first release)."""
    pairs = [json.loads(line) for line in (folder / "pairs.jsonl").read_text().splitlines()]
    for pair in pairs:
        pair["provenance"].pop("created_at")
        pair["provenance"].pop("code_version")
        pair.pop("canary")
    return sorted(pairs, key=lambda p: str(p["pair_id"]))
