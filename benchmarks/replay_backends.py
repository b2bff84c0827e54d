"""Replay the same ~500 pairs under the local and the docker backend in one run; print both times.

    .venv/bin/python benchmarks/replay_backends.py [--release artifacts/<name>/<version>] [--pairs 500]
        [--backends local,docker] [--workers 4]

Without --release, 500 builtin pairs are generated in memory (seeded). Each pair's act side is
replayed twice, as validation does, with one sandbox per environment and `--workers` environments
at once on one event loop. Needs a running Docker engine and the sandbox image
(`abstaingen sandbox build-image`) for the docker backend.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import platform
import tempfile
import time
from pathlib import Path

import anyio

from abstaingen.generators.builtin.capability import extract_capabilities
from abstaingen.generators.builtin.domains import DOMAINS
from abstaingen.generators.builtin.environment import synthesize_environment
from abstaingen.generators.builtin.stages import perturb, write_positive_task
from abstaingen.model import EnvironmentBundle, Provenance, Scenario, TaskPair
from abstaingen.sandboxes.backends import SandboxBackend, get_backend
from abstaingen.sandboxes.replay import replay
from abstaingen.sandboxes.session import SandboxSession
from abstaingen.store import load_release, read_bundle, write_bundle


def generated(pairs: int, seed: int = 7) -> tuple[list[EnvironmentBundle], list[TaskPair]]:
    variants = math.ceil(pairs / len(DOMAINS) / len(Scenario))
    provenance = Provenance(backend={"all": "builtin"}, seed=seed, code_version="benchmark")
    bundles, out = [], []
    for name, bp in DOMAINS.items():
        bundle = synthesize_environment(bp, extract_capabilities(bp.seed_instruction, name), seed)
        bundles.append(bundle)
        out += [perturb(write_positive_task(bundle, bp, s, v, seed), bundle, bp, provenance, seed)
                for s in Scenario for v in range(variants)]
    return bundles, out[:pairs]


async def replay_all(folders: dict[str, Path], pairs: list[TaskPair], backend: SandboxBackend, workers: int) -> int:
    limiter = anyio.CapacityLimiter(workers)
    failures = 0

    async def one(env_id: str) -> None:
        nonlocal failures
        acts = [p.act for p in pairs if p.act.env_id == env_id]
        async with limiter, SandboxSession(folders[env_id], backend) as session:
            results = await replay(session, acts, runs=2)
        failures += sum(not r.completed for r in results)

    await asyncio.gather(*(one(env_id) for env_id in folders))
    return failures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", type=Path)
    parser.add_argument("--pairs", type=int, default=500)
    parser.add_argument("--backends", default="local,docker")
    parser.add_argument("--workers", type=int, default=4)
    options = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        if options.release:
            _, pairs = load_release(options.release)
            pairs = pairs[: options.pairs]
            folders = {p.act.env_id: options.release / "environments" / p.act.env_id for p in pairs}
            bundles = [read_bundle(f) for f in folders.values()]
        else:
            bundles, pairs = generated(options.pairs)
            folders = {}
            for bundle in bundles:
                folders[bundle.env_id] = Path(tmp) / bundle.env_id
                write_bundle(bundle, folders[bundle.env_id])
        folders = {env_id: f for env_id, f in folders.items() if any(p.act.env_id == env_id for p in pairs)}
        print(f"machine: {platform.machine()}, {os.cpu_count()} cores; {len(pairs)} pairs in {len(folders)} "
              f"environments, 2 replays each, {options.workers} environments at once")
        seconds = {}
        for name in options.backends.split(","):
            backend = get_backend(name)
            began = time.perf_counter()
            failed = asyncio.run(replay_all(folders, pairs, backend, options.workers))
            seconds[name] = time.perf_counter() - began
            print(f"  {name:<7} {seconds[name]:6.2f} s  ({2 * len(pairs) / seconds[name]:.0f} replays/s, "
                  f"{failed} failed)")
        if "local" in seconds:
            for name, value in seconds.items():
                if name != "local":
                    print(f"  {name} / local = {value / seconds['local']:.2f}x")


if __name__ == "__main__":
    main()
