"""Reading a provider's JSON answer into toolproof's types, one field at a time.

Every reader names the field it looked at, so an answer that does not read says where:
`malformed response: choices[0] has no message`. Such an answer is a retryable
`ProviderError`: a flaky proxy or an overloaded server can send one, and the next attempt may
read; when the retries are spent the trial is `infra_error` with that reason.
"""

from __future__ import annotations

from typing import Any

from toolproof.models.base import ProviderError


def snippet(content: bytes, size: int = 80) -> str:
    """The start of a body, on one line, for a message."""
    text = " ".join(content[: size * 2].decode("utf-8", "replace").split())
    return repr(text[:size] + ("..." if len(text) > size else "")) if text else "an empty body"


def malformed(what: str) -> ProviderError:
    """An answer that does not read: retried (a flaky proxy or server), then infra_error."""
    return ProviderError(f"malformed response: {what}", retryable=True)


def mapping(value: object, where: str, *, optional: bool = False) -> dict[str, Any]:
    """A JSON object at `where` ({} for an absent optional one)."""
    if value is None and optional:
        return {}
    if not isinstance(value, dict):
        raise malformed(f"{where} is {_kind(value)}, not an object")
    return value


def items(value: object, where: str) -> list[Any]:
    """A JSON array at `where` (absent or null: none)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise malformed(f"{where} is {_kind(value)}, not a list")
    return value


def string(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise malformed(f"{where} is {_kind(value)}, not a string")
    return value


def count(value: object, where: str) -> int:
    """A token count: a whole number (absent: 0; as text, the number it spells)."""
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    if isinstance(value, str) and value.isdigit():
        return int(value)
    raise malformed(f"{where} is {value!r}, not a token count")


def _kind(value: object) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "a number"
    )
