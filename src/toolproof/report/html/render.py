"""One self-contained HTML file about one or more stored runs.

The page opens offline: the charting library, the styles and the page's own script are inlined,
and the data travels inside the file. Everything a run says about itself (summaries, the
task × trial grid, failure reasons) is one JSON block; the trials' full records (transcript,
verdicts, world diff) are gzip-compressed in chunks of similar trials, base64-encoded, and
decompressed in the browser only when a trial is opened. A size budget bounds the transcripts
of very large runs: the trials that did not pass come first, then passing trials spread over
every task; the page says how many it holds.

Text from models, tools and suites never becomes markup: the page builds its DOM with
`textContent`, the JSON block escapes `<`, `>` and `&`, and a Content-Security-Policy allows
only the page's own scripts (by hash), so an injected `<script>` or event handler cannot run.
"""

from __future__ import annotations

import base64
import hashlib
import html
import os
import re
import time
import zlib
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any

import orjson

from toolproof.errors import UsageError
from toolproof.files import write_atomic
from toolproof.metrics.passk import pass_at_k, pass_hat_k
from toolproof.metrics.summary import CONVERSATION_SECTIONS, ModelSummary, RunSummary, run_summary
from toolproof.perf import gc_paused
from toolproof.spec.metrics import CATALOGUE
from toolproof.store import payload
from toolproof.store.journal import Store
from toolproof.store.queries import outcomes_and_failures, stored_records
from toolproof.summaries import task_metas
from toolproof.version import __version__

DEFAULT_TRANSCRIPTS_MB = 10.0
"""Default budget for the embedded (compressed, base64) trial records, in MB."""

CHUNK_TRIALS = 64
"""Trials per compressed chunk: one click decompresses at most this many."""

CHUNK_RAW_BYTES = 512 * 1024
"""A chunk also closes once its JSON reaches this size."""

MAX_CURVE_POINTS = 120
"""pass^k curves with more trials than this are sampled at this many k values."""

TOP_REASONS = 12
"""Failure reasons listed per model."""

_OUTCOME_CODES = {"passed": "p", "failed": "f", "infra_error": "i"}
_FETCH_BATCH = 500


@dataclass
class ReportStats:
    """What a written report holds."""

    path: Path
    bytes: int
    runs: int
    trials: int
    transcripts: int
    seconds: float


@dataclass
class _Collected:
    """What the page is made of, and every trial in grid order: its store row id, outcome
    code (p, f, i) and position among its task's trials."""

    data: dict[str, Any]
    row_ids: list[int] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)
    ranks: list[int] = field(default_factory=list)


def render_report(
    store: Store,
    run_ids: Sequence[str],
    *,
    title: str | None = None,
    transcripts_mb: float = DEFAULT_TRANSCRIPTS_MB,
    include_ungradable: bool = False,
) -> tuple[str, dict[str, int]]:
    """The report's HTML and its counts (`trials`, `transcripts`); its numbers leave out
    ungradable tasks unless `include_ungradable` (the grid shows every trial)."""
    if not run_ids:
        raise UsageError("give at least one RUN_ID")
    if transcripts_mb < 0:
        raise UsageError("--transcripts-mb must be 0 or more")
    unique = list(dict.fromkeys(run_ids))
    with gc_paused(), _Packer(int(transcripts_mb * 1_000_000)) as packer:
        # the records of trials that did not pass are packed as the rows stream by
        collected = _collect(store, unique, packer, include_ungradable)
        if not packer.full:
            _pack_passing(store, collected, packer)
        packer.finish()
    chunks, index = packer.chunks, packer.index
    data = collected.data
    data["transcripts"] = {
        "total": len(collected.row_ids),
        "embedded": sum(len(c) for c in index),
        "budget_mb": transcripts_mb,
        "chunks": index,
    }
    data["title"] = title or _default_title(data)
    page = _page(data, chunks)
    return page, {"trials": len(collected.row_ids), "transcripts": data["transcripts"]["embedded"]}


def write_report(
    store: Store,
    run_ids: Sequence[str],
    path: str | Path,
    *,
    title: str | None = None,
    transcripts_mb: float = DEFAULT_TRANSCRIPTS_MB,
    include_ungradable: bool = False,
) -> ReportStats:
    """Render the report and write it to `path` (its folder is created), whole or not at all."""
    started = time.perf_counter()
    page, counts = render_report(
        store,
        run_ids,
        title=title,
        transcripts_mb=transcripts_mb,
        include_ungradable=include_ungradable,
    )
    target = Path(path)
    write_atomic(target, page, "-o")  # whole or not at all: a failed write keeps the old page
    return ReportStats(
        path=target,
        bytes=len(page.encode("utf-8")),
        runs=len(dict.fromkeys(run_ids)),
        trials=counts["trials"],
        transcripts=counts["transcripts"],
        seconds=time.perf_counter() - started,
    )


# ---------------------------------------------------------------- data


def _collect(
    store: Store, run_ids: list[str], packer: _Packer, include_ungradable: bool
) -> _Collected:
    """Summaries, entries (one per run and model), the grid and every trial's place; the
    records of trials that did not pass go to the packer on the way."""
    runs: list[dict[str, Any]] = []
    entries: list[dict[str, Any]] = []
    groups: list[dict[str, Any]] = []
    reasons: dict[str, int] = {"": 0}
    out = _Collected(data={})
    for run_number, run_id in enumerate(run_ids):
        run = store.run(run_id)
        # the grid keeps the rows' order: this run's trials follow those collected so far
        rows, ids = outcomes_and_failures(store, run_id, packer.from_index(len(out.row_ids)))
        metas = task_metas(store, run_id)
        summary = run_summary(run, rows, metas, include_ungradable=include_ungradable)
        ks = summary.shown_ks
        runs.append(
            {
                "id": run_id,
                "suite": summary.suite.model_dump(),
                "agent": summary.agent,
                "status": summary.status,
                "stopped": summary.stopped,
                "judge": summary.judge.model_dump() if summary.judge else None,
                "created_at": run.created_at,
                "finished_at": run.finished_at,
                "counts": summary.counts.model_dump(),
                "infra_errors": summary.infra_errors,
                "k": ks,
                "skipped_k": summary.skipped_k or [],
                "toolproof_version": run.toolproof_version,
                "variants": list(run.config.variants),
            }
        )
        by_label: dict[str, int] = {}
        for model in summary.models:
            by_label[model.model] = len(entries)
            entries.append(_entry(model, run_number, ks))
        _grid(rows, ids, summary, by_label, entries, groups, reasons, out)
    labels = Counter(e["label"] for e in entries)
    for e in entries:
        if labels[e["label"]] > 1:
            e["label"] = f"{e['label']} · {runs[e['run']]['id']}"
    out.data = {
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "toolproof_version": __version__,
        "catalogue": catalogue(),
        "runs": runs,
        "entries": entries,
        "grid": {"groups": groups, "reasons": list(reasons)},
    }
    return out


def catalogue() -> dict[str, Any]:
    """What the page knows of the metric catalogue: the Reliability Score's parts as its
    `components` name them, with their labels; and the metrics of a run's latency, each
    with its label."""
    parts = [
        {"key": d.generic, "label": f"{d.generic} (clean trials)" if d.per_k else d.label}
        for d in CATALOGUE.score_parts()
    ]
    latency = [
        {"name": d.name, "label": d.label}
        for d in CATALOGUE.where("html", ("economics",))
        if d.unit == "seconds"
    ]
    return {"parts": parts, "latency": latency}


def _entry(summary: ModelSummary, run: int, ks: list[int]) -> dict[str, Any]:
    """One model of one run: its summary, minus per-task rows, plus its pass^k curve."""
    model = summary.model_dump(mode="json", exclude_unset=True)
    tasks = summary.tasks
    return {
        "label": summary.model,
        "model": summary.model,
        "run": run,
        "k": max(ks),
        "ks": ks,
        "variant": summary.variant,
        "counts": model["counts"],
        "metrics": model["metrics"],
        "ci": model["ci"],
        "reliability": model["reliability"],
        "variants": model["variants"],
        "conditions": model["conditions"],
        "policy": model["policy"],
        "blame": model["blame"],
        "blame_rules": model["blame_rules"],
        **{key: model[key] for key in CONVERSATION_SECTIONS if model.get(key) is not None},
        "tiers": model["tiers"],
        "tags": model["tags"],
        "tasks": len(tasks),
        "curve": passk_curve([(t.trials, t.passed) for t in tasks]),
        "reasons": [],
    }


def passk_curve(tasks: Sequence[tuple[int, int]]) -> dict[str, list[float]]:
    """pass^k and pass@k averaged over tasks, for k = 1 .. the fewest trials of any task.

    `tasks` holds (n, c) per task: its trials and how many passed. With more than
    `MAX_CURVE_POINTS` values of k, the curve is sampled at that many k (1 and n included).
    """
    kept = [(n, c) for n, c in tasks if n > 0]
    if not kept:
        return {"k": [], "pass_hat": [], "pass_at": []}
    fewest = min(n for n, _ in kept)
    if fewest <= MAX_CURVE_POINTS:
        ks = list(range(1, fewest + 1))
    else:
        step = (fewest - 1) / (MAX_CURVE_POINTS - 1)
        ks = sorted({round(1 + i * step) for i in range(MAX_CURVE_POINTS)} | {fewest})
    counts = Counter(kept)
    total = len(kept)
    hat, at = [], []
    for k in ks:
        hat.append(sum(pass_hat_k(n, c, k) * w for (n, c), w in counts.items()) / total)
        at.append(sum(pass_at_k(n, c, k) * w for (n, c), w in counts.items()) / total)
    return {"k": [float(k) for k in ks], "pass_hat": hat, "pass_at": at}


_GROUP_KEY = itemgetter("model", "variant", "task_id")
_OUTCOME = itemgetter("outcome")
_TRIAL = itemgetter("trial")
_REASON = itemgetter("reason")


def _grid(
    rows: list[dict[str, Any]],
    ids: list[int],
    summary: RunSummary,
    by_label: dict[str, int],
    entries: list[dict[str, Any]],
    groups: list[dict[str, Any]],
    reasons: dict[str, int],
    out: _Collected,
) -> None:
    """Append one run's grid groups (one per model, variant and task, each holding its
    trials' outcomes in trial order) and its trials; count failure reasons per entry."""
    exclude = summary.infra_errors == "exclude"
    agent = summary.agent
    why: dict[int, Counter[str]] = defaultdict(Counter)
    why_tasks: dict[int, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    start = 0
    left_out = summary.ungradable.tasks if summary.ungradable else {}
    if summary.ungradable and summary.ungradable.included:
        left_out = {}
    for (model, variant, task_id), members in groupby(rows, _GROUP_KEY):
        chunk = list(members)
        first, start = start, start + len(chunk)
        codes = [_OUTCOME_CODES.get(o, "f") for o in map(_OUTCOME, chunk)]
        if task_id in left_out:  # left out of the numbers: kept in place, in no group
            out.row_ids.extend(ids[first:start])
            out.codes.extend(codes)
            out.ranks.extend(range(len(codes)))
            continue
        entry = by_label[agent if model == "" else model]  # the summary came from these rows
        numbers = list(map(_TRIAL, chunk))
        group: dict[str, Any] = {
            "e": entry,
            "v": variant,
            "task": task_id,
            "s": len(out.row_ids),
            "o": "".join(codes),
        }
        if numbers != list(range(len(numbers))):
            group["t"] = numbers
        if "f" in group["o"] or "i" in group["o"]:
            ids_here = []
            for code, text in zip(codes, map(_REASON, chunk), strict=True):
                if code == "p" or not text:
                    ids_here.append(0)
                    continue
                ids_here.append(reasons.setdefault(text, len(reasons)))
                why[entry][text] += 1
                why_tasks[entry][text].add(task_id)
            if any(ids_here):
                group["r"] = ids_here
        passed = codes.count("p")
        counted = len(codes) - (codes.count("i") if exclude else 0)
        k = entries[entry]["k"]
        group["c"], group["n"] = passed, counted
        group["k"] = pass_hat_k(counted, passed, k) if counted >= k else None
        groups.append(group)
        out.row_ids.extend(ids[first:start])
        out.codes.extend(codes)
        out.ranks.extend(range(len(codes)))
    for entry, counter in why.items():
        entries[entry]["reasons"] = [
            {"reason": text, "trials": count, "tasks": len(why_tasks[entry][text])}
            for text, count in counter.most_common(TOP_REASONS)
        ]


# ---------------------------------------------------------------- transcripts

GZIP_LEVEL = 3
"""Fast, and close to level 6 on chunks of similar records (the window finds the repeats)."""


STORED_RATIO = 3
"""About how much larger a trial's record is than its stored, compressed form: how stored
bytes count toward CHUNK_RAW_BYTES before a worker opens them."""


def _pack(stored: list[bytes]) -> str:
    """Stored records opened and joined as a JSON list, then gzip (the format
    DecompressionStream reads; header time 0, so output is stable). Runs in a worker: zlib
    lets the other threads go on meanwhile."""
    raw = b"[" + b",".join(payload.json_bytes(record) for record in stored) + b"]"
    return base64.b64encode(zlib.compress(raw, GZIP_LEVEL, wbits=31)).decode("ascii")


class _Packer:
    """Trial records, added in priority order, packed into base64 gzip chunks until the
    budget (bytes of base64) is spent; a chunk that would go over it ends the packing."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.used = 0
        self.full = budget <= 0
        self.chunks: list[str] = []
        self.index: list[list[int]] = []
        self._indices: list[int] = []
        self._parts: list[bytes] = []
        self._size = 0
        self._workers = max(1, min(8, os.cpu_count() or 1))
        self._pool = ThreadPoolExecutor(max_workers=self._workers)
        self._pending: deque[tuple[list[int], Future[str]]] = deque()

    def __enter__(self) -> _Packer:
        return self

    def __exit__(self, *_: object) -> None:
        self.finish()

    def add(self, index: int, stored: bytes | str) -> None:
        """Add the record of the trial at a grid index as the store holds it (compressed,
        or JSON text in an older store); the workers open it."""
        if self.full:
            return
        record = payload.stored_bytes(stored)
        self._indices.append(index)
        self._parts.append(record)
        plain = record[:1] in (b"{", b"[")
        self._size += len(record) * (1 if plain else STORED_RATIO) + 1
        if len(self._indices) >= CHUNK_TRIALS or self._size >= CHUNK_RAW_BYTES:
            self._close_chunk()

    def from_index(self, first: int) -> Callable[[int, bytes | str], None]:
        """`add` for one run's trials, numbered from 0, whose first has grid index `first`."""
        return lambda at, stored: self.add(first + at, stored)

    def _close_chunk(self) -> None:
        if not self._indices:
            return
        self._pending.append((self._indices, self._pool.submit(_pack, self._parts)))
        self._indices, self._parts, self._size = [], [], 0
        while len(self._pending) > 2 * self._workers and not self.full:
            self._settle()

    def _settle(self) -> None:
        """Account for the oldest compressed chunk: keep it, or stop at the budget."""
        ids, future = self._pending.popleft()
        packed = future.result()
        if self.used + len(packed) > self.budget:
            self.full = True
            return
        self.used += len(packed)
        self.chunks.append(packed)
        self.index.append(ids)

    def finish(self) -> None:
        """Pack what is left and stop the workers (idempotent)."""
        if not self.full:
            self._close_chunk()
        while self._pending and not self.full:
            self._settle()
        for _, future in self._pending:
            future.cancel()
        self._pending.clear()
        self._indices, self._parts = [], []
        self._pool.shutdown(wait=True)


def _pack_passing(store: Store, collected: _Collected, packer: _Packer) -> None:
    """Add the passing trials' records, spread over every task: the first four trials of
    every task before later trials of any, fetched by row id in batches."""
    codes, ranks, row_ids = collected.codes, collected.ranks, collected.row_ids
    passing = [i for i, code in enumerate(codes) if code == "p"]
    passing.sort(key=lambda i: (ranks[i] >> 2, i))
    wanted = [row_ids[i] for i in passing]
    with closing(stored_records(store, wanted, _FETCH_BATCH)) as batches:
        for start, texts in zip(range(0, len(passing), _FETCH_BATCH), batches, strict=True):
            for i in passing[start : start + _FETCH_BATCH]:
                if row_ids[i] in texts:
                    packer.add(i, texts[row_ids[i]])
            if packer.full:
                return


# ---------------------------------------------------------------- page


def _asset(*parts: str) -> str:
    return resources.files("toolproof.report.html").joinpath(*parts).read_text(encoding="utf-8")


SCRIPT_PARTS = ("page.js", "summary.js", "breakdowns.js", "trials.js", "start.js")
"""The report's script, in the order it runs: parts of one function's body, sharing its scope."""


def _script() -> str:
    """The report's script: its parts, in order, inside one strict function run at once."""
    body = "\n".join(_asset("template", name) for name in SCRIPT_PARTS)
    return f"(function () {{\n  'use strict';\n\n{body}}})();\n"


_SCRIPT_CLOSE = re.compile(r"</(script)", re.IGNORECASE)
_SOURCE_MAP = re.compile(r"^//# sourceMappingURL=.*$", re.MULTILINE)


def inline_script(source: str) -> str:
    """JavaScript made safe to inline: no `</script` or `<!--` can end or alter the block."""
    source = _SOURCE_MAP.sub("", source)
    return _SCRIPT_CLOSE.sub(r"<\\/\1", source).replace("<!--", "<\\!--")


def json_for_script(value: Any) -> str:
    """JSON to embed in a <script type="application/json"> block: `<`, `>`, `&` and the
    JavaScript line separators escaped, so no text inside can close the block."""
    text = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode("utf-8")
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _hash(script: str) -> str:
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def _default_title(data: dict[str, Any]) -> str:
    runs = data["runs"]
    suites = list(dict.fromkeys(f"{r['suite']['name']} {r['suite']['version']}" for r in runs))
    if len(runs) == 1:
        return f"{suites[0]} · run {runs[0]['id']}"
    return f"{', '.join(suites)} · {len(runs)} runs"


def _page(data: dict[str, Any], chunks: list[str]) -> str:
    chart = inline_script(_asset("static", "chart.umd.min.js"))
    app = inline_script(_script())
    style = _asset("template", "report.css")
    if "</" in style:
        raise ValueError("report.css must not contain '</'")
    csp = "; ".join(
        [
            "default-src 'none'",
            f"script-src {_hash(chart)} {_hash(app)}",
            "style-src 'unsafe-inline'",
            "base-uri 'none'",
            "form-action 'none'",
        ]
    )
    blobs = "\n".join(
        f'<script type="text/plain" id="tx-{i}">{chunk}</script>' for i, chunk in enumerate(chunks)
    )
    replacements = {
        "{{CSP}}": html.escape(csp, quote=True),
        "{{TITLE}}": html.escape(data["title"]),
        "{{STYLE}}": style,
        "{{DATA}}": json_for_script(data),
        "{{CHUNKS}}": blobs,
        "{{CHARTJS}}": chart,
        "{{APP}}": app,
    }
    page = _asset("template", "report.html")
    pattern = re.compile("|".join(re.escape(k) for k in replacements))
    return pattern.sub(lambda m: replacements[m.group(0)], page)
