"""Generate and validate ~1,000 pairs with the builtin backend and the local sandbox; print throughput.

    .venv/bin/python benchmarks/generate_1000.py [--pairs 1000] [--workers 4] [--seed 7]

Runs the same stage functions as the Prefect flow, without Prefect (its ephemeral server start is
a fixed ~7 s that says nothing about the pipeline), validating `--workers` environments at once on
one event loop, as the flow does. Prints wall time per stage, pairs/second, the funnel and the
baseline gates. Nothing is written to disk except the bundles' temporary folders.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import os
import platform
import time

import anyio

from abstaingen.generators.builtin.capability import extract_capabilities
from abstaingen.generators.builtin.domains import DOMAINS
from abstaingen.generators.builtin.environment import synthesize_environment
from abstaingen.generators.builtin.stages import perturb, write_positive_task
from abstaingen.generators.builtin.tasks import NoSuitableRecord
from abstaingen.model import Provenance, Scenario
from abstaingen.sandboxes.backends import LocalBackend
from abstaingen.scoring import aggregate
from abstaingen.validators.baselines import BASELINES
from abstaingen.validators.dedup import remove_near_duplicates
from abstaingen.validators.leakage import leakage_report
from abstaingen.validators.validate import validate_pairs_async


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1000, help="candidate pairs to generate (at least)")
    parser.add_argument("--workers", type=int, default=4, help="environments validated at once")
    parser.add_argument("--seed", type=int, default=7)
    options = parser.parse_args()

    # Some candidates are lost to dedup when variants run out of distinct records: ask for 10% more.
    per_domain = math.ceil(1.1 * options.pairs / len(DOMAINS))
    variants = math.ceil(per_domain / len(Scenario))
    timings: dict[str, float] = {}
    start = time.perf_counter()

    def timed(stage: str, work):
        began = time.perf_counter()
        value = work()
        timings[stage] = timings.get(stage, 0.0) + time.perf_counter() - began
        return value

    specs = timed("capability", lambda: [extract_capabilities(bp.seed_instruction, name) for name, bp in DOMAINS.items()])
    bundles = timed("environment", lambda: [synthesize_environment(DOMAINS[s.domain], s, options.seed) for s in specs])
    provenance = Provenance(backend={"all": "builtin"}, seed=options.seed, code_version="benchmark")

    def positives_for(bundle):
        found = []
        for scenario in Scenario:
            for variant in range(variants):
                with contextlib.suppress(NoSuitableRecord):
                    found.append(write_positive_task(bundle, DOMAINS[bundle.domain], scenario, variant, options.seed))
        return found

    positives = timed("task", lambda: [positives_for(b) for b in bundles])
    candidates = timed("perturbation", lambda: [[perturb(p, b, DOMAINS[p.domain], provenance, options.seed)
                                                  for p in group] for b, group in zip(bundles, positives)])
    async def validate_all():
        limiter = anyio.CapacityLimiter(options.workers)

        async def one(bundle, pairs):
            async with limiter:
                return await validate_pairs_async(bundle, pairs, LocalBackend())

        return list(await asyncio.gather(*(one(b, c) for b, c in zip(bundles, unique))))

    kept, removed = timed("dedup", lambda: remove_near_duplicates([p for group in candidates for p in group]))
    unique = [[p for p in kept if p.act.env_id == b.env_id] for b in bundles]
    batches = timed("validation", lambda: asyncio.run(validate_all()))
    accepted = [p for batch in batches for p in batch.accepted]
    leakage = timed("leakage", lambda: leakage_report(accepted))
    total = time.perf_counter() - start

    n_candidates = sum(len(c) for c in candidates)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"domains {len(DOMAINS)}, variants per scenario {variants}, workers {options.workers}")
    print(f"candidates {n_candidates}, near-duplicates removed {len(removed)}, validated {len(kept)}, "
          f"accepted {len(accepted)} ({len({p.domain for p in accepted})} domains, "
          f"{len({p.scenario for p in accepted})} scenarios)")
    for stage, seconds in timings.items():
        print(f"  {stage:<13} {seconds:7.2f} s")
    print(f"total {total:.2f} s, {len(accepted) / total:.1f} validated pairs/s")
    for batch_stage in ("structural", "replay", "witness", "gates"):
        rejected = {}
        for batch in batches:
            for stage in batch.stages:
                if stage.stage == batch_stage:
                    for reason, count in stage.rejected.items():
                        rejected[reason] = rejected.get(reason, 0) + count
        print(f"  rejected at {batch_stage}: {rejected or 'none'}")
    for agent in BASELINES:
        m = aggregate(agent, [s for p in accepted for s in p.validation.baseline_scores if s.agent == agent])
        print(f"  {agent:<15} act {m.act:6.1%} abstain {m.abstain:6.1%} paired {m.paired:6.1%}")
    print("  leakage: " + ", ".join(f"{s.scenario} {s.accuracy:.2f}{'' if s.at_chance else '*'}" for s in leakage))


if __name__ == "__main__":
    main()
