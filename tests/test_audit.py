"""Audit sheets: a stratified sample people can judge, and the validity rates their marks give."""

from __future__ import annotations

import csv
import html
import json
import re
from pathlib import Path

import pytest
from builtin_fixtures import builtin_bundle, builtin_pair

from abstaingen.audit import (
    BLIND_COLUMNS,
    CRITERIA,
    GAP,
    blind_sides,
    key_csv,
    render_blind_sheet,
    render_reference,
    render_sheet,
    sample_for_audit,
    score_audit,
)
from abstaingen.errors import AbstaingenError
from abstaingen.flows.cli import main
from abstaingen.generators.builtin.domains import DOMAINS
from abstaingen.model import Release, Scenario, TaskPair
from abstaingen.store import publish_release

DOMAIN_NAMES = sorted(DOMAINS)[:4]
PAIRS = [builtin_pair(s, v, d) for d in DOMAIN_NAMES for s in Scenario for v in range(3)]


def test_the_sample_is_even_across_scenarios_spread_over_deliverables_and_domains_and_seeded() -> None:
    sample = sample_for_audit(PAIRS, 16, seed=3)
    assert len(sample) == 16
    by_scenario = {s.value: [p for p in sample if p.scenario == s.value] for s in Scenario}
    assert all(len(group) == 2 for group in by_scenario.values())
    assert all(len({p.domain for p in group}) == 2 for group in by_scenario.values())
    both = {p.scenario for p in PAIRS if p.act.deliverable == "info"}
    assert both and all({p.act.deliverable.value for p in by_scenario[s]} == {"op", "info"} for s in both)
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
    write_rows(sheet, rows)


def write_rows(sheet: Path, rows: list[dict[str, str]]) -> None:
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


# --- the blind sheet -------------------------------------------------------------------------------

SAMPLE = sample_for_audit(PAIRS, 24, seed=2)
BUNDLES = {p.act.env_id: builtin_bundle(p.domain) for p in PAIRS}


def side_html(page: str, pair_id: str, letter: str) -> str:
    """What the page shows on one side of one pair."""
    block = page.split(f"<div class='pair' id='{pair_id}'>")[1].split("<div class='pair'")[0]
    return block.split(f"<h3>Side {letter}</h3>")[1].split("<h3>Side ")[0].split("<div class='marks'>")[0]


def side_text(page: str, pair_id: str, letter: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", side_html(page, pair_id, letter).replace(GAP, "")))


def test_a_blind_sheet_and_its_reference_page_carry_no_labels() -> None:
    pages = [render_blind_sheet("t", SAMPLE, BUNDLES, 2, "marks.csv", "ref.html"), render_reference("t", SAMPLE, 2)]
    for page in pages:
        text = html.unescape(re.sub(r"</?mark>", "", page.replace(GAP, ""))).replace("abstain_side", "")  # the column
        for pair in SAMPLE:  # what the agent is told may say anything: "You act on the user's behalf"
            for told in (pair.act.system_prompt, pair.abstain.system_prompt, pair.act.instruction,
                         pair.abstain.instruction):
                text = text.replace(told, "")
        assert not re.search(r"(?i)\bact\b|abstain|\bT[+\-\u2212]|should (act|stop)|trigger|good.reply|"
                             r"clarification|earliest|controls|perturbation|witness", text)
        for pair in SAMPLE:
            assert pair.perturbation.description not in text
            for side in (pair.act, pair.abstain):
                hidden = [side.task_id, side.template, side.abstention_trigger, side.good_reply, side.clarification,
                          *(c.detail for c in side.controls)]
                assert not [h for h in hidden if h and h in text], pair.pair_id
    sheet = pages[0]
    assert "<a href='ref.html'>" in sheet and "key" not in sheet.lower()
    assert "<h3>Side A</h3>" in sheet and "<h3>Side B</h3>" in sheet


def test_blind_sides_are_shuffled_by_the_seed_and_the_key_names_them() -> None:
    orders = {seed: [blind_sides(p, seed)[0].task_type for p in SAMPLE] for seed in (2, 3)}
    assert set(orders[2]) == {"act", "abstain"} and orders[2] != orders[3]
    assert orders[2] == [blind_sides(p, 2)[0].task_type for p in SAMPLE]
    assert key_csv(SAMPLE, 2) == key_csv(SAMPLE, 2) != key_csv(SAMPLE, 3)
    key = {r["pair_id"]: r for r in csv.DictReader(key_csv(SAMPLE, 2).splitlines())}
    page = render_blind_sheet("t", SAMPLE, BUNDLES, 2, "marks.csv", "ref.html")
    changed = [p for p in SAMPLE if p.act.instruction != p.abstain.instruction]
    assert {key[p.pair_id]["abstain_side"] for p in changed} == {"A", "B"}
    for pair in SAMPLE:
        row = key[pair.pair_id]
        assert {row["act_side"], row["abstain_side"]} == {"A", "B"} and row["scenario"] == pair.scenario
        if pair in changed:  # the side the key calls the abstain side shows T-'s instruction
            assert pair.abstain.instruction in side_text(page, pair.pair_id, row["abstain_side"])
            assert pair.act.instruction in side_text(page, pair.pair_id, row["act_side"])


def letter(pair: TaskPair, task_type: str, seed: int) -> str:
    return "A" if blind_sides(pair, seed)[0].task_type == task_type else "B"


def test_a_blind_sheet_marks_what_differs_and_shows_the_tools_inputs() -> None:
    s4 = next(p for p in PAIRS if p.scenario == "S4" and len(p.act.instruction) == len(p.abstain.instruction))
    s5, s7 = (next(p for p in PAIRS if p.scenario == s and p.domain == s4.domain) for s in ("S5", "S7"))
    page = render_blind_sheet("t", [s4, s5, s7], BUNDLES, 0, "marks.csv", "ref.html")
    instructions = re.findall(r"<p class='instruction'>(.*?)</p>", page)
    for side, shown in zip(blind_sides(s4, 0), instructions[:2], strict=True):  # an amount changed: it, and no more
        other = (s4.abstain if side is s4.act else s4.act).instruction.split()
        marked = " ".join(html.unescape(m) for m in re.findall(r"<mark>(.*?)</mark>", shown)).split()
        assert marked and marked == [w for w in side.instruction.split() if w not in other]
    hidden = s5.abstain.overlay.hidden_tools[0]
    assert f"{hidden} offered on Side {letter(s5, 'act', 0)} only" in page
    assert page.count(f"<mark><code>{hidden}</code>") == 1  # marked on the side that has it, absent on the other
    assert f"<code>{hidden}</code>" not in side_html(page, s5.pair_id, letter(s5, "abstain", 0))
    [patch] = s7.abstain.overlay.state_patch
    [(field, value)] = patch.values.items()
    assert f"records: {patch.collection}/{patch.record_id}.{field}" in page
    assert f"<mark>{html.escape(json.dumps(field))}: {html.escape(json.dumps(value))}</mark>" in page
    find = next(t for t in BUNDLES[s4.act.env_id].tools if len(t.input_schema.get("properties") or {}) > 2)
    assert f"<code>{find.name}</code>(" + ", ".join(f"<code>{name}</code>" for name in find.input_schema[
        "properties"]) not in page  # each input with its type
    assert re.search(rf"<code>{find.name}</code>\((<code>\w+</code>\*?: \w+(, )?)+\)", page)
    reference = render_reference("t", [s4], 0)
    [check, *_] = s4.act.final_state
    assert (f"{check.collection}/{check.record_id}.{check.field} == {json.dumps(check.equals)}"
            in side_text(reference, s4.pair_id, letter(s4, "act", 0)))


def fill_blind(sheet: Path, key: Path, wrong: tuple[str, ...] = (), neither: tuple[str, ...] = ()) -> list[dict[str, str]]:
    answers = {r["pair_id"]: r["abstain_side"] for r in csv.DictReader(key.open())}
    rows = list(csv.DictReader(sheet.open()))
    for row in rows:
        right = answers[row["pair_id"]]
        said = "neither" if row["pair_id"] in neither else {"A": "B", "B": "A"}[right] if row["pair_id"] in wrong else right
        row.update(abstain_side=said, minimal="y", natural="y")
    write_rows(sheet, rows)
    return rows


def test_a_blind_sheet_through_the_cli_is_scored_against_its_key(release_dir: Path, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sheets"
    assert main(["release", "audit-sample", str(release_dir), "--n", "16", "--seed", "5", "--blind",
                 "--output", str(out)]) == 0
    stem = "audit-audit-v1-seed5-blind"
    assert sorted(p.name for p in out.iterdir()) == [f"{stem}-key.csv", f"{stem}-reference.html", f"{stem}.csv",
                                                     f"{stem}.html"]
    assert "key (keep it from the annotators)" in capsys.readouterr().out
    assert f"<a href='{stem}-reference.html'>" in (out / f"{stem}.html").read_text()
    sheet, key = out / f"{stem}.csv", out / f"{stem}-key.csv"
    rows = list(csv.DictReader(sheet.open()))
    assert tuple(rows[0]) == BLIND_COLUMNS and len(rows) == 16
    fill_blind(sheet, key)
    assert main(["release", "audit-score", str(release_dir), str(sheet)]) == 0  # the key next to the sheet
    assert re.search(r"label right +16/16 +100\.0% +\(95% CI 80\.6%-100\.0%\)", capsys.readouterr().out)
    moved = tmp_path / "elsewhere.csv"
    key.rename(moved)
    fill_blind(sheet, moved, wrong=(rows[3]["pair_id"],))
    assert main(["release", "audit-score", str(release_dir), str(sheet), "--key", str(moved)]) == 0
    printed = capsys.readouterr().out
    assert re.search(r"label right +15/16 +93\.8%", printed) and re.search(r"all three +15/16", printed)
    assert re.search(r"minimal +16/16", printed)
    right = {r["pair_id"]: r["abstain_side"] for r in csv.DictReader(moved.open())}[rows[3]["pair_id"]]
    assert f"{rows[3]['pair_id']} ({rows[3]['scenario']}): abstain_side {'AB'.replace(right, '')}, the key's {right}: " \
        in printed
    assert re.search(rf"{rows[3]['scenario']}: all three 1/2; label right 1, minimal 2, natural 2", printed)
    fill_blind(sheet, moved, neither=(rows[5]["pair_id"],))  # neither side should be stopped on: the label is wrong
    assert main(["release", "audit-score", str(release_dir), str(sheet), "--key", str(moved)]) == 0
    printed = capsys.readouterr().out
    assert re.search(r"label right +15/16", printed) and f"{rows[5]['pair_id']} ({rows[5]['scenario']}): " \
        "abstain_side NEITHER, the key's" in printed
    assert main(["release", "audit-score", str(release_dir), str(sheet)]) == 2  # no key next to it any more
    assert "no such key" in capsys.readouterr().err


def test_a_badly_marked_blind_sheet_is_refused_with_its_line(tmp_path: Path) -> None:
    sheet, key = tmp_path / "sheet.csv", tmp_path / "sheet-key.csv"
    key.write_text(key_csv(PAIRS[:2], 1))
    header = ",".join(BLIND_COLUMNS)
    for value, shown in (("", "''"), ("C", "'C'"), ("A or B", "'A or B'")):
        sheet.write_text(f"{header}\n{PAIRS[0].pair_id},d,s,op,A,y,y,\n{PAIRS[1].pair_id},d,s,op,{value},y,y,\n")
        with pytest.raises(AbstaingenError, match=rf"sheet.csv:3: abstain_side is {shown}; mark it A, B, neither or both$"):
            score_audit(sheet, PAIRS)
    sheet.write_text(f"{header}\n{PAIRS[2].pair_id},d,s,op,A,y,y,\n")
    with pytest.raises(AbstaingenError, match=r"sheet.csv:2: .* is not in the key"):
        score_audit(sheet, PAIRS)
    plain = tmp_path / "plain.csv"
    plain.write_text(f"pair_id,{','.join(CRITERIA)}\n{PAIRS[0].pair_id},y,y,y,y\n")
    with pytest.raises(AbstaingenError, match="no abstain_side column"):
        score_audit(plain, PAIRS, key)


def test_a_blind_sheet_says_which_records_a_side_cannot_read() -> None:
    """An S6 question whose record reads fail on every call: the records are shown, and so is that they are not
    readable on that side (only there)."""
    s6 = next(p for p in PAIRS if p.scenario == "S6" and p.act.deliverable == "info")
    page = render_blind_sheet("t", [s6], BUNDLES, 0, "marks.csv", "ref.html")
    read = s6.act.reference_dag.nodes[1].tool
    stopped, done = side_html(page, s6.pair_id, letter(s6, "abstain", 0)), side_html(page, s6.pair_id, letter(s6, "act", 0))
    assert f"{read} fails on every call" in stopped and "the agent cannot read what only those return" in stopped
    assert "cannot read" not in done
