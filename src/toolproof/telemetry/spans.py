"""A finished trial as OpenTelemetry GenAI spans: `invoke_agent` for the trial, `chat` per
model call and `execute_tool` per tool call under it, each at the time the transcript
recorded, so that exporting adds nothing to what was measured."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode, Tracer

from toolproof.records.trial import TrialResult
from toolproof.runner.variants import Variant
from toolproof.telemetry import semconv as sc
from toolproof.transcript import MessageEvent, ModelCallEvent, ToolCallEvent

Attributes = dict[str, Any]
NS = 1_000_000_000


def conversation_id(run_id: str, result: TrialResult) -> str:
    """One trial, named so a person can read it back: run, model, variant, task, trial."""
    parts = [run_id, result.model, result.variant, result.task_id, str(result.trial)]
    return ":".join(part for part in parts if part)


def started_ns(result: TrialResult) -> int:
    """The trial's start as Unix nanoseconds (from the record's UTC timestamp)."""
    if not result.started_at:
        return 0
    return int(datetime.fromisoformat(result.started_at).timestamp() * NS)


def text_part(content: str) -> dict[str, Any]:
    return {"type": "text", "content": content}


def trial_model(result: TrialResult) -> tuple[str, str]:
    """The provider and model a trial ran on; a trial of an agent without a provider (a
    baseline, a script) is toolproof's, named by its model calls' model or by the agent."""
    if result.model:
        return sc.provider_and_model(result.model)
    calls = result.transcript.model_calls()
    return "toolproof", calls[0].model if calls else result.agent or "toolproof"


def trial_attributes(run_id: str, result: TrialResult) -> Attributes:
    """The `invoke_agent` span's attributes: the conventions' names, then toolproof's own."""
    provider, model = trial_model(result)
    variant = Variant.parse(result.variant)
    attributes: Attributes = {
        sc.OPERATION: sc.INVOKE_AGENT,
        sc.PROVIDER: provider,
        sc.REQUEST_MODEL: model,
        sc.AGENT_NAME: result.agent or "toolproof",
        sc.CONVERSATION_ID: conversation_id(run_id, result),
        sc.INPUT_TOKENS: result.usage.input_tokens,
        sc.OUTPUT_TOKENS: result.usage.output_tokens,
        sc.RUN_ID: run_id,
        sc.TASK: result.task_id,
        sc.VARIANT: result.variant,
        sc.SEED: result.seed,
        sc.TRIAL: result.trial,
        sc.OUTCOME: result.outcome,
        sc.ENDED: result.ended,
    }
    extra: Attributes = {
        "toolproof.faults": variant.faults,
        "toolproof.drift": variant.drift,
        "toolproof.load": variant.load,
        sc.COST_USD: result.cost_usd,
    }
    attributes.update({key: value for key, value in extra.items() if value is not None})
    return attributes


def chat_attributes(
    result: TrialResult, call: ModelCallEvent, conversation: str, history: list[Any] | None
) -> Attributes:
    provider, model = sc.provider_and_model(result.model or call.model)
    attributes: Attributes = {
        sc.OPERATION: sc.CHAT,
        sc.PROVIDER: provider,
        sc.REQUEST_MODEL: model,
        sc.CONVERSATION_ID: conversation,
        sc.INPUT_TOKENS: call.usage.input_tokens,
        sc.OUTPUT_TOKENS: call.usage.output_tokens,
    }
    if call.stop_reason:
        attributes[sc.FINISH_REASONS] = [call.stop_reason]
    if history is not None:
        attributes[sc.INPUT_MESSAGES] = json.dumps(history, default=str)
        attributes[sc.OUTPUT_MESSAGES] = json.dumps([assistant_message(call)], default=str)
    return attributes


def tool_attributes(call: ToolCallEvent, conversation: str, content: bool) -> Attributes:
    attributes: Attributes = {
        sc.OPERATION: sc.EXECUTE_TOOL,
        sc.TOOL_NAME: call.name,
        sc.TOOL_CALL_ID: call.call_id,
        sc.TOOL_TYPE: "function",
        sc.CONVERSATION_ID: conversation,
        sc.TOOL_CALLER: call.by,
    }
    if call.is_error:
        attributes[sc.ERROR_TYPE] = call.error_kind or "tool_error"
        attributes[sc.TOOL_ERROR_KIND] = call.error_kind or "tool_error"
    if call.fault:
        attributes[sc.FAULT] = call.fault
    if call.tool is not None:
        attributes[sc.DRIFT_TOOL] = call.tool
    if content:
        arguments = call.arguments if call.arguments is not None else call.raw_arguments
        attributes[sc.TOOL_ARGUMENTS] = json.dumps(arguments, default=str)
        attributes[sc.TOOL_RESULT] = json.dumps(call.result, default=str)
    return attributes


def assistant_message(call: ModelCallEvent) -> dict[str, Any]:
    """A model call's answer as the conventions' output message."""
    parts: list[dict[str, Any]] = [text_part(call.content)] if call.content else []
    parts.extend(
        {
            "type": "tool_call",
            "id": c.id,
            "name": c.name,
            "arguments": c.arguments if c.arguments is not None else c.raw_arguments,
        }
        for c in call.tool_calls
    )
    message: dict[str, Any] = {"role": "assistant", "parts": parts}
    if call.stop_reason:
        message["finish_reason"] = call.stop_reason
    return message


def tool_message(call: ToolCallEvent) -> dict[str, Any]:
    part = {"type": "tool_call_response", "id": call.call_id, "response": call.result}
    return {"role": "tool", "parts": [part]}


def emit_trial(tracer: Tracer, run_id: str, result: TrialResult, *, content: bool) -> None:
    """Write one trial's spans through `tracer`, timed by its transcript. Message content
    (messages, tool arguments and results) only with `content`: it may hold personal data."""
    start = started_ns(result)
    end = start + int(result.duration_s * NS)
    conversation = conversation_id(run_id, result)
    root = tracer.start_span(
        f"{sc.INVOKE_AGENT} {result.agent or 'toolproof'}",
        kind=SpanKind.INTERNAL,
        attributes=trial_attributes(run_id, result),
        start_time=start,
    )
    parent = trace.set_span_in_context(root)
    history: list[Any] = []
    said: list[Any] = []
    for event in result.transcript.events:
        at = start + int(event.t * NS)
        if isinstance(event, MessageEvent):
            message = {"role": event.role, "parts": [text_part(event.content)]}
            (history if event.role == "user" else said).append(message)
            if content:
                name = sc.USER_MESSAGE if event.role == "user" else sc.ASSISTANT_MESSAGE
                root.add_event(name, {sc.MESSAGE_CONTENT: event.content}, timestamp=at)
        elif isinstance(event, ModelCallEvent) and event.role == "agent":
            span = tracer.start_span(
                f"{sc.CHAT} {sc.provider_and_model(result.model or event.model)[1]}",
                context=parent,
                kind=SpanKind.CLIENT,
                attributes=chat_attributes(
                    result, event, conversation, list(history) if content else None
                ),
                start_time=at,
            )
            span.end(end_time=at + int(event.latency_s * NS))
            history.append(assistant_message(event))
        elif isinstance(event, ToolCallEvent):
            span = tracer.start_span(
                f"{sc.EXECUTE_TOOL} {event.name}",
                context=parent,
                kind=SpanKind.INTERNAL,
                attributes=tool_attributes(event, conversation, content),
                start_time=at,
            )
            if event.is_error:
                span.set_status(Status(StatusCode.ERROR, str(event.result)[:200]))
            span.end(end_time=at + int(event.latency_s * NS))
            if event.by == "agent":  # the user's own calls are no part of the agent's chat
                history.append(tool_message(event))
    if content:
        users = [m for m in history if m["role"] == "user"]
        root.set_attribute(sc.INPUT_MESSAGES, json.dumps(users, default=str))
        root.set_attribute(sc.OUTPUT_MESSAGES, json.dumps(said, default=str))
    add_verdicts(root, result, end)
    if result.outcome == "infra_error":
        root.set_attribute(sc.ERROR_TYPE, "infra_error")
        root.set_status(Status(StatusCode.ERROR, result.reason[:200]))
    root.end(end_time=end)


def add_verdicts(span: trace.Span, result: TrialResult, at: int) -> None:
    """The outcome, then each grader's verdict, as `gen_ai.evaluation.result` events."""
    span.add_event(
        sc.EVALUATION_EVENT,
        {
            sc.EVALUATION_NAME: "toolproof.outcome",
            sc.EVALUATION_SCORE: 1.0 if result.outcome == "passed" else 0.0,
            sc.EVALUATION_LABEL: result.outcome,
            sc.EVALUATION_EXPLANATION: result.reason or result.outcome,
        },
        timestamp=at,
    )
    for verdict in result.verdicts:
        span.add_event(
            sc.EVALUATION_EVENT,
            {
                sc.EVALUATION_NAME: f"toolproof.{verdict.grader}",
                sc.EVALUATION_SCORE: 1.0 if verdict.passed else 0.0,
                sc.EVALUATION_LABEL: "pass" if verdict.passed else "fail",
                sc.EVALUATION_EXPLANATION: verdict.reason,
            },
            timestamp=at,
        )
