"""How far the graders agree with people, as a table and as what could not be measured
(`toolproof agreement`; the numbers are `labelling.agreement_found`'s)."""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from rich.table import Table

from toolproof.format import fixed

SHORT = {
    "cohen_kappa": "kappa",
    "krippendorff_alpha": "alpha",
    "true_positive_rate": "TPR",
    "false_positive_rate": "FPR",
}
"""The statistics by their column names."""


def not_measured(found: dict[str, Any]) -> list[str]:
    """What the labels cannot support, compactly: one line per reason and set of statistics,
    naming every row it holds for; with no item labelled by two people, one line for people
    with each other (their rows are left out of the table)."""
    held: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for who, part in _rows(found):
        by_reason: dict[str, list[str]] = {}
        for metric, why in part["not_measured"].items():
            name = metric.removesuffix("_interval")
            shown = SHORT[name] + (" interval" if name != metric else "")
            by_reason.setdefault(why, []).append(shown)
        for why, metrics in by_reason.items():
            held.setdefault((why, tuple(metrics)), []).append(who)
    lines = [f"{_listed(who)}: {_listed(list(m))} ({why})" for (why, m), who in held.items()]
    if not _people_paired(found):
        lines.append(
            "people with each other: no item was labelled by two people; a second person's "
            "labels on the same trials measure it"
        )
    return lines


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _people_paired(found: dict[str, Any]) -> bool:
    return bool(found["humans"]["pairs"])


def agreement_table(found: dict[str, Any]) -> Table:
    table = Table(
        title=f"run {found['run_id']}: {found['labelled_items']} labelled items, "
        f"labellers: {', '.join(found['labellers']) or 'none'}",
        title_justify="left",
    )
    for column in ("grader", "items", "pairs", "kappa", "alpha", "TPR", "FPR"):
        table.add_column(column, justify="left" if column == "grader" else "right")
    for name, part in _rows(found):
        table.add_row(
            escape(name),
            str(part["items"]),
            str(part["pairs"]),
            _with_interval(part, "cohen_kappa"),
            _number(part.get("krippendorff_alpha")),
            _with_interval(part, "true_positive_rate"),
            _with_interval(part, "false_positive_rate"),
        )
    return table


def _rows(found: dict[str, Any]) -> list[tuple[str, Any]]:
    """Each grader's part, then people's with each other (pooled over the criteria, then per
    criterion) when some item was labelled by two people."""
    people = [
        ("people with each other", found["humans"]),
        *((f"people on {name}", part) for name, part in found["humans_by_criterion"].items()),
    ]
    return [*found["graders"].items(), *(people if _people_paired(found) else [])]


def _number(value: Any) -> str:
    return "–" if value is None else fixed(value)


def _with_interval(part: dict[str, Any], name: str) -> str:
    if name not in part:
        return ""
    interval = part.get(f"{name}_interval")
    shown = _number(part[name])
    if interval is not None:
        shown += f" [{fixed(interval[0], 2)}, {fixed(interval[1], 2)}]"
    return escape(shown)
