"""Generate and validate ~1,000 pairs with the builtin backend and the local sandbox; print throughput.

    .venv/bin/python benchmarks/generate_1000.py [--pairs 1000] [--workers 4] [--seed 7]

Runs the pipeline the generate flow runs (abstaingen.pipelines.pairs.run_pairs), without Prefect (its
ephemeral server start is a fixed ~7 s that says nothing about the pipeline), validating `--workers`
environments at once on one event loop, as the flow does. A StageRunner that keeps the time prints wall
time per stage, pairs/second, the funnel and the baseline gates. Nothing is written to disk except the
bundles' temporary folders.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import os
import platform
import time
from collections.abc import Awaitable, Iterator
from typing import Any, TypeVar

from abstaingen.config import GenerateConfig, SeedInstruction
from abstaingen.generators.builtin.domains import DOMAINS
from abstaingen.model import Scenario
from abstaingen.pipelines.pairs import RunPlan, StageRunner, run_pairs

T = TypeVar("T")


class TimedStages(StageRunner):
    """The in-process stages, each timed: a stage's items run at once, so its time is the wall time of all."""

    def __init__(self) -> None:
        self.timings: dict[str, float] = {}

    @contextlib.contextmanager
    def timed(self, stage: str) -> Iterator[None]:
        began = time.perf_counter()
        try:
            yield
        finally:
            self.timings[stage] = self.timings.get(stage, 0.0) + time.perf_counter() - began

    async def extract(self, *args: Any) -> Any:
        with self.timed("capability"):
            return await super().extract(*args)

    async def track(self, stage: str, work: list[Awaitable[T]], notes: list[str]) -> list[T]:
        with self.timed(stage):  # environment, task, perturbation
            return await super().track(stage, work, notes)

    def dedup(self, *args: Any, **kwargs: Any) -> Any:
        with self.timed("dedup"):
            return super().dedup(*args, **kwargs)

    async def validate(self, *args: Any, **kwargs: Any) -> Any:
        with self.timed("validation"):
            return await super().validate(*args, **kwargs)

    def assemble(self, *args: Any, **kwargs: Any) -> Any:
        with self.timed("release gates"):
            return super().assemble(*args, **kwargs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1000, help="candidate pairs to generate (at least)")
    parser.add_argument("--workers", type=int, default=4, help="environments validated at once")
    parser.add_argument("--seed", type=int, default=7)
    options = parser.parse_args()

    # Some candidates are lost to dedup when variants run out of distinct records: ask for 10% more.
    per_domain = math.ceil(1.1 * options.pairs / len(DOMAINS))
    variants = math.ceil(per_domain / len(Scenario))
    config = GenerateConfig.model_validate({
        "dataset": {"seed": options.seed}, "generation": {"variants_per_scenario": variants},
        "sandbox": {"backend": "local", "concurrency": options.workers}})
    seeds = [SeedInstruction(instruction=bp.seed_instruction, domain=name) for name, bp in DOMAINS.items()]
    stages = TimedStages()
    start = time.perf_counter()
    run = asyncio.run(run_pairs(RunPlan(config=config, seeds=seeds), "benchmark", stages))
    total = time.perf_counter() - start

    accepted = run.assembly.pairs
    candidates = next(line.received for line in run.funnel if line.stage == "dedup")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"domains {len(DOMAINS)}, variants per scenario {variants}, workers {options.workers}")
    print(f"candidates {candidates}, accepted {len(accepted)} "
          f"({len({p.domain for p in accepted})} domains, {len({p.scenario for p in accepted})} scenarios)")
    for stage, seconds in stages.timings.items():
        print(f"  {stage:<13} {seconds:7.2f} s")
    print(f"total {total:.2f} s, {len(accepted) / total:.1f} validated pairs/s")
    for line in run.funnel:
        print(f"  {line.stage:<11} received {line.received:5d}  rejected {line.rejected or 'none'}")
    for m in run.assembly.baselines:
        print(f"  {m.agent:<15} act {m.act:6.1%} abstain {m.abstain:6.1%} paired {m.paired:6.1%}")
    print("  leakage: " + ", ".join(f"{s.scenario} {s.accuracy:.2f}{'' if s.at_chance else '*'}"
                                    for s in run.assembly.leakage))
    if run.refusal:
        print(f"  the release gates would refuse it: {run.refusal}")


if __name__ == "__main__":
    main()
