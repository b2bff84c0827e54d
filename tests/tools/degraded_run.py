"""One degraded run for the screenshots: `abstaingen generate` (builtin, every domain, local sandbox) whose
sandboxes die on every S5 pair but those of two domains, as tests/test_flows.py simulates a loss to the
infrastructure (the pair is retried in a fresh sandbox, which dies too).

    PREFECT_HOME=... PREFECT_API_URL=http://127.0.0.1:4217/api python tests/tools/degraded_run.py OUTPUT SEED
"""

import sys
from pathlib import Path

from abstaingen import progress
from abstaingen.config import GenerateConfig
from abstaingen.flows import console
from abstaingen.flows.generate import run_generate_flow
from abstaingen.sandboxes.session import SandboxError
from abstaingen.settings import configure_prefect_defaults
from abstaingen.validators import validate

KEPT_DOMAINS = {"travel", "banking"}
real = validate._execute


async def execute(session, pair, bundle):
    if pair.scenario == "S5" and pair.domain not in KEPT_DOMAINS:
        raise SandboxError("the sandbox stopped answering (simulated)")
    return await real(session, pair, bundle)


def main() -> None:
    configure_prefect_defaults()
    output, seed = Path(sys.argv[1]), int(sys.argv[2])
    validate._execute = execute
    config = GenerateConfig.model_validate({"dataset": {"output_dir": str(output), "seed": seed},
                                            "sandbox": {"backend": "local"}})
    display = console.LineDisplay(sys.stderr)
    with progress.watching(display.update):
        result = run_generate_flow(config)
    print(result.outcome, result.degraded, result.flow_run_id, result.ui_url)


if __name__ == "__main__":
    main()
