"""Integers JSON cannot carry everywhere, written as text.

A tool or an agent may hand back an integer beyond 64 bits (the store's JSON encoder refuses
it) or beyond 4,300 digits (Python refuses to write it in decimal). Such a value is kept as
a string where it is recorded, so a trial holding one is stored like any other.
"""

from __future__ import annotations

from typing import Any

import orjson

LOW, HIGH = -(2**63), 2**64 - 1
"""The integers every JSON writer of the store takes."""


def as_text(number: int) -> str:
    """The integer in decimal, or a description where it has too many digits to write."""
    try:
        return str(number)
    except ValueError:  # beyond sys.get_int_max_str_digits()
        digits = int(number.bit_length() * 0.30103) + 1
        sign = "-" if number < 0 else ""
        return f"{sign}<an integer of about {digits} digits>"


def storable(value: Any) -> Any:
    """`value` with every integer beyond 64 bits as text (the same object when it has none)."""
    if isinstance(value, bool) or value is None or isinstance(value, str | float):
        return value
    if isinstance(value, int):
        return value if LOW <= value <= HIGH else as_text(value)
    if isinstance(value, dict):
        items = {key: storable(item) for key, item in value.items()}
        changed = any(items[key] is not item for key, item in value.items())
        return items if changed else value
    if isinstance(value, list | tuple):
        converted = [storable(item) for item in value]
        changed = any(new is not old for new, old in zip(converted, value, strict=True))
        return converted if changed else value
    return value


def checked(value: Any) -> Any:
    """`value` as it is when the store's encoder takes it, else with its big integers as
    text: the common case costs one encoding, and only a value that needs it is walked."""
    try:
        orjson.dumps(value)
    except TypeError:
        return storable(value)
    return value


__all__ = ["as_text", "checked", "storable"]
