"""`toolproof compare` in the terminal: rich tables of a comparison."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from toolproof.format import fmt, fmt_p, variant_suffix
from toolproof.metrics.comparison import Comparison, MetricDiff, listed


def comparison_tables(comparison: Comparison, limit: int = 30) -> list[Table]:
    """Rich tables: per pair and variant, the metrics and the tasks whose passes changed."""
    tables = []
    for pair in comparison.pairs:
        for v in pair.variants:
            title = (
                f"{pair.label}{variant_suffix(v.variant)}: {comparison.run_b} − "
                f"{comparison.run_a}, {v.matched} matched trials"
            )
            table = Table(title=escape(title), title_justify="left")
            columns = ("metric", "A", "B", "B − A", f"{1 - comparison.alpha:.0%} CI", "p (tasks)")
            for column in columns:
                table.add_column(column, justify="left" if column == "metric" else "right")
            table.add_column("")
            for m in v.metrics:
                flag = _flag(m)
                table.add_row(
                    m.name,
                    fmt(m.a),
                    fmt(m.b),
                    fmt(m.delta, signed=True),
                    f"[{fmt(m.low, signed=True)}, {fmt(m.high, signed=True)}]",
                    fmt_p(m.p_value) if m.p_value is not None else "",
                    flag,
                )
            table.add_row("trials passed in one run only", str(v.a_only), str(v.b_only))
            tables.append(table)
            moved = [t for t in v.tasks if t.passed_a != t.passed_b]
            if moved:
                tasks = Table(
                    title=f"tasks whose passes changed ({len(moved)})", title_justify="left"
                )
                for column in ("task", "A", "B", "Δ pass rate", "p (Fisher)", "p (Holm)", ""):
                    tasks.add_column(column, justify="left" if column == "task" else "right")
                for t in moved[:limit]:
                    word = "regressed" if t.regressed else "improved"
                    style = "red" if t.regressed else "green"
                    mark = f"[{style}]{word}{' (significant)' if t.significant else ''}"
                    if t.changed:
                        mark += " [yellow]task changed"
                    tasks.add_row(
                        escape(t.task_id),
                        f"{t.passed_a}/{t.trials}",
                        f"{t.passed_b}/{t.trials}",
                        fmt(t.delta, signed=True),
                        fmt_p(t.p_value),
                        fmt_p(t.p_adjusted),
                        mark,
                    )
                if len(moved) > limit:
                    tasks.caption = f"{len(moved) - limit} more in --json"
                tables.append(tasks)
        if pair.metrics:
            other = Table(
                title=escape(f"{pair.label}: other metrics (no test)"), title_justify="left"
            )
            for column in ("metric", "A", "B", "B − A"):
                other.add_column(column, justify="left" if column == "metric" else "right")
            shown = listed()
            for m in pair.metrics:
                if m.name in shown and (m.a is not None or m.b is not None):
                    other.add_row(m.name, fmt(m.a, 4), fmt(m.b, 4), fmt(m.delta, 4, signed=True))
            tables.append(other)
    return tables


def _flag(m: MetricDiff) -> str:
    if not m.significant or m.delta is None:
        return ""
    return "[red]significant drop" if m.delta < 0 else "[green]significant gain"
