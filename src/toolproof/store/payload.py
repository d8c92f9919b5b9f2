"""Stored payloads: a trial's whole result and a run's manifest, kept as zlib-compressed JSON.

A trial's record is mostly transcript text with the same keys over and over, so it compresses
three to five times. Stores written before schema 3 hold the same JSON uncompressed (text in
SQLite, bytes after PostgreSQL's upgrade); `decode` reads both, and every reader of a payload
goes through it (the `Payload` column type calls it).
"""

from __future__ import annotations

import zlib
from typing import Any

import orjson
from sqlalchemy import LargeBinary
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

from toolproof.bigints import storable
from toolproof.errors import StoreError

LEVEL = 6
"""zlib's default level: level 9 saves under 1% more on trial records and takes longer."""


def encode(value: Any) -> bytes:
    """The stored form of a JSON value: compact JSON, zlib-compressed (an integer beyond 64
    bits, which a tool or an agent may return, as text)."""
    try:
        text = orjson.dumps(value)
    except TypeError:
        text = orjson.dumps(storable(value))
    return zlib.compress(text, LEVEL)


def stored_bytes(stored: bytes | memoryview | str) -> bytes:
    """The payload's bytes exactly as the store holds them (what a manifest hashes)."""
    if isinstance(stored, str):
        return stored.encode("utf-8")
    return bytes(stored)


def json_bytes(stored: bytes | memoryview | str) -> bytes:
    """The payload's JSON text, as bytes: decompressed, or as it is in an older store."""
    raw = stored_bytes(stored)
    if raw[:1] in (b"{", b"["):
        return raw
    try:
        return zlib.decompress(raw)
    except zlib.error as exc:
        raise StoreError(f"a stored trial record is damaged and cannot be read ({exc})") from None


def decode(stored: bytes | memoryview | str | dict[str, Any] | list[Any]) -> Any:
    """The JSON value of a stored payload, whichever schema wrote it."""
    if isinstance(stored, dict | list):  # a driver that parsed a JSON column itself
        return stored
    return orjson.loads(json_bytes(stored))


class Payload(TypeDecorator[Any]):
    """A column holding a JSON value as compressed bytes (BLOB, PostgreSQL's bytea)."""

    impl = LargeBinary
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> bytes | None:
        if value is None or isinstance(value, bytes):  # bytes: encoded already
            return value
        return encode(value)

    def process_result_value(self, value: Any, dialect: Dialect) -> Any:
        return None if value is None else decode(value)
