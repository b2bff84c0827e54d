"""How much a fresh builtin release repeats an earlier one: candidates of two seeds, compared by the rules
the dedup stage applies across releases (no sandbox runs; candidates, before validation).

    .venv/bin/python benchmarks/fresh_overlap.py [--seeds 7 8] [--variants 2] [--ngram 13]

Prints, for the second seed against the first: near-duplicates by the MinHash rule, pairs whose target
record was the first's target, pairs sharing an n-word run with the first's requests, and the highest
Jaccard similarity of any pair to its closest earlier pair.
"""

from __future__ import annotations

import argparse
import asyncio

from abstaingen.config import GenerateConfig, SeedInstruction
from abstaingen.generators import make_generator
from abstaingen.generators.builtin.domains import DOMAINS
from abstaingen.model import EnvironmentBundle, Provenance, TaskPair
from abstaingen.pipelines.pairs import deduplicate, perturb_all, write_positives
from abstaingen.validators.decontaminate import ReferenceIndex
from abstaingen.validators.dedup import EarlierReleases, jaccard, pair_text, shingles, target_key


def candidates(seed: int, variants: int) -> tuple[list[EnvironmentBundle], list[list[TaskPair]]]:
    generator = make_generator("builtin", GenerateConfig())
    seeds = [SeedInstruction(instruction=bp.seed_instruction, domain=name) for name, bp in DOMAINS.items()]
    specs = [asyncio.run(generator.extract_capabilities(s)) for s in seeds]
    bundles = [asyncio.run(generator.synthesize_environment(s, seed)) for s in specs]
    provenance = Provenance(backend={"all": "builtin"}, seed=seed, code_version="benchmark")
    positives = [asyncio.run(write_positives(generator, b, variants, seed)) for b in bundles]
    return bundles, [asyncio.run(perturb_all(generator, b, p, provenance, seed)).pairs for b, p in zip(bundles, positives)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs=2, default=[7, 8])
    parser.add_argument("--variants", type=int, default=2)
    parser.add_argument("--ngram", type=int, default=13)
    options = parser.parse_args()
    first_bundles, first_groups = candidates(options.seeds[0], options.variants)
    first = [pair for group in deduplicate(first_bundles, first_groups).by_environment for pair in group]
    by_env = {b.env_id: b for b in first_bundles}
    earlier = EarlierReleases(versions=["first"], texts=[pair_text(p) for p in first],
                              targets=[k for p in first if (k := target_key(p, by_env[p.act.env_id])) is not None])
    bundles, groups = candidates(options.seeds[1], options.variants)
    second = deduplicate(bundles, groups, earlier)
    references = ReferenceIndex(options.ngram)
    references.add("first", [[p.act.instruction, p.abstain.instruction] for p in first])
    fresh = [p for group in groups for p in group]
    first_sets = [shingles(pair_text(p)) for p in first]
    closest = max(max(jaccard(shingles(pair_text(p)), s) for s in first_sets) for p in fresh)
    print(f"seed {options.seeds[1]} against seed {options.seeds[0]}: {len(fresh)} candidates, {len(first)} earlier pairs")
    print(f"dedup funnel: {second.funnel.rejected or 'nothing dropped'}")
    print(f"sharing a {options.ngram}-word run with an earlier request: {sum(references.overlaps(p) for p in fresh)}")
    print(f"highest Jaccard similarity to an earlier pair: {closest:.3f} (near-duplicate at 0.9)")


if __name__ == "__main__":
    main()
