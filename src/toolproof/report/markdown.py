"""The gate as Markdown: for a CI step summary or a pull-request comment.

It says whether the gate passed, what failed and why, what the rubrics' judge cost and which
criteria it left undecided, shows a small table of metrics (with the baseline and the
difference when there is one), the tasks that regressed against the baseline and the tasks
that failed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from toolproof.ci.findings import GateCheck
from toolproof.ci.gate import GateResult
from toolproof.format import fixed, fmt, fmt_p
from toolproof.metrics.comparison import PairComparison
from toolproof.metrics.sections import MetricValues
from toolproof.metrics.summary import RunSummary, model_metrics
from toolproof.report.gate import detail
from toolproof.report.json import write_text
from toolproof.spec.metrics import CATALOGUE, Group
from toolproof.version import __version__

GROUPS: tuple[Group, ...] = ("pass", "conditions", "policy", "score", "economics", "outcomes")
"""The groups of the metrics table, in order: its rows are their metrics shown in Markdown,
then those of personas and checkpoints the run measured."""

WHEN_MEASURED: tuple[Group, ...] = ("conditions", "policy")
"""Groups whose metrics are left out where the run did not measure them (unless gated)."""


def cell(value: Any, width: int = 140) -> str:
    """Text safe in a Markdown table cell: one line, pipes escaped, shortened."""
    text = " ".join(str(value).split())
    if len(text) > width:
        text = text[: width - 1] + "…"
    return text.replace("|", "\\|")


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out.extend("| " + " | ".join(row) + " |" for row in rows)
    return out


def _mark(check: GateCheck) -> str:
    if check.skipped:
        return "⏭️"
    return "✅" if check.passed else "❌"


def gate_markdown(result: GateResult, limit: int = 20) -> str:
    """The whole report as Markdown text."""
    run = result.run
    summary = result.summary
    counts = summary.counts
    verdict = "passed" if result.passed else "failed"
    icon = "✅" if result.passed else "❌"
    lines = [
        f"## {icon} toolproof gate {verdict}: {cell(run.suite_name)} {cell(run.suite_version)}",
        "",
        f"Run `{result.run_id}` (agent `{cell(run.agent)}`, {counts.total} trials: "
        f"{counts.passed} passed, {counts.failed} failed, {counts.infra_error} infra "
        "errors)" + (f" against baseline `{result.baseline}`." if result.baseline else "."),
        "",
    ]
    lines += _judge(summary)
    failed = result.failed
    checked = [c for c in result.checks if not c.skipped]
    if failed:
        lines.append(f"**{len(failed)} of {len(checked)} checks failed:**")
        lines.append("")
        lines.extend(f"- ❌ **{cell(c.title)}**: {cell(detail(c), 400)}" for c in failed)
    else:
        lines.append(f"**All {len(checked)} checks held.**")
    lines.append("")
    for warning in result.warnings:
        lines.append(f"> ⚠️ {cell(warning, 400)}")
    for note in summary.notes or []:
        lines.append(f"> ℹ️ {cell(note, 400)}")
    if result.warnings or summary.notes:
        lines.append("")
    lines += ["### Checks", ""]
    lines += _table(
        ("", "check", "detail"),
        ((_mark(c), cell(c.title), cell(detail(c), 300)) for c in result.checks),
    )
    lines.append("")
    lines += _metrics(result)
    lines += _blame(summary)
    if result.comparison is not None:
        lines += _regressed(result, limit)
    lines += _failing(summary, limit)
    manifest = result.verification.manifest_hash if result.verification else None
    foot = f"toolproof {__version__} · suite sha256 `{run.suite_hash[:16]}`"
    if manifest:
        foot += f" · manifest sha256 `{manifest}`"
    if result.sources:
        foot += " · gate from " + ", ".join(cell(s) for s in result.sources)
    lines += ["", f"<sub>{foot}</sub>", ""]
    return "\n".join(lines)


def _judge(summary: RunSummary) -> list[str]:
    """The judge model of the run's rubrics: what it cost, and a warning naming the
    criteria it left undecided because it failed their controls."""
    judge = summary.judge
    if judge is None:
        return []
    spent = judge.cost_usd
    shown = "not measured (no price)" if spent is None else f"${spent:.4f}"
    lines = [f"Judge `{cell(judge.model)}`: {shown}, apart from the agents' cost.", ""]
    count = judge.undecided_criteria
    if count:
        which = "; ".join(
            f"`{cell(task)}`: {', '.join(f'`{cell(n)}`' for n in names)}"
            for task, names in judge.failed_controls.items()
        )
        lines += [
            f"> ⚠️ {count} rubric criteri{'on' if count == 1 else 'a'} undecided: the judge "
            f"failed {'its' if count == 1 else 'their'} controls ({which}).",
            "",
        ]
    return lines


def _pair_for(result: GateResult, label: str) -> PairComparison | None:
    if result.comparison is None:
        return None
    for pair in result.comparison.pairs:
        if pair.label_b == label:
            return pair
    return None


def _names(k: int) -> list[str]:
    """The metrics every model's table shows: a family at its fixed k, or else at the run's
    largest k when that is above 1 (pass@1, pass^k)."""
    names = []
    for definition in CATALOGUE.where("markdown", GROUPS):
        if not definition.per_k:
            names.append(definition.name)
            continue
        ks = definition.fixed_k or ((k,) if k > 1 else ())
        names.extend(definition.at(k=at) for at in ks)
    return names


def _measured_here(metrics: MetricValues, names: list[str]) -> list[str]:
    """The persona and checkpoint metrics a model has, one persona or checkpoint after the
    other, then the degradation over the checkpoints."""
    found = [
        name
        for name in metrics.names()
        if name not in names and CATALOGUE.read(name).definition.group == "conversation"
    ]
    return sorted(found, key=lambda name: not CATALOGUE.read(name).definition.params)


def _metrics(result: GateResult) -> list[str]:
    summary = result.summary
    names = _names(max(summary.shown_ks))
    limits: dict[str, str] = {}
    for name, floor in result.spec.floors().items():
        limits[name] = f"≥ {floor:g}"
    for name, ceiling in result.spec.ceilings().items():
        limits[name] = f"≤ {ceiling:g}"
    names += [n for n in limits if n not in names]
    out: list[str] = []
    several = len(summary.models) > 1
    for entry in summary.models:
        metrics = model_metrics(entry)
        pair = _pair_for(result, entry.model)
        title = "### Metrics" + (f": {cell(entry.model)}" if several else "")
        out += [title, ""]
        rows = []
        for name in [*names, *_measured_here(metrics, names)]:
            if name not in metrics:
                continue
            definition = CATALOGUE.read(name).definition
            value = metrics[name]
            if definition.group in WHEN_MEASURED and value is None and name not in limits:
                continue
            shown = fmt(value, 4)
            if interval := entry.ci.get(name):
                shown += f" [{fixed(interval[0], 4)}, {fixed(interval[1], 4)}]"
            if definition.group == "score":
                shown += entry.reliability.parts_note()
            row = [f"`{name}`", shown, limits.get(name, "")]
            if pair is not None:
                base = _baseline_value(pair, name)
                delta = None if base is None or value is None else value - base
                row += [fmt(base, 4), fmt(delta, 4, signed=True)]
            rows.append(row)
        header = ["metric", "this run [95% CI]", "gate"]
        if pair is not None:
            header += ["baseline", "Δ"]
        out += _table(header, rows)
        out.append("")
        notes = entry.reliability.notes
        out += [f"> ℹ️ Reliability Score {cell(note, 300)}" for note in notes]
        if notes:
            out.append("")
    return out


def _blame(summary: RunSummary) -> list[str]:
    """Who the failed trials are to blame on, by party and by the rule that decided; and
    the trials that broke each policy rule."""
    several = len(summary.models) > 1
    rows = []
    for entry in summary.models:
        for party, count in entry.blame.items():
            if not count:
                continue
            rules = ", ".join(
                f"`{rule}` {n}" for rule, n in entry.blame_rules.get(party, {}).items()
            )
            row = [cell(party), str(count), rules]
            rows.append(([cell(entry.model)] if several else []) + row)
    violations = [
        ([cell(entry.model)] if several else []) + [f"`{rule}`", str(n)]
        for entry in summary.models
        for rule, n in (entry.policy.violations if entry.policy else {}).items()
    ]
    out: list[str] = []
    if rows:
        out += ["### Failed trials by blame", ""]
        out += _table(
            (["model"] if several else []) + ["blamed on", "failed trials", "rules"], rows
        )
        out.append("")
    if violations:
        out += ["### Policy violations", ""]
        out += _table((["model"] if several else []) + ["rule", "trials"], violations)
        out.append("")
    return out


def _baseline_value(pair: PairComparison, name: str) -> float | None:
    for m in pair.metrics:
        if m.name == name:
            return m.a
    primary = next((v for v in pair.variants if v.variant == ""), None)
    if primary is not None:
        paired = primary.metric(name)
        if paired is not None:
            return paired.a
    return None


def _regressed(result: GateResult, limit: int) -> list[str]:
    comparison = result.comparison
    assert comparison is not None
    located = len(comparison.pairs) > 1 or any(
        v.variant for p in comparison.pairs for v in p.variants
    )
    rows = []
    for pair in comparison.pairs:
        for v in pair.variants:
            where = pair.label_b + (f" [{v.variant}]" if v.variant else "")
            for t in v.regressed:
                row = [
                    cell(t.task_id) + (" (task changed)" if t.changed else ""),
                    f"{t.passed_a}/{t.trials}",
                    f"{t.passed_b}/{t.trials}",
                    fmt(t.delta, signed=True),
                    fmt_p(t.p_value),
                    fmt_p(t.p_adjusted),
                    "significant" if t.significant else "",
                    cell(t.reasons_b[0] if t.reasons_b else "", 100),
                ]
                rows.append(([cell(where)] if located else []) + row)
    out = [f"### Regressed tasks against `{comparison.run_a}`", ""]
    if not rows:
        return [*out, "No task passed fewer matched trials than in the baseline.", ""]
    header = [
        "task",
        "baseline",
        "this run",
        "Δ",
        "p (Fisher)",
        "p (Holm)",
        "per task",
        "first failure",
    ]
    out += _table((["model"] if located else []) + header, rows[:limit])
    if len(rows) > limit:
        out.append(f"\n…and {len(rows) - limit} more.")
    out.append("")
    return out


def _failing(summary: RunSummary, limit: int) -> list[str]:
    rows = []
    several = len(summary.models) > 1
    for entry in summary.models:
        for task in entry.tasks:
            if task.passed < task.trials or task.infra_error:
                first = task.failures[0] if task.failures else ""
                row = [cell(task.id), f"{task.passed}/{task.trials}", cell(first, 120)]
                rows.append(([cell(entry.model)] if several else []) + row)
    if not rows:
        return []
    header = (["model"] if several else []) + ["task", "passed", "first failure"]
    out = [f"### Tasks with failed trials ({len(rows)})", ""]
    out += _table(header, rows[:limit])
    if len(rows) > limit:
        out.append(f"\n…and {len(rows) - limit} more.")
    out.append("")
    return out


def write_markdown(result: GateResult, path: str | Path) -> None:
    """Write the Markdown report (parent folders created)."""
    write_text(path, gate_markdown(result), "--markdown")
