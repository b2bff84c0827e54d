"""What the pairs task knows of a release without Inspect: the pairs by side, a side's target in words and
its sample metadata (the Inspect export writes them for readers without importing Inspect)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from abstaingen.model import Deliverable, EnvironmentBundle, Scenario, TaskPair, TaskVariant
from abstaingen.model.perturbation import SCENARIOS
from abstaingen.store import ENVIRONMENTS_DIR, PAIRS_FILE, read_bundle, read_pairs

MESSAGE_LIMIT = 60  # 30 turns: an assistant message and a tool or user message each
# Keys of an Inspect sample's store, set by the tasks' solvers and read by the scripted policies
SAMPLE = "abstaingen:sample"  # pairs: {"folder", "task_id"}
OOD_SAMPLE = "abstaingen:ood_sample"  # OOD: {"folder", "item_id", "suffix"}


@cache
def pairs_in(folder: str) -> dict[str, TaskPair]:
    """The pairs of a release (or an Inspect export) by the task_id of each side."""
    return {side.task_id: pair for pair in read_pairs(Path(folder) / PAIRS_FILE) for side in (pair.act, pair.abstain)}


def side_of(folder: str, task_id: str) -> tuple[TaskPair, TaskVariant]:
    pair = pairs_in(folder)[task_id]
    return pair, pair.act if pair.act.task_id == task_id else pair.abstain


@cache
def bundle_of(folder: str, env_id: str) -> EnvironmentBundle:
    return read_bundle(Path(folder) / ENVIRONMENTS_DIR / env_id)


def target_of(side: TaskVariant) -> str:
    """What a correct episode does, in words (Inspect's `target`; the scorer reads the side itself)."""
    if side.task_type == "abstain":
        return f"abstain: {side.good_reply}"
    if side.deliverable == Deliverable.INFO:
        return f"answer: {' or '.join(side.expected_answer)}"
    return f"act: {', '.join(side.critical_actions)}"


def sample_metadata(pair: TaskPair, side: TaskVariant) -> dict[str, Any]:
    return {"pair_id": pair.pair_id, "side": side.task_type, "scenario": pair.scenario,
            "category": SCENARIOS[Scenario(pair.scenario)].category, "deliverable": str(pair.act.deliverable),
            "domain": pair.domain, "env_id": side.env_id, "earliest_abstain_step": side.earliest_abstain_step,
            "canary": pair.canary}
