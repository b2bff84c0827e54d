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
import math
import os
import platform
import time

from abstaingen.config import GenerateConfig, SeedInstruction
from abstaingen.generators import make_generator
from abstaingen.generators.builtin.domains import DOMAINS
from abstaingen.model import Provenance, Scenario
from abstaingen.pipelines.pairs import (
    assemble,
    deduplicate,
    merge_funnel,
    perturb_all,
    validate_concurrently,
    write_positives,
)
from abstaingen.sandboxes.backends import LocalBackend
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

    generator = make_generator("builtin", GenerateConfig())
    seeds = [SeedInstruction(instruction=bp.seed_instruction, domain=name) for name, bp in DOMAINS.items()]
    specs = timed("capability", lambda: [asyncio.run(generator.extract_capabilities(s)) for s in seeds])
    bundles = timed("environment", lambda: [asyncio.run(generator.synthesize_environment(s, options.seed))
                                            for s in specs])
    provenance = Provenance(backend={"all": "builtin"}, seed=options.seed, code_version="benchmark")
    positives = timed("task", lambda: [asyncio.run(write_positives(generator, b, variants, options.seed))
                                       for b in bundles])
    candidates = timed("perturbation", lambda: [asyncio.run(perturb_all(generator, b, p, provenance, options.seed)).pairs
                                                 for b, p in zip(bundles, positives)])
    unique = timed("dedup", lambda: deduplicate(bundles, candidates))
    backend = LocalBackend()

    async def validate(bundle, pairs):
        return await validate_pairs_async(bundle, pairs, backend)

    batches = timed("validation", lambda: asyncio.run(
        validate_concurrently(bundles, unique.by_environment, options.workers, validate)))
    assembly = timed("release gates", lambda: assemble([p for b in batches for p in b.accepted], bundles))
    total = time.perf_counter() - start

    accepted = assembly.pairs
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"domains {len(DOMAINS)}, variants per scenario {variants}, workers {options.workers}")
    print(f"candidates {sum(len(c) for c in candidates)}, accepted {len(accepted)} "
          f"({len({p.domain for p in accepted})} domains, {len({p.scenario for p in accepted})} scenarios)")
    for stage, seconds in timings.items():
        print(f"  {stage:<13} {seconds:7.2f} s")
    print(f"total {total:.2f} s, {len(accepted) / total:.1f} validated pairs/s")
    for stage in merge_funnel([p.funnel for p in positives] + [unique.funnel]
                              + [s for batch in batches for s in batch.stages]):
        print(f"  {stage.stage:<11} received {stage.received:5d}  rejected {stage.rejected or 'none'}")
    for m in assembly.baselines:
        print(f"  {m.agent:<15} act {m.act:6.1%} abstain {m.abstain:6.1%} paired {m.paired:6.1%}")
    print("  leakage: " + ", ".join(f"{s.scenario} {s.accuracy:.2f}{'' if s.at_chance else '*'}" for s in assembly.leakage))
    print("  shortcuts: " + ", ".join(f"{s.scenario} {max(s.instruction_accuracy, s.record_accuracy):.2f}"
                                      for s in assembly.shortcuts))
    print(f"  release gates: {assembly.refusal or 'passed'}")


if __name__ == "__main__":
    main()
