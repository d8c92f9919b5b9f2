"""Facts tau2 computes from what its tools show (a total, a refund, a price difference): the
operands among the numbers the gold actions' results show, so that the fact is grounded in
the reads that show them rather than needing no source.

The search is bounded: a difference of two numbers, or a sum of two to four, equal to the
fact to the cent, preferring the fewest operands (a difference before a sum of two). Only
numbers with at most two decimals take part, so that what matches to the cent is exact."""

from __future__ import annotations

import json
from decimal import Decimal, InvalidOperation
from itertools import combinations
from typing import Any

from toolproof.graders.communication import fielded
from toolproof.meaning.values import tokens
from toolproof.spec.expectations import as_number

MOST_OPERANDS = 4
MOST_OF_A_VALUE = 4
"""How many times one value may be an operand (two items of the same price)."""
MOST_NUMBERS = 300
"""How many numbers the search looks through, in the order the results show them."""


def decoded(result: Any) -> Any:
    """A tool's answer as data: a JSON text decoded, anything else as it is."""
    if isinstance(result, str):
        try:
            return json.loads(result)
        except ValueError:
            return result
    return result


def shown_numbers(done: list[tuple[Any, Any]]) -> list[str]:
    """The numbers the gold actions' results show as values of their own, as tokens (a
    value that only repeats one of its call's arguments shows nothing, as grading reads
    it), in order, each at most `MOST_OF_A_VALUE` times."""
    out: list[str] = []
    for action, result in done:
        given = {tuple(tokens(v)) for _, v in fielded(action.arguments or {}, "")}
        for _, value in fielded(decoded(result), ""):
            said = tokens(value)
            if len(said) != 1 or tuple(said) in given or _cents(said[0]) in (None, 0):
                continue
            if out.count(said[0]) < MOST_OF_A_VALUE:
                out.append(said[0])
    return out[:MOST_NUMBERS]


def _cents(text: str) -> int | None:
    """A number token in cents, or None: not a number, an identifier ("0193"), or finer
    than a cent."""
    if text[:1] == "0" and text[1:2] not in ("", "."):
        return None
    number = as_number(text)
    if number is None:
        return None
    try:
        cents = number * 100
    except InvalidOperation:  # pragma: no cover - as_number gives finite numbers
        return None
    return int(cents) if cents == cents.to_integral_value() else None


def operands(text: str, numbers: list[str]) -> dict[str, Any] | None:
    """How the fact `text` is worked out from `numbers` ({op, of}), or None."""
    number = as_number(text)
    if number is None or number * 100 != (number * 100).to_integral_value():
        return None
    want = int(number * Decimal(100))
    pool = [(c, n) for n in numbers if (c := _cents(n)) is not None]
    for a, b in combinations(pool, 2):
        for first, second in ((a, b), (b, a)):
            if first[0] - second[0] == want:
                return {"op": "difference", "of": [first[1], second[1]]}
    for size in range(2, MOST_OPERANDS + 1):
        found = _sum(want, pool, size)
        if found is not None:
            return {"op": "sum", "of": found}
    return None


def _sum(want: int, pool: list[tuple[int, str]], size: int) -> list[str] | None:
    """`size` numbers of the pool (each place once) that add up to `want`: the first found
    in the pool's order, by pairs of pairs for the larger sums."""
    where: dict[int, list[int]] = {}
    for i, (cents, _) in enumerate(pool):
        where.setdefault(cents, []).append(i)
    if size == 2:
        for i, (cents, _) in enumerate(pool):
            j = next((j for j in where.get(want - cents, []) if j > i), None)
            if j is not None:
                return [pool[i][1], pool[j][1]]
        return None
    pairs: dict[int, list[tuple[int, int]]] = {}
    for i, j in combinations(range(len(pool)), 2):
        pairs.setdefault(pool[i][0] + pool[j][0], []).append((i, j))
    for i, j in combinations(range(len(pool)), 2):
        rest = want - pool[i][0] - pool[j][0]
        if size == 3:
            k = next((k for k in where.get(rest, []) if k > j), None)
            if k is not None:
                return [pool[i][1], pool[j][1], pool[k][1]]
            continue
        pair = next(((k, m) for k, m in pairs.get(rest, []) if k > j), None)
        if pair is not None:
            return [pool[i][1], pool[j][1], pool[pair[0]][1], pool[pair[1]][1]]
    return None
