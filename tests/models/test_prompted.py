"""Prompted tool calling: the prompt it renders, the replies it parses, and a real round trip."""

from __future__ import annotations

import asyncio
import json

import pytest

from toolproof.models.base import Message, ModelClient, ModelResponse, ToolCall, Usage
from toolproof.models.prompted import (
    PromptedToolCalling,
    format_call,
    parse_reply,
    render_messages,
    tools_prompt,
)
from toolproof.tools.base import ToolSchema

GET_ORDER = ToolSchema(
    name="get_order",
    description="Look up an order.",
    parameters={
        "type": "object",
        "properties": {"order_id": {"type": "string"}},
        "required": ["order_id"],
    },
)
CANCEL = ToolSchema(
    name="cancel_order",
    description="Cancel an order that has not shipped.",
    parameters={"type": "object", "properties": {"order_id": {"type": "string"}}},
)


def shipped(call_id: str = "call_1") -> Message:
    return Message(
        role="tool", content='{"status": "shipped"}', tool_call_id=call_id, name="get_order"
    )


# --- Rendering ---------------------------------------------------------------------------------


def test_tools_prompt_lists_every_tool_as_one_json_line_and_explains_the_format() -> None:
    text = tools_prompt([GET_ORDER, CANCEL])
    listed = text.split("<tools>\n")[1].split("\n</tools>")[0].splitlines()
    assert [json.loads(line) for line in listed] == [
        {
            "name": "get_order",
            "description": "Look up an order.",
            "parameters": GET_ORDER.parameters,
        },
        {
            "name": "cancel_order",
            "description": "Cancel an order that has not shipped.",
            "parameters": CANCEL.parameters,
        },
    ]
    assert '<tool_call>{"name": "<tool name>", "arguments": {' in text
    assert '<tool_result id="<call id>" name="<tool name>">' in text


def test_the_module_documents_the_prompt_exactly() -> None:
    import textwrap

    from toolproof.models import prompted

    doc = prompted.__doc__ or ""
    block = doc.split("one JSON line per tool:\n\n")[1].split("\n\nThe model's reply")[0]
    shown = textwrap.dedent(block).replace("{...}", json.dumps(GET_ORDER.parameters))
    assert shown == tools_prompt([GET_ORDER])


def test_the_tools_go_after_the_policy_and_no_native_tool_message_is_left() -> None:
    calls = [
        ToolCall(id="call_1", name="get_order", arguments={"order_id": "A"}),
        ToolCall(id="call_2", name="get_order", raw_arguments='{"order_id": '),
    ]
    rendered = render_messages(
        [
            Message(role="system", content="Be brief."),
            Message(role="user", content="Where is A?"),
            Message(role="assistant", content="Let me look.", tool_calls=calls),
            Message(
                role="tool",
                content='{"status": "shipped"}',
                tool_call_id="call_1",
                name="get_order",
            ),
            Message(
                role="tool",
                content='{"error": "malformed"}',
                tool_call_id="call_2",
                name="get_order",
                is_error=True,
            ),
            Message(role="assistant", content="A has shipped."),
        ],
        [GET_ORDER],
    )
    assert [m.role for m in rendered] == ["system", "user", "assistant", "user", "assistant"]
    assert rendered[0].content.startswith("Be brief.\n\nYou can call tools.")
    assert rendered[2].content == (
        "Let me look.\n"
        '<tool_call>{"name": "get_order", "arguments": {"order_id": "A"}}</tool_call>\n'
        '<tool_call>{"order_id": </tool_call>'
    )
    assert rendered[3].content == (
        '<tool_result id="call_1" name="get_order">{"status": "shipped"}</tool_result>\n'
        '<tool_result id="call_2" name="get_order" error="true">{"error": "malformed"}'
        "</tool_result>"
    )
    assert all(not m.tool_calls and m.tool_call_id is None for m in rendered)


def test_without_a_system_message_the_tools_are_the_system_prompt() -> None:
    rendered = render_messages([Message(role="user", content="hi")], [GET_ORDER])
    assert rendered[0].role == "system" and rendered[0].content == tools_prompt([GET_ORDER])
    assert render_messages([Message(role="user", content="hi")], []) == [
        Message(role="user", content="hi")
    ]


def test_a_call_renders_back_to_what_parses_to_it() -> None:
    for body in (
        '{"name": "get_order", "arguments": {"order_id": "A"}}',
        '{"name": "get_order", "arguments": "W1"}',
        '{"name": "get_order", "arguments": {"order_id": ',
    ):
        _, [call] = parse_reply(f"<tool_call>{body}</tool_call>")
        _, [again] = parse_reply(format_call(call))
        assert again == call


# --- Parsing -----------------------------------------------------------------------------------


def test_several_calls_with_text_around_them() -> None:
    text, calls = parse_reply(
        "Let me check both.\n"
        '<tool_call>{"name": "get_order", "arguments": {"order_id": "A"}}</tool_call>\n'
        '<tool_call>{"name": "cancel_order", "arguments": {"order_id": "B"}}</tool_call>\n'
        "One moment.",
        first_id=3,
    )
    assert text == "Let me check both.\n\nOne moment."
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("call_3", "get_order", {"order_id": "A"}),
        ("call_4", "cancel_order", {"order_id": "B"}),
    ]
    assert json.loads(calls[0].raw_arguments) == {"order_id": "A"}


def test_malformed_json_gives_a_call_without_arguments_and_keeps_the_text() -> None:
    text, [call] = parse_reply(
        'On it. <tool_call>{"name": "get_order", "arguments": {order_id: A}}'
    )
    assert text == "On it."
    assert call.name == "get_order"
    assert call.arguments is None
    assert call.raw_arguments == '{"name": "get_order", "arguments": {order_id: A}}'


def test_bad_shapes_are_malformed_and_stay_malformed_for_the_gateway() -> None:
    _, calls = parse_reply(
        '<tool_call>{"name": "get_order", "arguments": "W1"}</tool_call>'
        "<tool_call>[1, 2]</tool_call>"
        "<tool_call></tool_call>"
        "<tool_call>get_order(A)</tool_call>"
    )
    assert [(c.name, c.arguments, c.raw_arguments) for c in calls] == [
        ("get_order", None, '"W1"'),
        ("", None, "[1, 2]"),
        ("", None, ""),
        ("", None, "get_order(A)"),
    ]
    # The loop hands raw_arguments to the gateway, which reports text that is not a JSON
    # object as a malformed call (and an empty body, with no tool name, as an unknown tool).
    assert not any(_is_object(c.raw_arguments) for c in calls)


def _is_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def test_lenient_forms_of_good_calls() -> None:
    _, calls = parse_reply(
        '<tool_call>{"name": "get_order", "parameters": {"order_id": "A"}}</tool_call>'
        '<tool_call>{"name": "get_order", "arguments": "{\\"order_id\\": \\"B\\"}"}</tool_call>'
        '<tool_call> {"name": "list_all"} </tool_call>'
    )
    assert [(c.name, c.arguments) for c in calls] == [
        ("get_order", {"order_id": "A"}),
        ("get_order", {"order_id": "B"}),
        ("list_all", {}),
    ]


def test_no_markers_is_plain_text() -> None:
    assert parse_reply("  Your order has shipped.\n") == ("Your order has shipped.", [])
    assert parse_reply("") == ("", [])


# --- End to end --------------------------------------------------------------------------------


class CannedModel(ModelClient):
    """A stand-in inner model: answers with canned text and records what it was sent."""

    def __init__(self, replies: list[str]) -> None:
        self.name = "canned/model"
        self.replies = iter(replies)
        self.seen: list[tuple[list[Message], list[ToolSchema]]] = []

    async def generate(
        self, messages: list[Message], tools: list[ToolSchema], *, seed: int | None = None
    ) -> ModelResponse:
        self.seen.append((messages, tools))
        return ModelResponse(
            message=Message(role="assistant", content=next(self.replies)),
            usage=Usage(input_tokens=100, output_tokens=20),
            latency_s=0.5,
            stop_reason="stop",
        )


def test_the_wrapper_round_trips_a_conversation_through_text() -> None:
    inner = CannedModel(
        [
            'Checking. <tool_call>{"name": "get_order", "arguments": {"order_id": "A"}}'
            "</tool_call>",
            "Order A has shipped.",
        ]
    )
    model = PromptedToolCalling(inner)
    assert model.name == "canned/model"
    history = [
        Message(role="system", content="Be brief."),
        Message(role="user", content="Where is A?"),
    ]
    first = asyncio.run(model.generate(history, [GET_ORDER]))
    assert first.message.content == "Checking."
    assert first.message.tool_calls == [
        ToolCall(
            id="call_1",
            name="get_order",
            arguments={"order_id": "A"},
            raw_arguments='{"order_id": "A"}',
        )
    ]
    assert first.stop_reason == "tool_calls"
    assert first.usage.input_tokens == 100 and first.latency_s == 0.5
    history += [
        first.message,
        Message(
            role="tool", content='{"status": "shipped"}', tool_call_id="call_1", name="get_order"
        ),
    ]
    second = asyncio.run(model.generate(history, [GET_ORDER]))
    assert second.message.content == "Order A has shipped."
    assert second.message.tool_calls == [] and second.stop_reason == "stop"
    sent, tools = inner.seen[1]
    assert tools == []
    assert [m.role for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[3].content.startswith('<tool_result id="call_1" name="get_order">')


@pytest.mark.slow
def test_the_wrapper_with_the_embedded_model(local_model_path: str) -> None:
    from toolproof.models.base import ModelSettings
    from toolproof.models.local import LocalLlamaClient

    inner = LocalLlamaClient(
        local_model_path, settings=ModelSettings(temperature=0, seed=7, max_tokens=48)
    )
    model = PromptedToolCalling(inner)
    history = [
        Message(role="user", content="Where is my order W1?"),
    ]
    first = asyncio.run(model.generate(history, [GET_ORDER]))
    # A 135M model may or may not call the tool; whatever it wrote must parse into a
    # well-formed turn with no markers left in the text.
    assert "<tool_call>" not in first.message.content
    assert first.usage.input_tokens > 200 and first.usage.output_tokens > 0
    assert [c.id for c in first.message.tool_calls] == [
        f"call_{n}" for n in range(1, len(first.message.tool_calls) + 1)
    ]
    # Sending a tool result back through the wrapper works whatever the first turn was.
    call = ToolCall(id="call_1", name="get_order", arguments={"order_id": "W1"})
    history += [
        Message(role="assistant", content="", tool_calls=[call]),
        Message(
            role="tool", content='{"status": "shipped"}', tool_call_id="call_1", name="get_order"
        ),
    ]
    second = asyncio.run(model.generate(history, [GET_ORDER]))
    assert second.usage.input_tokens > first.usage.input_tokens
    assert second.usage.cached_tokens > 0
