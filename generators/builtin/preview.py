"""Print the pairs the builtin backend writes for one domain, for a person to read.

    python -m abstaingen.generators.builtin.preview travel [--seed 5] [--variants 4] [--scenarios S1,S8]
"""

from __future__ import annotations

import argparse

from abstaingen.generators.builtin.capability import extract_capabilities
from abstaingen.generators.builtin.domains import DOMAINS
from abstaingen.generators.builtin.environment import synthesize_environment
from abstaingen.generators.builtin.stages import perturb, write_positive_task
from abstaingen.generators.builtin.tasks import NoSuitableRecord
from abstaingen.model import Provenance, Scenario


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("domain", choices=sorted(DOMAINS))
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--variants", type=int, default=2)
    parser.add_argument("--scenarios", default=",".join(s.value for s in Scenario))
    options = parser.parse_args()
    bp = DOMAINS[options.domain]
    bundle = synthesize_environment(bp, extract_capabilities(bp.seed_instruction, bp.name), options.seed)
    provenance = Provenance(backend={"task": "builtin"}, seed=options.seed, code_version="preview")
    print(f"tools: {', '.join(t.name for t in bundle.tools)}")
    print("policies:\n  " + "\n  ".join(p.statement for p in bundle.policies))
    for scenario in (Scenario(s) for s in options.scenarios.split(",")):
        for variant in range(options.variants):
            try:
                positive = write_positive_task(bundle, bp, scenario, variant, options.seed)
            except NoSuitableRecord as exc:
                print(f"\n{scenario.value} #{variant}: no pair ({exc})")
                continue
            pair = perturb(positive, bundle, bp, provenance, options.seed)
            plan = positive.plan
            print(f"\n{scenario.value} #{variant} {plan.deliverable.value} form={plan.form} action={plan.action} "
                  f"record={plan.record_id}")
            for side in (pair.act, pair.abstain):
                controls = ", ".join(c.kind.value for c in side.controls)
                print(f"  {'T+' if side.task_type == 'act' else 'T-'} {side.instruction}"
                      + (f"   [{controls}]" if controls else ""))
                if not side.overlay.is_empty():
                    print(f"     overlay: {side.overlay.model_dump(exclude_defaults=True)}")
            print(f"     trigger: {pair.abstain.abstention_trigger}")
            if pair.abstain.clarification:
                print(f"     clarification: {pair.abstain.clarification}")


if __name__ == "__main__":
    main()
