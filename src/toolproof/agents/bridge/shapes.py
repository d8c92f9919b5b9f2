"""What the SDK wires share: requests as plain data, text out of content parts, arguments.

Agent code hands the SDKs dicts (TypedDicts) or the SDKs' own pydantic objects (a
`ChatCompletionMessage` appended to the history as it came back); both read the same here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel

from toolproof.agents.bridge.core import RequestError
from toolproof.models.base import ToolCall
from toolproof.tools.base import ToolSchema

EMPTY_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}


def plain(value: Any, where: str) -> dict[str, Any]:
    """A request item as a dict, whether the agent gave a dict or an SDK object."""
    if isinstance(value, BaseModel):
        return value.model_dump(exclude_none=True)
    if isinstance(value, dict):
        return value
    raise RequestError(f"{where} is a {type(value).__name__}, not an object")


def items(values: Any, where: str) -> list[dict[str, Any]]:
    if values is None:
        return []
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise RequestError(f"{where} must be a list")
    return [plain(value, f"{where}[{i}]") for i, value in enumerate(values)]


def text_of(content: Any) -> str:
    """A message's text: a string, or the text parts of a list joined; other parts dropped."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Iterable):
        parts = [plain(part, "content part") for part in content]
        return "".join(str(p["text"]) for p in parts if isinstance(p.get("text"), str))
    raise RequestError(f"content is a {type(content).__name__}, not text")


def tool_call(call_id: Any, name: Any, arguments: Any) -> ToolCall:
    """A tool call from the wire: arguments as JSON text (or an object already parsed)."""
    if not isinstance(name, str) or not name:
        raise RequestError("a tool call has no name")
    if isinstance(arguments, dict):
        return ToolCall(id=str(call_id), name=name, arguments=arguments)
    text = "" if arguments is None else str(arguments)
    try:
        parsed = json.loads(text) if text.strip() else {}
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        return ToolCall(id=str(call_id), name=name, arguments=parsed, raw_arguments=text)
    return ToolCall(id=str(call_id), name=name, raw_arguments=text)


def arguments_text(call: ToolCall) -> str:
    """A tool call's arguments as the JSON text the wire carries (as the model wrote it)."""
    if call.arguments is None:
        return call.raw_arguments
    return json.dumps(call.arguments, ensure_ascii=False)


def schema(name: Any, description: Any, parameters: Any) -> ToolSchema:
    if not isinstance(name, str) or not name:
        raise RequestError("a tool has no name")
    return ToolSchema(
        name=name,
        description=description if isinstance(description, str) else "",
        parameters=parameters if isinstance(parameters, dict) else EMPTY_PARAMETERS,
    )
