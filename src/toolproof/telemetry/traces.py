"""Reading production traces back: OTLP-JSON files (one ExportTraceServiceRequest per line,
as `run --otel-file` and the OpenTelemetry Collector's file exporter write them, or one
request in the whole file) and the SDK's one-span-per-line JSON, with attributes named by
either the OpenTelemetry GenAI conventions or OpenInference. Each conversation becomes a
`Transcript`, so that the graders and metrics that read trials read production too.

Needs no OpenTelemetry package: the files are plain JSON."""

from __future__ import annotations

import contextlib
import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from toolproof.errors import Problem, SuiteError
from toolproof.models.base import ToolCall, Usage
from toolproof.spec.files import FileProblem, read_file
from toolproof.spec.yamlload import MAX_DEPTH, too_deep
from toolproof.telemetry import semconv as sc
from toolproof.transcript import (
    EndEvent,
    Event,
    MessageEvent,
    ModelCallEvent,
    ToolCallEvent,
    Transcript,
)

MODEL_OPERATIONS = {"chat", "text_completion", "generate_content"}
ERROR_STATUS = {2, "STATUS_CODE_ERROR", "ERROR"}


@dataclass(frozen=True)
class SpanEvent:
    """An event a span recorded: its name, when, and its attributes."""

    name: str
    time_ns: int
    attributes: dict[str, Any]


@dataclass
class Span:
    """One span as read, with where it was read (file line) for located problems."""

    trace_id: str
    span_id: str
    parent_id: str
    name: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    error: bool
    line: int
    events: list[SpanEvent] = field(default_factory=list)

    @property
    def kind(self) -> str:
        """'agent', 'model', 'tool' or '' by either convention's attributes."""
        operation = self.attributes.get(sc.OPERATION)
        if operation == sc.INVOKE_AGENT:
            return "agent"
        if operation in MODEL_OPERATIONS:
            return "model"
        if operation == sc.EXECUTE_TOOL:
            return "tool"
        return {"AGENT": "agent", "LLM": "model", "TOOL": "tool"}.get(
            str(self.attributes.get(sc.OI_SPAN_KIND, "")).upper(), ""
        )


@dataclass
class Conversation:
    """The spans of one production conversation, in time order, and what was wrong in them."""

    id: str
    spans: list[Span]
    path: str
    problems: list[Problem] = field(default_factory=list)

    def problem(self, span: Span, message: str) -> None:
        self.problems.append(Problem(self.path, span.line, f"span {span.span_id}: {message}"))

    def attribute(self, name: str) -> Any:
        """The first value of an attribute on any span (the agent span first)."""
        for span in sorted(self.spans, key=lambda s: s.kind != "agent"):
            if name in span.attributes:
                return span.attributes[name]
        return None


def any_value(value: dict[str, Any]) -> Any:
    """An OTLP-JSON AnyValue as a Python value."""
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return int(value["intValue"])
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        return [any_value(v) for v in value["arrayValue"].get("values", [])]
    if "kvlistValue" in value:
        return {kv["key"]: any_value(kv.get("value", {})) for kv in value["kvlistValue"]["values"]}
    return None


def otlp_attributes(items: list[dict[str, Any]]) -> dict[str, Any]:
    return {a["key"]: any_value(a.get("value", {})) for a in items}


def otlp_spans(request: dict[str, Any], line: int) -> list[Span]:
    """The spans of one ExportTraceServiceRequest (OTLP-JSON)."""
    out = []
    for resource in request.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                out.append(
                    Span(
                        trace_id=str(span.get("traceId", "")),
                        span_id=str(span.get("spanId", "")),
                        parent_id=str(span.get("parentSpanId", "")),
                        name=str(span.get("name", "")),
                        start_ns=int(span.get("startTimeUnixNano", 0)),
                        end_ns=int(span.get("endTimeUnixNano", 0)),
                        attributes=otlp_attributes(span.get("attributes", [])),
                        error=span.get("status", {}).get("code") in ERROR_STATUS,
                        line=line,
                        events=[
                            SpanEvent(
                                str(e.get("name", "")),
                                int(e.get("timeUnixNano", 0)),
                                otlp_attributes(e.get("attributes", [])),
                            )
                            for e in span.get("events", [])
                        ],
                    )
                )
    return out


def sdk_span(data: dict[str, Any], line: int) -> Span:
    """A span as the Python SDK's `to_json` (and the console exporter) writes it."""
    from datetime import datetime

    def ns(text: Any) -> int:
        if not text:
            return 0
        return int(datetime.fromisoformat(str(text).replace("Z", "+00:00")).timestamp() * 1e9)

    context = data.get("context", {})
    return Span(
        trace_id=str(context.get("trace_id", "")).removeprefix("0x"),
        span_id=str(context.get("span_id", "")).removeprefix("0x"),
        parent_id=str(data.get("parent_id") or "").removeprefix("0x"),
        name=str(data.get("name", "")),
        start_ns=ns(data.get("start_time")),
        end_ns=ns(data.get("end_time")),
        attributes=dict(data.get("attributes") or {}),
        error=data.get("status", {}).get("status_code") in ERROR_STATUS,
        line=line,
        events=[
            SpanEvent(
                str(e.get("name", "")), ns(e.get("timestamp")), dict(e.get("attributes") or {})
            )
            for e in data.get("events") or []
        ],
    )


def read_spans(path: Path) -> list[Span]:
    """Every span in a trace file; a file that is not one of the formats is a located error."""
    shown = str(path)
    try:
        text = read_file(path).decode("utf-8")
    except (FileProblem, UnicodeDecodeError) as exc:
        raise SuiteError.at(shown, None, f"cannot read the trace file: {exc}") from None
    try:
        documents = [(1, json.loads(text))]
    except RecursionError:
        raise SuiteError.at(shown, None, f"nesting deeper than {MAX_DEPTH} levels") from None
    except json.JSONDecodeError:
        documents = []
        problems = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                documents.append((number, json.loads(line)))
            except json.JSONDecodeError as exc:
                problems.append(Problem(shown, number, f"not JSON: {exc.msg}"))
            except RecursionError:
                problems.append(Problem(shown, number, f"nesting deeper than {MAX_DEPTH} levels"))
        if problems:
            raise SuiteError(problems) from None
    for number, document in documents:
        if too_deep(document):
            raise SuiteError.at(shown, number, f"nesting deeper than {MAX_DEPTH} levels")
    spans: list[Span] = []
    for number, document in documents:
        items = document if isinstance(document, list) else [document]
        for item in items:
            if isinstance(item, dict) and "resourceSpans" in item:
                spans.extend(otlp_spans(item, number))
            elif isinstance(item, dict) and "context" in item and "name" in item:
                spans.append(sdk_span(item, number))
            else:
                raise SuiteError.at(
                    shown,
                    number,
                    "neither an OTLP-JSON request (resourceSpans) nor a span (context, name)",
                )
    if not spans:
        raise SuiteError.at(shown, None, "no spans in the trace file")
    return spans


def conversations(path: Path) -> list[Conversation]:
    """The file's spans grouped by conversation: `gen_ai.conversation.id` (or OpenInference's
    `session.id`) where a span of the trace has one, otherwise the trace itself."""
    spans = read_spans(path)
    by_trace: dict[str, str] = {}
    for span in spans:
        named = span.attributes.get(sc.CONVERSATION_ID) or span.attributes.get(sc.OI_SESSION)
        if named:
            by_trace.setdefault(span.trace_id, str(named))
    grouped: dict[str, list[Span]] = defaultdict(list)
    for span in spans:
        grouped[by_trace.get(span.trace_id, span.trace_id)].append(span)
    return [
        Conversation(key, sorted(group, key=lambda s: s.start_ns), str(path))
        for key, group in grouped.items()
    ]


def pick(found: list[Conversation], wanted: str | None, path: Path) -> Conversation:
    """The conversation asked for, or the only one; otherwise a usage-style located error."""
    if wanted is not None:
        for conversation in found:
            if conversation.id == wanted:
                return conversation
        raise SuiteError.at(path, None, f"no conversation {wanted!r} in the file")
    if len(found) > 1:
        names = ", ".join(c.id for c in found[:5]) + (", ..." if len(found) > 5 else "")
        raise SuiteError.at(
            path, None, f"{len(found)} conversations ({names}): pick one with --conversation"
        )
    return found[0]


def parsed_json(conversation: Conversation, span: Span, name: str, text: Any) -> Any:
    """An attribute holding JSON, parsed; unparsable text is a located problem and None."""
    if not isinstance(text, str):
        return text
    try:
        value = json.loads(text)
        deep = too_deep(value)
    except json.JSONDecodeError:
        conversation.problem(span, f"attribute {name} is not JSON")
        return None
    except RecursionError:
        deep = True
    if deep:
        conversation.problem(span, f"attribute {name} nests deeper than {MAX_DEPTH} levels")
        return None
    return value


def oi_messages(attributes: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """OpenInference's flattened messages (`llm.input_messages.0.message.role`, ...)."""
    found: dict[int, dict[str, Any]] = defaultdict(dict)
    for key, value in attributes.items():
        if not key.startswith(prefix + "."):
            continue
        index, _, rest = key[len(prefix) + 1 :].partition(".")
        if index.isdigit():
            found[int(index)][rest] = value
    messages = []
    for position in sorted(found):
        fields = found[position]
        calls: dict[int, dict[str, Any]] = defaultdict(dict)
        for key, value in fields.items():
            if key.startswith("message.tool_calls."):
                number, _, name = key.removeprefix("message.tool_calls.").partition(".")
                if number.isdigit():
                    calls[int(number)][name] = value
        parts: list[dict[str, Any]] = []
        if fields.get("message.content"):
            parts.append({"type": "text", "content": fields["message.content"]})
        for _, call in sorted(calls.items()):
            parts.append(
                {
                    "type": "tool_call",
                    "id": call.get("tool_call.id", ""),
                    "name": call.get("tool_call.function.name", ""),
                    "arguments": call.get("tool_call.function.arguments", {}),
                }
            )
        messages.append({"role": fields.get("message.role", ""), "parts": parts})
    return messages


def messages_of(conversation: Conversation, span: Span, which: str) -> list[dict[str, Any]] | None:
    """A model span's input or output messages in the GenAI shape (role, parts), from either
    convention; None when the trace carries no content."""
    name = sc.INPUT_MESSAGES if which == "input" else sc.OUTPUT_MESSAGES
    if name in span.attributes:
        value = parsed_json(conversation, span, name, span.attributes[name])
        return value if isinstance(value, list) else None
    oi = sc.OI_INPUT_MESSAGES if which == "input" else sc.OI_OUTPUT_MESSAGES
    flattened = oi_messages(span.attributes, oi)
    if flattened:
        return flattened
    nested = span.attributes.get(oi)
    return [oi_message(m) for m in nested] if isinstance(nested, list) else None


def oi_message(message: Any) -> dict[str, Any]:
    """One OpenInference message given nested ({message: {role, content}})."""
    inner = message.get("message", message) if isinstance(message, dict) else {}
    parts = [{"type": "text", "content": inner["content"]}] if inner.get("content") else []
    return {"role": inner.get("role", ""), "parts": parts}


def text_of(message: dict[str, Any]) -> str:
    return "".join(
        str(p.get("content", ""))
        for p in message.get("parts", [])
        if isinstance(p, dict) and p.get("type") == "text"
    )


def model_event(conversation: Conversation, span: Span, t: float) -> ModelCallEvent:
    attributes = span.attributes
    output = messages_of(conversation, span, "output") or []
    calls = [
        ToolCall(
            id=str(part.get("id", "")),
            name=str(part.get("name", "")),
            arguments=part.get("arguments") if isinstance(part.get("arguments"), dict) else None,
            raw_arguments=part["arguments"] if isinstance(part.get("arguments"), str) else "",
        )
        for message in output
        for part in message.get("parts", [])
        if isinstance(part, dict) and part.get("type") == "tool_call"
    ]
    reasons = attributes.get(sc.FINISH_REASONS) or [""]
    return ModelCallEvent(
        t=t,
        model=str(attributes.get(sc.REQUEST_MODEL) or attributes.get(sc.OI_MODEL) or ""),
        content="".join(text_of(m) for m in output),
        tool_calls=calls,
        usage=Usage(
            input_tokens=int(
                attributes.get(sc.INPUT_TOKENS, attributes.get(sc.OI_PROMPT_TOKENS, 0))
            ),
            output_tokens=int(
                attributes.get(sc.OUTPUT_TOKENS, attributes.get(sc.OI_COMPLETION_TOKENS, 0))
            ),
        ),
        latency_s=max(0.0, (span.end_ns - span.start_ns) / 1e9),
        stop_reason=str(reasons[0] if isinstance(reasons, list) else reasons),
    )


def tool_event(conversation: Conversation, span: Span, t: float) -> ToolCallEvent | None:
    attributes = span.attributes
    name = attributes.get(sc.TOOL_NAME) or attributes.get(sc.OI_TOOL_NAME)
    if not name:
        conversation.problem(span, f"a tool span without {sc.TOOL_NAME} or {sc.OI_TOOL_NAME}")
        return None
    names = (sc.TOOL_ARGUMENTS, sc.OI_TOOL_PARAMETERS, sc.OI_INPUT_VALUE)
    key = next((k for k in names if k in attributes), None)
    arguments = parsed_json(conversation, span, key, attributes[key]) if key else None
    result_key = sc.TOOL_RESULT if sc.TOOL_RESULT in attributes else sc.OI_OUTPUT_VALUE
    result = attributes.get(result_key)
    if isinstance(result, str):
        with contextlib.suppress(json.JSONDecodeError, RecursionError):
            parsed = json.loads(result)
            result = result if too_deep(parsed) else parsed
    error_kind = attributes.get(sc.TOOL_ERROR_KIND) or attributes.get(sc.ERROR_TYPE)
    return ToolCallEvent(
        t=t,
        call_id=str(attributes.get(sc.TOOL_CALL_ID) or attributes.get(sc.OI_TOOL_CALL_ID) or ""),
        name=str(name),
        arguments=arguments if isinstance(arguments, dict) else None,
        raw_arguments="" if isinstance(arguments, dict) else str(attributes.get(key or "", "")),
        result=result,
        is_error=span.error or error_kind is not None,
        error_kind=str(error_kind) if error_kind else None,
        latency_s=max(0.0, (span.end_ns - span.start_ns) / 1e9),
        fault=attributes.get(sc.FAULT),
        tool=attributes.get(sc.DRIFT_TOOL),
    )


SAID: dict[str, Literal["user", "assistant"]] = {
    sc.USER_MESSAGE: "user",
    sc.ASSISTANT_MESSAGE: "assistant",
}


def said_events(conversation: Conversation) -> list[tuple[int, MessageEvent]]:
    """The messages the agent span recorded as events, each with the time it was said;
    none when the trace has no such events."""
    start = min(s.start_ns for s in conversation.spans)
    return [
        (
            event.time_ns,
            MessageEvent(
                t=round((event.time_ns - start) / 1e9, 6),
                role=SAID[event.name],
                content=str(event.attributes.get(sc.MESSAGE_CONTENT, "")),
            ),
        )
        for span in conversation.spans
        if span.kind == "agent"
        for event in span.events
        if event.name in SAID
    ]


def transcript_of(conversation: Conversation) -> Transcript:
    """The conversation as a transcript: each model call and each tool call, and the
    messages: at the times the agent span's message events give (a user message before a
    call of the same instant, a reply after it), or else the user messages where a model
    first saw them and the agent's replies as model answers without tool calls. A
    conversation with neither model spans nor message events has its user messages (from
    the agent span) but no replies: their order among the tool calls is unknown."""
    said = said_events(conversation)
    if said:
        return timed_transcript(conversation, said)
    start = min(s.start_ns for s in conversation.spans)
    transcript = Transcript()
    users_seen = 0
    for span in conversation.spans:
        t = round((span.start_ns - start) / 1e9, 6)
        if span.kind == "model":
            inputs = messages_of(conversation, span, "input") or []
            users = [m for m in inputs if m.get("role") == "user"]
            for message in users[users_seen:]:
                transcript.add(MessageEvent(t=t, role="user", content=text_of(message)))
            users_seen = max(users_seen, len(users))
            event = model_event(conversation, span, t)
            transcript.add(event)
            if event.content and not event.tool_calls:
                end = round(t + event.latency_s, 6)
                transcript.add(MessageEvent(t=end, role="assistant", content=event.content))
        elif span.kind == "tool":
            call = tool_event(conversation, span, t)
            if call is not None:
                transcript.add(call)
    if users_seen == 0:
        agent = next((s for s in conversation.spans if s.kind == "agent"), None)
        given = messages_of(conversation, agent, "input") if agent else None
        transcript.events[0:0] = [
            MessageEvent(t=0.0, role="user", content=text_of(m))
            for m in given or []
            if m.get("role") == "user"
        ]
    return ended(conversation, transcript)


def timed_transcript(
    conversation: Conversation, said: list[tuple[int, MessageEvent]]
) -> Transcript:
    """The conversation with its messages at the times they were said, among its model and
    tool calls."""
    start = min(s.start_ns for s in conversation.spans)
    timed: list[tuple[int, int, Event]] = [
        (at, 0 if message.role == "user" else 2, message) for at, message in said
    ]
    for span in conversation.spans:
        t = round((span.start_ns - start) / 1e9, 6)
        call: Event | None = None
        if span.kind == "model":
            call = model_event(conversation, span, t)
        elif span.kind == "tool":
            call = tool_event(conversation, span, t)
        if call is not None:
            timed.append((span.start_ns, 1, call))
    transcript = Transcript()
    for _, _, event in sorted(timed, key=lambda item: item[:2]):
        transcript.add(event)
    return ended(conversation, transcript)


def ended(conversation: Conversation, transcript: Transcript) -> Transcript:
    """The transcript with how the conversation ended, where the trace says."""
    reason = conversation.attribute(sc.ENDED)
    if reason:
        start = min(s.start_ns for s in conversation.spans)
        end = max(s.end_ns for s in conversation.spans)
        transcript.add(EndEvent(t=round((end - start) / 1e9, 6), reason=str(reason)))
    return transcript


def duration_s(conversation: Conversation) -> float:
    """Wall time of the conversation, first span start to last span end."""
    start = min(s.start_ns for s in conversation.spans)
    return max(0.0, (max(s.end_ns for s in conversation.spans) - start) / 1e9)
