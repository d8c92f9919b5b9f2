"""The results store on a 100,000-trial run: its size, the gate, recording and verifying the
manifest.

    python bench/store.py [--tasks 200] [--trials 50] [--models 2] [--variants 5]
                          [--repeat 3] [--keep FILE]

Writes the synthetic run of bench/report.py (200 tasks x 50 trials x 2 models x 5 variants,
every trial a whole record with a small realistic transcript) into a temporary SQLite store,
or reuses the store at --keep FILE when it exists (and keeps it there otherwise). Then:

- bytes per trial: the store file after a WAL checkpoint over the trial count, before and after
  the run's manifest is recorded;
- recording the manifest, as `toolproof run` does when a run finishes;
- `toolproof verify RUN` and `toolproof gate RUN --min pass@1=0.5`, through the commands' own
  functions (the gate computes its metrics from the run's rows while a forked process
  re-hashes every stored trial against the manifest, both of one state of the store), and
  the gate as the command itself, start-up included;
- a real run: examples/retail with the oracle agent, 3 trials per task, its stored record per
  trial against the JSON it holds.

Each timing is the best and the median of --repeat runs. Targets: at most 2 KB per synthetic
trial, the gate under 3 s, recording the manifest under 1 s.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import redirect_stdout, suppress
from io import StringIO
from pathlib import Path

import typer
from report import build
from sqlalchemy import func, select

from toolproof.cli.ci import gate, verify
from toolproof.runner.run import RunRequest, run_suite
from toolproof.store import Store
from toolproof.store.manifest import record_manifest
from toolproof.store.schema import trials
from toolproof.suite import load_suite

RETAIL = Path(__file__).parent.parent / "examples" / "retail"


def timed(repeat: int, action: Callable[[], object]) -> tuple[float, float]:
    """(best, median) seconds of `repeat` calls; the command's printing goes nowhere."""
    seconds = []
    for _ in range(repeat):
        began = time.perf_counter()
        with redirect_stdout(StringIO()), suppress(typer.Exit):
            action()
        seconds.append(time.perf_counter() - began)
    return min(seconds), statistics.median(seconds)


def command_seconds(repeat: int, args: list[str]) -> tuple[float, float]:
    """(best, median) seconds of `repeat` runs of the `toolproof` command in a new process."""
    seconds = []
    for _ in range(repeat):
        began = time.perf_counter()
        subprocess.run([sys.executable, "-m", "toolproof", *args], capture_output=True, check=False)
        seconds.append(time.perf_counter() - began)
    return min(seconds), statistics.median(seconds)


def bytes_per_trial(store: Store, path: Path) -> float:
    with store.engine.connect() as conn:
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        count = conn.execute(select(func.count()).select_from(trials)).scalar_one()
    return path.stat().st_size / count


def real_run(folder: Path) -> str:
    """examples/retail with the oracle: stored bytes per trial against its JSON."""
    store = Store(str(folder / "retail.db"))
    suite = load_suite(RETAIL)
    report = asyncio.run(run_suite(suite, RunRequest(agent="oracle", trials=3, k=[1]), store))
    with store.engine.connect() as conn:
        stored = conn.execute(select(func.avg(func.length(trials.c.result)))).scalar_one()
    plain = [len(result.model_dump_json()) for _, result in store.results(report.run_id)]
    return (
        f"examples/retail, oracle, {len(plain)} trials: stored record {stored / 1000:.2f} KB "
        f"per trial for {sum(plain) / len(plain) / 1000:.2f} KB of JSON "
        f"({sum(plain) / len(plain) / stored:.1f}x smaller)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--models", type=int, default=2)
    parser.add_argument("--variants", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None, help="Store to reuse, or keep.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or Path(tmp) / "bench.db"
        reused = path.exists()
        store = Store(str(path))
        if not reused:
            began = time.perf_counter()
            build(store, args.tasks, args.trials, args.models, args.variants)
            print(f"wrote the synthetic run in {time.perf_counter() - began:.1f}s")
            # Written pages go to disk before anything is timed: the kernel flushing 166 MB
            # meanwhile would be timed too, and a gate reads a store written earlier.
            os.sync()
        run_id = store.resolve("latest")
        url = str(path)
        count = len(store.done(run_id))
        print(f"run {run_id}: {count:,} trials ({'reused' if reused else 'new'} store {path})")
        print(f"size: {bytes_per_trial(store, path):,.0f} bytes per trial (target: <= 2,000)")
        best, median = timed(args.repeat, lambda: record_manifest(store, run_id))
        print(f"recording the manifest: {best:.2f}s best, {median:.2f}s median (target: < 1 s)")
        print(f"size with the manifest: {bytes_per_trial(store, path):,.0f} bytes per trial")
        best, median = timed(args.repeat, lambda: verify(run_id, store=url))
        print(f"verify: {best:.2f}s best, {median:.2f}s median")
        best, median = timed(
            args.repeat,
            lambda: gate(run_id, store=url, min_=["pass@1=0.5"], max_=None, max_regression=None),
        )
        print(f"gate: {best:.2f}s best, {median:.2f}s median (target: < 3 s)")
        command = ["gate", run_id, "--min", "pass@1=0.5", "--store", url]
        best, median = command_seconds(args.repeat, command)
        print(
            f"toolproof {' '.join(command)}: {best:.2f}s best, {median:.2f}s median (target: < 3 s)"
        )
        store.engine.dispose()
        print(real_run(Path(tmp)))


if __name__ == "__main__":
    main()
