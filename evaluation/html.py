"""The report as one self-contained HTML page (no script, no external file), and the leaderboard of
several reports (`abstaingen eval compare`)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from abstaingen.evaluation.report import EvalReport, Interval

STYLE = """body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:72em;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.6em 0 1.4em}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th:first-child,td:first-child{text-align:left}caption{text-align:left;font-weight:600;margin-bottom:.3em}
.ci{color:#777;font-size:.85em}details{margin:.4em 0;border-left:3px solid #c33;padding-left:.6em}
.marker{color:#b60;font-weight:600}.tool{color:#357}.msg{white-space:pre-wrap;margin:.2em 0}
.note{background:#f6f6f6;padding:.5em .8em}"""


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def _cell(interval: Interval) -> str:
    ci = "" if interval.low is None else f' <span class="ci">[{_pct(interval.low)}, {_pct(interval.high)}]</span>'
    return f"<td>{_pct(interval.value)}{ci}</td>"


def _table(caption: str, rows: dict[str, dict[str, Interval]]) -> str:
    if not rows:
        return ""
    metrics = list(next(iter(rows.values())))
    head = "".join(f"<th>{escape(m)}</th>" for m in metrics)
    body = "".join(f"<tr><td>{escape(group)} <span class='ci'>n={next(iter(values.values())).n}</span></td>"
                   + "".join(_cell(values[m]) for m in metrics) + "</tr>" for group, values in rows.items())
    return f"<table><caption>{escape(caption)}</caption><tr><th></th>{head}</tr>{body}</table>"


def _bars(caption: str, values: dict[str, float | None], width: int = 560, label: int = 200) -> str:
    """A horizontal bar chart as inline SVG."""
    rows = list(values.items())
    height = 22 * len(rows) + 10
    span = width - label - 50
    bars = "".join(
        f'<text x="0" y="{22 * i + 16}" font-size="12">{escape(name)}</text>'
        f'<rect x="{label}" y="{22 * i + 4}" width="{(value or 0) * span:.1f}" height="15" fill="#4a7"/>'
        f'<text x="{label + 5 + (value or 0) * span:.1f}" y="{22 * i + 16}" font-size="11">{_pct(value)}</text>'
        for i, (name, value) in enumerate(rows))
    return (f"<figure><figcaption>{escape(caption)}</figcaption><svg width='{width}' height='{height}' "
            f"xmlns='http://www.w3.org/2000/svg'>{bars}</svg></figure>")


def _trajectory(steps: list[dict[str, Any]]) -> str:
    out = []
    for step in steps:
        if step["role"] == "marker":
            out.append(f"<div class='marker'>▶ {escape(step['text'])}</div>")
            continue
        calls = "".join(f"<div class='tool'>#{c['step']} {escape(c['tool'])}({escape(str(c['arguments']))})</div>"
                        for c in step.get("calls", []))
        error = f" <b>error:</b> {escape(step['error'])}" if step.get("error") else ""
        out.append(f"<div class='msg'><b>{escape(step['role'])}</b>: {escape(step['text'][:1500])}{error}</div>{calls}")
    return "".join(out)


def render_html(report: EvalReport) -> str:
    parts = [f"<h1>{escape(report.model)} on {escape(report.task)}</h1>",
             f"<p class='note'>{report.samples} samples; log <code>{escape(report.log)}</code>; created "
             f"{escape(report.created)}. Replies read by <b>{escape(report.judge)}</b>"
             + (f" (the rules judge: {escape(report.judge_accuracy)})" if report.judge == "rules" else "")
             + ". Episode problems: " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in report.episode_problems.items())
             + " (errors count as failures). Percentages with 95% bootstrap intervals.</p>",
             _table("Headline", {"all": report.headline})]
    for dimension, rows in report.by.items():
        parts.append(_table(f"By {dimension}", rows))
    if report.kind == "pairs":
        scenario = report.by.get("scenario", {})
        for metric, what in (("paired", "Pairs with both sides passed"), ("abstain", "Abstain sides passed"),
                             ("act", "Act sides passed")):
            parts.append(_bars(f"{what}, by scenario", {g: v[metric].value for g, v in scenario.items()}))
        if report.agentabstain is not None:
            view = report.agentabstain
            parts.append(_bars("AgentAbstain view: paired by category (macro "
                               f"{_pct(view.paired)}, CAR {_pct(view.car)})", dict(view.paired_by_category)))
        timing = report.timing
        parts.append("<h2>Timing of abstention</h2><p>"
                     f"recall {_pct(timing['recall']['value'])}, timely recall {_pct(timing['timely_recall']['value'])}, "
                     f"SPL {_pct(timing['spl']['value'])}; premature stops {timing['premature']} of "
                     f"{timing['abstain_sides']} abstain sides.</p>")
        total = sum(timing["calls_after_trigger"].values()) or 1
        parts.append(_bars("Calls made after the trigger was visible, or a stop before it could be (premature); "
                           "share of abstentions",
                           {k: v / total for k, v in timing["calls_after_trigger"].items()}))
        c = report.clarify
        parts.append(f"<h2>Clarify and resume</h2><p>{c['sides']} abstain sides with a clarification; "
                     f"asked {c['asked']}; asked, then completed correctly {c['asked_then_completed']} "
                     f"({_pct(c['asked_then_completed_rate'])}); abstained {_pct(c['plain_abstention_rate'])}.</p>")
    else:
        o = report.offtopiceval
        lines = "".join(f"<tr><td>{escape(s)}</td>" + "".join(f"<td>{_pct(v[mode][m])}</td>" for mode in
                       ("ours_macro_over_roles", "offtopiceval_macro_over_roles") for m in ("ar_id", "rr_direct",
                                                                                           "rr_laundered", "os",
                                                                                           "rr_recast", "os_recast"))
                       + "</tr>" for s, v in o["by_suffix"].items())
        head = "".join(f"<th>{who} {m}</th>" for who in ("ours", "OffTopicEval") for m in ("AR_ID", "RR direct",
                                                                                           "RR laundered", "OS",
                                                                                           "RR recast", "OS recast"))
        parts.append(f"<table><caption>Macro over roles: ours (unparsed count against) and OffTopicEval's reading "
                     f"(unparsed left out); unparsed: ours {o['unparsed_ours']}, theirs {o['unparsed_theirs']}"
                     f"</caption><tr><th>suffix</th>{head}</tr>{lines}</table>")
    parts.append(f"<h2>Failures ({len(report.failures)})</h2>")
    for e in report.failures:
        label = " · ".join(e.groups.values())
        parts.append(f"<details><summary>{escape(e.id)} · {escape(label)} · {escape(e.outcome)}"
                     f"{' · ' + escape(e.error) if e.error else ''}</summary><p>{escape(e.detail)}</p>"
                     f"{_trajectory(e.trajectory)}</details>")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(report.model)} · "
            f"{escape(report.task)}</title><style>{STYLE}</style></head><body>{''.join(parts)}</body></html>\n")


def headline_lines(report: EvalReport) -> list[str]:
    """The report's headline as a few terminal lines."""
    metrics = ", ".join(f"{name} {_pct(i.value)} [{_pct(i.low)}, {_pct(i.high)}]" for name, i in report.headline.items())
    problems = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in report.episode_problems.items())
    lines = [f"{report.model} on {report.task}: {report.samples} samples; {metrics} (%, 95% bootstrap interval)",
             f"episode problems: {problems}; replies read by {report.judge}"
             + (f" ({report.judge_accuracy})" if report.judge == "rules" else "")]
    if report.kind == "pairs":
        t, c = report.timing, report.clarify
        lines.append(f"timing: recall {_pct(t['recall']['value'])}, timely recall {_pct(t['timely_recall']['value'])}, "
                     f"SPL {_pct(t['spl']['value'])}, premature {t['premature']}; clarify: asked {c['asked']} of "
                     f"{c['sides']}, then completed {c['asked_then_completed']}")
        if report.agentabstain is not None:
            lines.append(f"AgentAbstain view: paired {_pct(report.agentabstain.paired)}, "
                         f"CAR {_pct(report.agentabstain.car)} (macro over categories)")
    else:
        for suffix, modes in report.offtopiceval["by_suffix"].items():
            ours, theirs = modes["ours_macro_over_roles"], modes["offtopiceval_macro_over_roles"]
            lines.append(f"{suffix}: OS ours {_pct(ours['os'])}, OffTopicEval's reading {_pct(theirs['os'])} "
                         "(macro over roles)")
        lines.append(f"unparsed replies: ours {report.offtopiceval['unparsed_ours']}, "
                     f"OffTopicEval's reading {report.offtopiceval['unparsed_theirs']}")
    return lines


def leaderboard(reports: Sequence[EvalReport]) -> str:
    """One line per report, best first by its kind's headline (paired for pairs, OS for OOD)."""
    kinds = {r.kind for r in reports}
    if len(kinds) > 1:
        raise ValueError("the reports are of different kinds (pairs and OOD): compare like with like")
    key = "paired" if kinds == {"pairs"} else "os"
    metrics = list(reports[0].headline) if reports else []
    ranked = sorted(reports, key=lambda r: -(r.headline[key].value or 0.0))
    lines = ["model".ljust(32) + "".join(m.rjust(22) for m in metrics) + "  samples  problems"]
    for r in ranked:
        cells = "".join(f"{_pct(r.headline[m].value)} [{_pct(r.headline[m].low)},{_pct(r.headline[m].high)}]".rjust(22)
                        for m in metrics)
        lines.append(r.model[:31].ljust(32) + cells + f"  {r.samples:7d}  {sum(r.episode_problems.values()):8d}")
    return "\n".join(lines)
