"""Concurrency: 1,000 trials of a scripted agent at --concurrency 200 on the local executor.

    python bench/concurrency.py [--trials 1000] [--concurrency 200] [--turns 8] [--latency 0.2]

Each model turn is an asyncio sleep (a model's latency); each trial makes `turns` model turns
(turns - 1 tool calls and a reply). The ideal wall time is
ceil(trials / concurrency) * turns * latency. Peak memory is sampled as the run goes, to show
it stays flat: results stream to a real SQLite store and are not held.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import resource
import tempfile
import textwrap
import time
from pathlib import Path

from toolproof.records.trial import TrialResult
from toolproof.runner.run import RunRequest, run_suite
from toolproof.store import Store
from toolproof.suite import load_suite

TOOLS = '''
from toolproof.tools import tool


@tool
def lookup(world, key: str) -> dict:
    """Read one record.

    Args:
        key: The record key.
    """
    return world["records"][key]
'''


def write_suite(root: Path, turns: int, latency: float) -> Path:
    (root / "tools.py").write_text(TOOLS)
    (root / "records.json").write_text('{"a": {"value": 1}}')
    (root / "suite.yaml").write_text(
        textwrap.dedent(
            """
            name: bench
            world: {data: [records.json]}
            backends: {b: {type: python, module: tools.py}}
            tools: {lookup: {tier: 1}}
            tasks:
              - id: t
                user: {opening: "value of a?"}
                expect:
                  actions: [{tool: lookup, args: {key: a}}]
                  must_say: ["1"]
            """
        )
    )
    calls = "\n".join(
        "  - tool_calls: [{name: lookup, arguments: {key: a}}]" for _ in range(turns - 1)
    )
    (root / "script.yaml").write_text(
        f"latency_s: {latency}\ndefault:\n{calls}\n  - text: 'It is 1.'\n"
    )
    return root


def rss_mb() -> float:
    """Resident memory now (Linux), in MiB."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * resource.getpagesize() / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=200)
    parser.add_argument("--turns", type=int, default=8)
    parser.add_argument("--latency", type=float, default=0.2)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        root = write_suite(Path(tmp), args.turns, args.latency)
        suite = load_suite(root)
        store = Store(str(root / "bench.db"))
        request = RunRequest(
            agent=f"scripted:{root / 'script.yaml'}",
            trials=args.trials,
            k=[1],
            concurrency=args.concurrency,
        )
        samples: list[tuple[int, float]] = []
        done = 0

        def on_result(_: TrialResult) -> None:
            nonlocal done
            done += 1
            if done % max(1, args.trials // 10) == 0:
                samples.append((done, rss_mb()))

        clock = time.perf_counter()
        report = asyncio.run(run_suite(suite, request, store, on_result=on_result))
        wall = time.perf_counter() - clock

    ideal = math.ceil(args.trials / args.concurrency) * args.turns * args.latency
    shape = f"{args.trials} trials x {args.turns} turns of {args.latency}s"
    print(f"{shape} at concurrency {args.concurrency}")
    print(f"passed {report.summary.counts.passed} of {report.summary.counts.total}")
    print(f"wall {wall:.2f} s, ideal {ideal:.2f} s, overhead {100 * (wall / ideal - 1):.1f}%")
    print("RSS (MiB) after N trials: " + ", ".join(f"{n}: {mb:.1f}" for n, mb in samples))
    print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
