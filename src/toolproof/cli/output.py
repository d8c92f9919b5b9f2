"""What commands print and write: the consoles, the summary tables, JSON files, --fail-under,
and the checks that the files a command will write can be written, made before its work."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any, TextIO

import typer
from rich.markup import escape

from toolproof.ci.gate import fail_under
from toolproof.errors import UsageError
from toolproof.metrics.summary import RunSummary
from toolproof.report.console import InertConsole
from toolproof.report.gate import detail
from toolproof.report.json import write_json
from toolproof.report.terminal import summary_notes, summary_tables

console = InertConsole() if sys.stdout.isatty() else InertConsole(width=160)
# "file:100: ..." is no emoji code
errors = InertConsole(stderr=True, soft_wrap=True, emoji=False)


def finish(summary: RunSummary, json_path: Path | None, thresholds: list[str] | None) -> None:
    """Print the tables, write the JSON, apply --fail-under (the gate's `min` on this run);
    exit 1 when a threshold does not hold."""
    for table in summary_tables(summary):
        console.print(table)
    for note in summary_notes(summary):
        console.print(f"[yellow]note:[/] {escape(note)}", highlight=False)
    if json_path:
        write_json(summary.as_json(), json_path)
        console.print(f"wrote {json_path}")
    broken = fail_under(summary, thresholds or [])
    for check in broken:
        prefix = f"{check.model}: " if check.model else ""
        console.print(f"[red]fail-under: {escape(prefix + detail(check))}", highlight=False)
    if broken:
        raise typer.Exit(1)


def writable(
    path: Path | None, flag: str, *, store: str | None = None, suite: Path | None = None
) -> None:
    """Refuse, before any work, an output file that could not be written afterwards, or
    that must not be: a folder, a path under a file, a FIFO, socket or device (writing one
    may wait for a reader forever), a folder or file without write permission, the results
    store (`store`, as --store gives it: not given, ./toolproof.db) and its journal files,
    or a file of the suite folder `suite` (its suite.yaml, tasks, data, tools). Paths are
    compared as they resolve, links and `..` followed. Leaves nothing behind (the probe is
    an anonymous temporary file)."""
    if path is None:
        return
    from toolproof.store.queries import store_file

    if path.is_dir():
        raise UsageError(f"{flag} {path}: is a folder; give a file name")
    if path.exists() and not path.is_file():
        raise UsageError(
            f"{flag} {path}: not a regular file (a FIFO, socket or device); give a file name"
        )
    target = Path(os.path.realpath(path))
    database = store_file(store)
    if database is not None and target in {
        database,
        *(database.with_name(database.name + end) for end in ("-wal", "-shm", "-journal")),
    }:
        raise UsageError(f"{flag} {path}: is the results store {database}; give another file")
    if suite is not None:
        folder = Path(os.path.realpath(suite))
        folder = folder if folder.is_dir() else folder.parent
        if target.is_file() and target.is_relative_to(folder):
            raise UsageError(f"{flag} {path}: is a file of the suite {suite}; give another file")
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise UsageError(f"{flag} {path}: {folder} is a file, not a folder")
    beside = target.parent  # where the file is written first, then renamed into place
    while not beside.exists() and beside != beside.parent:
        beside = beside.parent
    try:
        if path.exists():
            path.open("ab").close()  # a file made read-only is kept as it is
        tempfile.TemporaryFile(dir=beside).close()
    except OSError as exc:
        raise UsageError(f"{flag} {path}: cannot write there: {exc.strerror or exc}") from None


class _ReaderSafe:
    """Standard output that outlives its reader: once a pipe's reader is gone (`toolproof
    run ... | head`), what is printed goes nowhere and the command carries on, so its files
    are still written and its exit code still says how it went."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._gone = False

    def write(self, text: str) -> int:
        if not self._gone:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._lost()
        return len(text)

    def flush(self) -> None:
        if not self._gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._lost()

    def _lost(self) -> None:
        self._gone = True
        # What is still buffered, and the interpreter's last flush, go to /dev/null quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, self._stream.fileno())
        os.close(devnull)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def keep_working_without_reader() -> None:
    """Make standard output survive a reader that goes away (see `_ReaderSafe`)."""
    if not isinstance(sys.stdout, _ReaderSafe):
        sys.stdout = _ReaderSafe(sys.stdout)
