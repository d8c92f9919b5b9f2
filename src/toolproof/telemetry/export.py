"""Sending a run's trials out as OpenTelemetry traces: to an OTLP/HTTP collector, to an
OTLP-JSON file, or to any span exporter. Spans are built from each finished trial and
handed to a batch processor, whose own thread does the exporting: the trials never wait."""

from __future__ import annotations

import base64
import importlib.util
import json
import queue
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolproof.errors import UsageError
from toolproof.records.trial import TrialResult
from toolproof.version import __version__

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter

TRACES_PATH = "/v1/traces"
# A run makes spans in bursts (hundreds of trials finishing at once); the SDK's default queue
# of 2,048 spans would drop some while a collector is slow. A span is ~1-2 KB.
QUEUE_SPANS = 65_536
BATCH_SPANS = 1_024
ID_FIELDS = ("traceId", "spanId", "parentSpanId")


@dataclass(frozen=True)
class OtelOptions:
    """Where a run's traces go, and whether message content goes with them."""

    endpoint: str | None = None
    file: Path | None = None
    content: bool = False

    def wanted(self) -> bool:
        return self.endpoint is not None or self.file is not None


def require_sdk(flag: str) -> None:
    """A usage error, before any work, when the `otel` extra is not installed."""
    needed = ("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http")
    try:
        missing = [name for name in needed if importlib.util.find_spec(name) is None]
    except ModuleNotFoundError:
        missing = list(needed)
    if missing:
        raise UsageError(f"{flag} needs OpenTelemetry: pip install 'toolproof[otel]'")


def traces_url(endpoint: str) -> str:
    """A collector's base URL (`http://host:4318`) or its traces URL, as the traces URL."""
    if not endpoint.startswith(("http://", "https://")):
        raise UsageError(f"--otel-endpoint {endpoint}: give an http:// or https:// URL")
    endpoint = endpoint.rstrip("/")
    return endpoint if endpoint.endswith(TRACES_PATH) else endpoint + TRACES_PATH


def otlp_json(spans: Sequence[ReadableSpan]) -> str:
    """Spans as one ExportTraceServiceRequest in OTLP's JSON encoding: camelCase fields,
    enums as numbers, trace and span ids as hex (not protobuf JSON's base64)."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    request = MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    for resource in request.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                hex_ids(span)
                for link in span.get("links", []):
                    hex_ids(link)
    return json.dumps(request, separators=(",", ":"))


def hex_ids(item: dict[str, Any]) -> None:
    for name in ID_FIELDS:
        if item.get(name):
            item[name] = base64.b64decode(item[name]).hex()


def file_exporter(path: Path) -> SpanExporter:
    """An exporter appending one OTLP-JSON request per line, the OTLP file format."""
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    class OtlpJsonFile(SpanExporter):
        def __init__(self) -> None:
            self.lock = threading.Lock()
            self.handle = path.open("a", encoding="utf-8")

        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            line = otlp_json(spans)
            with self.lock:
                self.handle.write(line + "\n")
                self.handle.flush()
            return SpanExportResult.SUCCESS

        def shutdown(self) -> None:
            with self.lock:
                self.handle.close()

    return OtlpJsonFile()


class TraceExport:
    """A run's trace output: `add` each finished trial, `close` at the end (which waits for
    the last batch). A thread of its own builds the spans (about a millisecond a trial of
    CPU, kept off the event loop the trials run on); a BatchSpanProcessor per exporter sends
    them."""

    def __init__(self, exporters: list[SpanExporter], content: bool = False) -> None:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        self.content = content
        self.provider: TracerProvider = TracerProvider(
            resource=Resource.create({"service.name": "toolproof"})
        )
        for exporter in exporters:
            self.provider.add_span_processor(
                BatchSpanProcessor(
                    exporter,
                    max_queue_size=QUEUE_SPANS,
                    max_export_batch_size=BATCH_SPANS,
                    schedule_delay_millis=1000,
                )
            )
        self.tracer = self.provider.get_tracer("toolproof", __version__)
        self.run_id = ""
        self.pending: queue.SimpleQueue[TrialResult | None] = queue.SimpleQueue()
        self.worker = threading.Thread(target=self._build, name="toolproof-spans", daemon=True)
        self.worker.start()

    def add(self, result: TrialResult) -> None:
        self.pending.put(result)

    def _build(self) -> None:
        from toolproof.telemetry.spans import emit_trial

        while (result := self.pending.get()) is not None:
            emit_trial(self.tracer, self.run_id, result, content=self.content)

    def close(self) -> None:
        self.pending.put(None)
        self.worker.join()
        self.provider.force_flush()
        self.provider.shutdown()


def open_export(options: OtelOptions) -> TraceExport:
    """The exporters the options ask for; call `check_options` before the run first."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    exporters: list[SpanExporter] = []
    if options.endpoint is not None:
        exporters.append(OTLPSpanExporter(endpoint=traces_url(options.endpoint)))
    if options.file is not None:
        exporters.append(file_exporter(options.file))
    return TraceExport(exporters, options.content)


def check_options(options: OtelOptions) -> None:
    """Everything that could stop the export, checked before the run: the extra is
    installed, the endpoint is a URL, --otel-content has somewhere to go."""
    if options.content and not options.wanted():
        raise UsageError("--otel-content needs --otel-endpoint or --otel-file")
    if not options.wanted():
        return
    require_sdk("--otel-endpoint" if options.endpoint else "--otel-file")
    if options.endpoint is not None:
        traces_url(options.endpoint)
