"""Shared by the store tests: the store of the previous schema, and many processes opening
one store at the same moment."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

SCHEMA_2 = Path(__file__).parents[1] / "fixtures" / "store" / "schema2.sqlite"
"""A store written by toolproof before schema 3: two finished runs of the mini suite (the
oracle, then the null agent), 3 trials of each task, each run with its manifest of the first
format; results stored as plain JSON."""

OPEN = """
import os, sys, time
from pathlib import Path
from toolproof.store import Store
ready, go = Path(sys.argv[2]), Path(sys.argv[3])
(ready / str(os.getpid())).touch()
while not go.exists():
    time.sleep(0.001)
Store(sys.argv[1])
"""


def open_at_once(url: str, processes: int, folder: Path) -> list[str]:
    """Start `processes` real processes that each open the store at `url`, let them import
    toolproof, then open it all at the same moment; returns the errors of those that failed."""
    ready, go = folder / "ready", folder / "go"
    ready.mkdir()
    started = [
        subprocess.Popen(
            [sys.executable, "-c", OPEN, url, str(ready), str(go)],
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(processes)
    ]
    deadline = time.monotonic() + 120
    while len(list(ready.iterdir())) < processes and time.monotonic() < deadline:
        time.sleep(0.01)
    go.touch()
    failed = []
    for process in started:
        _, err = process.communicate(timeout=120)
        if process.returncode != 0:
            failed.append((err.strip().splitlines() or ["no output"])[-1])
    return failed
