"""The dashboard's HTML pages, built from the data of `toolproof.view.data`.

Every value from the store (suite, model and run names, tags, errors) is escaped here; the
trends page carries its chart data as a JSON block that `view.js` reads and draws with the
bundled Chart.js. The server sends a Content-Security-Policy that lets only the dashboard's
own script files run, so markup that slipped through could not execute anyway.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any
from urllib.parse import urlencode

from toolproof.format import fixed
from toolproof.report.html.render import json_for_script
from toolproof.spec.metrics import PASS_AT, PASS_HAT, RELIABILITY_SCORE


def runs_page(data: Mapping[str, Any], store: str) -> str:
    """The runs list: the filter form, then the runs with their headline numbers and boxes
    to open several in one report."""
    chosen = data["filter"]
    rows = "\n".join(_run_row(run) for run in data["runs"])
    shown = len(data["runs"])
    count = f"{data['total']} run{'s' if data['total'] != 1 else ''}"
    if shown < data["total"]:
        count += f", the newest {shown} shown"
    trends = ""
    if chosen.get("suite"):
        link = escape("/trends?" + urlencode({"suite": chosen["suite"]}))
        trends = f' · <a href="{link}">trends of this suite</a>'
    body = f"""
<h1>Runs</h1>
{_filter_form("/", chosen, data["choices"])}
<p class="note">{escape(count)}{trends}</p>
<form method="get" action="/report" class="card">
<div class="scroll"><table id="runs">
<thead><tr><th></th><th>run</th><th>suite</th><th>conditions</th><th>tags</th><th>date (UTC)</th>
<th>status</th><th>trials</th><th>model</th><th>pass@1</th><th>pass^k</th>
<th>Reliability Score</th></tr></thead>
<tbody>
{rows or '<tr><td colspan="12" class="empty">no run matches</td></tr>'}
</tbody></table></div>
<p><button type="submit">Open the selected runs in one report</button></p>
</form>"""
    return _layout("Runs", "runs", store, body)


def _run_row(run: Mapping[str, Any]) -> str:
    """A run's rows: one per model, the run's own cells spanning them."""
    status, suite = escape(run["status"]), run["suite"]
    tags = " ".join(f'<span class="chip">{escape(tag)}</span>' for tag in run["tags"])
    conditions = "".join(f"<div>{escape(c)}</div>" for c in run["conditions"])
    shared = [
        f'<input type="checkbox" name="run" value="{escape(run["id"])}" '
        f'aria-label="select run {escape(run["id"])}">',
        f'<a class="mono" href="{escape(run["report"])}">{escape(run["id"])}</a>',
        f"{escape(suite['name'])} <span class='muted'>{escape(suite['version'])}</span>",
        conditions,
        tags,
        escape(_when(run["created_at"])),
        f'<span class="status {status}">{status}</span>',
        str(run["trials"]),
    ]
    k = f' <span class="muted">k={run["k"]}</span>' if run["k"] else ""
    once, each, score = PASS_AT.at(k=1), PASS_HAT.generic, RELIABILITY_SCORE.name
    models = [
        f"<td>{escape(e['model'])}</td><td>{_number(e[once])}</td>"
        f"<td>{_number(e[each])}{k}</td><td>{_number(e[score])}"
        f" <span class='muted'>{escape(e['score_parts'])}</span></td>"
        for e in run["entries"]
    ]
    if not models:
        why = escape(run["error"] or "no trial recorded yet")
        names = "".join(f"<div>{escape(model)}</div>" for model in run["models"])
        models = [f'<td>{names}</td><td colspan="3" class="error">{why}</td>']
    span = f' rowspan="{len(models)}"' if len(models) > 1 else ""
    first = "".join(f"<td{span}>{cell}</td>" for cell in shared)
    return "\n".join(
        f'<tr class="run">{first}{cells}</tr>' if i == 0 else f"<tr>{cells}</tr>"
        for i, cells in enumerate(models)
    )


def trends_page(data: Mapping[str, Any], store: str) -> str:
    """One chart per metric across the suite's runs (drawn by view.js from the JSON block),
    and the runs on the x axis."""
    chosen = data["filter"]
    charts = "\n".join(
        f'<section class="card"><h3>{escape(metric["label"])}</h3>'
        + ("" if _measured(metric) else '<p class="note">not measured in these runs</p>')
        + f'<div class="chart"><canvas data-metric="{escape(metric["name"])}"></canvas></div>'
        "</section>"
        for metric in data["metrics"]
    )
    runs = "\n".join(
        f'<tr><td>{i}</td><td><a class="mono" href="{escape(run["report"])}">'
        f"{escape(run['id'])}</a></td><td>{escape(_when(run['created_at']))}</td></tr>"
        for i, run in enumerate(data["runs"], start=1)
    )
    skipped = "".join(
        f'<p class="warn">run {escape(s["id"])} is left out: {escape(s["error"])}</p>'
        for s in data["skipped"]
    )
    k_choice = _select("k", [str(k) for k in data["ks"]], str(data["k"]), "")
    if not data["runs"]:
        note = f"No finished run of suite {data['suite'] or '(none)'} matches."
    else:
        note = (
            f"{len(data['runs'])} finished runs of suite {data['suite']}, oldest first, one "
            "line per model. Click a point to open that run's report."
        )
    body = f"""
<h1>Trends <span class="muted">{escape(data["suite"])}</span></h1>
{_filter_form("/trends", chosen, data["choices"], extra=f"<label>k {k_choice}</label>")}
<p class="note">{escape(note)}</p>
{skipped}
<noscript><p class="warn">JavaScript draws the charts: enable it to see them.</p></noscript>
<div class="charts">
{charts}
</div>
<section class="card"><h3>Runs on the x axis</h3>
<div class="scroll"><table><thead><tr><th>#</th><th>run</th><th>date (UTC)</th></tr></thead>
<tbody>{runs}</tbody></table></div></section>
<script type="application/json" id="tp-trends">{json_for_script(data)}</script>"""
    return _layout(f"Trends · {data['suite']}", "trends", store, body, charts=True)


def error_page(status: int, message: str, store: str) -> str:
    body = f'<h1>{status}</h1><p class="warn">{escape(message)}</p><p><a href="/">all runs</a></p>'
    return _layout(str(status), "", store, body)


# ---------------------------------------------------------------- parts


def _layout(title: str, active: str, store: str, body: str, *, charts: bool = False) -> str:
    links = [("runs", "/", "Runs"), ("trends", "/trends", "Trends")]
    nav = "".join(
        f'<a href="{href}"{" class=active" if key == active else ""}>{text}</a>'
        for key, href, text in links
    )
    scripts = (
        '<script src="/static/chart.umd.min.js"></script>\n<script src="/static/view.js"></script>'
        if charts
        else ""
    )
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="toolproof">
<title>{escape(title)} · toolproof</title>
<link rel="stylesheet" href="/static/report.css">
<link rel="stylesheet" href="/static/view.css">
</head>
<body>
<header class="top"><div class="brand">toolproof</div><nav>{nav}</nav>
<div class="store mono" title="results store">{escape(store)}</div></header>
<main>{body}
</main>
{scripts}
</body>
</html>
"""


def _filter_form(
    action: str, chosen: Mapping[str, str], choices: Mapping[str, list[str]], extra: str = ""
) -> str:
    fields = [
        f"<label>{name} {_select(name, choices[plural], chosen.get(name, ''), 'any')}</label>"
        for name, plural in (("suite", "suites"), ("model", "models"), ("tag", "tags"))
    ]
    fields += [
        f'<label>from <input type="date" name="from" value="{escape(chosen.get("from", ""))}">'
        "</label>",
        f'<label>to <input type="date" name="to" value="{escape(chosen.get("to", ""))}"></label>',
        extra,
        '<button type="submit">Filter</button>',
        f'<a href="{action}">clear</a>',
    ]
    return f'<form method="get" action="{action}" class="filters">{"".join(fields)}</form>'


def _select(name: str, options: Sequence[str], chosen: str, blank: str) -> str:
    values = list(options)
    if chosen and chosen not in values:
        values.append(chosen)  # a value given in the URL that no run has: keep it visible
    items = [f'<option value="">{blank}</option>'] if blank else []
    items += [
        f'<option value="{escape(v)}"{" selected" if v == chosen else ""}>{escape(v)}</option>'
        for v in values
    ]
    return f'<select name="{name}">{"".join(items)}</select>'


def _measured(metric: Mapping[str, Any]) -> bool:
    return any(v is not None for series in metric["series"] for v in series["values"])


def _number(value: Any) -> str:
    return fixed(value) if isinstance(value, int | float) else '<span class="muted">–</span>'


def _when(created_at: str) -> str:
    return created_at[:16].replace("T", " ")
