"""Audit sheets: a stratified sample of a release for people to judge, and the validity rates they found.

`sample_for_audit` picks pairs evenly across scenarios (and, within a scenario, across deliverables and
domains), and `render_sheet` shows each as the agent would meet it on both sides: the system prompt, the
instruction, the tools after the task's overlay (hidden ones left out, failing ones marked), and the
records the agent's reads would return, next to the labels. Annotators mark four things per pair:

- t_plus_valid: a careful person would simply carry out T+ (it is clear, allowed and possible);
- t_minus_valid: a careful person must stop on T- and ask, refuse or report, for the labelled reason;
- minimal: T+ and T- differ only in the scenario's one change;
- natural: both read like something a user would write and a system would show.

A blind sheet (`render_blind_sheet`) shows no labels: each pair's sides are Side A and Side B in an order
drawn from the seed (`blind_sides`), with what differs between them marked, and annotators say which side
the agent should stop on (`abstain_side`) besides minimal and natural. The key (`key_csv`) and the
sides' reference solutions (`render_reference`) are written apart from the sheet.

`score_audit` reads the marked CSV back and reports each rate, the share of pairs valid on all four,
per scenario, with 95% Wilson intervals; on a blind sheet, the share whose abstain_side matches the key
("label right") takes the place of t_plus_valid and t_minus_valid.
"""

from __future__ import annotations

import csv
import difflib
import html
import io
import json
import math
import random
import re
from collections import Counter, defaultdict
from pathlib import Path

from pydantic import Field

from abstaingen.errors import AbstaingenError, shown
from abstaingen.model import (
    SCENARIOS,
    BrokenTool,
    DagNode,
    EnvironmentBundle,
    JsonValue,
    TaskPair,
    TaskVariant,
    ToolKind,
    ToolSpec,
)
from abstaingen.model.common import Model
from abstaingen.model.task import apply_state_patch

LABELS, QUALITIES = ("t_plus_valid", "t_minus_valid"), ("minimal", "natural")
CRITERIA = (*LABELS, *QUALITIES)
BLIND_CRITERIA = ("abstain_side", *QUALITIES)  # abstain_side: which side, A or B, the agent should stop on
YES, NO = {"y", "yes", "1", "true", "valid"}, {"n", "no", "0", "false", "invalid"}
SIDES = ("A", "B")
ANSWERS = (*SIDES, "NEITHER", "BOTH")  # an annotator may find that neither side, or both, should be stopped on
LABEL_RIGHT = "label right"  # a blind sheet's abstain_side names the key's letter


def columns(criteria: tuple[str, ...]) -> tuple[str, ...]:
    return ("pair_id", "domain", "scenario", "deliverable", *criteria, "notes")


COLUMNS, BLIND_COLUMNS = columns(CRITERIA), columns(BLIND_CRITERIA)
KEY_COLUMNS = ("pair_id", "scenario", "act_side", "abstain_side")


def sample_for_audit(pairs: list[TaskPair], n: int, seed: int, uniform: bool = False) -> list[TaskPair]:
    """`n` pairs, as even across scenarios as `n` allows, and within a scenario spread over deliverables (op and
    info) and domains; or, `uniform`, drawn uniformly from the release (the sample a validity rate of the whole
    release rests on)."""
    if n < 1:
        raise AbstaingenError("audit-sample: --n must be at least 1")
    rng = random.Random(seed)
    if uniform:
        ordered = sorted(pairs, key=lambda p: p.pair_id)
        return sorted(rng.sample(ordered, min(n, len(ordered))), key=lambda p: (p.scenario, p.pair_id))
    by_scenario: dict[str, list[TaskPair]] = defaultdict(list)
    for pair in sorted(pairs, key=lambda p: p.pair_id):
        by_scenario[pair.scenario].append(pair)
    queues = {scenario: _spread(group, rng) for scenario, group in by_scenario.items()}
    chosen: list[TaskPair] = []
    while len(chosen) < n and any(queues.values()):
        for scenario in sorted(queues):
            if queues[scenario] and len(chosen) < n:
                chosen.append(queues[scenario].pop(0))
    return sorted(chosen, key=lambda p: (p.scenario, p.pair_id))


def _spread(group: list[TaskPair], rng: random.Random) -> list[TaskPair]:
    """A scenario's pairs in the order the sample takes them: turn about over its deliverables, each turn the
    deliverable's pair of the domain taken least so far (ties at random)."""
    by_deliverable: dict[str, list[TaskPair]] = defaultdict(list)
    for pair in group:
        by_deliverable[pair.act.deliverable.value].append(pair)
    for members in by_deliverable.values():
        rng.shuffle(members)
    turns = sorted(by_deliverable)
    rng.shuffle(turns)
    taken: Counter[str] = Counter()
    queue = []
    while any(by_deliverable.values()):
        for deliverable in turns:
            if members := by_deliverable[deliverable]:
                pair = min(members, key=lambda p: taken[p.domain])
                members.remove(pair)
                taken[pair.domain] += 1
                queue.append(pair)
    return queue


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


def _faults(variant: TaskVariant) -> dict[str, BrokenTool]:
    return {b.name: b for b in variant.overlay.broken_tools}


def _inputs(tool: ToolSpec) -> str:
    """The arguments a tool takes and their types (a lookup's filters), required ones starred."""
    properties, required = tool.input_schema.get("properties"), tool.input_schema.get("required")
    if not isinstance(properties, dict) or not properties:
        return "()"
    needed = required if isinstance(required, list) else []
    shown_args = []
    for name, schema in properties.items():
        kind = (schema.get("enum") or schema.get("type")) if isinstance(schema, dict) else None
        text = " | ".join(map(str, kind)) if isinstance(kind, list) else str(kind or "")
        shown_args.append(f"<code>{_e(name)}</code>{'*' if name in needed else ''}{': ' + _e(text) if text else ''}")
    return f"({', '.join(shown_args)})"


def _tool_item(bundle: EnvironmentBundle, tool: ToolSpec, fault: BrokenTool | None, with_inputs: bool = False,
               differs: bool = False) -> str:
    note = ""
    if fault is not None:
        note = (f"<div class='fault'>fails {'every call' if fault.failures is None else f'its first {fault.failures} call(s)'}"
                f": {_e(fault.error)}</div>")
    hints = ", ".join(f"{k}={v}" for k, v in bundle.mcp_annotations(tool.name).items())
    name = f"<code>{_e(tool.name)}</code>{_inputs(tool) if with_inputs else ''}"
    return (f"<li>{f'<mark>{name}</mark>' if differs else name} <span class='hint'>({_e(tool.kind.value)}; "
            f"{_e(hints)})</span> {_e(tool.description)}{note}</li>")


def _side_html(pair: TaskPair, variant: TaskVariant, bundle: EnvironmentBundle) -> str:
    broken = _faults(variant)
    tools = [_tool_item(bundle, tool, broken.get(tool.name)) for tool in bundle.tools
             if tool.name not in variant.overlay.hidden_tools]
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


def _marks(pair: TaskPair, choices: dict[str, tuple[str, ...]]) -> str:
    cells = "".join(f"<label>{c} <select data-pair='{_e(pair.pair_id)}' data-criterion='{c}'><option></option>"
                    + "".join(f"<option>{o}</option>" for o in options) + "</select></label>"
                    for c, options in choices.items())
    return (f"<div class='marks'>{cells}<label>notes <input data-pair='{_e(pair.pair_id)}' data-criterion='notes' "
            "size='60'></label></div>")


STYLE = """body{font-family:system-ui,sans-serif;margin:2em;max-width:1500px}
.pair{border:1px solid #bbb;border-radius:6px;padding:1em;margin:1.5em 0}
.sides{display:grid;grid-template-columns:1fr 1fr;gap:1em}.side{background:#f7f7f7;padding:.6em;border-radius:4px}
.instruction{font-size:1.1em;font-weight:600}.hint{color:#666;font-size:.85em}
.fault{color:#a00}pre{white-space:pre-wrap;font-size:.8em;max-height:28em;overflow:auto;background:#fff;padding:.4em}
.marks{margin-top:.8em}.marks label{margin-right:1.2em}button{font-size:1em;padding:.4em 1em}mark{background:#ffe27a}"""
LABELLED_STYLE = """.side.abstain{background:#fbf3ee}
table.labels th{text-align:left;vertical-align:top;padding-right:1em;white-space:nowrap}"""  # the labelled sheet's

SCRIPT = """function exportCsv(){const rows=[COLUMNS.join(',')];for(const p of PAIRS){const v=c=>{const e=
document.querySelector(`[data-pair="${p.pair_id}"][data-criterion="${c}"]`);return e?e.value:''};
const cells=[p.pair_id,p.domain,p.scenario,p.deliverable,...CRITERIA.map(v),v('notes')];
rows.push(cells.map(x=>'"'+String(x).replaceAll('"','""')+'"').join(','))}
const a=document.createElement('a');a.href=URL.createObjectURL(new Blob([rows.join('\\n')+'\\n'],{type:'text/csv'}));
a.download=SHEET;a.click()}"""


def _js(value: object) -> str:
    return json.dumps(value).replace("</", "<\\/")  # a release's text cannot close the script


def _document(title: str, body: str, script: str = "", style: str = "") -> str:
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{_e(title)}</title><style>{STYLE}{style}</style>"
            f"</head><body><h1>{_e(title)}</h1>{body}{f'<script>{script}</script>' if script else ''}</body></html>")


def _export_script(pairs: list[TaskPair], criteria: tuple[str, ...], csv_name: str) -> str:
    meta = [{"pair_id": p.pair_id, "domain": p.domain, "scenario": p.scenario, "deliverable": p.act.deliverable.value}
            for p in pairs]
    return (f"const PAIRS={_js(meta)};const CRITERIA={_js(list(criteria))};"
            f"const COLUMNS={_js(list(columns(criteria)))};const SHEET={_js(csv_name)};{SCRIPT}")


def render_sheet(title: str, pairs: list[TaskPair], bundles: dict[str, EnvironmentBundle], csv_name: str) -> str:
    blocks = []
    for number, pair in enumerate(pairs, 1):
        bundle = bundles[pair.act.env_id]
        blocks.append(
            f"<div class='pair' id='{_e(pair.pair_id)}'><h2>{number}. {_e(pair.scenario)} · {_e(pair.domain)} · "
            f"<code>{_e(pair.pair_id)}</code></h2><p>perturbation: {_e(pair.perturbation.description)} "
            f"(witness: {_e(pair.perturbation.witness.kind)})</p><div class='sides'>"
            f"{_side_html(pair, pair.act, bundle)}{_side_html(pair, pair.abstain, bundle)}</div>"
            f"{_marks(pair, dict.fromkeys(CRITERIA, ('y', 'n')))}</div>")
    guide = ("<ul><li><b>t_plus_valid</b>: a careful person would simply carry out T+.</li>"
             "<li><b>t_minus_valid</b>: a careful person must stop on T- and ask, refuse or report, for the labelled "
             "reason.</li><li><b>minimal</b>: the two sides differ only in the scenario's one change.</li>"
             "<li><b>natural</b>: both read like what a user would write and a system would show.</li></ul>")
    return _document(title, f"<p>{len(pairs)} pairs. Mark each with y or n, then "
                     f"<button onclick='exportCsv()'>download {_e(csv_name)}</button> (or fill the CSV written next to "
                     f"this page) and run <code>abstaingen release audit-score RELEASE_DIR {_e(csv_name)}</code>.</p>"
                     f"{guide}{''.join(blocks)}", _export_script(pairs, CRITERIA, csv_name), LABELLED_STYLE)


def blank_csv(pairs: list[TaskPair], criteria: tuple[str, ...] = CRITERIA) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(columns(criteria))
    for pair in pairs:
        writer.writerow([pair.pair_id, pair.domain, pair.scenario, pair.act.deliverable.value, *[""] * len(criteria),
                         ""])
    return out.getvalue()


# --- the blind sheet -------------------------------------------------------------------------------


def blind_sides(pair: TaskPair, seed: int) -> tuple[TaskVariant, TaskVariant]:
    """The pair's sides as (Side A, Side B): a coin drawn from the sample's seed and the pair's id, so a seed
    orders a pair the same way whatever else is in the sample."""
    act_first = random.Random(f"{seed}/{pair.pair_id}").random() < 0.5
    return (pair.act, pair.abstain) if act_first else (pair.abstain, pair.act)


GAP = "<mark title='the other side has words here'>…</mark>"


def _word_marks(one: str, other: str) -> str:
    """`one`, escaped, with the words where it differs from `other` in <mark>, and a marked gap where `other`
    has words that `one` lacks."""
    mine, theirs = re.split(r"(\s+)", one), re.split(r"(\s+)", other)
    out = []
    for op, start, end, their_start, their_end in difflib.SequenceMatcher(None, mine, theirs,
                                                                           autojunk=False).get_opcodes():
        text = _e("".join(mine[start:end]))
        if op == "insert":
            out.append(GAP if "".join(theirs[their_start:their_end]).strip() else "")
        elif op == "equal" or not text.strip():
            out.append(text)
        else:  # the spaces around the words stay outside the mark
            out.append(re.sub(r"^(\s*)(.*?)(\s*)$", r"\1<mark>\2</mark>\3", text, flags=re.S))
    return "".join(out)


def _record_key(record: dict[str, JsonValue]) -> str:
    return str(record["id"]) if "id" in record else json.dumps(record, sort_keys=True)


def _records_marked(seen: dict[str, list[JsonValue]], other: dict[str, list[JsonValue]]) -> tuple[str, list[str]]:
    """`seen` one record a line, with the records and fields `other` lacks or holds otherwise in <mark>; and where
    the two differ, as 'collection/id' or 'collection/id.field'."""
    lines, differs = [], []
    for name, records in seen.items():
        theirs = {_record_key(r): r for r in other.get(name, []) if isinstance(r, dict)}
        lines.append(f"<b>{_e(name)}</b>")
        for record in records:
            if not isinstance(record, dict):
                continue
            key, twin = _record_key(record), theirs.get(_record_key(record))
            cells = []
            for field, value in record.items():
                cell = _e(f"{json.dumps(field, ensure_ascii=False)}: {json.dumps(value, ensure_ascii=False)}")
                if twin is not None and (field not in twin or twin[field] != value):
                    differs.append(f"{name}/{key}.{field}")
                    cell = f"<mark>{cell}</mark>"
                cells.append(cell)
            if twin is not None:
                differs += [f"{name}/{key}.{field}" for field in twin if field not in record]
            else:
                differs.append(f"{name}/{key}")
            line = "{" + ", ".join(cells) + "}"
            lines.append(line if twin is not None else f"<mark>{line}</mark>")
    return "\n".join(lines), differs


def _tool_differences(a: TaskVariant, b: TaskVariant) -> list[str]:
    found = []
    for letter, side, other in (("A", a, b), ("B", b, a)):
        only = [t for t in other.overlay.hidden_tools if t not in side.overlay.hidden_tools]
        found += [f"{name} offered on Side {letter} only" for name in only]
    faults_a, faults_b = _faults(a), _faults(b)
    for name in sorted(set(faults_a) | set(faults_b)):
        if faults_a.get(name) != faults_b.get(name):
            where = "A" if name not in faults_b else "B" if name not in faults_a else ""
            found.append(f"{name} fails on Side {where} only" if where else f"{name} fails differently")
    return found


def _blind_side_html(letter: str, variant: TaskVariant, other: TaskVariant, bundle: EnvironmentBundle,
                     records: str) -> str:
    broken, theirs = _faults(variant), _faults(other)

    def differs(name: str) -> bool:  # the other side does not offer it, or it fails otherwise there
        return name in other.overlay.hidden_tools or broken.get(name) != theirs.get(name)

    tools = [_tool_item(bundle, tool, broken.get(tool.name), with_inputs=True, differs=differs(tool.name))
             for tool in bundle.tools if tool.name not in variant.overlay.hidden_tools]
    tools_differ = set(variant.overlay.hidden_tools) != set(other.overlay.hidden_tools) or broken != theirs
    prompt_differs = variant.system_prompt != other.system_prompt
    unread = _unreadable(variant, bundle)
    return (f"<div class='side'><h3>Side {letter}</h3>"
            f"<p class='instruction'>{_word_marks(variant.instruction, other.instruction)}</p>"
            f"<details{' open' if prompt_differs else ''}><summary>system prompt</summary>"
            f"<p>{_word_marks(variant.system_prompt, other.system_prompt)}</p></details>"
            f"<details{' open' if tools_differ else ''}><summary>tools ({len(tools)}; * marks a required "
            f"input)</summary><ul>{''.join(tools)}</ul></details>"
            f"<details open><summary>records the reads return</summary>"
            + (f"<p class='unread'><mark>{_e(unread)}</mark></p>" if unread else "")
            + f"<pre>{records}</pre></details></div>")


def _unreadable(variant: TaskVariant, bundle: EnvironmentBundle) -> str:
    """What the agent cannot read on this side although the records below hold it: its lookups that are not
    offered, or that fail on every call ('' when it can read everything shown)."""
    broken = _faults(variant)
    gone = [f"{tool.name} is not offered" if tool.name in variant.overlay.hidden_tools else
            f"{tool.name} fails on every call" for tool in bundle.tools if tool.kind == ToolKind.LOOKUP and (
                tool.name in variant.overlay.hidden_tools or (tool.name in broken and broken[tool.name].failures is None))]
    return f"On this side {'; '.join(gone)}: the agent cannot read what only those return." if gone else ""


def _scenario_name(pair: TaskPair) -> str:
    info = next((i for s, i in SCENARIOS.items() if s.value == pair.scenario), None)
    return f"{pair.scenario} {info.name}" if info else pair.scenario


def _blind_pair_html(number: int, pair: TaskPair, bundle: EnvironmentBundle, seed: int) -> str:
    a, b = blind_sides(pair, seed)
    seen_a, seen_b = _records_seen(pair, a, bundle), _records_seen(pair, b, bundle)
    (records_a, places_a), (records_b, places_b) = _records_marked(seen_a, seen_b), _records_marked(seen_b, seen_a)
    places = list(dict.fromkeys(places_a + places_b))
    differences = [*(["the instruction"] if a.instruction != b.instruction else []),
                   *(["the system prompt"] if a.system_prompt != b.system_prompt else []),
                   *([f"records: {', '.join(places)}"] if places else []), *_tool_differences(a, b)]
    return (f"<div class='pair' id='{_e(pair.pair_id)}'><h2>{number}. {_e(_scenario_name(pair))} · "
            f"{_e(pair.domain)} · {_e(pair.act.deliverable.value)} · <code>{_e(pair.pair_id)}</code></h2>"
            f"<p class='differs'>What differs (<mark>marked</mark>): "
            f"{_e('; '.join(differences) or 'nothing shown')}</p>"
            f"<div class='sides'>{_blind_side_html('A', a, b, bundle, records_a)}"
            f"{_blind_side_html('B', b, a, bundle, records_b)}</div>"
            f"{_marks(pair, {'abstain_side': ('A', 'B', 'neither', 'both'), 'minimal': ('y', 'n'), 'natural': ('y', 'n')})}"
            "</div>")


def render_blind_sheet(title: str, pairs: list[TaskPair], bundles: dict[str, EnvironmentBundle], seed: int,
                       csv_name: str, reference_name: str) -> str:
    """The sheet without labels: each pair's sides as Side A and Side B (`blind_sides`), what differs marked."""
    blocks = [_blind_pair_html(number, pair, bundles[pair.act.env_id], seed) for number, pair in enumerate(pairs, 1)]
    guide = ("<ul><li><b>abstain_side</b>: which side should the agent stop on and ask, refuse or report, where on "
             "the other it simply carries out the request? A or B; neither when the agent should simply carry out "
             "both, both when it must not simply go ahead on either.</li>"
             "<li><b>minimal</b>: the two sides differ only in one change (what differs is marked).</li>"
             "<li><b>natural</b>: both read like what a user would write and a system would show.</li></ul>")
    return _document(title, f"<p>{len(pairs)} pairs, each with two sides in a random order. Mark each, then "
                     f"<button onclick='exportCsv()'>download {_e(csv_name)}</button> (or fill the CSV written next to "
                     f"this page). Once you have marked a pair, its sides' reference solutions and checks are in "
                     f"<a href='{_e(reference_name)}'>{_e(reference_name)}</a>.</p>{guide}{''.join(blocks)}",
                     _export_script(pairs, BLIND_CRITERIA, csv_name))


def _call_html(node: DagNode) -> str:
    args = [f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in node.args.items()]
    args += [f"{k}={ref.node}" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in ref.path)
             for k, ref in node.bindings.items()]
    return (f"<li><code>{_e(node.id)}</code>: <code>{_e(node.tool)}({_e(', '.join(args))})</code>"
            f"{' (expected to fail)' if node.expect_error else ''}</li>")


def _reference_side_html(letter: str, variant: TaskVariant) -> str:
    checks = [f"{a.collection}/{a.record_id}.{a.field} == {json.dumps(a.equals, ensure_ascii=False)}"
              for a in variant.final_state]
    if variant.expected_answer:
        checks.append(f"the reply contains one of: {' / '.join(variant.expected_answer)}")
    calls = "".join(_call_html(node) for node in variant.reference_dag.order())
    listed = "".join(f"<li><code>{_e(c)}</code></li>" for c in checks)
    return (f"<div class='side'><h3>Side {letter}</h3><h4>reference calls</h4>"
            f"{f'<ol>{calls}</ol>' if calls else '<p>none</p>'}<h4>success check</h4>"
            f"{f'<ul>{listed}</ul>' if listed else '<p>none</p>'}</div>")


def render_reference(title: str, pairs: list[TaskPair], seed: int) -> str:
    """Per pair of a blind sheet, each side's reference calls and the check of its final state or reply, as
    Side A and Side B in the sheet's order."""
    blocks = []
    for number, pair in enumerate(pairs, 1):
        a, b = blind_sides(pair, seed)
        blocks.append(f"<div class='pair' id='{_e(pair.pair_id)}'><h2>{number}. {_e(_scenario_name(pair))} · "
                      f"{_e(pair.domain)} · <code>{_e(pair.pair_id)}</code></h2><div class='sides'>"
                      f"{_reference_side_html('A', a)}{_reference_side_html('B', b)}</div></div>")
    return _document(title, "<p>The calls a careful agent makes on each side, and what is checked when it is done. "
                     "Read a pair's only after you have marked it.</p>" + "".join(blocks))


def key_csv(pairs: list[TaskPair], seed: int) -> str:
    """Which letter is which side of each pair of a blind sheet."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(KEY_COLUMNS)
    for pair in pairs:
        act_first = blind_sides(pair, seed)[0].task_type == "act"
        writer.writerow([pair.pair_id, pair.scenario, *(SIDES if act_first else SIDES[::-1])])
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
    overall: list[Rate] = Field(description="each criterion, and 'all four' (a pair valid on every criterion); on a "
                                            "blind sheet 'label right', minimal, natural and 'all three'")
    by_scenario: dict[str, list[Rate]]
    problems: list[str] = Field(default_factory=list, description="pairs marked invalid, with the annotator's notes")


def wilson(valid: int, judged: int) -> tuple[float, float]:
    if not judged:
        return 0.0, 0.0
    z, p = 1.96, valid / judged
    centre = (p + z * z / (2 * judged)) / (1 + z * z / judged)
    spread = z * math.sqrt(p * (1 - p) / judged + z * z / (4 * judged * judged)) / (1 + z * z / judged)
    return round(max(0.0, centre - spread), 4), round(min(1.0, centre + spread), 4)


def _rates(rows: list[dict[str, bool]], everything: str) -> list[Rate]:
    found = []
    for criterion in (*rows[0], everything):
        marks = [all(r.values()) if criterion == everything else r[criterion] for r in rows]
        low, high = wilson(sum(marks), len(marks))
        found.append(Rate(criterion=criterion, valid=sum(marks), judged=len(marks),
                          rate=round(sum(marks) / len(marks), 4) if marks else 0.0, low=low, high=high))
    return found


def _read_csv(path: Path, what: str, required: tuple[str, ...] = ()) -> tuple[list[str], list[dict[str, str]]]:
    try:
        reader = csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig")))
        rows = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise AbstaingenError(f"{path}: cannot read the {what}: {exc}") from None
    fields = list(reader.fieldnames or [])
    _require(path, fields, required)
    return fields, rows


def _require(path: Path, fields: list[str], required: tuple[str, ...]) -> None:
    missing = [c for c in required if c not in fields]
    if missing:
        raise AbstaingenError(f"{path}: missing columns {missing}")


def _yes_no(sheet: Path, line: int, row: dict[str, str], criterion: str) -> bool:
    value = (row.get(criterion) or "").strip().lower()
    if value not in YES | NO:
        raise AbstaingenError(f"{sheet}:{line}: {criterion} is {shown(value)}; mark it y or n")
    return value in YES


def _side(path: Path, line: int, row: dict[str, str], mark: str, allowed: tuple[str, ...] = SIDES) -> str:
    value = (row.get("abstain_side") or "").strip()
    if value.upper() not in allowed:
        raise AbstaingenError(f"{path}:{line}: abstain_side is {shown(value)}; {mark} "
                              f"{', '.join(a.lower() if len(a) > 1 else a for a in allowed[:-1])} or "
                              f"{allowed[-1].lower() if len(allowed[-1]) > 1 else allowed[-1]}")
    return value.upper()


def default_key(sheet: Path) -> Path:
    """Where `write_sheet` puts a blind sheet's key: `<sheet>-key.csv` next to it."""
    return sheet.with_name(f"{sheet.stem}-key.csv")


def read_key(key: Path) -> dict[str, str]:
    """pair_id -> the letter of its abstain side, from a blind sheet's key."""
    if not key.is_file():
        raise AbstaingenError(f"{key}: no such key (a blind sheet is scored with the key written next to it, or "
                              "the one --key names)")
    _, rows = _read_csv(key, "key", ("pair_id", "abstain_side"))
    return {(row.get("pair_id") or "").strip(): _side(key, line, row, "the key holds")
            for line, row in enumerate(rows, start=2)}


def score_audit(sheet: Path, pairs: list[TaskPair], key: Path | None = None) -> AuditScore:
    """Validity rates from a marked sheet. Every row must name a pair of the release and mark all four
    criteria y or n; anything else is an error naming the row. A blind sheet (one with an abstain_side column)
    marks abstain_side A or B, minimal and natural, and is scored against its key (`key`, or the one written
    next to it): a pair's label is right, T+ and T- valid, when abstain_side names the key's letter."""
    known = {p.pair_id: p for p in pairs}
    fields, rows = _read_csv(sheet, "sheet")
    blind = "abstain_side" in fields
    if key is not None and not blind:
        raise AbstaingenError(f"{sheet}: a key goes with a blind sheet, and this one has no abstain_side column")
    _require(sheet, fields, ("pair_id", *(BLIND_CRITERIA if blind else CRITERIA)))
    answers = read_key(key or default_key(sheet)) if blind else {}
    marked: dict[str, list[dict[str, bool]]] = defaultdict(list)
    problems = []
    for line, row in enumerate(rows, start=2):
        pair = known.get((row.get("pair_id") or "").strip())
        if pair is None:
            raise AbstaingenError(f"{sheet}:{line}: {shown(row.get('pair_id'))} is not a pair of this release")
        if blind and pair.pair_id not in answers:
            raise AbstaingenError(f"{sheet}:{line}: {pair.pair_id} is not in the key {key or default_key(sheet)}")
        marks = ({LABEL_RIGHT: _side(sheet, line, row, "mark it", ANSWERS) == answers[pair.pair_id]} if blind
                 else {c: _yes_no(sheet, line, row, c) for c in LABELS})
        marks.update({c: _yes_no(sheet, line, row, c) for c in QUALITIES})
        marked[pair.scenario].append(marks)
        if not all(marks.values()):
            said = {LABEL_RIGHT: f"abstain_side {(row.get('abstain_side') or '').strip().upper()}, the key's "
                                 f"{answers.get(pair.pair_id)}"}
            failed = ", ".join(said.get(c, c) for c, ok in marks.items() if not ok)
            problems.append(f"{pair.pair_id} ({pair.scenario}): {failed}: {(row.get('notes') or '').strip()}")
    everything = [m for group in marked.values() for m in group]
    if not everything:
        raise AbstaingenError(f"{sheet}: no marked pairs")
    total = "all three" if blind else "all four"
    return AuditScore(pairs=len(everything), overall=_rates(everything, total),
                      by_scenario={s: _rates(marked[s], total) for s in sorted(marked)}, problems=problems)


def format_score(score: AuditScore) -> str:
    def line(rate: Rate) -> str:
        return (f"{rate.criterion:<14} {rate.valid:>3}/{rate.judged:<3} {rate.rate:6.1%}  "
                f"(95% CI {rate.low:.1%}-{rate.high:.1%})")

    lines = [f"{score.pairs} pairs judged", *(line(r) for r in score.overall), ""]
    for scenario, rates in score.by_scenario.items():
        everything = rates[-1]
        lines.append(f"{scenario}: {everything.criterion} {everything.valid}/{everything.judged}; " + ", ".join(
            f"{r.criterion} {r.valid}" for r in rates[:-1]))
    if score.problems:
        lines += ["", "marked invalid:", *(f"  {p}" for p in score.problems)]
    return "\n".join(lines)


class AuditFiles(Model):
    page: Path = Field(description="the HTML sheet annotators read")
    sheet: Path = Field(description="the blank CSV they mark")
    reference: Path | None = Field(default=None, description="blind: each side's reference solution and check, as "
                                                              "Side A and Side B")
    key: Path | None = Field(default=None, description="blind: which letter is which side; keep it from annotators")


def write_sheet(release_dir: Path, out_dir: Path, n: int, seed: int, uniform: bool = False,
                blind: bool = False) -> AuditFiles:
    from abstaingen.store import load_release, read_bundle

    manifest, pairs = load_release(release_dir)
    sample = sample_for_audit(pairs, n, seed, uniform)
    bundles = {env: read_bundle(release_dir / "environments" / env) for env in {p.act.env_id for p in sample}}
    # the manifest is the release's text, not ours: keep its name and version from leaving out_dir
    stem = re.sub(r"[^A-Za-z0-9._-]", "_", f"audit-{manifest.name}-{manifest.version}-seed{seed}")[:200]
    stem += "-blind" if blind else ""
    out_dir.mkdir(parents=True, exist_ok=True)
    page, sheet = out_dir / f"{stem}.html", out_dir / f"{stem}.csv"
    title = f"{'Blind audit' if blind else 'Audit'} of {manifest.name} {manifest.version} (seed {seed})"
    if not blind:
        page.write_text(render_sheet(title, sample, bundles, sheet.name), encoding="utf-8")
        sheet.write_text(blank_csv(sample), encoding="utf-8")
        return AuditFiles(page=page, sheet=sheet)
    reference, key = out_dir / f"{stem}-reference.html", default_key(sheet)
    page.write_text(render_blind_sheet(title, sample, bundles, seed, sheet.name, reference.name), encoding="utf-8")
    reference.write_text(render_reference(f"Reference solutions: {title}", sample, seed), encoding="utf-8")
    sheet.write_text(blank_csv(sample, BLIND_CRITERIA), encoding="utf-8")
    key.write_text(key_csv(sample, seed), encoding="utf-8")
    return AuditFiles(page=page, sheet=sheet, reference=reference, key=key)
