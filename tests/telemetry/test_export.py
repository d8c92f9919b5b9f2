"""A run's trials leave as OpenTelemetry GenAI spans: one `invoke_agent` per trial with a
`chat` per model call and an `execute_tool` per tool call under it, at the transcript's
times, to an in-memory exporter, a real OTLP/HTTP receiver and an OTLP-JSON file."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from support import write_files
from traced import GOOD_SCRIPT, attributes, spans_of, toolproof, traced_run

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)

from toolproof.records.trial import TrialResult
from toolproof.runner.run import RunRequest, run_suite
from toolproof.store.journal import Store
from toolproof.suite import Suite
from toolproof.telemetry import TraceExport
from toolproof.telemetry.spans import started_ns


def finished_trials(suite: Suite, tmp_path: Path) -> tuple[str, list[TrialResult]]:
    """The mini suite run once per task by the scripted agent, through the runner."""
    script = write_files(tmp_path, {"agent.yaml": GOOD_SCRIPT}) / "agent.yaml"
    results: list[TrialResult] = []
    request = RunRequest(agent=f"scripted:{script}", trials=1, k=[1])
    report = asyncio.run(
        run_suite(suite, request, Store(str(tmp_path / "runs.db")), on_result=results.append)
    )
    return report.run_id, results


def exported(run_id: str, results: list[TrialResult], content: bool) -> list[Any]:
    memory = InMemorySpanExporter()
    export = TraceExport([memory], content=content)
    export.run_id = run_id
    for result in results:
        export.add(result)
    export.close()
    return list(memory.get_finished_spans())


def test_each_trial_is_an_invoke_agent_span_with_chat_and_execute_tool_children(
    mini: Suite, tmp_path: Path
) -> None:
    run_id, results = finished_trials(mini, tmp_path)
    spans = exported(run_id, results, content=False)
    roots = [s for s in spans if s.attributes["gen_ai.operation.name"] == "invoke_agent"]
    assert len(roots) == len(results) == 2
    for result in results:
        (root,) = [r for r in roots if r.attributes["toolproof.task"] == result.task_id]
        children = [
            s for s in spans if s.parent is not None and s.parent.span_id == root.context.span_id
        ]
        chats = [s for s in children if s.attributes["gen_ai.operation.name"] == "chat"]
        tools = [s for s in children if s.attributes["gen_ai.operation.name"] == "execute_tool"]
        assert len(chats) == len(result.transcript.model_calls())
        assert [t.attributes["gen_ai.tool.name"] for t in tools] == [
            c.name for c in result.transcript.tool_calls()
        ]
        assert [t.attributes["gen_ai.tool.call.id"] for t in tools] == [
            c.call_id for c in result.transcript.tool_calls()
        ]
        assert len(children) == len(chats) + len(tools)
        conversation = root.attributes["gen_ai.conversation.id"]
        assert {s.attributes["gen_ai.conversation.id"] for s in children} == {conversation}
        assert root.attributes["toolproof.seed"] == result.seed
        assert root.attributes["toolproof.variant"] == result.variant
        assert root.attributes["toolproof.outcome"] == result.outcome
        assert root.attributes["gen_ai.usage.input_tokens"] == result.usage.input_tokens
        assert sum(c.attributes["gen_ai.usage.output_tokens"] for c in chats) == (
            result.usage.output_tokens
        )
        for span in (root, *chats):
            assert span.attributes["gen_ai.provider.name"] == "toolproof"  # no provider's model
            assert span.attributes["gen_ai.request.model"] == "scripted"
        # No content without --otel-content.
        assert not any("gen_ai.input.messages" in s.attributes for s in spans)
        assert not any("gen_ai.tool.call.arguments" in s.attributes for s in spans)


def test_spans_carry_the_transcripts_recorded_times(mini: Suite, tmp_path: Path) -> None:
    run_id, results = finished_trials(mini, tmp_path)
    spans = exported(run_id, results, content=False)
    for result in results:
        start = started_ns(result)
        tools = [
            s
            for s in spans
            if s.attributes.get("gen_ai.tool.call.id")
            and s.attributes["gen_ai.conversation.id"].endswith(f":{result.task_id}:0")
        ]
        for span, call in zip(tools, result.transcript.tool_calls(), strict=True):
            assert abs(span.start_time - (start + call.t * 1e9)) < 2_000
            assert abs((span.end_time - span.start_time) - call.latency_s * 1e9) < 2_000


def test_the_verdict_is_a_gen_ai_evaluation_result_event_on_the_trial_span(
    mini: Suite, tmp_path: Path
) -> None:
    run_id, results = finished_trials(mini, tmp_path)
    spans = exported(run_id, results, content=False)
    root = next(s for s in spans if s.attributes.get("toolproof.task") == "status")
    events = [e for e in root.events if e.name == "gen_ai.evaluation.result"]
    outcome = next(
        e for e in events if e.attributes["gen_ai.evaluation.name"] == "toolproof.outcome"
    )
    assert outcome.attributes["gen_ai.evaluation.score.label"] == "passed"
    assert outcome.attributes["gen_ai.evaluation.score.value"] == 1.0
    result = next(r for r in results if r.task_id == "status")
    assert len(events) == 1 + len(result.verdicts)
    assert {e.attributes["gen_ai.evaluation.explanation"] for e in events[1:]} == {
        v.reason for v in result.verdicts
    }


def test_content_is_exported_only_when_asked(mini: Suite, tmp_path: Path) -> None:
    run_id, results = finished_trials(mini, tmp_path)
    spans = exported(run_id, results, content=True)
    cancel = next(r for r in results if r.task_id == "cancel")
    chats = [
        s
        for s in spans
        if s.attributes["gen_ai.operation.name"] == "chat"
        and ":cancel:" in s.attributes["gen_ai.conversation.id"]
    ]
    last = json.loads(chats[-1].attributes["gen_ai.input.messages"])
    users = [m["parts"][0]["content"] for m in last if m["role"] == "user"]
    assert users == [m.content for m in cancel.transcript.messages("user")]
    tool = next(s for s in spans if s.attributes.get("gen_ai.tool.name") == "cancel_order")
    assert json.loads(tool.attributes["gen_ai.tool.call.arguments"]) == {"order_id": "A"}


def test_with_content_each_message_is_an_event_on_the_trial_span_at_its_time(
    mini: Suite, tmp_path: Path
) -> None:
    run_id, results = finished_trials(mini, tmp_path)
    cancel = next(r for r in results if r.task_id == "cancel")
    for content in (False, True):
        spans = exported(run_id, results, content=content)
        root = next(s for s in spans if s.attributes.get("toolproof.task") == "cancel")
        said = [e for e in root.events if e.name != "gen_ai.evaluation.result"]
        if not content:
            assert said == []
            continue
        messages = cancel.transcript.messages()
        assert [(e.name, e.attributes["content"]) for e in said] == [
            (f"gen_ai.{m.role}.message", m.content) for m in messages
        ]
        start = started_ns(cancel)
        assert [e.timestamp for e in said] == [start + int(m.t * 1e9) for m in messages]


class Receiver(BaseHTTPRequestHandler):
    """A minimal OTLP/HTTP collector: decodes each protobuf request it is sent."""

    received: ClassVar[list[ExportTraceServiceRequest]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        self.received.append(request)
        assert self.path == "/v1/traces"
        assert self.headers["Content-Type"] == "application/x-protobuf"
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture
def collector() -> Iterator[tuple[str, list[ExportTraceServiceRequest]]]:
    received: ClassVar[list[ExportTraceServiceRequest]] = []
    handler = type("Handler", (Receiver,), {"received": received})
    server = HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}", received
    server.shutdown()
    server.server_close()


@pytest.mark.slow
def test_run_sends_its_spans_to_an_otlp_http_collector(
    tmp_path: Path, collector: tuple[str, list[ExportTraceServiceRequest]]
) -> None:
    url, received = collector
    run = traced_run(tmp_path, GOOD_SCRIPT, "--otel-endpoint", url)
    sent = [
        span
        for request in received
        for resource in request.resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
    ]
    from_file = spans_of(run.traces)
    assert sorted(s.name for s in sent) == sorted(s["name"] for s in from_file)
    assert {s.span_id.hex() for s in sent} == {s["spanId"] for s in from_file}
    assert sum(s.name.startswith("invoke_agent ") for s in sent) == len(run.results()) == 2


@pytest.mark.slow
def test_the_otel_file_holds_one_otlp_json_request_per_line(tmp_path: Path) -> None:
    run = traced_run(tmp_path, GOOD_SCRIPT, "--otel-content")
    spans = spans_of(run.traces)
    results = run.results()
    assert sum(attributes(s)["gen_ai.operation.name"] == "invoke_agent" for s in spans) == 2
    assert len(spans) == sum(
        1 + len(r.transcript.model_calls()) + len(r.transcript.tool_calls()) for r in results
    )
    for span in spans:
        assert len(span["traceId"]) == 32 and len(span["spanId"]) == 16
        int(span["traceId"], 16)
        assert isinstance(span["kind"], int)
    ids = {s["spanId"] for s in spans}
    assert all(s["parentSpanId"] in ids for s in spans if "parentSpanId" in s)


@pytest.mark.slow
def test_an_otel_file_that_cannot_be_written_stops_the_run_before_it_starts(
    tmp_path: Path, mini_dir: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = toolproof(
        "run",
        mini_dir,
        "--agent",
        "oracle",
        "--store",
        tmp_path / "runs.db",
        "--otel-file",
        blocker / "traces.jsonl",
    )
    assert result.returncode == 2
    assert "--otel-file" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "runs.db").exists() or not Store(str(tmp_path / "runs.db")).runs()


@pytest.mark.slow
def test_without_the_otel_extra_the_run_is_a_usage_error(tmp_path: Path, mini_dir: Path) -> None:
    """The SDK made unimportable in a real subprocess: the run refuses before it starts."""
    hide = (
        "import sys, importlib.abc\n"
        "class Hide(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.startswith(('opentelemetry.sdk', 'opentelemetry.exporter')):\n"
        "            raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, Hide())\n"
        "sys.argv = ['toolproof', *sys.argv[1:]]\n"
        "from toolproof.cli import main\n"
        "main()\n"
    )
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            hide,
            "run",
            str(mini_dir),
            "--agent",
            "oracle",
            "--store",
            str(tmp_path / "runs.db"),
            "--otel-endpoint",
            "http://127.0.0.1:9",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2, result.stderr
    assert "pip install 'toolproof[otel]'" in result.stderr
    assert "Traceback" not in result.stderr


def test_an_injected_fault_and_drift_are_toolproof_attributes_of_the_tool_span() -> None:
    from toolproof.runner.variants import Variant
    from toolproof.transcript import ToolCallEvent, Transcript

    transcript = Transcript(
        events=[
            ToolCallEvent(
                t=0.5,
                call_id="c1",
                name="fetch_order",
                arguments={"id": "A"},
                result={"error": "rate limited"},
                is_error=True,
                error_kind="rate_limited",
                latency_s=0.25,
                fault="rate_limit",
                tool="get_order",
                tool_arguments={"order_id": "A"},
            )
        ]
    )
    variant = Variant(faults="flaky", drift="renamed").key
    result = TrialResult(
        task_id="status",
        trial=2,
        seed=99,
        variant=variant,
        outcome="failed",
        reason="no answer",
        transcript=transcript,
        started_at="2026-12-01T10:00:00.000+00:00",
        duration_s=1.0,
    )
    spans = {s.attributes["gen_ai.operation.name"]: s for s in exported("run-1", [result], False)}
    root, tool = spans["invoke_agent"], spans["execute_tool"]
    assert tool.attributes["toolproof.fault"] == "rate_limit"
    assert tool.attributes["toolproof.drift.tool"] == "get_order"
    assert tool.attributes["error.type"] == "rate_limited"
    assert tool.status.status_code.name == "ERROR"
    assert root.attributes["toolproof.faults"] == "flaky"
    assert root.attributes["toolproof.drift"] == "renamed"
    assert root.attributes["gen_ai.conversation.id"] == f"run-1:{variant}:status:2"


@pytest.mark.slow
def test_an_otel_endpoint_that_is_not_a_url_stops_the_run_before_it_starts(
    tmp_path: Path, mini_dir: Path
) -> None:
    db = tmp_path / "runs.db"
    result = toolproof(
        "run", mini_dir, "--agent", "oracle", "--store", db, "--otel-endpoint", "localhost:4318"
    )
    assert result.returncode == 2
    assert "--otel-endpoint localhost:4318: give an http:// or https:// URL" in result.stderr
    assert not Store(str(db)).runs()
    content_alone = toolproof("run", mini_dir, "--agent", "oracle", "--otel-content")
    assert content_alone.returncode == 2
    assert "--otel-content needs --otel-endpoint or --otel-file" in content_alone.stderr
