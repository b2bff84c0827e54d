"""Audit sheets: a stratified sample people can judge, and the validity rates their marks give."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest
from builtin_fixtures import builtin_bundle, builtin_pair

from abstaingen.audit import CRITERIA, render_sheet, sample_for_audit, score_audit
from abstaingen.errors import AbstaingenError
from abstaingen.flows.cli import main
from abstaingen.generators.builtin.domains import DOMAINS
from abstaingen.model import Release, Scenario
from abstaingen.store import publish_release

DOMAIN_NAMES = sorted(DOMAINS)[:4]
PAIRS = [builtin_pair(s, v, d) for d in DOMAIN_NAMES for s in Scenario for v in range(3)]


def test_the_sample_is_even_across_scenarios_spread_over_domains_and_seeded() -> None:
    sample = sample_for_audit(PAIRS, 16, seed=3)
    assert len(sample) == 16
    by_scenario = {s.value: [p for p in sample if p.scenario == s.value] for s in Scenario}
    assert all(len(group) == 2 for group in by_scenario.values())
    assert all(len({p.domain for p in group}) == 2 for group in by_scenario.values())
    assert sample == sample_for_audit(PAIRS, 16, seed=3)
    assert sample != sample_for_audit(PAIRS, 16, seed=4)


def test_a_uniform_sample_is_drawn_from_the_whole_release_and_seeded() -> None:
    few = [p for p in PAIRS if p.scenario in ("S1", "S2")] + [p for p in PAIRS if p.scenario == "S3"][:1]
    samples = [sample_for_audit(few, 4, seed=seed, uniform=True) for seed in range(60)]
    assert all(len(s) == 4 and len({p.pair_id for p in s}) == 4 for s in samples)
    assert samples[0] == sample_for_audit(few, 4, seed=0, uniform=True)
    # the one S3 pair (1 of 25) is in about 1 in 6 samples of 4, not in every one as the even sample puts it
    assert 0 < sum(any(p.scenario == "S3" for p in s) for s in samples) < 30
    assert all(any(p.scenario == "S3" for p in sample_for_audit(few, 4, seed=seed)) for seed in range(60))


def test_the_sheet_shows_each_side_as_the_agent_meets_it() -> None:
    s5 = next(p for p in PAIRS if p.scenario == "S5" and p.act.deliverable == "op")
    s6 = next(p for p in PAIRS if p.scenario == "S6")
    bundles = {p.act.env_id: builtin_bundle(p.domain) for p in (s5, s6)}
    page = render_sheet("t", [s5], bundles, "marks.csv")
    assert page.count("class='pair'") == 1 and s5.act.instruction.replace("'", "&#x27;") in page
    hidden = s5.abstain.overlay.hidden_tools[0]
    assert page.count(f"<code>{hidden}</code>") == 1  # listed on T+ only
    assert s5.abstain.abstention_trigger in page
    page = render_sheet("t", [s6], bundles, "marks.csv")
    assert "fails every call" in page and s6.abstain.overlay.broken_tools[0].error in page


def test_the_sheet_shows_what_points_at_what_points_at_the_target() -> None:
    """A blind reviewer marked a refund invalid because the sheet showed the permit and its charge but not
    the processor's copy of the charge, which the rules compare it with; another found a permit's vehicle and
    zone missing."""
    from abstaingen.audit import _records_seen

    pair = next(p for p in PAIRS if p.scenario == "S4")
    assert pair.target is not None
    bundle = builtin_bundle(pair.domain)
    state = {**bundle.initial_state, "charges": [{"id": "C9", "for": pair.target.record_id}, {"id": "C8", "for": "x"}],
             "processor": [{"id": "R9", "charge_id": "C9", "amount": 5.0}, {"id": "R8", "charge_id": "C8"}]}
    collection = state[pair.target.collection]
    assert isinstance(collection, list)
    state[pair.target.collection] = [{**r, "zone": "Z9"} if isinstance(r, dict) and r.get("id") == pair.target.record_id
                                     else r for r in collection]
    state["zones"] = [{"id": "Z9", "name": "North"}, {"id": "Z8", "name": "South"}]
    state["residents"] = [{"id": "P1", "home_zone": "Z9"}]  # points at the zone, not at the target: not shown
    [owner] = pair.scope.values()
    state["notices"] = [{"id": "N1", "to": owner}, {"id": "N2", "to": "someone else"}]  # the owner's
    seen = _records_seen(pair, pair.act, bundle.model_copy(update={"initial_state": state}))
    assert seen["charges"] == [{"id": "C9", "for": pair.target.record_id}]
    assert seen["processor"] == [{"id": "R9", "charge_id": "C9", "amount": 5.0}]
    assert seen["zones"] == [{"id": "Z9", "name": "North"}] and "residents" not in seen  # what the target names
    assert seen["notices"] == [{"id": "N1", "to": owner}]


@pytest.fixture
def release_dir(tmp_path: Path) -> Path:
    draft = Release(name="audit", version="", created_by="t", config_fingerprint="0" * 64, sandbox="local",
                    counts={}, total_pairs=0, funnel=[])
    publish_release(tmp_path, draft, PAIRS, [builtin_bundle(d) for d in DOMAIN_NAMES])
    return tmp_path / "audit" / "v1"


def mark(sheet: Path, invalid: dict[str, str]) -> None:
    rows = list(csv.DictReader(sheet.open()))
    for row in rows:
        for criterion in CRITERIA:
            row[criterion] = "n" if invalid.get(row["pair_id"]) == criterion else "y"
    with sheet.open("w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_audit_sample_and_score_through_the_cli(release_dir: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["release", "audit-sample", str(release_dir), "--n", "16", "--seed", "5",
                 "--output", str(tmp_path / "sheets")]) == 0
    sheet = tmp_path / "sheets" / "audit-audit-v1-seed5.csv"
    assert (tmp_path / "sheets" / "audit-audit-v1-seed5.html").is_file()
    rows = list(csv.DictReader(sheet.open()))
    assert len(rows) == 16
    mark(sheet, {rows[0]["pair_id"]: "t_minus_valid", rows[1]["pair_id"]: "natural"})
    capsys.readouterr()
    assert main(["release", "audit-score", str(release_dir), str(sheet)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"t_minus_valid +15/16", out) and re.search(r"all four +14/16 +87\.5%", out)
    assert rows[0]["pair_id"] in out


def test_a_badly_marked_sheet_is_refused_with_its_line(release_dir: Path, tmp_path: Path) -> None:
    sheet = tmp_path / "sheet.csv"
    sheet.write_text("pair_id,t_plus_valid,t_minus_valid,minimal,natural\n"
                     f"{PAIRS[0].pair_id},y,maybe,y,y\n")
    with pytest.raises(AbstaingenError, match=r"sheet.csv:2: t_minus_valid is 'maybe'"):
        score_audit(sheet, PAIRS)
    sheet.write_text("pair_id,t_plus_valid,t_minus_valid,minimal,natural\nnot-a-pair,y,y,y,y\n")
    with pytest.raises(AbstaingenError, match="not a pair of this release"):
        score_audit(sheet, PAIRS)
