"""What the telemetry tests share: the mini suite run by a scripted agent through the real
CLI (in a subprocess), with its traces written by `--otel-file`."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from support import MINI_FILES, write_files

from toolproof.records.trial import TrialResult
from toolproof.store.journal import Store

# Two conversations: one confirms before it writes, one recovers from a failed lookup.
GOOD_SCRIPT = """
tasks:
  cancel:
    - text: "Order A is pending."
      tool_calls: [{name: get_order, arguments: {order_id: A}}]
      usage: {input_tokens: 100, output_tokens: 10}
    - text: "Shall I cancel order A?"
      usage: {input_tokens: 120, output_tokens: 8}
    - tool_calls: [{name: cancel_order, arguments: {order_id: A}}]
      usage: {input_tokens: 140, output_tokens: 9}
    - text: "Order A is cancelled."
      usage: {input_tokens: 160, output_tokens: 7}
  status:
    - tool_calls: [{name: get_order, arguments: {order_id: Z}}]
      usage: {input_tokens: 90, output_tokens: 6}
    - tool_calls: [{name: get_order, arguments: {order_id: B}}]
      usage: {input_tokens: 110, output_tokens: 6}
    - text: "Order B has shipped."
      usage: {input_tokens: 130, output_tokens: 5}
"""

# The same tasks done badly: a write without asking, a failing call repeated (a loop).
BAD_SCRIPT = """
tasks:
  cancel:
    - tool_calls: [{name: cancel_order, arguments: {order_id: A}}]
      usage: {input_tokens: 300, output_tokens: 30}
    - text: "Order A is cancelled."
      usage: {input_tokens: 320, output_tokens: 30}
  status:
    - tool_calls: [{name: get_order, arguments: {order_id: Z}}]
      usage: {input_tokens: 300, output_tokens: 30}
    - tool_calls: [{name: get_order, arguments: {order_id: Z}}]
      usage: {input_tokens: 320, output_tokens: 30}
    - tool_calls: [{name: get_order, arguments: {order_id: Z}}]
      usage: {input_tokens: 340, output_tokens: 30}
    - text: "I could not find that order."
      usage: {input_tokens: 360, output_tokens: 30}
"""


def toolproof(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The real CLI, in a subprocess of this interpreter."""
    return subprocess.run(
        [sys.executable, "-m", "toolproof", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


@dataclass
class TracedRun:
    """A finished run, its store, its trace file and its stored trials."""

    root: Path
    suite: Path
    store: Path
    traces: Path
    run_id: str

    def results(self) -> list[TrialResult]:
        return [result for _, result in Store(str(self.store)).results(self.run_id)]


def traced_run(root: Path, script: str, *extra: str, trials: int = 1) -> TracedRun:
    """Run the mini suite with a scripted agent, exporting its spans to an OTLP-JSON file."""
    suite = write_files(root / "mini", MINI_FILES)
    agent = write_files(root, {"agent.yaml": script}) / "agent.yaml"
    store, traces = root / "runs.db", root / "traces.jsonl"
    result = toolproof(
        "run",
        suite,
        "--agent",
        f"scripted:{agent}",
        "--trials",
        str(trials),
        "--k",
        "1",
        "--store",
        store,
        "--json",
        root / "summary.json",
        "--otel-file",
        traces,
        *extra,
    )
    assert result.returncode == 0, result.stderr
    run_id = json.loads((root / "summary.json").read_text())["run_id"]
    return TracedRun(root, suite, store, traces, run_id)


def requests(path: Path) -> list[dict[str, Any]]:
    """The OTLP-JSON requests of a trace file, one per line."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def attributes(span: dict[str, Any]) -> dict[str, Any]:
    """An OTLP-JSON span's attributes as plain values."""
    from toolproof.telemetry.traces import any_value

    return {a["key"]: any_value(a["value"]) for a in span.get("attributes", [])}


def spans_of(path: Path) -> list[dict[str, Any]]:
    return [
        span
        for request in requests(path)
        for resource in request["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    ]


def otlp(spans: list[dict[str, Any]]) -> str:
    """Spans (attributes as plain values) as one OTLP-JSON request line."""

    def value(v: Any) -> dict[str, Any]:
        if isinstance(v, bool):
            return {"boolValue": v}
        if isinstance(v, int):
            return {"intValue": str(v)}
        return {"stringValue": str(v)}

    encoded = [
        {
            **{k: v for k, v in span.items() if k != "attributes"},
            "attributes": [{"key": k, "value": value(v)} for k, v in span["attributes"].items()],
        }
        for span in spans
    ]
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": encoded}]}]})


def span(span_id: str, start: int, attrs: dict[str, Any], parent: str = "r1") -> dict[str, Any]:
    return {
        "traceId": "ab" * 16,
        "spanId": span_id,
        "parentSpanId": parent,
        "name": span_id,
        "startTimeUnixNano": str(start * 1_000_000),
        "endTimeUnixNano": str(start * 1_000_000 + 500_000),
        "attributes": attrs,
    }
