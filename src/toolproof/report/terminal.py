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

from toolproof.format import fixed, inert
from toolproof.metrics.checkpoints import PER_TURNS
from toolproof.metrics.sections import Interval, Judge
from toolproof.metrics.summary import ModelSummary, RunSummary, measured
from toolproof.report.conditions import condition_columns
from toolproof.report.gate import detail
from toolproof.spec.metrics import (
    CATALOGUE,
    COST_USD,
    PASS_AT,
    PASS_HAT,
    POLICY_ADHERENCE,
    RELIABILITY_TAX,
    Group,
    MetricDef,
)

if TYPE_CHECKING:
    from toolproof.ci.gate import GateResult
    from toolproof.records.trial import TrialResult


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
            line = self.line(result, now - self.started)  # one line, however wide
            self.console.print(line, markup=False, highlight=False, soft_wrap=True)
            self.shown = self.done

    def line(self, result: TrialResult, elapsed: float) -> str:
        """`[0:01:23] 3/6 trials: 1 passed, 2 failed, 0 infra errors; last: TASK #1 failed:
        REASON` (the reason on one line, cut at 80 characters); `2–3/6` when trial 2 finished
        since the line before without a line of its own. A control character in the task id
        or the reason is shown (`\\x1b`, counted as shown), never sent to the terminal or
        the CI log."""
        minutes, seconds = divmod(int(elapsed), 60)
        outcome = result.outcome.replace("_", " ")
        if result.reason and result.outcome != "passed":
            reason = inert(" ".join(result.reason.split()), layout=False)  # one line, shown
            reason = reason if len(reason) <= 80 else reason[:79] + "…"
            outcome += f": {reason}"
        who = f" ({result.model})" if result.model else ""
        first = self.shown + 1
        done = f"{first}–{self.done}" if first < self.done else str(self.done)
        return inert(
            f"[{minutes // 60}:{minutes % 60:02d}:{seconds:02d}] {done}/{self.total} "
            f"trials: {self.counts['passed']} passed, {self.counts['failed']} failed, "
            f"{self.counts['infra_error']} infra errors; last: {result.task_id} "
            f"#{result.trial}{who} {outcome}",
            layout=False,
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


def _ci(interval: Interval) -> str:
    """A 95% interval as `[low, high]`; empty when there is none."""
    return "" if not interval else f"[{fixed(interval[0])}, {fixed(interval[1])}]"


def _with_ci(value: float | None, interval: Interval) -> str:
    """`0.820 [0.740, 0.900]`: a value and its interval, compact."""
    return f"{_fmt(value)} {_ci(interval)}".rstrip()


def _usd(value: float | None, priced: bool = True) -> str:
    """Dollars; a value not measured is `unpriced` when the model's cost is unknown, and
    `–` when it has none otherwise (no cost per pass with nothing passed)."""
    if value is None:
        return "unpriced" if not priced else "–"
    return f"${value:.4f}"


def _seconds(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}s"


def shown(definition: MetricDef, value: float | None, entry: ModelSummary) -> str:
    """A metric's value as the terminal shows it: by its unit, with the parts of the
    Reliability Score it was built from, and a cost never shown as zero when unknown."""
    if definition.unit == "usd":
        return _usd(value, priced=entry.metrics.get(COST_USD.name) is not None)
    if definition.unit == "seconds":
        return _seconds(value)
    if definition.unit == "tokens":
        return "–" if value is None else str(int(value))
    text = _fmt(value)
    return text + entry.reliability.parts_note() if definition.group == "score" else text


def failed_controls(judge: Judge) -> str:
    """The rubric criteria the judge left undecided because it failed their controls, on a
    line of their own (none: nothing)."""
    count = judge.undecided_criteria
    if not count:
        return ""
    which = "; ".join(
        f"{task}: {', '.join(names)}" for task, names in judge.failed_controls.items()
    )
    one = count == 1
    return (
        f"\n{count} rubric criteri{'on' if one else 'a'} undecided: the judge failed "
        f"{'its' if one else 'their'} controls ({which})"
    )


MODEL_COLUMNS: tuple[Group, ...] = ("pass", "score", "economics")
"""The groups of the models' table, in order: its columns are their metrics shown on the
terminal."""


def _columns(k: int) -> list[tuple[str, list[tuple[MetricDef, str]]]]:
    """The models' table's metric columns: (header, [(metric, name)]); a family at its
    fixed k values and at the run's k; metrics sharing a header share a column."""
    columns: list[tuple[str, list[tuple[MetricDef, str]]]] = []
    for definition in CATALOGUE.where("terminal", MODEL_COLUMNS):
        for at in [*definition.fixed_k, k] if definition.per_k else [None]:
            header = definition.header(k=at)
            name = definition.at(k=at) if at is not None else definition.name
            if columns and columns[-1][0] == header and not definition.per_k:
                columns[-1][1].append((definition, name))
            else:
                columns.append((header, [(definition, name)]))
    return columns


def _title(summary: RunSummary) -> str:
    counts = summary.counts
    title = (
        f"{summary.suite.name} · run {summary.run_id} · "
        f"{counts.total} trials: {counts.passed} passed, {counts.failed} failed, "
        f"{counts.infra_error} infra errors (counted as {summary.infra_errors})"
    )
    if summary.stopped is not None:
        title += f"\nstopped early: {summary.stopped}"
    if summary.judge is not None:
        spent = summary.judge.cost_usd
        cost = "not measured (no price)" if spent is None else _usd(spent)
        title += f"\njudge {summary.judge.model}: {cost}, apart from the cost below"
        title += failed_controls(summary.judge)
    if summary.skipped_k:
        title += f"\nnot computed (too few trials): k = {summary.skipped_k}"
    return title


def summary_tables(summary: RunSummary) -> list[Table]:
    """The run's tables: models side by side, then (one model) metrics, tiers and tasks."""
    k = max(summary.shown_ks)
    models = Table(title=_title(summary), title_justify="left")
    columns = _columns(k)
    for header in ("model", "passed", "infra", *(header for header, _ in columns)):
        models.add_column(header, justify="left" if header == "model" else "right")
    for entry in summary.models:
        c = entry.counts
        cells = [
            "/".join(shown(d, entry.metrics.get(name), entry) for d, name in members)
            for _, members in columns
        ]
        models.add_row(entry.model, f"{c.passed}/{c.total}", str(c.infra_error), *cells)
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
    names = (PASS_AT.at(k=1), PASS_AT.at(k=k), PASS_HAT.at(k=k), RELIABILITY_TAX.at(k=k))
    values = [m.get(name) for name in names]
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
    at_k, rates = str(k), (PASS_AT.at(k=1), PASS_HAT.at(k=k))
    if entry.personas:
        table = Table(title=f"{entry.model}: personas [95% CI]", title_justify="left")
        for column in ("persona", "tasks", *rates, "recovery turns", "recovered"):
            table.add_column(column, justify="left" if column == "persona" else "right")
        for name, persona in entry.personas.items():
            recovery = persona.recovery
            table.add_row(
                name,
                str(persona.n_tasks),
                _with_ci(persona.pass_rate, persona.ci.pass_rate),
                _with_ci(persona.pass_hat.get(at_k), persona.ci.pass_hat.get(at_k)),
                _with_ci(recovery.recovery_turns, recovery.ci),
                _fmt(recovery.recovered),
            )
        tables.append(table)
    if entry.checkpoints:
        trend = entry.checkpoint_degradation
        title = (
            f"{entry.model}: turn checkpoints [95% CI]\ncheckpoint_degradation "
            f"(pass@1 lost per {trend.per_turns if trend else PER_TURNS} user turns): "
            + ((trend.reason or _with_ci(trend.value, trend.ci)) if trend else "–")
        )
        table = Table(title=title, title_justify="left")
        for column in ("turns", "tasks", "user turns", *rates, "too long"):
            table.add_column(column, justify="right")
        for turns, checkpoint in entry.checkpoints.items():
            table.add_row(
                turns,
                str(checkpoint.n_tasks),
                _fmt(checkpoint.user_turns),
                _with_ci(checkpoint.pass_rate, checkpoint.ci.pass_rate),
                _with_ci(checkpoint.pass_hat.get(at_k), checkpoint.ci.pass_hat.get(at_k)),
                str(len(checkpoint.too_long)),
            )
        tables.append(table)
    return tables


def summary_notes(summary: RunSummary) -> list[str]:
    """What a reader of the numbers must know, a line each: the suite's notes, the tasks
    that cannot be graded, then the score's missing parts."""
    several = len(summary.models) > 1
    return [*(summary.notes or []), *ungradable_note(summary)] + [
        f"{entry.model + ': ' if several else ''}Reliability Score {note}"
        for entry in summary.models
        for note in entry.reliability.notes
    ]


def ungradable_note(summary: RunSummary) -> list[str]:
    """The line naming the run's ungradable tasks, left out or, when asked, counted."""
    found = summary.ungradable
    if found is None:
        return []
    names = ", ".join(found.tasks)
    if found.included:
        return [
            f"counted {len(found.tasks)} ungradable tasks (nothing they check can fail): {names}"
        ]
    return [
        f"left out {len(found.tasks)} ungradable tasks (nothing they check can fail; "
        f"--include-ungradable counts them): {names}"
    ]


def _policy(models: list[ModelSummary]) -> Table | None:
    """Per model: policy adherence with its interval, and the trials that broke each rule."""
    checked = [(entry, entry.policy) for entry in models if entry.policy]
    if not checked:
        return None
    rules = sorted({rule for _, policy in checked for rule in policy.violations})
    table = Table(title="policy [95% CI: bootstrap over tasks]", title_justify="left")
    for column in ("model", "checked", POLICY_ADHERENCE.name, "violating", *rules):
        table.add_column(column, justify="left" if column == "model" else "right")
    for entry, policy in checked:
        table.add_row(
            entry.model,
            str(policy.trials),
            _with_ci(policy.policy_adherence, policy.ci.policy_adherence),
            str(policy.violating_trials),
            *(str(policy.violations.get(rule, 0)) for rule in rules),
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
    if len(variants) <= 1 and not entry.conditions.recovery.failed_calls:
        return []
    table = Table(title=f"{entry.model}: production conditions", title_justify="left")
    columns = (
        "variant",
        "trials",
        PASS_AT.at(k=1),
        "recovery",
        "loops",
        "tool errors",
        "throughput/min",
        "trial p95",
    )
    for column in columns:
        table.add_column(column, justify="left" if column == "variant" else "right")
    for key, variant in variants.items():
        recovery, load = variant.recovery, variant.load
        table.add_row(
            key or "clean",
            str(variant.counts.total),
            _fmt(variant.pass_rate),
            _fmt(recovery.recovery_rate if recovery else None),
            _fmt(recovery.loop_rate if recovery else None),
            _fmt(load.tool_error_rate if load else None),
            _fmt(load.throughput_per_min if load else None),
            _seconds(load.trial_latency_p95_s if load else None),
        )
    score = entry.reliability
    parts = " + ".join(
        f"{score.weights_used[name]:.2f}·{name} {_fmt(value)}"
        for name, value in score.components.items()
        if name in score.weights_used
    )
    value = _with_ci(score.reliability_score, score.ci.reliability_score)
    missing = ", ".join(score.missing)
    table.caption = f"Reliability Score (k={score.k}) = {value} = {parts}" + (
        f"\nnot measured (weights renormalised over the rest): {missing}" if missing else ""
    )
    table.caption_justify = "left"
    return [table]


def _condition_intervals(models: list[ModelSummary]) -> Table:
    """The condition metrics and the score of each model with their 95% intervals."""
    table = Table(title="conditions [95% CI]", title_justify="left")
    table.caption, table.caption_justify = "intervals: bootstrap over tasks", "left"
    table.add_column("metric")
    for entry in models:
        table.add_column(entry.model, justify="right")
    found = [measured(entry) for entry in models]
    for definition in CATALOGUE:
        if definition.group not in ("conditions", "score"):
            continue
        name = definition.name
        values = [m.values.get(name) for m in found]
        if any(v is not None for v in values):
            table.add_row(
                name,
                *(_with_ci(v, m.intervals.get(name)) for v, m in zip(values, found, strict=True)),
            )
    return table


def _detail(summary: ModelSummary, k: int) -> list[Table]:
    """One model in detail: its pass^k family with intervals, tiers and tasks."""
    head = Table(title="reliability", title_justify="left")
    head.add_column("metric")
    head.add_column("value", justify="right")
    head.add_column("95% CI (bootstrap over tasks)", justify="right")
    for name, value in summary.metrics.items():
        if CATALOGUE.read(name).definition.group in ("pass", "score"):
            ci = summary.ci.get(name)
            head.add_row(name, _fmt(value), f"{fixed(ci[0])} – {fixed(ci[1])}" if ci else "")
    tables = [head]
    conditions = condition_columns(summary.conditions)
    once, each = PASS_AT.at(k=1), PASS_HAT.at(k=k)
    if summary.tiers:
        tiers = Table(title="by tier (weighted by production weights)", title_justify="left")
        for column in ("tier", "tasks", "weight", once, each, *conditions):
            tiers.add_column(column, justify="right")
        for tier, row in summary.tiers.items():
            tiers.add_row(
                tier,
                _fmt(int(row.tasks)),
                _fmt(row.weight),
                _fmt(row.value(once)),
                _fmt(row.value(each)),
                *(_fmt(cell("tier", tier)) for cell in conditions.values()),
            )
        tables.append(tiers)
    tasks = Table(title="tasks", title_justify="left")
    for column in ("task", "passed", "infra", once, each, *conditions):
        tasks.add_column(column, justify="left" if column == "task" else "right")
    tasks.add_column("first failure")
    for task in summary.tasks:
        tasks.add_row(
            task.id,
            f"{task.passed}/{task.trials}",
            str(task.infra_error),
            _fmt(task.metrics.get(once)),
            _fmt(task.metrics.get(each)),
            *(_fmt(cell("task", task.id)) for cell in conditions.values()),
            (task.failures[0][:70] if task.failures else ""),
        )
    tables.append(tasks)
    return tables


def _tasks_by_model(models: list[ModelSummary], k: int) -> Table:
    table = Table(title=f"pass^{k} by task", title_justify="left")
    table.add_column("task")
    for entry in models:
        table.add_column(entry.model, justify="right")
    rows: dict[str, list[str]] = {}
    for i, entry in enumerate(models):
        for task in entry.tasks:
            cells = rows.setdefault(task.id, ["–"] * len(models))
            cells[i] = _fmt(task.metrics.get(PASS_HAT.at(k=k)))
    for task_id in sorted(rows):
        table.add_row(task_id, *rows[task_id])
    return table


def gate_table(result: GateResult) -> Table:
    """`toolproof gate`: one row per check, marked ok, FAIL or skip."""
    run = result.run
    title = f"gate · {run.suite_name} {run.suite_version} · run {result.run_id}"
    if result.baseline:
        title += f" vs baseline {result.baseline}"
    table = Table(title=escape(title), title_justify="left")
    for column in ("", "check", "detail"):
        table.add_column(column)
    for check in result.checks:
        mark = "[yellow]skip" if check.skipped else "[green]ok" if check.passed else "[red]FAIL"
        table.add_row(mark, escape(check.title), escape(detail(check)))
    return table
