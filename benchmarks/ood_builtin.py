"""Time and memory of the OOD pipeline's core on the builtin backend (no Prefect): every builtin role in
en, zh and hi, from the question bank to the assembled release (baselines and leakage included).

    .venv/bin/python benchmarks/ood_builtin.py [--runs 3] [--seed 7]

Prints, per run, the seconds of each stage and the items made; then the median total and the peak
resident memory of the process. Also how much a second seed's off-topic items repeat the first's.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import time

from abstaingen.config import GenerateConfig
from abstaingen.generators.ood import make_ood_generator
from abstaingen.generators.ood.bank import load_bank
from abstaingen.generators.ood.builtin.roles import builtin_roles
from abstaingen.pipelines.ood import assemble, plan_ood, role_items
from abstaingen.validators.dedup import EarlierItems, dedup_group, remove_duplicate_items


def one_run(seed: int, earlier: EarlierItems | None = None) -> tuple[dict[str, float], list]:
    config = GenerateConfig.model_validate({"dataset": {"seed": seed}})
    times: dict[str, float] = {}
    started = time.perf_counter()
    plan = plan_ood(config, "benchmark", [role.policy for role in builtin_roles()])
    bank = load_bank(config.ood.bank, plan.languages)
    times["plan+bank"] = time.perf_counter() - started
    generator = make_ood_generator("builtin", config)
    mark = time.perf_counter()
    made = [asyncio.run(role_items(plan, role, bank, generator)) for role in plan.roles]
    times["roles"] = time.perf_counter() - mark
    mark = time.perf_counter()
    unique = remove_duplicate_items([item for batch in made for item in batch.items], earlier)
    times["dedup"] = time.perf_counter() - mark
    mark = time.perf_counter()
    assembled = assemble(plan, unique.kept, [t for b in made for t in b.tallies] + [unique.tally], bank.source, 1.0,
                         generator.report(), "canary", [], "benchmark")
    times["assemble"] = time.perf_counter() - mark
    times["total"] = time.perf_counter() - started
    return times, assembled.items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    options = parser.parse_args()
    totals = []
    items: list = []
    for run in range(options.runs):
        times, items = one_run(options.seed)
        totals.append(times["total"])
        print(f"run {run + 1}: " + ", ".join(f"{k} {v:.2f} s" for k, v in times.items()) + f"; {len(items)} items")
    print(f"median total {statistics.median(totals):.2f} s; peak RSS "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    texts: dict[str, list[str]] = {}
    for item in items:
        texts.setdefault(dedup_group(item), []).append(item.query)
    _, fresh = one_run(options.seed + 1, EarlierItems(versions=["v1"], texts=texts))
    first_off = sum(item.kind != "id" for item in items)
    second_off = sum(item.kind != "id" for item in fresh)
    print(f"seed {options.seed + 1} against seed {options.seed}: {second_off} off-topic items kept of "
          f"{first_off} in the first (the rest repeated it)")


if __name__ == "__main__":
    main()
