"""The `toolproof` chat format: ChatML prompts that list the tools, and the calls in an answer.

The model answers with one or more `functions.<name>:` lines, each followed by the call's
arguments as JSON (llama-cpp-python's `chatml-function-calling` format, with tool
descriptions and tool results added). Answering the user is a call too: the prompt lists a
function `reply` (`reply_schema`) whose `message` is the text for the user. A small model
copies the shape of what it has seen, and after a tool result the shape it has just seen is a
call: offered a `message:` line beside calls, SmolLM2-135M chose it about once in a thousand
tries, and so called the same lookup again and again; offered `reply` among the functions,
it chooses to reply after a result most of the time, and rarely before one.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable
from typing import Any

from toolproof.models.base import Message, ToolCall
from toolproof.tools.base import ToolSchema

REPLY = "reply"
_TOOLS_INTRO = "You have access to the following functions:\n"
_TOOLS_HOWTO = (
    "\nTo call one or more functions, begin your answer with 'functions.<function_name>:' "
    "followed by the arguments as JSON, one call after the other:\n\n"
    "functions.<function_name>:\n"
    '{ "arg1": "value1", "arg2": "value2" }\n'
    "functions.<function_name>:\n"
    '{ "arg1": "value1", "arg2": "value2" }\n\n'
    "To answer the user, call functions.{reply} with your message."
)
_CALL_HEAD = re.compile(r"^functions\.([^\s:]+):[ \t]*\n?", re.MULTILINE)


def reply_schema(tools: list[ToolSchema]) -> ToolSchema:
    """The function that answers the user, named `reply` unless a tool already is."""
    taken = {t.name for t in tools}
    name = REPLY
    while name in taken:
        name = f"{name}_to_user"
    return ToolSchema(
        name,
        "Answer the user with a message.",
        {
            "type": "object",
            "properties": {"message": {"type": "string", "description": "The text for the user."}},
            "required": ["message"],
        },
    )


def render_prompt(messages: list[Message], tools: list[ToolSchema]) -> str:
    """The ChatML prompt for a conversation, ending with the assistant's turn opening.

    With tools, the system message lists them and the reply function (name, description,
    JSON Schema) and explains the `functions.<name>:` answer format; past assistant turns are
    written in that format (a text answer as a call of the reply function), and tool results
    are `tool` turns naming the function they answer.
    """
    system = "\n\n".join(m.content for m in messages if m.role == "system" and m.content)
    reply = reply_schema(tools)
    if tools:
        listing = "".join(
            f"\nfunctions.{t.name}:\n"
            + (f"{t.description.strip()}\n" if t.description.strip() else "")
            + json.dumps(t.parameters, ensure_ascii=False)
            + "\n"
            for t in [*tools, reply]
        )
        howto = _TOOLS_HOWTO.replace("{reply}", reply.name)
        system = (system + "\n\n" if system else "") + _TOOLS_INTRO + listing + howto
    parts = [_turn("system", system)] if system else []
    for message in messages:
        if message.role == "user":
            parts.append(_turn("user", message.content))
        elif message.role == "assistant":
            parts.append(
                _turn("assistant", _assistant_text(message, reply.name if tools else None))
            )
        elif message.role == "tool":
            verb = "failed" if message.is_error else "returned"
            head = f"functions.{message.name} {verb}:\n" if message.name else ""
            parts.append(_turn("tool", head + message.content))
    parts.append("<|im_start|>assistant\n")
    return "".join(parts)


def _turn(role: str, content: str) -> str:
    return f"<|im_start|>{role}\n{content}<|im_end|>\n"


def _assistant_text(message: Message, reply: str | None) -> str:
    """An assistant turn as the model writes it: with tools, its text as a call of `reply`."""
    lines: list[str] = []
    if message.content:
        if reply is None:
            lines.append(message.content)
        else:
            text = json.dumps({"message": message.content}, ensure_ascii=False)
            lines.append(f"functions.{reply}:\n{text}")
    for call in message.tool_calls:
        lines.append(f"functions.{call.name}:\n{call_arguments_text(call)}")
    return "\n".join(lines)


def call_arguments_text(call: ToolCall) -> str:
    """A call's arguments as the model wrote them (so prompts repeat them byte for byte)."""
    if call.raw_arguments:
        return call.raw_arguments
    return json.dumps(call.arguments if call.arguments is not None else {}, ensure_ascii=False)


def parse_calls(text: str, make_id: Callable[[], str] | None = None) -> list[ToolCall]:
    """The calls in an answer written as `functions.<name>:` lines, each followed by JSON.

    Arguments that are not a JSON object (a reply cut by max_tokens, say) give a call with
    `arguments=None` and the text kept in `raw_arguments`.
    """
    heads = list(_CALL_HEAD.finditer(text))
    calls: list[ToolCall] = []
    for index, head in enumerate(heads):
        end = heads[index + 1].start() if index + 1 < len(heads) else len(text)
        raw = text[head.end() : end].strip()
        calls.append(
            ToolCall(
                id=make_id() if make_id else f"call_{index}",
                name=head.group(1),
                arguments=json_object(raw),
                raw_arguments=raw,
            )
        )
    return calls


def parse_answer(
    text: str, reply: str, make_id: Callable[[], str] | None = None
) -> tuple[str, list[ToolCall]]:
    """(the text for the user, the tool calls) of an answer: the calls of `reply` give the
    text (a message cut short by max_tokens keeps what was written), the others are calls."""
    said: list[str] = []
    calls: list[ToolCall] = []
    for call in parse_calls(text, make_id):
        if call.name != reply:
            calls.append(call)
        elif call.arguments is not None:
            said.append(str(call.arguments.get("message", "")))
        else:
            said.append(_cut_message(call.raw_arguments or ""))
    return "\n".join(part for part in said if part), calls


_MESSAGE_START = re.compile(r'^\{\s*"message"\s*:\s*"')


def _cut_message(raw: str) -> str:
    """The text of a `{"message": "...` cut short, its JSON escapes read."""
    body = _MESSAGE_START.sub("", raw)
    try:
        return str(json.loads(f'"{body}"'))
    except ValueError:
        return body


def json_object(raw: str) -> dict[str, Any] | None:
    """`raw` parsed, if it is a JSON object; else None."""
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def new_call_id() -> str:
    """A fresh id for a call the model made (the model writes none)."""
    return f"call_{uuid.uuid4().hex[:16]}"


def openai_message(message: Message) -> dict[str, Any]:
    """A message as OpenAI-style chat formats of llama-cpp-python take it."""
    if message.role == "tool":
        return {
            "role": "tool",
            "tool_call_id": message.tool_call_id or "",
            "content": message.content,
        }
    if message.role == "assistant" and message.tool_calls:
        return {
            "role": "assistant",
            "content": message.content,
            "tool_calls": [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": call_arguments_text(c)},
                }
                for c in message.tool_calls
            ],
        }
    return {"role": message.role, "content": message.content}
