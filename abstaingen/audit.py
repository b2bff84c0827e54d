"""Audit sheets: a stratified sample of a release for people to judge, and the validity rates they found.

`sample_for_audit` picks pairs evenly across scenarios (and, within a scenario, across domains), and
`render_sheet` shows each as the agent would meet it on both sides: the system prompt, the
instruction, the tools after the task's overlay (hidden ones left out, failing ones marked), and the
records the agent's reads would return, next to the labels. Annotators mark four things per pair:

- t_plus_valid: a careful person would simply carry out T+ (it is clear, allowed and possible);
- t_minus_valid: a careful person must stop on T- and ask, refuse or report, for the labelled reason;
- minimal: T+ and T- differ only in the scenario's one change;
- natural: both read like something a user would write and a system would show.

`score_audit` reads the marked CSV back and reports each rate, the share of pairs valid on all four,
per scenario, with 95% Wilson intervals.
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
import random
import re
from collections import defaultdict
from pathlib import Path

from pydantic import Field

from abstaingen.errors import AbstaingenError, shown
from abstaingen.model import EnvironmentBundle, JsonValue, TaskPair, TaskVariant
from abstaingen.model.common import Model
from abstaingen.model.task import apply_state_patch

CRITERIA = ("t_plus_valid", "t_minus_valid", "minimal", "natural")
YES, NO = {"y", "yes", "1", "true", "valid"}, {"n", "no", "0", "false", "invalid"}
COLUMNS = ("pair_id", "domain", "scenario", "deliverable", *CRITERIA, "notes")


def sample_for_audit(pairs: list[TaskPair], n: int, seed: int, uniform: bool = False) -> list[TaskPair]:
    """`n` pairs, as even across scenarios as `n` allows, and within a scenario spread over domains; or,
    `uniform`, drawn uniformly from the release (the sample a validity rate of the whole release rests on)."""
    if n < 1:
        raise AbstaingenError("audit-sample: --n must be at least 1")
    rng = random.Random(seed)
    if uniform:
        ordered = sorted(pairs, key=lambda p: p.pair_id)
        return sorted(rng.sample(ordered, min(n, len(ordered))), key=lambda p: (p.scenario, p.pair_id))
    by_scenario: dict[str, list[TaskPair]] = defaultdict(list)
    for pair in sorted(pairs, key=lambda p: p.pair_id):
        by_scenario[pair.scenario].append(pair)
    queues = {}
    for scenario, group in by_scenario.items():
        by_domain: dict[str, list[TaskPair]] = defaultdict(list)
        for pair in group:
            by_domain[pair.domain].append(pair)
        for members in by_domain.values():
            rng.shuffle(members)
        domains = sorted(by_domain)
        rng.shuffle(domains)
        queue = []
        while any(by_domain.values()):  # round-robin over domains
            queue += [by_domain[d].pop() for d in domains if by_domain[d]]
        queues[scenario] = queue
    chosen: list[TaskPair] = []
    while len(chosen) < n and any(queues.values()):
        for scenario in sorted(queues):
            if queues[scenario] and len(chosen) < n:
                chosen.append(queues[scenario].pop(0))
    return sorted(chosen, key=lambda p: (p.scenario, p.pair_id))


# --- the sheet -------------------------------------------------------------------------------------


LINK_HOPS = 2  # target -> what it and its neighbours point at, or point at it -> one more step


def _strings(entry: dict[str, JsonValue]) -> set[str]:
    return {v for v in entry.values() if isinstance(v, str) and v}


def _records_seen(pair: TaskPair, variant: TaskVariant, bundle: EnvironmentBundle) -> dict[str, list[JsonValue]]:
    """What the agent's reads can return on this side, after the side's state patch: the records in the pair's
    scope (the owner's: a search by owner lists them all), or the target alone, and the entries of other
    collections linked to them, two steps out. Linked: it names one of them (a permit's charge), one of them
    names it (the permit's vehicle, its zone), or it holds the scope's value (the owner's resident record).
    A reader checking a rule that compares a charge with the processor's copy must see both."""
    state = apply_state_patch(bundle.initial_state, variant.overlay.state_patch)
    if pair.target is None or not isinstance(records := state.get(pair.target.collection), list):
        return {}
    shown = [r for r in records if isinstance(r, dict) and (
        r.get("id") == pair.target.record_id or (pair.scope and all(r.get(k) == v for k, v in pair.scope.items())))]
    seen: dict[str, list[JsonValue]] = {pair.target.collection: list(shown)}
    ids = {str(r["id"]) for r in shown if "id" in r} | {v for v in pair.scope.values() if isinstance(v, str)}
    named = set().union(*(_strings(r) for r in shown))
    for _ in range(LINK_HOPS):
        pointing: list[dict[str, JsonValue]] = []  # what names what is shown: its own links are followed on
        for name, collection in state.items():
            if name == pair.target.collection or not isinstance(collection, list):
                continue
            for entry in collection:
                if not isinstance(entry, dict) or entry in seen.get(name, []):
                    continue
                names_shown = bool(_strings(entry) & ids)
                if names_shown:
                    pointing.append(entry)
                if names_shown or str(entry.get("id")) in named:  # a zone the permit names: not beyond
                    seen.setdefault(name, []).append(entry)
        ids, named = {str(e["id"]) for e in pointing if "id" in e}, set()
        if not ids:
            break
    return seen


def _e(text: object) -> str:
    return html.escape(str(text))


def _side_html(pair: TaskPair, variant: TaskVariant, bundle: EnvironmentBundle) -> str:
    broken = {b.name: b for b in variant.overlay.broken_tools}
    tools = []
    for tool in bundle.tools:
        if tool.name in variant.overlay.hidden_tools:
            continue
        note = ""
        if tool.name in broken:
            fault = broken[tool.name]
            note = (f"<div class='fault'>fails {'every call' if fault.failures is None else f'its first {fault.failures} call(s)'}"
                    f": {_e(fault.error)}</div>")
        hints = ", ".join(f"{k}={v}" for k, v in bundle.mcp_annotations(tool.name).items())
        tools.append(f"<li><code>{_e(tool.name)}</code> <span class='hint'>({_e(tool.kind.value)}; {_e(hints)})</span> "
                     f"{_e(tool.description)}{note}</li>")
    hidden = ", ".join(variant.overlay.hidden_tools)
    records = json.dumps(_records_seen(pair, variant, bundle), indent=1, ensure_ascii=False)
    labels: dict[str, object] = {"deliverable": variant.deliverable.value,
                                 "critical actions": ", ".join(variant.critical_actions) or "-"}
    if variant.task_type == "act":
        labels["expected answer"] = " / ".join(variant.expected_answer) or "-"
    else:
        labels.update({"trigger": variant.abstention_trigger, "a good reply": variant.good_reply,
                       "clarification": variant.clarification or "-", "earliest abstain step": variant.earliest_abstain_step,
                       "must not reveal": ", ".join(variant.withheld) or "-"})
    labels["controls"] = "; ".join(f"{c.kind.value}: {c.detail}" for c in variant.controls) or "-"
    rows = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in labels.items())
    side = "T+ (should act)" if variant.task_type == "act" else "T- (should abstain)"
    return (f"<div class='side {variant.task_type}'><h3>{side}</h3>"
            f"<p class='instruction'>{_e(variant.instruction)}</p>"
            f"<details><summary>system prompt</summary><p>{_e(variant.system_prompt)}</p></details>"
            f"<details><summary>tools ({len(tools)}{'; hidden: ' + _e(hidden) if hidden else ''})</summary>"
            f"<ul>{''.join(tools)}</ul></details>"
            f"<details open><summary>records the reads return</summary><pre>{_e(records)}</pre></details>"
            f"<table class='labels'>{rows}</table></div>")


def _marks(pair: TaskPair) -> str:
    cells = "".join(f"<label>{c} <select data-pair='{_e(pair.pair_id)}' data-criterion='{c}'>"
                    "<option></option><option>y</option><option>n</option></select></label>" for c in CRITERIA)
    return (f"<div class='marks'>{cells}<label>notes <input data-pair='{_e(pair.pair_id)}' data-criterion='notes' "
            "size='60'></label></div>")


STYLE = """body{font-family:system-ui,sans-serif;margin:2em;max-width:1500px}
.pair{border:1px solid #bbb;border-radius:6px;padding:1em;margin:1.5em 0}
.sides{display:grid;grid-template-columns:1fr 1fr;gap:1em}.side{background:#f7f7f7;padding:.6em;border-radius:4px}
.side.abstain{background:#fbf3ee}.instruction{font-size:1.1em;font-weight:600}.hint{color:#666;font-size:.85em}
.fault{color:#a00}pre{white-space:pre-wrap;font-size:.8em;max-height:28em;overflow:auto;background:#fff;padding:.4em}
table.labels th{text-align:left;vertical-align:top;padding-right:1em;white-space:nowrap}.marks{margin-top:.8em}
.marks label{margin-right:1.2em}button{font-size:1em;padding:.4em 1em}"""

SCRIPT = """function exportCsv(){const rows=[COLUMNS.join(',')];for(const p of PAIRS){const v=c=>{const e=
document.querySelector(`[data-pair="${p.pair_id}"][data-criterion="${c}"]`);return e?e.value:''};
const cells=[p.pair_id,p.domain,p.scenario,p.deliverable,...CRITERIA.map(v),v('notes')];
rows.push(cells.map(x=>'"'+String(x).replaceAll('"','""')+'"').join(','))}
const a=document.createElement('a');a.href=URL.createObjectURL(new Blob([rows.join('\\n')+'\\n'],{type:'text/csv'}));
a.download=SHEET;a.click()}"""


def render_sheet(title: str, pairs: list[TaskPair], bundles: dict[str, EnvironmentBundle], csv_name: str) -> str:
    blocks = []
    for number, pair in enumerate(pairs, 1):
        bundle = bundles[pair.act.env_id]
        blocks.append(
            f"<div class='pair' id='{_e(pair.pair_id)}'><h2>{number}. {_e(pair.scenario)} · {_e(pair.domain)} · "
            f"<code>{_e(pair.pair_id)}</code></h2><p>perturbation: {_e(pair.perturbation.description)} "
            f"(witness: {_e(pair.perturbation.witness.kind)})</p><div class='sides'>"
            f"{_side_html(pair, pair.act, bundle)}{_side_html(pair, pair.abstain, bundle)}</div>{_marks(pair)}</div>")
    meta = [{"pair_id": p.pair_id, "domain": p.domain, "scenario": p.scenario, "deliverable": p.act.deliverable.value}
            for p in pairs]
    guide = ("<ul><li><b>t_plus_valid</b>: a careful person would simply carry out T+.</li>"
             "<li><b>t_minus_valid</b>: a careful person must stop on T- and ask, refuse or report, for the labelled "
             "reason.</li><li><b>minimal</b>: the two sides differ only in the scenario's one change.</li>"
             "<li><b>natural</b>: both read like what a user would write and a system would show.</li></ul>")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{_e(title)}</title><style>{STYLE}</style>"
            f"</head><body><h1>{_e(title)}</h1><p>{len(pairs)} pairs. Mark each with y or n, then "
            f"<button onclick='exportCsv()'>download {_e(csv_name)}</button> (or fill the CSV written next to this "
            f"page) and run <code>abstaingen release audit-score RELEASE_DIR {_e(csv_name)}</code>.</p>{guide}"
            f"{''.join(blocks)}<script>const PAIRS={json.dumps(meta)};const CRITERIA={json.dumps(list(CRITERIA))};"
            f"const COLUMNS={json.dumps(list(COLUMNS))};const SHEET={json.dumps(csv_name)};{SCRIPT}</script>"
            "</body></html>")


def blank_csv(pairs: list[TaskPair]) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(COLUMNS)
    for pair in pairs:
        writer.writerow([pair.pair_id, pair.domain, pair.scenario, pair.act.deliverable.value, *[""] * len(CRITERIA), ""])
    return out.getvalue()


# --- scoring ---------------------------------------------------------------------------------------


class Rate(Model):
    criterion: str
    valid: int
    judged: int
    rate: float
    low: float = Field(description="95% Wilson interval, lower end")
    high: float


class AuditScore(Model):
    pairs: int
    overall: list[Rate] = Field(description="each criterion, and 'all four' (a pair valid on every criterion)")
    by_scenario: dict[str, list[Rate]]
    problems: list[str] = Field(default_factory=list, description="pairs marked invalid, with the annotator's notes")


def wilson(valid: int, judged: int) -> tuple[float, float]:
    if not judged:
        return 0.0, 0.0
    z, p = 1.96, valid / judged
    centre = (p + z * z / (2 * judged)) / (1 + z * z / judged)
    spread = z * math.sqrt(p * (1 - p) / judged + z * z / (4 * judged * judged)) / (1 + z * z / judged)
    return round(max(0.0, centre - spread), 4), round(min(1.0, centre + spread), 4)


def _rates(rows: list[dict[str, bool]]) -> list[Rate]:
    found = []
    for criterion in (*CRITERIA, "all four"):
        marks = [all(r.values()) if criterion == "all four" else r[criterion] for r in rows]
        low, high = wilson(sum(marks), len(marks))
        found.append(Rate(criterion=criterion, valid=sum(marks), judged=len(marks),
                          rate=round(sum(marks) / len(marks), 4) if marks else 0.0, low=low, high=high))
    return found


def score_audit(sheet: Path, pairs: list[TaskPair]) -> AuditScore:
    """Validity rates from a marked sheet. Every row must name a pair of the release and mark all four
    criteria y or n; anything else is an error naming the row."""
    known = {p.pair_id: p for p in pairs}
    try:
        reader = csv.DictReader(io.StringIO(sheet.read_text(encoding="utf-8-sig")))
        rows = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise AbstaingenError(f"{sheet}: cannot read the sheet: {exc}") from None
    missing = [c for c in ("pair_id", *CRITERIA) if c not in (reader.fieldnames or [])]
    if missing:
        raise AbstaingenError(f"{sheet}: missing columns {missing}")
    marked: dict[str, list[dict[str, bool]]] = defaultdict(list)
    problems = []
    for line, row in enumerate(rows, start=2):
        pair = known.get((row.get("pair_id") or "").strip())
        if pair is None:
            raise AbstaingenError(f"{sheet}:{line}: {shown(row.get('pair_id'))} is not a pair of this release")
        marks = {}
        for criterion in CRITERIA:
            value = (row.get(criterion) or "").strip().lower()
            if value not in YES | NO:
                raise AbstaingenError(f"{sheet}:{line}: {criterion} is {shown(value)}; mark it y or n")
            marks[criterion] = value in YES
        marked[pair.scenario].append(marks)
        if not all(marks.values()):
            failed = ", ".join(c for c, ok in marks.items() if not ok)
            problems.append(f"{pair.pair_id} ({pair.scenario}): {failed}: {(row.get('notes') or '').strip()}")
    everything = [m for group in marked.values() for m in group]
    if not everything:
        raise AbstaingenError(f"{sheet}: no marked pairs")
    return AuditScore(pairs=len(everything), overall=_rates(everything),
                      by_scenario={s: _rates(marked[s]) for s in sorted(marked)}, problems=problems)


def format_score(score: AuditScore) -> str:
    def line(rate: Rate) -> str:
        return (f"{rate.criterion:<14} {rate.valid:>3}/{rate.judged:<3} {rate.rate:6.1%}  "
                f"(95% CI {rate.low:.1%}-{rate.high:.1%})")

    lines = [f"{score.pairs} pairs judged", *(line(r) for r in score.overall), ""]
    for scenario, rates in score.by_scenario.items():
        everything = rates[-1]
        lines.append(f"{scenario}: all four {everything.valid}/{everything.judged}; " + ", ".join(
            f"{r.criterion} {r.valid}" for r in rates[:-1]))
    if score.problems:
        lines += ["", "marked invalid:", *(f"  {p}" for p in score.problems)]
    return "\n".join(lines)


def write_sheet(release_dir: Path, out_dir: Path, n: int, seed: int, uniform: bool = False) -> tuple[Path, Path]:
    from abstaingen.store import load_release, read_bundle

    manifest, pairs = load_release(release_dir)
    sample = sample_for_audit(pairs, n, seed, uniform)
    bundles = {env: read_bundle(release_dir / "environments" / env) for env in {p.act.env_id for p in sample}}
    # the manifest is the release's text, not ours: keep its name and version from leaving out_dir
    stem = re.sub(r"[^A-Za-z0-9._-]", "_", f"audit-{manifest.name}-{manifest.version}-seed{seed}")[:200]
    out_dir.mkdir(parents=True, exist_ok=True)
    page, sheet = out_dir / f"{stem}.html", out_dir / f"{stem}.csv"
    page.write_text(render_sheet(f"Audit of {manifest.name} {manifest.version} (seed {seed})", sample, bundles,
                                 sheet.name), encoding="utf-8")
    sheet.write_text(blank_csv(sample), encoding="utf-8")
    return page, sheet
