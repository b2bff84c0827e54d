"""How long the builtin question bank keeps OOD releases fresh and full: N releases of one dataset in a
row (in process, no Prefect), each checked against all the ones before it as `abstaingen ood` does.

    .venv/bin/python benchmarks/ood_freshness.py [--releases 50] [--roles a,b] [--ood-per-role 12]
        [--id-per-role 50]

Prints, per release, the off-topic and in-scope items per role and language (the smallest and the
largest), how many questions were skipped as asked before, and whether the release would be refused (the
bank, or the builtin in-scope pool, exhausted). A full release has `ood_per_role` direct items and as many
laundered and recast ones, and `id_per_role` in-scope ones, in every role and language.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections import Counter

from abstaingen.config import GenerateConfig
from abstaingen.generators.ood.builtin.roles import builtin_roles
from abstaingen.pipelines.ood import plan_ood, run_ood
from abstaingen.validators.dedup import EarlierItems, dedup_group, item_text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--releases", type=int, default=50)
    parser.add_argument("--roles", default="", help="role_ids, comma-separated (default: every builtin role)")
    parser.add_argument("--ood-per-role", type=int, default=12)
    parser.add_argument("--id-per-role", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1000)
    options = parser.parse_args()
    policies = [role.policy for role in builtin_roles()]
    roles = [role for role in options.roles.split(",") if role] or [policy.role_id for policy in policies]
    earlier = EarlierItems()
    began = time.perf_counter()
    for number in range(1, options.releases + 1):
        config = GenerateConfig.model_validate({"dataset": {"seed": options.seed + number}, "ood": {
            "roles": roles, "ood_per_role": options.ood_per_role, "id_per_role": options.id_per_role}})
        assembled = asyncio.run(run_ood(plan_ood(config, "benchmark", policies), "canary", earlier=earlier))
        sizes = Counter((item.role_id, item.language) for item in assembled.items if item.kind == "direct_ood")
        twins = Counter((item.role_id, item.language) for item in assembled.items if item.kind == "laundered_ood")
        recasts = Counter((item.role_id, item.language) for item in assembled.items if item.kind == "recast_ood")
        in_scope = Counter((item.role_id, item.language) for item in assembled.items if item.kind == "id")
        fresh = next((stage for stage in assembled.release.funnel if stage.stage == "fresh"), None)
        skipped = sum(fresh.rejected.values()) if fresh else 0
        every = [sizes[(role, language)] for role in roles for language in config.ood.languages]
        ids = [in_scope[(role, language)] for role in roles for language in config.ood.languages]
        print(f"release {number:2d}: direct per role and language {min(every)}..{max(every)}, laundered and recast "
              f"= direct: {twins == sizes == recasts}, in-scope {min(ids)}..{max(ids)}, skipped as asked before "
              f"{skipped}"
              + (f"; REFUSED: {assembled.refusal}" if assembled.refusal else ""))
        if assembled.refusal:
            break
        earlier = EarlierItems(versions=[*earlier.versions, f"v{number}"], texts={
            **earlier.texts, **{group: [*earlier.texts.get(group, []), *texts] for group, texts in _texts(
                assembled.items).items()}})
    print(f"{time.perf_counter() - began:.0f} s for {number} releases of {len(roles)} roles")


def _texts(items: list) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for item in items:
        grouped.setdefault(dedup_group(item), []).append(item_text(item))
    return grouped


if __name__ == "__main__":
    main()
