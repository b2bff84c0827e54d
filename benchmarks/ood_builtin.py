"""Time and memory of the OOD pipeline's core on the builtin backend (no Prefect): every builtin role in
en, zh and hi, from the question bank to the assembled release (baselines and leakage included).

    .venv/bin/python benchmarks/ood_builtin.py [--runs 3] [--seed 7]

Prints, per run, the seconds of each stage and the items made; then the median total and the peak
resident memory of the process. Also how many off-topic items a second release, made after the first, has, and how many repeat it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import resource
import statistics
import time
from collections.abc import Awaitable, Iterator
from typing import Any, TypeVar

from abstaingen.config import GenerateConfig
from abstaingen.generators.ood.builtin.roles import builtin_roles
from abstaingen.model.ood import OodItem
from abstaingen.pipelines.ood import OodStageRunner, plan_ood, run_ood
from abstaingen.validators.dedup import EarlierItems, dedup_group, item_text

T = TypeVar("T")


class TimedStages(OodStageRunner):
    """The in-process stages of run_ood (what the flow runs as tasks), each timed."""

    def __init__(self) -> None:
        self.times: dict[str, float] = {}

    @contextlib.contextmanager
    def timed(self, stage: str) -> Iterator[None]:
        began = time.perf_counter()
        try:
            yield
        finally:
            self.times[stage] = self.times.get(stage, 0.0) + time.perf_counter() - began

    def bank(self, *args: Any) -> Any:
        with self.timed("bank"):
            return super().bank(*args)

    async def track(self, stage: str, work: list[Awaitable[T]], notes: list[str]) -> list[T]:
        with self.timed("roles"):
            return await super().track(stage, work, notes)

    def dedup(self, *args: Any, **kwargs: Any) -> Any:
        with self.timed("dedup"):
            return super().dedup(*args, **kwargs)

    def assemble(self, *args: Any, **kwargs: Any) -> Any:
        with self.timed("assemble"):
            return super().assemble(*args, **kwargs)


def one_run(seed: int, earlier: EarlierItems | None = None) -> tuple[dict[str, float], list[OodItem]]:
    config = GenerateConfig.model_validate({"dataset": {"seed": seed}})
    stages = TimedStages()
    started = time.perf_counter()
    plan = plan_ood(config, "benchmark", [role.policy for role in builtin_roles()])
    assembled = asyncio.run(run_ood(plan, "canary", stages, earlier))
    return {**stages.times, "total": time.perf_counter() - started}, assembled.items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    options = parser.parse_args()
    totals = []
    items: list[OodItem] = []
    for run in range(options.runs):
        times, items = one_run(options.seed)
        totals.append(times["total"])
        print(f"run {run + 1}: " + ", ".join(f"{k} {v:.2f} s" for k, v in times.items()) + f"; {len(items)} items")
    print(f"median total {statistics.median(totals):.2f} s; peak RSS "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    texts: dict[str, list[str]] = {}
    for item in items:
        texts.setdefault(dedup_group(item), []).append(item_text(item))
    _, fresh = one_run(options.seed + 1, EarlierItems(versions=["v1"], texts=texts))
    asked = {(item.role_id, item_text(item)) for item in items if item.kind != "id"}
    repeated = sum((item.role_id, item_text(item)) in asked for item in fresh if item.kind != "id")
    print(f"seed {options.seed + 1} after seed {options.seed}: {sum(item.kind != 'id' for item in fresh)} off-topic "
          f"items ({sum(item.kind != 'id' for item in items)} in the first), {repeated} repeating a question of the "
          "first (benchmarks/ood_freshness.py runs many releases)")


if __name__ == "__main__":
    main()
