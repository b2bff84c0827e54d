"""How close the llm backend's calls come to the provider's ideal throughput.

    .venv/bin/python benchmarks/llm_throughput.py [--seeds 1280] [--latency 0.2] [--concurrency 32]
                                                  [--bad-every 10] [--full-variants 1]

A stand-in model server (the test fixture in tests/standin, in a process of its own so that it does
not share this one's interpreter) answers every request after `--latency` seconds; every
`--bad-every`-th first answer is malformed JSON, so the repair loop has work. The ideal time of a
run is calls x latency / concurrency: every slot of the provider busy all the time.

Two figures:
- calls: capability extraction over `--seeds` seed instructions through the llm generator, the
  caller (cache on disk, ledger, budget, breaker) and the repair loop. Its checks cost nothing, so
  this is the call path itself; the target is at least 85% of ideal.
- full (`--full-variants` > 0): the pet clinic's environment, T+ and T- stages (tests/clinic.py),
  each draft checked in a bwrap sandbox. On a small machine the sandbox checks, not the calls, bound
  this one; it is printed so that the difference is visible. The clinic answers one fixed pair per
  scenario, so keep one variant: each further variant of a scenario is given other records, and the
  clinic's answers about the first variant's record go back until that slot is lost.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the stand-in and the clinic are test fixtures


def serve(latency: float, bad_every: int) -> None:
    """The child process: a stand-in whose every reply comes `latency` seconds after its request arrived."""
    from clinic import CAPABILITY, ENVIRONMENT, PERTURBATION, positive_reply
    from standin import Answer, Computed, Delay, Raw, Reply, StandIn

    from abstaingen.generators.llm.perturbation import stage_of

    def capability(body: object) -> Reply:
        text = json.dumps(body)
        first = "previous answer" not in text  # the same seeds get a bad first answer in every run
        return Raw('{"domain": "pet_clinic", "summary": ') if bad_every and first and \
            zlib.crc32(text.encode()) % bad_every == 0 else Answer(CAPABILITY)

    standin = StandIn()
    standin.otherwise("capability", Delay(latency, Computed(capability)))
    standin.otherwise("environment", Delay(latency, Answer(ENVIRONMENT)))
    standin.otherwise("positive_task", Delay(latency, Computed(positive_reply)))
    for scenario, answer in PERTURBATION.items():
        standin.otherwise(stage_of(scenario), Delay(latency, Answer(answer)))
    print(standin.openai_base_url, flush=True)
    sys.stdin.read()  # until the parent closes it
    standin.close()
    print(f"the stand-in used {time.process_time():.2f} s of CPU for {standin.count()} requests", file=sys.stderr)


def config_for(base_url: str, concurrency: int, cache: Path, sandbox: str, variants: int = 1):
    from abstaingen.config import GenerateConfig

    return GenerateConfig.model_validate({
        "backends": {"default": "llm"}, "sandbox": {"backend": sandbox},
        "generation": {"variants_per_scenario": max(variants, 1)},
        "providers": {"standin": {"kind": "openai", "base_url": base_url, "api_key_env": "STANDIN_KEY",
                                  "max_retries": 0, "concurrency": concurrency, "timeout_s": 60}},
        "models": {"writer": {"name": "stand-in-1", "provider": "standin", "family": "standin"}},
        "roles": {"generator": "writer"}, "llm": {"cache_dir": str(cache)},
    })


def figures(label: str, wall: float, generator, accepted: int, latency: float, concurrency: int) -> None:
    records = generator.caller.records
    calls = sum(not r.cached for r in records)
    ideal = calls * latency / concurrency
    repairs = generator.log.counts()
    repaired = sum(c.repaired for c in repairs)
    taken = sum(c.first_try + c.repaired for c in repairs)
    print(f"{label}: {calls} calls in {wall:.2f} s, ideal {ideal:.2f} s -> {100 * ideal / wall:.0f}% of ideal; "
          f"{calls / max(accepted, 1):.2f} calls per accepted {'spec' if label == 'calls' else 'pair'}; "
          f"repair rate {repaired / max(taken, 1):.1%} ({repaired} of {taken} drafts)")


async def capability_run(config, seeds: int):
    from abstaingen.config import SeedInstruction
    from abstaingen.generators import make_generator
    from abstaingen.pipelines.pairs import extract_all

    generator = make_generator("llm", config)
    # a first call outside the timing: the SDK's modules load on first use, once per process
    await extract_all(generator, [SeedInstruction(instruction="Warm up: cancel a visit")])
    generator.caller.records.clear()
    generator.log = type(generator.log)()
    instructions = [SeedInstruction(instruction=f"Cancel visit number {n} at the pet clinic") for n in range(seeds)]
    started, cpu = time.perf_counter(), time.process_time()
    batch = await extract_all(generator, instructions)
    wall = time.perf_counter() - started
    print(f"this process used {time.process_time() - cpu:.2f} s of CPU")
    await generator.aclose()
    return generator, wall, len(batch.specs)


async def full_run(config):
    from abstaingen.config import SeedInstruction
    from abstaingen.generators import make_generator
    from abstaingen.model import Provenance
    from abstaingen.pipelines.pairs import extract_all, perturb_all, synthesize_all, write_positives

    generator = make_generator("llm", config)
    provenance = Provenance(backend={"all": "llm"}, seed=1, code_version="benchmark")
    started = time.perf_counter()
    specs = await extract_all(generator, [SeedInstruction(instruction="Cancel Biscuit's checkup")])
    bundles = await synthesize_all(generator, specs.specs, 1)
    pairs = 0
    for bundle in bundles.bundles:
        positives = await write_positives(generator, bundle, config.generation.variants_per_scenario, 1)
        pairs += len((await perturb_all(generator, bundle, positives, provenance, 1)).pairs)
    wall = time.perf_counter() - started
    await generator.aclose()
    return generator, wall, pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=1280, help="seed instructions of the calls figure")
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--bad-every", type=int, default=10, help="every n-th first answer is malformed (0: none)")
    parser.add_argument("--full-variants", type=int, default=1, help="variants per scenario of the full run (0: skip)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.serve:
        serve(options.latency, options.bad_every)
        return

    os.environ["STANDIN_KEY"] = "sk-standin"
    server = subprocess.Popen([sys.executable, __file__, "--serve", "--latency", str(options.latency),
                               "--bad-every", str(options.bad_every)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, cwd=ROOT)
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
              f"latency {options.latency * 1000:.0f} ms, provider concurrency {options.concurrency}")
        with tempfile.TemporaryDirectory() as cache:
            from abstaingen.sandboxes.backends import select_backend

            sandbox = select_backend("auto").name
            config = config_for(base_url, options.concurrency, Path(cache) / "calls", sandbox)
            generator, wall, accepted = asyncio.run(capability_run(config, options.seeds))
            figures("calls", wall, generator, accepted, options.latency, options.concurrency)
            if options.full_variants:
                config = config_for(base_url, options.concurrency, Path(cache) / "full", sandbox,
                                    options.full_variants)
                generator, wall, accepted = asyncio.run(full_run(config))
                figures(f"full ({sandbox} checks)", wall, generator, accepted, options.latency, options.concurrency)
    finally:
        if server.stdin:
            server.stdin.close()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
