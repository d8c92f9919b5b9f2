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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any
from urllib.parse import quote

from toolproof.errors import ToolproofError, UsageError
from toolproof.format import score_parts
from toolproof.metrics.passk import pass_hat_k
from toolproof.report.html import render_report
from toolproof.store.journal import Store
from toolproof.store.queries import list_runs
from toolproof.summaries import stored_summary

DEFAULT_LIMIT = 200
"""Runs listed (newest first) and runs charted when the query gives no limit."""

REPORT_CACHE_BYTES = 64_000_000
"""Rendered reports of finished runs kept in memory."""


@dataclass(frozen=True)
class TrendMetric:
    """A metric charted across runs; `unit` is share (0..1), usd or seconds."""

    name: str
    label: str
    unit: str


TREND_METRICS = (
    TrendMetric("pass@1", "pass@1", "share"),
    TrendMetric("pass^k", "pass^k", "share"),
    TrendMetric("reliability_score", "Reliability Score", "share"),
    TrendMetric("score.pass^k", "Score part: pass^k (the score's k)", "share"),
    TrendMetric("recovery_rate", "Score part: recovery rate", "share"),
    TrendMetric("completion_under_load", "Score part: completion under load", "share"),
    TrendMetric("drift_robustness", "Score part: drift robustness", "share"),
    TrendMetric("cost_per_pass_usd", "Cost per passed task", "usd"),
    TrendMetric("latency_p95_s", "Model-call latency p95", "seconds"),
    TrendMetric("trial_latency_p95_s", "Trial duration p95", "seconds"),
    TrendMetric("infra_error_share", "Infra-error share of trials", "share"),
)


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
        self._summaries: dict[str, tuple[tuple[Any, ...], dict[str, Any] | str]] = {}
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
        if isinstance(summary, dict):
            skipped = summary.get("skipped_k", [])
            k = max((k for k in summary["k"] if k not in skipped), default=None)
            out["k"] = k
            out["entries"] = [_headline(model, k) for model in summary["models"]]
        return out

    def _summary(self, row: Mapping[str, Any]) -> dict[str, Any] | str:
        """The run's summary as JSON data (what the pages and the API serve), or why there
        is none (a metric that cannot be computed)."""
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
            summary: dict[str, Any] | str = stored_summary(self.store, row["id"]).as_json()
        except ToolproofError as exc:
            summary = str(exc)
        self._summaries[row["id"]] = (state, summary)
        return summary

    # ------------------------------------------------------------ trends

    def trends(self, chosen: RunFilter, k: int | None = None) -> dict[str, Any]:
        """Each metric of TREND_METRICS across the finished runs of one suite (the filter's,
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
        ks = sorted({k for _, s in summaries for k in s["k"]})
        common = set(ks).intersection(*(s["k"] for _, s in summaries)) if summaries else set()
        chosen_k = k or max(common, default=1)
        models = [
            name
            for name in dict.fromkeys(m["model"] for _, s in summaries for m in s["models"])
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


def _headline(model: Mapping[str, Any], k: int | None) -> dict[str, Any]:
    metrics = model.get("metrics", {})
    return {
        "model": model["model"],
        "counts": model["counts"],
        "pass@1": metrics.get("pass@1"),
        "pass^k": metrics.get(f"pass^{k}") if k else None,
        "reliability_score": (model.get("reliability") or {}).get("reliability_score"),
        "score_parts": score_parts(model.get("reliability")).strip(),
    }


def _charts(
    summaries: Sequence[Mapping[str, Any]], models: Sequence[str], k: int
) -> list[dict[str, Any]]:
    """Every metric of TREND_METRICS: one series per model, a value (or None) per run."""
    values: dict[str, dict[str, list[float | None]]] = {
        metric.name: {model: [None] * len(summaries) for model in models}
        for metric in TREND_METRICS
    }
    for at, summary in enumerate(summaries):
        for model in summary["models"]:
            if model["model"] in models:
                for name, value in _trend_values(model, k).items():
                    values[name][model["model"]][at] = value
    return [
        {
            "name": metric.name,
            "label": f"pass^{k}" if metric.name == "pass^k" else metric.label,
            "unit": metric.unit,
            "series": [{"model": model, "values": values[metric.name][model]} for model in models],
        }
        for metric in TREND_METRICS
    ]


def _trend_values(model: Mapping[str, Any], k: int) -> dict[str, float | None]:
    """One model's values in one run for every metric of TREND_METRICS."""
    metrics = model.get("metrics", {})
    reliability = model.get("reliability") or {}
    components = reliability.get("components", {})
    tasks = [(t["trials"], t["passed"]) for t in model.get("tasks", [])]
    counts = [variant["counts"] for variant in model.get("variants", {}).values()]
    total = sum(c["total"] for c in counts)
    return {
        "pass@1": metrics.get("pass@1"),
        "pass^k": (
            sum(pass_hat_k(n, c, k) for n, c in tasks) / len(tasks)
            if tasks and all(n >= k for n, _ in tasks)
            else None
        ),
        "reliability_score": reliability.get("reliability_score"),
        "score.pass^k": components.get("pass^k"),
        "recovery_rate": components.get("recovery_rate"),
        "completion_under_load": components.get("completion_under_load"),
        "drift_robustness": components.get("drift_robustness"),
        "cost_per_pass_usd": metrics.get("cost_per_pass_usd"),
        "latency_p95_s": metrics.get("latency_p95_s"),
        "trial_latency_p95_s": metrics.get("trial_latency_p95_s"),
        "infra_error_share": sum(c["infra_error"] for c in counts) / total if total else None,
    }


def _choices(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Every suite, model and tag the store's runs have, for the filter form."""
    return {
        "suites": sorted({row["suite_name"] for row in rows}),
        "models": sorted({model for row in rows for model in row["models"]}),
        "tags": sorted({tag for row in rows for tag in row["tags"]}),
    }
