"""`toolproof monitor` as Markdown: production against the baseline run, one row per
dimension, for an alert or a pull request."""

from __future__ import annotations

from toolproof.ci.monitor import MonitorReport
from toolproof.format import fixed


def monitor_markdown(report: MonitorReport) -> str:
    """The report for an alert or a pull request: one row per dimension."""

    def shown(value: float | None) -> str:
        return "not measured" if value is None else fixed(value)

    verdict = (
        f"**regressed**: {', '.join(c.dimension for c in report.regressed)}"
        if report.regressed
        else "no significant regression"
    )
    lines = [
        f"## toolproof monitor: {verdict}",
        "",
        f"Production conversations: {report.conversations}; baseline: "
        f"{report.baseline_trials} trials of run `{report.baseline_run}`. A regression is "
        f"worse by more than "
        f"{report.max_regression:g} (points for rates, a share of the baseline for amounts) "
        f"at p < {report.alpha:g} (one-sided permutation test, conversation as the unit).",
        *(
            [
                "",
                f"Left out of the baseline: {len(report.left_out)} ungradable tasks (nothing "
                f"they check can fail; --include-ungradable counts them): "
                f"{', '.join(report.left_out)}.",
            ]
            if report.left_out
            else []
        ),
        "",
        "| dimension | baseline | production | p | status |",
        "|---|---|---|---|---|",
    ]
    for c in report.comparisons:
        p_value = "–" if c.p_value is None else f"{c.p_value:.4f}"
        lines.append(
            f"| {c.dimension} | {shown(c.baseline)} | {shown(c.current)} | {p_value} | {c.status} |"
        )
    return "\n".join(lines) + "\n"
