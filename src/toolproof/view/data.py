"""What the dashboard shows, read from the store: runs with their headline numbers, each
metric's trend across a suite's runs (one series per model), and the runs' HTML reports.

The numbers are `run_summary`'s, the ones `toolproof show` prints, computed once per run
and kept while the run's stored state (status, trial count, re-grade) is unchanged. Reports
are `toolproof report`'s pages, rendered on request; those of finished runs are kept, the
most recent first, up to a size bound.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any
from urllib.parse import quote

from toolproof.errors import ToolproofError, UsageError
from toolproof.metrics.passk import pass_hat_k
from toolproof.metrics.summary import ModelSummary, RunSummary, measured
from toolproof.report.html import render_report
from toolproof.spec.metrics import CATALOGUE, PASS_AT, PASS_HAT, RELIABILITY_SCORE, MetricDef
from toolproof.store.journal import Store
from toolproof.store.queries import list_runs
from toolproof.summaries import stored_summary

DEFAULT_LIMIT = 200
"""Runs listed (newest first) and runs charted when the query gives no limit."""

REPORT_CACHE_BYTES = 64_000_000
"""Rendered reports of finished runs kept in memory."""


Reading = Callable[[ModelSummary, int], float | None]
"""A charted value of one model in one run, pass^k at the chart's k."""


@dataclass(frozen=True)
class TrendMetric:
    """A metric charted across runs; `unit` is share (0..1), usd or seconds."""

    name: str
    label: str
    unit: str
    read: Reading


def trend_metrics() -> list[TrendMetric]:
    """The charts, from the catalogue's metrics shown on the dashboard: the pass rates,
    the Reliability Score and each of its parts, then the rest (spend, latency, infra
    errors)."""
    charts = [_pass_trend(d) for d in CATALOGUE.where("dashboard", ("pass",))]
    for score in CATALOGUE.where("dashboard", ("score",)):
        charts.append(TrendMetric(score.name, score.label, score.unit, _value(score.name)))
        charts.extend(_part_trend(part) for part in CATALOGUE.score_parts())
    for d in CATALOGUE.where("dashboard", ("economics", "outcomes")):
        charts.append(
            TrendMetric(d.name, d.label[:1].upper() + d.label[1:], d.unit, _value(d.name))
        )
    return charts


def _pass_trend(definition: MetricDef) -> TrendMetric:
    """pass@1 as the run has it; a family without a fixed k at the chart's k, from each
    task's trials (None where a task has fewer trials than k)."""
    if definition.fixed_k:
        name = definition.at(k=definition.fixed_k[0])
        return TrendMetric(name, name, definition.unit, _value(name))

    def at_k(entry: ModelSummary, k: int) -> float | None:
        tasks = [(t.trials, t.passed) for t in entry.tasks]
        if not tasks or any(n < k for n, _ in tasks):
            return None
        return sum(pass_hat_k(n, c, k) for n, c in tasks) / len(tasks)

    return TrendMetric(definition.generic, definition.generic, definition.unit, at_k)


def _part_trend(part: MetricDef) -> TrendMetric:
    """One part of the Reliability Score as the score was built from it."""
    name = f"score.{part.generic}" if part.per_k else part.name
    words = f"{part.generic} (the score's k)" if part.per_k else part.label

    def component(entry: ModelSummary, _: int) -> float | None:
        return entry.reliability.components.get(part.generic)

    return TrendMetric(name, f"Score part: {words}", part.unit, component)


def _value(name: str) -> Reading:
    def value(entry: ModelSummary, _: int) -> float | None:
        return measured(entry).values.get(name)

    return value


@dataclass(frozen=True)
class RunFilter:
    """Which runs to show: one suite, one model, one task tag, a range of days (UTC, both
    ends included), at most `limit` of them, the newest."""

    suite: str = ""
    model: str = ""
    tag: str = ""
    since: date | None = None
    until: date | None = None
    limit: int = DEFAULT_LIMIT

    @classmethod
    def parse(cls, query: Mapping[str, Sequence[str]]) -> RunFilter:
        """From the query parameters suite, model, tag, from and to (YYYY-MM-DD), limit."""

        def value(name: str) -> str:
            return (query.get(name) or [""])[-1].strip()

        limit = value("limit") or str(DEFAULT_LIMIT)
        if not limit.isdigit() or int(limit) < 1:
            raise UsageError(f"limit={limit!r}: give a positive number of runs")
        return cls(
            suite=value("suite"),
            model=value("model"),
            tag=value("tag"),
            since=_day("from", value("from")),
            until=_day("to", value("to")),
            limit=int(limit),
        )

    def keeps(self, row: Mapping[str, Any]) -> bool:
        day = row["created_at"][:10]
        return (
            (not self.suite or row["suite_name"] == self.suite)
            and (not self.model or self.model in row["models"])
            and (not self.tag or self.tag in row["tags"])
            and (self.since is None or day >= self.since.isoformat())
            and (self.until is None or day <= self.until.isoformat())
        )

    def params(self) -> dict[str, str]:
        """The filter as query parameters (only those set)."""
        out = {
            "suite": self.suite,
            "model": self.model,
            "tag": self.tag,
            "from": self.since.isoformat() if self.since else "",
            "to": self.until.isoformat() if self.until else "",
        }
        if self.limit != DEFAULT_LIMIT:
            out["limit"] = str(self.limit)
        return {key: text for key, text in out.items() if text}


def _day(name: str, text: str) -> date | None:
    if not text:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise UsageError(f"{name}={text!r}: give a day as YYYY-MM-DD") from None


def report_link(run_ids: Sequence[str]) -> str:
    if len(run_ids) == 1:
        return f"/runs/{quote(run_ids[0], safe='')}/report"
    return "/report?" + "&".join(f"run={quote(r, safe='')}" for r in run_ids)


class Dashboard:
    """The dashboard's data over one store; safe to use from several threads."""

    def __init__(self, store: Store, report_bytes: int = REPORT_CACHE_BYTES) -> None:
        self.store = store
        self._summaries: dict[str, tuple[tuple[Any, ...], RunSummary | str]] = {}
        self._reports: OrderedDict[tuple[tuple[str, Any, Any], ...], bytes] = OrderedDict()
        self._report_bytes = report_bytes
        self._rendering = threading.Lock()

    # ------------------------------------------------------------ runs

    def runs(self, chosen: RunFilter) -> dict[str, Any]:
        """The runs the filter keeps (newest first, at most its limit) with each model's
        pass@1, pass^k at the run's largest k and Reliability Score; and the values the
        filter can take."""
        rows = list_runs(self.store)
        kept = [row for row in rows if chosen.keeps(row)]
        return {
            "filter": chosen.params(),
            "total": len(kept),
            "runs": [self._listed(row) for row in kept[: chosen.limit]],
            "choices": _choices(rows),
        }

    def _listed(self, row: dict[str, Any]) -> dict[str, Any]:
        summary = self._summary(row)
        out = {
            "id": row["id"],
            "suite": {"name": row["suite_name"], "version": row["suite_version"]},
            "agent": row["agent"],
            "models": row["models"],
            "conditions": row["conditions"],
            "tags": row["tags"],
            "created_at": row["created_at"],
            "finished_at": row["finished_at"],
            "status": row["status"],
            "trials": row["trials"],
            "report": report_link([row["id"]]),
            "k": None,
            "entries": [],
            "error": summary if isinstance(summary, str) else None,
        }
        if isinstance(summary, RunSummary):
            skipped = summary.skipped_k or []
            k = max((k for k in summary.k if k not in skipped), default=None)
            out["k"] = k
            out["entries"] = [_headline(model, k) for model in summary.models]
        return out

    def _summary(self, row: Mapping[str, Any]) -> RunSummary | str:
        """The run's summary, or why there is none (a metric that cannot be computed)."""
        state = (
            row["status"],
            row["finished_at"],
            row["trials"],
            row["config"].get("regraded_at"),
        )
        cached = self._summaries.get(row["id"])
        if cached is not None and cached[0] == state:
            return cached[1]
        try:
            summary: RunSummary | str = stored_summary(self.store, row["id"])
        except ToolproofError as exc:
            summary = str(exc)
        self._summaries[row["id"]] = (state, summary)
        return summary

    # ------------------------------------------------------------ trends

    def trends(self, chosen: RunFilter, k: int | None = None) -> dict[str, Any]:
        """Each metric of `trend_metrics()` across the finished runs of one suite (the filter's,
        else the newest run's), oldest first, one series per model; pass^k at `k` (else the
        largest k every charted run has), None where a run cannot give a value."""
        rows = list_runs(self.store)
        suite = chosen.suite or (rows[0]["suite_name"] if rows else "")
        kept = [
            row
            for row in rows
            if row["status"] == "finished" and row["suite_name"] == suite and chosen.keeps(row)
        ][: chosen.limit]
        kept.reverse()
        summaries, skipped = [], []
        for row in kept:
            summary = self._summary(row)
            if isinstance(summary, str):
                skipped.append({"id": row["id"], "error": summary})
            else:
                summaries.append((row, summary))
        ks = sorted({k for _, s in summaries for k in s.k})
        common = set(ks).intersection(*(s.k for _, s in summaries)) if summaries else set()
        chosen_k = k or max(common, default=1)
        models = [
            name
            for name in dict.fromkeys(m.model for _, s in summaries for m in s.models)
            if not chosen.model or name == chosen.model
        ]
        return {
            "suite": suite,
            "k": chosen_k,
            "ks": ks,
            "filter": {**chosen.params(), "suite": suite},
            "runs": [
                {
                    "id": row["id"],
                    "created_at": row["created_at"],
                    "label": f"#{number} {row['created_at'][:10]}",
                    "report": report_link([row["id"]]),
                }
                for number, (row, _) in enumerate(summaries, start=1)
            ],
            "skipped": skipped,
            "models": models,
            "metrics": _charts([s for _, s in summaries], models, chosen_k),
            "choices": _choices(rows),
        }

    # ------------------------------------------------------------ reports

    def report(self, run_ids: Sequence[str]) -> bytes:
        """The HTML report of the runs (side by side when several), as `toolproof report`
        writes it; an unknown run is a StoreError."""
        unique = list(dict.fromkeys(run_ids))
        if not unique:
            raise UsageError("choose at least one run")
        stored = [self.store.run(run_id) for run_id in unique]
        key = tuple((r.id, r.finished_at, r.config.regraded_at) for r in stored)
        finished = all(r.finished for r in stored)
        with self._rendering:
            if finished and key in self._reports:
                self._reports.move_to_end(key)
                return self._reports[key]
            page, _ = render_report(self.store, unique)
            body = page.encode("utf-8")
            if finished:
                self._reports[key] = body
                while sum(map(len, self._reports.values())) > self._report_bytes:
                    self._reports.popitem(last=False)
        return body


def _headline(entry: ModelSummary, k: int | None) -> dict[str, Any]:
    """A model's line in the list of runs: pass@1, pass^k at the run's largest k, and the
    Reliability Score with the parts it was built from."""
    return {
        "model": entry.model,
        "counts": entry.counts.model_dump(),
        PASS_AT.at(k=1): entry.metrics.get(PASS_AT.at(k=1)),
        PASS_HAT.generic: entry.metrics.get(PASS_HAT.at(k=k)) if k else None,
        RELIABILITY_SCORE.name: entry.reliability.reliability_score,
        "score_parts": entry.reliability.parts_note().strip(),
    }


def _charts(summaries: Sequence[RunSummary], models: Sequence[str], k: int) -> list[dict[str, Any]]:
    """Every chart of `trend_metrics()`: one series per model, a value (or None) per run."""
    charts = trend_metrics()
    values: dict[str, dict[str, list[float | None]]] = {
        metric.name: {model: [None] * len(summaries) for model in models} for metric in charts
    }
    for at, summary in enumerate(summaries):
        for entry in summary.models:
            if entry.model in models:
                for metric in charts:
                    values[metric.name][entry.model][at] = metric.read(entry, k)
    return [
        {
            "name": metric.name,
            "label": PASS_HAT.at(k=k) if metric.name == PASS_HAT.generic else metric.label,
            "unit": metric.unit,
            "series": [{"model": model, "values": values[metric.name][model]} for model in models],
        }
        for metric in charts
    ]


def _choices(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Every suite, model and tag the store's runs have, for the filter form."""
    return {
        "suites": sorted({row["suite_name"] for row in rows}),
        "models": sorted({model for row in rows for model in row["models"]}),
        "tags": sorted({tag for row in rows for tag in row["tags"]}),
    }
