"""Harness overhead with the oracle agent: what toolproof adds to every trial.

    python bench/overhead.py [examples/retail] [--trials 10]

The oracle makes no model calls, so a trial's time is all harness. Trials run one at a time.
Each trial's own `duration_s` is the world copy, every tool call through the gateway and the
graders (its median and p95 are printed); the whole run in process over its trials adds the
store write (on the writer's thread), the run's start and its summary. Then the same run is
timed end to end as a user runs it: `toolproof run SUITE --agent oracle --trials N`, process
start to exit, suite loading and the report included.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from toolproof.records.trial import TrialResult
from toolproof.runner.run import RunRequest, run_suite
from toolproof.store import Store
from toolproof.suite import load_suite


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", nargs="?", default="examples/retail")
    parser.add_argument("--trials", type=int, default=10)
    args = parser.parse_args()

    suite = load_suite(args.suite)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(str(Path(tmp) / "overhead.db"))
        durations: list[float] = []
        calls: list[int] = []

        def on_result(result: TrialResult) -> None:
            durations.append(result.duration_s)
            calls.append(result.tool_calls)

        request = RunRequest(agent="oracle", trials=args.trials, k=[1], concurrency=1)
        clock = time.perf_counter()
        asyncio.run(run_suite(suite, request, store, on_result=on_result))
        in_process = time.perf_counter() - clock

        command = [
            str(Path(sys.executable).parent / "toolproof"),
            "run",
            args.suite,
            "--agent",
            "oracle",
            "--trials",
            str(args.trials),
            "--k",
            "1",
            "--store",
            str(Path(tmp) / "cli.db"),
        ]
        clock = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        wall = time.perf_counter() - clock

    trials = len(suite.tasks) * args.trials
    print(f"suite {suite.name}: {len(suite.tasks)} tasks x {args.trials} trials = {trials} trials")
    print(f"tool calls per trial: median {statistics.median(calls):.0f}, max {max(calls)}")
    print(
        f"harness time per trial (world copy, tool calls, grading): "
        f"median {statistics.median(durations) * 1e3:.2f} ms, p95 "
        f"{sorted(durations)[int(0.95 * (len(durations) - 1))] * 1e3:.2f} ms"
    )
    print(
        f"the whole run in process over its trials (store writes, start and summary too): "
        f"{in_process / trials * 1e3:.2f} ms"
    )
    shown = f"toolproof run {args.suite} --agent oracle --trials {args.trials}"
    print(f"end to end `{shown}`: {wall:.2f} s")


if __name__ == "__main__":
    main()
