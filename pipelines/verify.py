"""`abstaingen release verify`: a published release of either kind checked from its folder alone. The store
checks the files (abstaingen.store.file_problems); what the manifest says about them is recomputed here from
pairs.jsonl (pairs) or items.jsonl and roles.jsonl (ood). The config fingerprint needs the config and seeds
that made the release; it is checked only when a config is given.
What this cannot catch: someone who rewrites the records and the manifest consistently."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from abstaingen.config import GenerateConfig, SeedInstruction
from abstaingen.errors import AbstaingenError, shown
from abstaingen.model import Release, TaskPair
from abstaingen.model.release import OodRelease
from abstaingen.model.score import PairScore
from abstaingen.ood_scoring import baseline_scores
from abstaingen.pipelines.pairs import imported_environments, seeds_in_scope
from abstaingen.scoring import agentabstain_view, aggregate
from abstaingen.store import (
    ENVIRONMENT_FILE,
    ENVIRONMENTS_DIR,
    ITEMS_FILE,
    MANIFEST_FILE,
    PAIRS_FILE,
    ROLES_FILE,
    counts_for,
    counts_for_items,
    file_problems,
    load_ood_release,
    read_pairs,
)
from abstaingen.validators.ood import leakage_report, question_block, recast_consistency, verbatim_consistency


def verify_release(
    folder: Path, config: GenerateConfig | None = None, seeds: Sequence[SeedInstruction] = ()
) -> list[str]:
    """Problems with a published release (empty when intact), one line each: its files, then what the
    manifest says about its records (total, counts, baseline metrics, the funnel's end, the sandbox that ran
    pairs, the leakage figures of OOD items), then, given the config, its fingerprint."""
    manifest, problems = file_problems(folder)
    if manifest is None:
        return problems
    if not problems and isinstance(manifest, OodRelease):
        problems += ood_release_problems(folder, manifest)
    elif not problems and isinstance(manifest, Release):
        problems += _pair_problems(folder, manifest)
    if not problems and config is not None and isinstance(manifest, Release):
        problems += _fingerprint_problems(manifest, config, seeds)
    elif not problems and config is not None and isinstance(manifest, OodRelease):
        seeded = config.model_copy(update={"dataset": config.dataset.model_copy(update={"seed": manifest.seed})})
        if (computed := seeded.ood_fingerprint()) != manifest.config_fingerprint:
            problems.append(f"{MANIFEST_FILE}: config_fingerprint {shown(manifest.config_fingerprint, 70)} does not "
                            f"match the config given ({computed!r})")
    return problems


def ood_release_problems(folder: Path, manifest: OodRelease) -> list[str]:
    try:
        _, items, roles = load_ood_release(folder)
    except AbstaingenError as exc:
        return [str(exc)]
    problems = []
    if len(items) != manifest.total_items:
        problems.append(f"{ITEMS_FILE}: {len(items)} items, the manifest says {manifest.total_items}")
    if counts_for_items(items) != manifest.counts:
        problems.append(f"manifest.json: counts do not match {ITEMS_FILE}")
    if manifest.funnel and manifest.funnel[-1].passed != len(items):
        problems.append(f"manifest.json: the funnel's last stage passed {manifest.funnel[-1].passed} items, "
                        f"{ITEMS_FILE} holds {len(items)}")
    if len({item.item_id for item in items}) != len(items):
        problems.append(f"{ITEMS_FILE}: an item_id is used twice")
    by_role = {role.role_id: role for role in roles}
    if missing := sorted({item.role_id for item in items} - set(by_role)):
        problems.append(f"{ITEMS_FILE}: items of roles {', '.join(map(shown, missing))} that {ROLES_FILE} does not hold")
        return problems
    if manifest.canary and (unmarked := sum(item.canary != manifest.canary for item in items)):
        problems.append(f"{ITEMS_FILE}: {unmarked} items do not carry the manifest's canary string")
    for item in items:
        if item.kind == "recast_ood":
            # a builtin recast keeps the question sentence, an llm one rewords it (its judge checked that)
            kept = item.consistency is not None and "question_kept" in item.consistency.methods
            if not recast_consistency(item.question, item.query, question_kept=kept).passed:
                problems.append(f"{ITEMS_FILE}: {shown(item.item_id)}: the recast fails its deterministic check")
        elif question_block(item.question) not in item.query:
            problems.append(f"{ITEMS_FILE}: {shown(item.item_id)}: the query does not hold its question block")
        elif item.kind == "laundered_ood" and not verbatim_consistency(item.question, item.query).passed:
            problems.append(f"{ITEMS_FILE}: {shown(item.item_id)}: the rewrite fails the verbatim check")
    if baseline_scores(items, by_role) != manifest.baselines:
        problems.append(f"manifest.json: the baselines' scores do not match {ITEMS_FILE} (recomputed)")
    # a release made before a leakage field existed is checked on the fields it has
    if manifest.leakage is not None and items and (written := manifest.leakage.model_dump(exclude_unset=True)) != \
            leakage_report(items, manifest.leakage.threshold, manifest.leakage.folds).model_dump(include=set(written)):
        problems.append(f"manifest.json: the leakage figures do not match {ITEMS_FILE} (recomputed)")
    return problems


def _pair_problems(folder: Path, manifest: Release) -> list[str]:
    try:
        pairs = read_pairs(folder / PAIRS_FILE)
    except AbstaingenError as exc:
        return [str(exc)]
    problems = []
    if len(pairs) != manifest.total_pairs:
        problems.append(f"{PAIRS_FILE}: {len(pairs)} pairs, the manifest says {manifest.total_pairs}")
    if counts_for(pairs) != manifest.counts:
        problems.append(f"{MANIFEST_FILE}: counts do not match {PAIRS_FILE}")
    listed = {entry.path for entry in manifest.files}
    for env_id in sorted({variant.env_id for pair in pairs for variant in (pair.act, pair.abstain)}):
        if f"{ENVIRONMENTS_DIR}/{env_id}/{ENVIRONMENT_FILE}" not in listed:
            problems.append(f"{PAIRS_FILE}: pairs run in environment {shown(env_id)}, which the release does not hold")
    if manifest.canary and (unmarked := sum(pair.canary != manifest.canary for pair in pairs)):
        problems.append(f"{PAIRS_FILE}: {unmarked} pairs do not carry the manifest's canary string")
    problems += _funnel_problems(manifest, len(pairs))
    problems += _baseline_problems(manifest, pairs)
    problems += _sandbox_problems(manifest, pairs)
    return problems


def _funnel_problems(manifest: Release, total: int) -> list[str]:
    """Every stage passes what it received minus what it rejected; the last one passed the released pairs."""
    problems = []
    for stage in manifest.funnel:
        if stage.passed != stage.received - sum(stage.rejected.values()) or stage.passed < 0:
            problems.append(f"{MANIFEST_FILE}: funnel stage {shown(stage.stage)} received {stage.received} and "
                            f"rejected {sum(stage.rejected.values())}, but says {stage.passed} passed")
    if manifest.funnel and manifest.funnel[-1].passed != total:
        problems.append(f"{MANIFEST_FILE}: the funnel's last stage passed {manifest.funnel[-1].passed} pairs, "
                        f"{PAIRS_FILE} holds {total}")
    return problems


def _baseline_problems(manifest: Release, pairs: Sequence[TaskPair]) -> list[str]:
    """The baseline metrics, recomputed from each pair's baseline scores as abstaingen.pipelines.pairs.assemble does."""
    scores: dict[str, list[PairScore]] = {}
    for pair in pairs:
        for score in pair.validation.baseline_scores:
            scores.setdefault(score.agent, []).append(score)
    problems = []
    seen: set[str] = set()
    for claimed in manifest.baselines:
        if claimed.agent in seen:
            problems.append(f"{MANIFEST_FILE}: baseline {shown(claimed.agent)} is listed twice")
            continue
        seen.add(claimed.agent)
        fresh = aggregate(claimed.agent, scores.get(claimed.agent, []))
        wrong = [f"{key} {value} (recomputed: {getattr(fresh, key)})"
                 for key, value in claimed.model_dump().items() if not _same(value, getattr(fresh, key))]
        if wrong:
            problems.append(f"{MANIFEST_FILE}: baseline {shown(claimed.agent)} does not match the scores in "
                            f"{PAIRS_FILE}: {', '.join(wrong)}")
    for agent in sorted(set(scores) - seen):
        problems.append(f"{MANIFEST_FILE}: baseline {shown(agent)} has scores in {PAIRS_FILE} but no metrics")
    action_types = {pair.pair_id: str(pair.act.deliverable) for pair in pairs}
    for view in manifest.agentabstain_view:
        if agentabstain_view(view.agent, scores.get(view.agent, []), action_types) != view:
            problems.append(f"{MANIFEST_FILE}: the AgentAbstain view of {shown(view.agent)} does not match the scores "
                            f"in {PAIRS_FILE}")
    return problems


def _same(claimed: object, fresh: object) -> bool:
    if isinstance(claimed, float) and isinstance(fresh, float):
        return abs(claimed - fresh) <= 1e-9
    return type(claimed) is type(fresh) and claimed == fresh


def _sandbox_problems(manifest: Release, pairs: Sequence[TaskPair]) -> list[str]:
    """The sandbox that ran the pairs, as the flow records it (skipped for pairs that never ran in one)."""
    if not any(pair.validation.sandbox for pair in pairs):
        return []
    used = "+".join(sorted({pair.validation.sandbox or "none" for pair in pairs}))
    image = next((p.validation.sandbox_image for p in pairs if p.validation.sandbox_image), None)
    problems = []
    if manifest.sandbox != used:
        problems.append(f"{MANIFEST_FILE}: sandbox {shown(manifest.sandbox)}, but the pairs ran in {used!r}")
    if manifest.sandbox_image != image:
        problems.append(f"{MANIFEST_FILE}: sandbox_image {shown(manifest.sandbox_image)}, "
                        f"but the pairs record {shown(image)}")
    return problems


def _fingerprint_problems(manifest: Release, config: GenerateConfig, seeds: Sequence[SeedInstruction]) -> list[str]:
    """config_fingerprint recomputed as the generate flow computes it: over the seeds in scope (the builtin
    default seeds when none are given), or the imported environments it names, and the config with `auto`
    replaced by the backend it picked."""
    environments = [bundle.content_hash for bundle in imported_environments(config)]
    in_scope = [] if environments else seeds_in_scope(config, seeds)
    if config.dataset.seed is None:  # the run drew one; the manifest says which
        config = config.model_copy(update={"dataset": config.dataset.model_copy(update={"seed": manifest.seed})})
    names = ["docker", "bwrap", "local"] if config.sandbox.backend == "auto" else [config.sandbox.backend]
    for name in names:
        resolved = config.model_copy(update={"sandbox": config.sandbox.model_copy(update={"backend": name})})
        if resolved.fingerprint(in_scope, environments) == manifest.config_fingerprint:
            return []
    computed = config.model_copy(update={"sandbox": config.sandbox.model_copy(update={"backend": names[0]})})
    return [f"{MANIFEST_FILE}: config_fingerprint {shown(manifest.config_fingerprint, 70)} does not match the config "
            f"and seeds given ({computed.fingerprint(in_scope, environments)!r}"
            f"{' with backend ' + names[0] if len(names) > 1 else ''})"]
