"""Prompted tool calling: tools for a model without native function calling.

`PromptedToolCalling` wraps any `ModelClient` (BFCL calls this the "prompting" mode). The
inner model is sent no native tools; instead the system prompt describes them and the calls
travel as text. Turn it on for a model with `prompted: true` in its settings.

The system prompt gets this section, after the suite's policy (or as the whole system
prompt when there is none), with one JSON line per tool:

    You can call tools. Each tool is listed below as a JSON object with its name, what it
    does, and the JSON Schema of its arguments:

    <tools>
    {"name": "get_order", "description": "Look up an order.", "parameters": {...}}
    </tools>

    To call a tool, write on a line of its own:
    <tool_call>{"name": "<tool name>", "arguments": {<the arguments as a JSON object>}}</tool_call>
    To call several tools at once, write one such line per call. The results come back in
    the next message, one per call, in this form:
    <tool_result id="<call id>" name="<tool name>">...</tool_result>
    When you have what you need, answer without any tool call.

The model's reply is read like this:

- Each `<tool_call>...</tool_call>` is one call. Its body must be a JSON object with `name`
  (a string) and `arguments` (an object; `parameters` is accepted too, a JSON string holding
  an object is unwrapped, and a missing one means no arguments). A final `<tool_call>` left
  unclosed (a reply cut by max_tokens) runs to the end of the reply.
- A body that is not such an object is a malformed call: a ToolCall with `arguments=None`
  and the text kept in `raw_arguments` (the body, or the `arguments` value when only that
  is wrong), and the name when one can be read from it. The agent is told it was malformed,
  as with native calls (an empty body, which names no tool, comes back as an unknown tool).
- Everything outside the markers is the assistant's text, stripped.
- Calls get the ids `call_1`, `call_2`, ... numbered through the conversation.

On the way back, an earlier assistant turn is written as its text followed by one
`<tool_call>` line per call, and tool results become one user message, one line per result:
`<tool_result id="call_1" name="get_order">{"status": "shipped"}</tool_result>`, with
` error="true"` after the name when the call failed.
"""

from __future__ import annotations

import json
import re

from toolproof.models.base import Message, ModelClient, ModelResponse, ToolCall
from toolproof.tools.base import ToolSchema

TOOLS_INTRO = (
    "You can call tools. Each tool is listed below as a JSON object with its name, what it\n"
    "does, and the JSON Schema of its arguments:"
)
TOOLS_HOWTO = (
    "To call a tool, write on a line of its own:\n"
    '<tool_call>{"name": "<tool name>", "arguments": {<the arguments as a JSON object>}}'
    "</tool_call>\n"
    "To call several tools at once, write one such line per call. The results come back in\n"
    "the next message, one per call, in this form:\n"
    '<tool_result id="<call id>" name="<tool name>">...</tool_result>\n'
    "When you have what you need, answer without any tool call."
)
_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)
_NAME = re.compile(r'"name"\s*:\s*"((?:[^"\\]|\\.)*)"')


def tools_prompt(tools: list[ToolSchema]) -> str:
    """The system prompt section that describes the tools and the call format."""
    lines = [
        json.dumps(
            {"name": t.name, "description": t.description, "parameters": t.parameters},
            ensure_ascii=False,
        )
        for t in tools
    ]
    return f"{TOOLS_INTRO}\n\n<tools>\n" + "\n".join(lines) + f"\n</tools>\n\n{TOOLS_HOWTO}"


def format_call(call: ToolCall) -> str:
    """One call as the model would write it."""
    if call.arguments is not None:
        body = json.dumps({"name": call.name, "arguments": call.arguments}, ensure_ascii=False)
    elif call.name and _is_json(call.raw_arguments):
        # Only the arguments were wrong: put them back where the model wrote them.
        name = json.dumps(call.name, ensure_ascii=False)
        body = f'{{"name": {name}, "arguments": {call.raw_arguments}}}'
    else:
        body = call.raw_arguments
    return f"<tool_call>{body}</tool_call>"


def format_result(message: Message) -> str:
    """One tool result as the model reads it."""
    error = ' error="true"' if message.is_error else ""
    return (
        f'<tool_result id="{_attribute(message.tool_call_id or "")}" '
        f'name="{_attribute(message.name or "")}"{error}>{message.content}</tool_result>'
    )


def render_messages(messages: list[Message], tools: list[ToolSchema]) -> list[Message]:
    """The conversation as the inner model sees it: no tool calls, no tool messages."""
    rendered: list[Message] = []
    results: list[str] = []

    def flush() -> None:
        if results:
            rendered.append(Message(role="user", content="\n".join(results)))
            results.clear()

    for message in messages:
        if message.role == "tool":
            results.append(format_result(message))
            continue
        flush()
        if message.role == "assistant" and message.tool_calls:
            lines = [message.content] if message.content else []
            lines += [format_call(c) for c in message.tool_calls]
            rendered.append(Message(role="assistant", content="\n".join(lines)))
        else:
            rendered.append(Message(role=message.role, content=message.content))
    flush()
    if tools:
        section = tools_prompt(tools)
        first = next((i for i, m in enumerate(rendered) if m.role == "system"), None)
        if first is None:
            rendered.insert(0, Message(role="system", content=section))
        else:
            system = rendered[first].content
            content = f"{system}\n\n{section}" if system else section
            rendered[first] = Message(role="system", content=content)
    return rendered


def parse_reply(text: str, first_id: int = 1) -> tuple[str, list[ToolCall]]:
    """Split a reply into the assistant's text and its calls (ids from `call_<first_id>`)."""
    calls: list[ToolCall] = []
    for number, match in enumerate(_CALL.finditer(text), start=first_id):
        calls.append(_parse_call(match.group(1).strip(), f"call_{number}"))
    content = _CALL.sub("\n", text)
    content = re.sub(r"\n{3,}", "\n\n", content).strip()
    return content, calls


def _parse_call(body: str, call_id: str) -> ToolCall:
    try:
        value = json.loads(body)
    except ValueError:
        value = None
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        salvaged = _NAME.search(body) if value is None else None
        name = _unescape(salvaged.group(1)) if salvaged else ""
        return ToolCall(id=call_id, name=name, arguments=None, raw_arguments=body)
    name = value["name"]
    arguments = value.get("arguments", value.get("parameters", {}))
    if isinstance(arguments, str):
        try:
            inner = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            inner = None
        if isinstance(inner, dict):
            arguments = inner
    if not isinstance(arguments, dict):
        raw = json.dumps(arguments, ensure_ascii=False)
        return ToolCall(id=call_id, name=name, arguments=None, raw_arguments=raw)
    return ToolCall(
        id=call_id,
        name=name,
        arguments=arguments,
        raw_arguments=json.dumps(arguments, ensure_ascii=False),
    )


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _unescape(text: str) -> str:
    try:
        value = json.loads(f'"{text}"')
    except ValueError:
        return text
    return value if isinstance(value, str) else text


def _attribute(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;")


class PromptedToolCalling(ModelClient):
    """Tool calling through the prompt, for an inner model without native function calls."""

    def __init__(self, inner: ModelClient) -> None:
        self.inner = inner
        self.name = inner.name

    async def generate(
        self, messages: list[Message], tools: list[ToolSchema], *, seed: int | None = None
    ) -> ModelResponse:
        response = await self.inner.generate(render_messages(messages, tools), [], seed=seed)
        made = sum(len(m.tool_calls) for m in messages if m.role == "assistant")
        content, calls = parse_reply(response.message.content, made + 1)
        calls += response.message.tool_calls
        stop = "tool_calls" if calls and response.stop_reason in ("", "stop") else None
        return response.model_copy(
            update={
                "message": Message(role="assistant", content=content, tool_calls=calls),
                "stop_reason": stop or response.stop_reason,
            }
        )
