"""What changed from one release to another: pairs added, removed or changed, counts, and the settings
that explain it (seed, config, code, models, sandbox, what the newer one was deduplicated against)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from abstaingen.model import Release, TaskPair
from abstaingen.model.common import Model

# What a pair records about the run that made it, not about the pair: left out when telling whether a
# pair present in both releases changed.
_RUN_FIELDS: dict[str, Any] = {"provenance": {"created_at", "config_fingerprint", "code_version"}, "canary": True}
_SETTINGS = ("seed", "config_fingerprint", "created_by", "created_at", "derived_from", "backends", "sandbox",
             "sandbox_image", "models", "prompts", "canary")


class CountChange(Model):
    dimension: str = Field(description="scenario, domain, phase or deliverable")
    key: str
    before: int
    after: int


class SettingChange(Model):
    setting: str = Field(description="a manifest field, e.g. seed or config_fingerprint")
    before: str
    after: str


class ReleaseDiff(Model):
    before: str = Field(description="name and version of the older release")
    after: str
    total_before: int
    total_after: int
    added: list[str] = Field(description="pair ids only in the newer release")
    removed: list[str] = Field(description="pair ids only in the older release")
    changed: list[str] = Field(description="pair ids in both whose content differs (labels, texts or validation)")
    counts: list[CountChange] = Field(description="every count that differs, by dimension and key")
    settings: list[SettingChange] = Field(description="manifest settings that differ")
    checked_against: list[str] = Field(description="the earlier versions the newer release was deduplicated against")
    dedup_rejected: dict[str, int] = Field(description="what the newer release's dedup stage dropped, by reason")


def diff_releases(before: Release, before_pairs: list[TaskPair], after: Release,
                  after_pairs: list[TaskPair]) -> ReleaseDiff:
    old = {p.pair_id: p.model_dump(mode="json", exclude=_RUN_FIELDS) for p in before_pairs}
    new = {p.pair_id: p.model_dump(mode="json", exclude=_RUN_FIELDS) for p in after_pairs}
    counts = [CountChange(dimension=dimension, key=key, before=was, after=now)
              for dimension in sorted(set(before.counts) | set(after.counts))
              for key in sorted(set(before.counts.get(dimension, {})) | set(after.counts.get(dimension, {})))
              if (was := before.counts.get(dimension, {}).get(key, 0)) != (now := after.counts.get(dimension, {})
                                                                            .get(key, 0))]
    settings = [SettingChange(setting=name, before=_shown(getattr(before, name)), after=_shown(getattr(after, name)))
                for name in _SETTINGS if getattr(before, name) != getattr(after, name)]
    dedup = next((stage.rejected for stage in after.funnel if stage.stage == "dedup"), {})
    return ReleaseDiff(
        before=f"{before.name} {before.version}", after=f"{after.name} {after.version}",
        total_before=before.total_pairs, total_after=after.total_pairs,
        added=sorted(new.keys() - old.keys()), removed=sorted(old.keys() - new.keys()),
        changed=sorted(k for k in old.keys() & new.keys() if old[k] != new[k]),
        counts=counts, settings=settings, checked_against=after.checked_against, dedup_rejected=dedup)


def render(diff: ReleaseDiff, ids_shown: int = 20) -> str:
    lines = [f"{diff.before} -> {diff.after}",
             f"pairs: {diff.total_before} -> {diff.total_after} ({len(diff.added)} added, {len(diff.removed)} removed, "
             f"{len(diff.changed)} changed)"]
    lines += [f"{change.setting}: {change.before} -> {change.after}" for change in diff.settings]
    if diff.checked_against:
        dropped = ", ".join(f"{reason} {n}" for reason, n in sorted(diff.dedup_rejected.items())) or "nothing"
        lines.append(f"{diff.after} was deduplicated against {', '.join(diff.checked_against)}; dedup dropped: {dropped}")
    dimensions = sorted({change.dimension for change in diff.counts})
    for dimension in dimensions:
        parts = [f"{c.key} {c.before} -> {c.after}" for c in diff.counts if c.dimension == dimension]
        lines.append(f"by {dimension}: {', '.join(parts)}")
    for title, ids in (("added", diff.added), ("removed", diff.removed), ("changed", diff.changed)):
        if ids:
            more = f" (and {len(ids) - ids_shown} more; --json lists all)" if len(ids) > ids_shown else ""
            lines.append(f"{title}: {', '.join(ids[:ids_shown])}{more}")
    return "\n".join(lines)


def _shown(value: object) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in sorted(value.items())) or "(none)"
    return "(none)" if value is None or value == "" else str(value)
