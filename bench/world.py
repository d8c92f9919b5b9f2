"""Per-trial cost of an isolated world copy plus a canonical hash, on a folder of JSON files.

    python bench/world.py bench/data/tau-bench-airline

Each simulated trial makes its own copy-on-write world, changes a few records (as a booking
or a cancellation would), then computes the canonical hash and the diff. The baseline is the
reset-and-rehash a harness does when it reloads the database from JSON for every trial and
hashes the whole of it (sha256 of the str() of a sorted tuple tree) before and after.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from toolproof.world import World, freeze


def load(folder: Path) -> dict[str, Any]:
    data = {}
    for path in sorted(folder.iterdir()):
        if path.name.endswith(".json"):
            data[path.name.removesuffix(".json")] = json.loads(path.read_bytes())
        elif path.name.endswith(".json.gz"):
            data[path.name.removesuffix(".json.gz")] = json.loads(
                gzip.decompress(path.read_bytes())
            )
    if not data:
        sys.exit(f"{folder}: no .json or .json.gz files")
    return data


def to_hashable(item: Any) -> Any:
    if isinstance(item, dict):
        return tuple((k, to_hashable(v)) for k, v in sorted(item.items()))
    if isinstance(item, list):
        return tuple(to_hashable(v) for v in item)
    return item


def baseline_trial(folder: Path) -> None:
    data = load(folder)
    hashlib.sha256(str(to_hashable(data)).encode()).hexdigest()
    hashlib.sha256(str(to_hashable(data)).encode()).hexdigest()


def touch(world: World, trial: int) -> None:
    """Three writes into different collections, chosen by the trial index."""
    for i, name in enumerate(list(world)[:3]):
        collection = world[name]
        if isinstance(collection, dict) and collection:
            keys = list(collection)
            record = collection[keys[(trial * 7919 + i) % len(keys)]]
            if isinstance(record, dict):
                record["toolproof_bench"] = trial
        elif isinstance(collection, list):
            collection.append({"toolproof_bench": trial})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--baseline-trials", type=int, default=5)
    args = parser.parse_args()

    started = time.perf_counter()
    data = load(args.data_dir)
    base = freeze(data)
    World(base).hash()
    setup = time.perf_counter() - started

    per_trial = []
    for trial in range(args.trials):
        clock = time.perf_counter()
        world = World(base)
        touch(world, trial)
        world.hash()
        world.diff()
        per_trial.append(time.perf_counter() - clock)

    baseline = []
    for _ in range(args.baseline_trials):
        clock = time.perf_counter()
        baseline_trial(args.data_dir)
        baseline.append(time.perf_counter() - clock)

    ours, theirs = statistics.median(per_trial), statistics.median(baseline)
    size = len(json.dumps(data))
    print(f"data: {args.data_dir} ({size / 1e6:.1f} MB of JSON)")
    print(f"one-time load, freeze and first hash: {setup:.2f} s")
    print(
        f"per trial (copy + 3 writes + hash + diff), median of {args.trials}: {ours * 1e3:.3f} ms"
    )
    print(f"baseline (reload JSON + hash twice), median of {args.baseline_trials}: {theirs:.3f} s")
    print(f"speed-up: {theirs / ours:.0f}x")


if __name__ == "__main__":
    main()
