"""A trial's row as the store writes it: the columns derived from its result, the result
itself (compressed), and the record hash that the run's manifest takes.

The columns are what metrics read without opening a result; `verify` checks a row against
its result with the same `row_columns`. The record hash is computed once, as the row is
written, so recording a manifest needs no pass over 100,000 results; `verify` recomputes it
from what the store holds (`record_hash` over the very bytes and values read back).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson
from sqlalchemy import JSON, Column, Float, Integer

from toolproof.bigints import storable
from toolproof.store import payload
from toolproof.store.schema import trials

KEY_COLUMNS = ("variant", "model", "task_id", "trial")
TrialKey = tuple[str, str, str, int]
"""(variant, model, task_id, trial): a trial of a run, as `KEY_COLUMNS` name it."""
UNHASHED = ("id", "run_id", "result", "sha256", "judge_cost_usd", *KEY_COLUMNS)
HASHED_COLUMNS = tuple(c.name for c in trials.c if c.name not in UNHASHED)
"""The columns a record hash covers besides the result, in this order. The judge's cost
(schema 4) is left out, so hashes written before it still verify; the result it is read from
is covered."""


class JsonText(str):
    """JSON written already (a manifest, as the canonical text its hash is taken of): a JSON
    column stores it as it is."""


def json_text(value: Any) -> str:
    """How the store writes a JSON column (and what it reads back as the column's text)."""
    if isinstance(value, JsonText):
        return value
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # an integer beyond 64 bits: as text
        return orjson.dumps(storable(value)).decode()


def row_columns(result: Mapping[str, Any]) -> dict[str, Any]:
    """The columns a trial's row holds besides its whole result, derived from the result's
    JSON form (a TrialResult's `model_dump(mode="json")`)."""
    usage = result["usage"]
    events = result["transcript"]["events"]
    return {
        "variant": result["variant"],
        "model": result["model"],
        "task_id": result["task_id"],
        "trial": result["trial"],
        "seed": result["seed"],
        "outcome": result["outcome"],
        "reason": result["reason"].replace("\x00", "\ufffd"),
        "started_at": result["started_at"],
        "duration_s": result["duration_s"],
        "tokens_input": usage["input_tokens"],
        "tokens_output": usage["output_tokens"],
        "cost_usd": result["cost_usd"],
        "user_cost_usd": result["user_cost_usd"],
        "judge_cost_usd": result["judge"]["cost_usd"] if result.get("judge") else 0.0,
        "tool_calls": result["tool_calls"],
        "turns": result["turns"],
        "model_latency_s": [
            e["latency_s"]
            for e in events
            if e["type"] == "model_call" and e.get("role", "agent") == "agent"
        ],
        "tool_errors": result["conditions"].get("tool_errors", 0),
        "conditions": result["conditions"],
    }


def outcome_dicts(names: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[dict[str, Any]]:
    """Rows of light columns (`names`, JSON columns as their stored text) as the dicts the
    metrics read. A run's `conditions` repeat from trial to trial: each distinct text is
    parsed once and its value shared, read only, by the rows that hold it."""
    parsed = [n for n in names if isinstance(trials.c[n].type, JSON) and n != "conditions"]
    shared = "conditions" in names
    loads, text = orjson.loads, (str, bytes)  # else a driver parsed the JSON already
    seen: dict[str | bytes, Any] = {}
    out: list[dict[str, Any]] = []
    append = out.append
    for row in rows:
        values = dict(zip(names, row))  # noqa: B905 - the query's columns are `names`
        for name in parsed:
            if type(value := values[name]) in text:
                values[name] = loads(value)
        if shared and type(value := values["conditions"]) in text:
            parsed_once = seen.get(value)
            if parsed_once is None:
                parsed_once = seen[value] = loads(value)
            values["conditions"] = parsed_once
        append(values)
    return out


def record_hash(stored: bytes, values: Sequence[Any]) -> str:
    """sha256 of a trial's record: its result's bytes as stored, a newline, and its
    HASHED_COLUMNS as a JSON array (JSON columns as their stored text)."""
    digest = hashlib.sha256(stored)  # fed in parts: a result is not copied to be hashed
    digest.update(b"\n")
    digest.update(orjson.dumps(values))
    return digest.hexdigest()


def stored_row(result: Mapping[str, Any]) -> dict[str, Any]:
    """The row to insert for a result in JSON form: its columns, with numbers as the
    columns keep them (so they read back equal), its compressed result and its hash."""
    columns = {name: _as_stored(trials.c[name], v) for name, v in row_columns(result).items()}
    stored = payload.encode(result)
    values = [
        json_text(columns[name]) if isinstance(trials.c[name].type, JSON) else columns[name]
        for name in HASHED_COLUMNS
    ]
    return {**columns, "result": stored, "sha256": record_hash(stored, values)}


def _as_stored(column: Column[Any], value: Any) -> Any:
    if value is None:
        return None
    if isinstance(column.type, Float):
        return float(value)
    if isinstance(column.type, Integer):
        return int(value)
    return value
