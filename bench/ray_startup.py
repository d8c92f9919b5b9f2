"""What the Ray executor costs and when it pays: the same run local and on Ray.

    python bench/ray_startup.py [--suite examples/retail] [--trials 4] [--concurrency 8]
                                [--cpus 2]

Runs the suite with the oracle (CPU-bound: the harness and the tools are all the work) once
with the local executor and once with `--executor ray` on a local Ray cluster of `--cpus`
CPUs, and prints: the seconds to start the cluster, the seconds the Ray run spends before its
first trial finishes (actors starting and loading the suite), each run's wall time, and
whether the two stores hold the same outcomes, seeds and world hashes.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

import ray

from toolproof.records.trial import TrialResult
from toolproof.runner.run import RunRequest, run_suite
from toolproof.store import Store
from toolproof.suite import load_suite


def timed_run(suite: Path, db: Path, request: RunRequest) -> tuple[float, float, str]:
    """(wall seconds, seconds to the first finished trial, run id)."""
    started = time.perf_counter()
    first: list[float] = []

    def arrived(_: TrialResult) -> None:
        if not first:
            first.append(time.perf_counter() - started)

    report = asyncio.run(run_suite(load_suite(suite), request, Store(str(db)), on_result=arrived))
    return time.perf_counter() - started, first[0], report.run_id


def outcomes(db: Path, run_id: str) -> dict[Any, Any]:
    return {
        (r.variant, r.model, r.task_id, r.trial): (r.seed, r.outcome, r.final_hash)
        for _, r in Store(str(db)).results(run_id)
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--suite", default="examples/retail")
    parser.add_argument("--trials", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--cpus", type=int, default=2)
    args = parser.parse_args()
    suite = Path(args.suite)
    with tempfile.TemporaryDirectory() as tmp:
        common: dict[str, Any] = {
            "agent": "oracle",
            "trials": args.trials,
            "k": [1],
            "concurrency": args.concurrency,
        }
        local_s, local_first, local_id = timed_run(
            suite, Path(tmp) / "local.db", RunRequest(**common)
        )
        clock = time.perf_counter()
        ray.init(
            num_cpus=args.cpus, include_dashboard=False, logging_level="ERROR", log_to_driver=False
        )
        init_s = time.perf_counter() - clock
        ray_s, ray_first, ray_id = timed_run(
            suite, Path(tmp) / "ray.db", RunRequest(**common, executor="ray")
        )
        ray.shutdown()
        same = outcomes(Path(tmp) / "local.db", local_id) == outcomes(Path(tmp) / "ray.db", ray_id)
        trials = len(outcomes(Path(tmp) / "local.db", local_id))
    print(f"{suite.name}: {trials} trials, oracle, concurrency {args.concurrency}")
    print(f"local executor:  {local_s:6.1f} s wall, first trial after {local_first:5.1f} s")
    print(f"ray cluster start ({args.cpus} CPUs): {init_s:6.1f} s")
    print(f"ray executor:    {ray_s:6.1f} s wall, first trial after {ray_first:5.1f} s")
    print(f"same outcomes, seeds and world hashes: {same}")


if __name__ == "__main__":
    main()
