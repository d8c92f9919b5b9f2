"""Terminal output: progress while a run goes, tables when it ends."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from toolproof.format import fixed, score_parts
from toolproof.metrics.summary import ModelSummary, RunSummary
from toolproof.report.gate import detail

if TYPE_CHECKING:
    from toolproof.ci.gate import GateResult
    from toolproof.results import TrialResult


class RunProgress:
    """Progress while a run goes. On a terminal, a live bar: trials done of total, passed,
    failed, infra errors, ETA. Elsewhere (a CI log, a pipe) a bar is drawn only when it
    stops, so a line is printed instead for each finished trial, at most one per `every`
    seconds (and always for the last), saying what finished and the counts so far; a line
    after a pause counts every trial since the line before (`3–5/20`), so no number is
    skipped."""

    def __init__(self, console: Console, every: float = 2.0) -> None:
        self.console = console
        self.every = every
        self.counts = {"passed": 0, "failed": 0, "infra_error": 0}
        self.total = 0
        self.done = 0
        self.shown = 0  # the trials counted by the lines printed so far
        self.started = time.monotonic()
        self.printed = -every
        self.live = console.is_terminal
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("[green]{task.fields[passed]} passed"),
            TextColumn("[red]{task.fields[failed]} failed"),
            TextColumn("[yellow]{task.fields[infra]} infra"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            transient=False,
        )
        self.task_id = self.progress.add_task("trials", total=0, passed=0, failed=0, infra=0)

    def start(self, total: int, done: int, counts: Mapping[str, int] | None = None) -> None:
        """`counts`: the outcomes of the `done` trials (a resumed run), so the bar's passed,
        failed and infra counts agree with the summary printed at the end."""
        self.total, self.done, self.shown = total, done, done
        for outcome, count in (counts or {}).items():
            self.counts[outcome] = self.counts.get(outcome, 0) + count
        self.started = time.monotonic()
        if self.live:
            self.progress.update(
                self.task_id,
                total=total,
                completed=done,
                passed=self.counts["passed"],
                failed=self.counts["failed"],
                infra=self.counts["infra_error"],
            )
            self.progress.start()

    def advance(self, result: TrialResult) -> None:
        self.counts[result.outcome] += 1
        self.done += 1
        if self.live:
            self.progress.update(
                self.task_id,
                advance=1,
                passed=self.counts["passed"],
                failed=self.counts["failed"],
                infra=self.counts["infra_error"],
            )
            return
        now = time.monotonic()
        if now - self.printed >= self.every or self.done >= self.total:
            self.printed = now
            self.console.print(self.line(result, now - self.started), markup=False, highlight=False)
            self.shown = self.done

    def line(self, result: TrialResult, elapsed: float) -> str:
        """`[0:01:23] 3/6 trials: 1 passed, 2 failed, 0 infra errors; last: TASK #1 failed:
        REASON` (the reason on one line, cut at 80 characters); `2–3/6` when trial 2 finished
        since the line before without a line of its own."""
        minutes, seconds = divmod(int(elapsed), 60)
        outcome = result.outcome.replace("_", " ")
        if result.reason and result.outcome != "passed":
            reason = " ".join(result.reason.split())  # one line, however the reason is written
            reason = reason if len(reason) <= 80 else reason[:79] + "…"
            outcome += f": {reason}"
        who = f" ({result.model})" if result.model else ""
        first = self.shown + 1
        done = f"{first}–{self.done}" if first < self.done else str(self.done)
        return (
            f"[{minutes // 60}:{minutes % 60:02d}:{seconds:02d}] {done}/{self.total} "
            f"trials: {self.counts['passed']} passed, {self.counts['failed']} failed, "
            f"{self.counts['infra_error']} infra errors; last: {result.task_id} "
            f"#{result.trial}{who} {outcome}"
        )

    def stop(self) -> None:
        if self.live:
            self.progress.stop()


def _fmt(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return fixed(value)
    return str(value)


def _ci(interval: Any) -> str:
    """A 95% interval as `[low, high]`; empty when there is none."""
    return "" if not interval else f"[{fixed(interval[0])}, {fixed(interval[1])}]"


def _with_ci(value: Any, interval: Any) -> str:
    """`0.820 [0.740, 0.900]`: a value and its interval, compact."""
    return f"{_fmt(value)} {_ci(interval)}".rstrip()


def _usd(value: Any) -> str:
    return "unpriced" if value is None else f"${value:.4f}"


def _per_pass(cost: Any, per_pass: Any) -> str:
    """Cost per passed trial: `unpriced` only when the cost is unknown; with nothing passed
    there is no cost per pass, whatever the cost (`–`)."""
    if cost is None:
        return "unpriced"
    return "–" if per_pass is None else _usd(per_pass)


def _seconds(value: Any) -> str:
    return "–" if value is None else f"{value:.2f}s"


def failed_controls(judge: dict[str, Any]) -> str:
    """The rubric criteria the judge left undecided because it failed their controls, on a
    line of their own (none: nothing)."""
    count = judge["undecided_criteria"]
    if not count:
        return ""
    which = "; ".join(
        f"{task}: {', '.join(names)}" for task, names in judge["failed_controls"].items()
    )
    one = count == 1
    return (
        f"\n{count} rubric criteri{'on' if one else 'a'} undecided: the judge failed "
        f"{'its' if one else 'their'} controls ({which})"
    )


def summary_tables(summary: RunSummary) -> list[Table]:
    """The run's tables: models side by side, then (one model) metrics, tiers and tasks."""
    counts = summary.counts
    k = max(summary.shown_ks)
    title = (
        f"{summary.suite.name} · run {summary.run_id} · "
        f"{counts.total} trials: {counts.passed} passed, {counts.failed} failed, "
        f"{counts.infra_error} infra errors (counted as {summary.infra_errors})"
    )
    if summary.stopped is not None:
        title += f"\nstopped early: {summary.stopped}"
    if summary.judge is not None:
        spent = summary.judge["cost_usd"]
        shown = "not measured (no price)" if spent is None else _usd(spent)
        title += f"\njudge {summary.judge['model']}: {shown}, apart from the cost below"
        title += failed_controls(summary.judge)
    if summary.skipped_k:
        title += f"\nnot computed (too few trials): k = {summary.skipped_k}"
    models = Table(title=title, title_justify="left")
    for column in (
        "model",
        "passed",
        "infra",
        "pass@1",
        f"pass@{k}",
        f"pass^{k}",
        f"tax@{k}",
        "score",
        "cost",
        "cost/pass",
        "tokens in/out",
        "model p95",
        "trial p95",
    ):
        models.add_column(column, justify="left" if column == "model" else "right")
    for entry in summary.models:
        m, c = entry.metrics, entry.counts
        models.add_row(
            entry.model,
            f"{c.passed}/{c.total}",
            str(c.infra_error),
            _fmt(m.get("pass@1")),
            _fmt(m.get(f"pass@{k}")),
            _fmt(m.get(f"pass^{k}")),
            _fmt(m.get(f"reliability_tax@{k}")),
            _fmt(m.get("reliability_score")) + score_parts(entry.reliability),
            _usd(m.get("cost_usd")),
            _per_pass(m.get("cost_usd"), m.get("cost_per_pass_usd")),
            f"{int(m.get('tokens_input') or 0)}/{int(m.get('tokens_output') or 0)}",
            _seconds(m.get("latency_p95_s")),
            _seconds(m.get("trial_latency_p95_s")),
        )
    if not summary.models:
        return [models]
    models.caption, models.caption_justify = reliability_gap(summary.models, k), "left"
    attribution = [t for t in (_policy(summary.models), _blame(summary.models)) if t is not None]
    conditions = [t for entry in summary.models for t in _conditions(entry)]
    if conditions:
        conditions.append(_condition_intervals(summary.models))
    conditions += [t for entry in summary.models for t in conversation_tables(entry, k)]
    if len(summary.models) > 1:
        return [models, *attribution, *conditions, _tasks_by_model(summary.models, k)]
    return [models, *attribution, *conditions, *_detail(summary.models[0], k)]


def reliability_gap(models: list[ModelSummary], k: int) -> str | None:
    """One line under the models' table on what the gap between pass@k and pass^k means,
    with the numbers when there is one model; None at k = 1 (no gap to read)."""
    if k == 1:
        return None
    m = models[0].metrics
    values = [m.get(name) for name in ("pass@1", f"pass@{k}", f"pass^{k}", f"reliability_tax@{k}")]
    if len(models) > 1 or any(v is None for v in values):
        return (
            f"pass@{k}: the chance a task passes at least once in {k} tries; pass^{k}: all {k} "
            f"times. The gap is success that does not repeat (tax@{k} = pass@1 − pass^{k})."
        )
    once, anyof, every, tax = (_fmt(v) for v in values)
    return (
        f"The chance a task passes at least once in {k} tries (pass@{k} {anyof}) against all {k} "
        f"times (pass^{k} {every}): the gap is success that does not repeat, and one try's "
        f"pass@1 {once} overstates pass^{k} by {tax} (tax@{k})."
    )


def conversation_tables(entry: ModelSummary, k: int) -> list[Table]:
    """Per persona and per checkpoint: pass rates with their intervals, recovery from
    confusion, and the degradation rate over conversation length."""
    tables = []
    if entry.personas:
        table = Table(title=f"{entry.model}: personas [95% CI]", title_justify="left")
        for column in ("persona", "tasks", "pass@1", f"pass^{k}", "recovery turns", "recovered"):
            table.add_column(column, justify="left" if column == "persona" else "right")
        for name, row in entry.personas.items():
            recovery = row["recovery"]
            table.add_row(
                name,
                str(row["n_tasks"]),
                _with_ci(row["pass@1"], row["ci"]["pass@1"]),
                _with_ci(row["pass^k"].get(str(k)), row["ci"]["pass^k"].get(str(k))),
                _with_ci(recovery["recovery_turns"], recovery["ci"]),
                _fmt(recovery["recovered"]),
            )
        tables.append(table)
    if entry.checkpoints:
        trend = entry.checkpoint_degradation or {}
        title = (
            f"{entry.model}: turn checkpoints [95% CI]\ncheckpoint_degradation "
            f"(pass@1 lost per {trend.get('per_turns', 10)} user turns): "
            + (trend.get("reason") or _with_ci(trend.get("value"), trend.get("ci")))
        )
        table = Table(title=title, title_justify="left")
        for column in ("turns", "tasks", "user turns", "pass@1", f"pass^{k}", "too long"):
            table.add_column(column, justify="right")
        for turns, row in entry.checkpoints.items():
            table.add_row(
                turns,
                str(row["n_tasks"]),
                _fmt(row["user_turns"]),
                _with_ci(row["pass@1"], row["ci"]["pass@1"]),
                _with_ci(row["pass^k"].get(str(k)), row["ci"]["pass^k"].get(str(k))),
                str(len(row["too_long"])),
            )
        tables.append(table)
    return tables


def summary_notes(summary: RunSummary) -> list[str]:
    """What a reader of the numbers must know, a line each (the score's missing parts)."""
    several = len(summary.models) > 1
    return [
        f"{entry.model + ': ' if several else ''}Reliability Score {note}"
        for entry in summary.models
        for note in entry.reliability.get("notes") or []
    ]


def _policy(models: list[ModelSummary]) -> Table | None:
    """Per model: policy adherence with its interval, and the trials that broke each rule."""
    checked = [entry for entry in models if entry.policy]
    if not checked:
        return None
    rules = sorted({rule for entry in checked for rule in (entry.policy or {})["violations"]})
    table = Table(title="policy [95% CI: bootstrap over tasks]", title_justify="left")
    for column in ("model", "checked", "policy_adherence", "violating", *rules):
        table.add_column(column, justify="left" if column == "model" else "right")
    for entry in checked:
        policy = entry.policy or {}
        table.add_row(
            entry.model,
            str(policy["trials"]),
            _with_ci(policy["policy_adherence"], policy["ci"]["policy_adherence"]),
            str(policy["violating_trials"]),
            *(str(policy["violations"].get(rule, 0)) for rule in rules),
        )
    table.caption = (
        "checked: graded trials (infra errors are never graded); a trial counts once per "
        "rule it broke"
    )
    table.caption_justify = "left"
    return table


def _blame(models: list[ModelSummary]) -> Table | None:
    """Per model: its failed trials by the party to blame and the rules that decided."""
    failing = [entry for entry in models if entry.counts.failed and entry.blame]
    if not failing:
        return None
    parties = list(dict.fromkeys(party for entry in failing for party in entry.blame))
    table = Table(title="failed trials by blame", title_justify="left")
    for column in ("model", "failed", *parties, "rules"):
        table.add_column(column, justify="left" if column in ("model", "rules") else "right")
    for entry in failing:
        rules = ", ".join(
            f"{rule} {n}" for by_party in entry.blame_rules.values() for rule, n in by_party.items()
        )
        table.add_row(
            entry.model,
            str(entry.counts.failed),
            *(str(entry.blame.get(party, 0)) for party in parties),
            rules,
        )
    return table


def _conditions(entry: ModelSummary) -> list[Table]:
    """Per variant: pass rate, recovery, load; then the Reliability Score and its parts."""
    variants = entry.variants
    recovery_all = entry.conditions.get("recovery", {})
    if len(variants) <= 1 and not recovery_all.get("failed_calls"):
        return []
    table = Table(title=f"{entry.model}: production conditions", title_justify="left")
    columns = (
        "variant",
        "trials",
        "pass@1",
        "recovery",
        "loops",
        "tool errors",
        "throughput/min",
        "trial p95",
    )
    for column in columns:
        table.add_column(column, justify="left" if column == "variant" else "right")
    for key, variant in variants.items():
        recovery = variant.get("recovery", {})
        load = variant.get("load", {})
        table.add_row(
            key or "clean",
            str(variant["counts"]["total"]),
            _fmt(variant["pass@1"]),
            _fmt(recovery.get("recovery_rate")),
            _fmt(recovery.get("loop_rate")),
            _fmt(load.get("tool_error_rate")),
            _fmt(load.get("throughput_per_min")),
            _seconds(load.get("trial_latency_p95_s")),
        )
    score = entry.reliability
    parts = " + ".join(
        f"{score['weights_used'][name]:.2f}·{name} {_fmt(value)}"
        for name, value in score["components"].items()
        if name in score["weights_used"]
    )
    value = _with_ci(score["reliability_score"], score["ci"]["reliability_score"])
    missing = ", ".join(score["missing"])
    table.caption = f"Reliability Score (k={score['k']}) = {value} = {parts}" + (
        f"\nnot measured (weights renormalised over the rest): {missing}" if missing else ""
    )
    table.caption_justify = "left"
    return [table]


_INTERVALS = (
    ("recovery", "recovery_rate"),
    ("recovery", "loop_rate"),
    ("recovery", "corrective_action"),
    ("drift", "drift_robustness"),
    ("drift", "ratio_to_clean"),
    ("load", "completion_under_load"),
    ("load", "ratio_to_baseline"),
)
"""The condition metrics shown with their intervals: (block of `conditions`, name)."""


def _condition_intervals(models: list[ModelSummary]) -> Table:
    """The condition metrics and the score of each model with their 95% intervals."""
    table = Table(title="conditions [95% CI]", title_justify="left")
    table.caption, table.caption_justify = "intervals: bootstrap over tasks", "left"
    table.add_column("metric")
    for entry in models:
        table.add_column(entry.model, justify="right")
    rows = [(name, [entry.conditions.get(block) for entry in models]) for block, name in _INTERVALS]
    rows.append(("reliability_score", [entry.reliability for entry in models]))
    for name, blocks in rows:
        if any(b and b[name] is not None for b in blocks):
            table.add_row(name, *(_with_ci(b[name], b["ci"][name]) if b else "–" for b in blocks))
    return table


def _detail(summary: ModelSummary, k: int) -> list[Table]:
    """One model in detail: its pass^k family with intervals, tiers and tasks."""
    head = Table(title="reliability", title_justify="left")
    head.add_column("metric")
    head.add_column("value", justify="right")
    head.add_column("95% CI (bootstrap over tasks)", justify="right")
    for name, value in summary.metrics.items():
        if name.startswith(("pass", "reliability_tax")) or name == "reliability_score":
            ci = summary.ci.get(name)
            head.add_row(name, _fmt(value), f"{fixed(ci[0])} – {fixed(ci[1])}" if ci else "")
    tables = [head]
    groups = _condition_columns(summary.conditions)
    if summary.tiers:
        tiers = Table(title="by tier (weighted by production weights)", title_justify="left")
        for column in ("tier", "tasks", "weight", "pass@1", f"pass^{k}", *_headers(groups)):
            tiers.add_column(column, justify="right")
        for tier, row in summary.tiers.items():
            tiers.add_row(
                tier,
                _fmt(int(row["tasks"])),
                _fmt(row["weight"]),
                _fmt(row["pass@1"]),
                _fmt(row[f"pass^{k}"]),
                *_cells(groups, "tier", tier),
            )
        tables.append(tiers)
    tasks = Table(title="tasks", title_justify="left")
    for column in ("task", "passed", "infra", "pass@1", f"pass^{k}", *_headers(groups)):
        tasks.add_column(column, justify="left" if column == "task" else "right")
    tasks.add_column("first failure")
    for row in summary.tasks:
        tasks.add_row(
            row["id"],
            f"{row['passed']}/{row['trials']}",
            str(row["infra_error"]),
            _fmt(row["metrics"]["pass@1"]),
            _fmt(row["metrics"][f"pass^{k}"]),
            *_cells(groups, "task", row["id"]),
            (row["failures"][0][:70] if row["failures"] else ""),
        )
    tables.append(tasks)
    return tables


_CONDITION_COLUMNS = {
    "recovery": (("recovery", "recovery_rate"),),
    "drift": (("drift", "drift_robustness"), ("×clean", "ratio_to_clean")),
    "load": (("load", "completion_under_load"), ("×base", "ratio_to_baseline")),
}
"""Per tier and per task: each condition's columns (header, key in its breakdown)."""


def _condition_columns(conditions: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The conditions measured in this run with their per-task and per-tier breakdowns."""
    measured = {
        "recovery": bool(conditions.get("recovery", {}).get("failed_calls")),
        "drift": "drift" in conditions,
        "load": "load" in conditions,
    }
    return {
        name: {"task": conditions[f"{name}_by_task"], "tier": conditions[f"{name}_by_tier"]}
        for name, shown in measured.items()
        if shown
    }


def _headers(groups: dict[str, dict[str, Any]]) -> list[str]:
    return [header for name in groups for header, _ in _CONDITION_COLUMNS[name]]


def _cells(groups: dict[str, dict[str, Any]], by: str, key: str) -> list[str]:
    return [
        _fmt(groups[name][by].get(key, {}).get(field))
        for name in groups
        for _, field in _CONDITION_COLUMNS[name]
    ]


def _tasks_by_model(models: list[ModelSummary], k: int) -> Table:
    table = Table(title=f"pass^{k} by task", title_justify="left")
    table.add_column("task")
    for entry in models:
        table.add_column(entry.model, justify="right")
    rows: dict[str, list[str]] = {}
    for i, entry in enumerate(models):
        for task in entry.tasks:
            cells = rows.setdefault(task["id"], ["–"] * len(models))
            cells[i] = _fmt(task["metrics"][f"pass^{k}"])
    for task_id in sorted(rows):
        table.add_row(task_id, *rows[task_id])
    return table


def gate_table(result: GateResult) -> Table:
    """`toolproof gate`: one row per condition, marked ok, FAIL or skip."""
    run = result.run
    title = f"gate · {run.suite_name} {run.suite_version} · run {result.run_id}"
    if result.baseline:
        title += f" vs baseline {result.baseline}"
    table = Table(title=escape(title), title_justify="left")
    for column in ("", "condition", "detail"):
        table.add_column(column)
    for condition in result.conditions:
        if condition.skipped:
            mark = "[yellow]skip"
        else:
            mark = "[green]ok" if condition.passed else "[red]FAIL"
        table.add_row(mark, escape(condition.title), escape(detail(condition)))
    return table
