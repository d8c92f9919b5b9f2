"""A 1-to-200 concurrency sweep of the logistics suite, with injected waits compressed.

    python bench/load_sweep.py [--trials 10] [--time-scale 0.01]

Runs examples/logistics-dispatch at load levels 1, 10, 50 and 200 (concurrent dispatchers
sharing the suite's per-tool capacity: token buckets and queues, the mainframe the tightest)
with the retrying oracle, a scripted agent that follows the gold actions and backs off on
429s, and prints each level's pass rate, throughput, p95 trial latency and tool error rate,
and the wall time of the whole sweep.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from toolproof.runner.run import RunRequest, run_suite
from toolproof.store import Store
from toolproof.suite import load_suite

SUITE = Path(__file__).parents[1] / "examples" / "logistics-dispatch"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--time-scale", type=float, default=0.01)
    args = parser.parse_args()
    suite = load_suite(SUITE)
    request = RunRequest(
        agent="retrying-oracle",
        trials=args.trials,
        k=[1],
        load=[1, 10, 50, 200],
        time_scale=args.time_scale,
    )
    with tempfile.TemporaryDirectory() as tmp:
        clock = time.perf_counter()
        report = asyncio.run(run_suite(suite, request, Store(str(Path(tmp) / "sweep.db"))))
        wall = time.perf_counter() - clock
    print(
        f"{len(suite.tasks)} tasks x {args.trials} trials per level, time scale {args.time_scale}"
    )
    variants = report.summary.as_json()["models"][0]["variants"]
    for key, variant in sorted(variants.items(), key=lambda kv: int(kv[0].split(":")[1])):
        load = variant["load"]
        print(
            f"{key:>9}: pass rate {load['pass_rate']:.3f}, "
            f"{load['throughput_per_min']:.0f} trials/min, "
            f"p95 trial {load['trial_latency_p95_s']:.2f} s, "
            f"tool errors {load['tool_error_rate']:.3f}"
        )
    print(f"whole sweep: {wall:.1f} s")


if __name__ == "__main__":
    main()
