"""What the store needs to know about OOD releases: the earlier items a new release must not repeat,
and the content checks of `abstaingen release verify` (everything the manifest says is recomputed
from items.jsonl and roles.jsonl)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from abstaingen.errors import AbstaingenError, shown
from abstaingen.model.ood import OodItem, RolePolicy
from abstaingen.model.release import OodRelease
from abstaingen.ood.pipeline import ITEMS_FILE, ROLES_FILE, EarlierItems, counts_for_items, dedup_group, item_text
from abstaingen.ood_scoring import baseline_scores
from abstaingen.store import read_models, release_versions
from abstaingen.validators.ood import leakage_report, question_block, verbatim_consistency


def load_ood_release(folder: Path) -> tuple[OodRelease, list[OodItem], list[RolePolicy]]:
    from abstaingen.store import read_manifest

    manifest = read_manifest(folder)
    if not isinstance(manifest, OodRelease):
        raise AbstaingenError(f"{folder}: holds {manifest.kind} records, not OOD items")
    return (manifest, read_models(folder / ITEMS_FILE, OodItem, "OOD item"),
            read_models(folder / ROLES_FILE, RolePolicy, "role"))


def earlier_items(dataset_dir: Path) -> EarlierItems:
    """Every published version's items, by dedup group. A version that cannot be read stops the run."""
    versions, texts = [], defaultdict(list)
    for folder, _ in release_versions(dataset_dir, "ood"):
        try:
            _, items, _ = load_ood_release(folder)
        except AbstaingenError as exc:
            raise AbstaingenError(f"cannot check the new release against earlier version {folder.name}: {exc}") from None
        versions.append(folder.name)
        for item in items:
            texts[dedup_group(item)].append(item_text(item))
    return EarlierItems(versions=versions, texts=dict(texts))


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
        if question_block(item.question) not in item.query:
            problems.append(f"{ITEMS_FILE}: {shown(item.item_id)}: the query does not hold its question block")
        elif item.kind == "laundered_ood" and not verbatim_consistency(item.question, item.query).passed:
            problems.append(f"{ITEMS_FILE}: {shown(item.item_id)}: the rewrite fails the verbatim check")
    if baseline_scores(items, by_role) != manifest.baselines:
        problems.append(f"manifest.json: the baselines' scores do not match {ITEMS_FILE} (recomputed)")
    if manifest.leakage is not None and items and \
            leakage_report(items, manifest.leakage.threshold, manifest.leakage.folds) != manifest.leakage:
        problems.append(f"manifest.json: the leakage figures do not match {ITEMS_FILE} (recomputed)")
    return problems
