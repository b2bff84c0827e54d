"""Start and stop one sandbox session per backend, several times; print the median, min and max.

    .venv/bin/python benchmarks/sandbox_start.py [--backends local,bwrap,docker] [--runs 7] [--domain travel]

What a session costs before its first call: the launcher, the isolation (bwrap's user namespace, enter.py and
its seccomp filter; Docker's container), the runtime's start (with its hash-seed restart), MCP's handshake
and the teardown. Docker needs a running engine and the image (`abstaingen sandbox build-image`).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import anyio

from abstaingen.generators.builtin.capability import extract_capabilities
from abstaingen.generators.builtin.domains import DOMAINS
from abstaingen.generators.builtin.environment import synthesize_environment
from abstaingen.sandboxes.backends import get_backend
from abstaingen.sandboxes.session import SandboxSession
from abstaingen.store import write_bundle


async def start_and_stop(folder: Path, backend: str) -> float:
    started = time.perf_counter()
    async with SandboxSession(folder, get_backend(backend)):
        pass
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="local,bwrap,docker")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--domain", default="travel", choices=sorted(DOMAINS))
    options = parser.parse_args()
    blueprint = DOMAINS[options.domain]
    bundle = synthesize_environment(blueprint, extract_capabilities(blueprint.seed_instruction, options.domain), 11)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / bundle.env_id
        write_bundle(bundle, folder)
        print(f"machine: {platform.machine()}, {len(os.sched_getaffinity(0))} cores; "
              f"{options.runs} sessions each, {options.domain}")
        for backend in options.backends.split(","):
            times = [anyio.run(start_and_stop, folder, backend) for _ in range(options.runs)]
            print(f"  {backend:7} median {statistics.median(times):.3f} s  (min {min(times):.3f}, max {max(times):.3f})")


if __name__ == "__main__":
    main()
