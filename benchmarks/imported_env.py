"""An imported environment in the sandbox: how long `env import` takes (reading, and calling each commit to
find its effect), the environment checks, and one tool call on its state, for an environment folder of any
layout `env import` reads (e.g. a tau2-bench checkout's retail domain: 1,550 records).

    python benchmarks/imported_env.py tau2 PATH/TO/tau2-bench --name retail [--sandbox bwrap] [--calls 20]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import anyio

from abstaingen.importers import ImportOptions, get_importer
from abstaingen.importers.effects import derive, with_derived
from abstaingen.model import ToolKind
from abstaingen.sandboxes.backends import get_backend
from abstaingen.sandboxes.session import SandboxSession
from abstaingen.store import bundle_in_scratch
from abstaingen.validators.validate import check_candidate_environment


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind")
    parser.add_argument("source", type=Path)
    parser.add_argument("--name")
    parser.add_argument("--sandbox", default="bwrap")
    parser.add_argument("--calls", type=int, default=20, help="lookup calls timed in one episode")
    options = parser.parse_args()
    backend = get_backend(options.sandbox)

    start = time.perf_counter()
    bundle = get_importer(options.kind)(options.source, ImportOptions(name=options.name))
    read = time.perf_counter() - start
    start = time.perf_counter()
    bundle = with_derived(bundle, anyio.run(derive, bundle, backend))
    effects = time.perf_counter() - start
    records = sum(len(v) for v in bundle.initial_state.values() if isinstance(v, list))
    print(f"{bundle.env_id}: {len(bundle.tools)} tools, {records} records, read in {read:.2f} s, "
          f"effects of {sum(t.effect is not None for t in bundle.tools)} commits found in {effects:.1f} s "
          f"({backend.name})")

    start = time.perf_counter()
    checks = anyio.run(check_candidate_environment, bundle, backend)
    print(f"environment checks: {'all passed' if all(c.passed for c in checks) else 'FAILED'} in "
          f"{time.perf_counter() - start:.1f} s")

    lookup = next(t for t in bundle.tools if t.kind == ToolKind.LOOKUP and t.examples and t.examples[0])

    async def calls() -> list[float]:
        took = []
        with bundle_in_scratch(bundle) as folder:
            async with SandboxSession(folder, backend) as session:
                for _ in range(options.calls):
                    begun = time.perf_counter()
                    await session.call(lookup.name, lookup.examples[0])
                    took.append(time.perf_counter() - begun)
        return took

    took = anyio.run(calls)
    print(f"{lookup.name}: median {statistics.median(took) * 1000:.0f} ms a call over {len(took)} calls")


if __name__ == "__main__":
    main()
