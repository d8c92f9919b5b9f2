"""What a Python agent's turn deadline costs per turn.

    python bench/deadline.py [--turns 100000] [--repeats 5]

Times many no-op agent turns awaited bare, and the same turns under `within_turn`, as
`PythonAgent` awaits each: the watchdog's entry for the turn, and the process's exit, signal
and timer functions refused to its code (a counter, as a run has refused them already).
The difference per turn is the deadline's cost; the best of `repeats` rounds is reported.
"""

from __future__ import annotations

import argparse
import asyncio
import time

from toolproof.tools.guard import suite_code_guarded, within_turn


async def noop() -> str:
    return "ok"


async def bare(turns: int) -> float:
    clock = time.perf_counter()
    for _ in range(turns):
        await noop()
    return time.perf_counter() - clock


async def guarded(turns: int) -> float:
    clock = time.perf_counter()
    for _ in range(turns):
        await within_turn(noop(), 300.0)
    return time.perf_counter() - clock


async def measure(turns: int, repeats: int) -> tuple[float, float]:
    with suite_code_guarded():  # as in a run: the exit functions are refused already
        await guarded(1_000)  # the watchdog started, the alarm handler installed
        plain = min([await bare(turns) for _ in range(repeats)])
        wrapped = min([await guarded(turns) for _ in range(repeats)])
    return plain / turns, wrapped / turns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    plain, wrapped = asyncio.run(measure(args.turns, args.repeats))
    print(f"{args.turns:,} no-op agent turns, best of {args.repeats}")
    print(f"  bare await          {plain * 1e6:7.2f} us/turn")
    print(f"  with the deadline   {wrapped * 1e6:7.2f} us/turn")
    print(f"  the deadline costs  {(wrapped - plain) * 1e6:7.2f} us/turn")


if __name__ == "__main__":
    main()
