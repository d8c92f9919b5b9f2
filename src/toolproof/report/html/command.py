"""`toolproof report`: write the HTML report of stored runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from toolproof.report.html.render import DEFAULT_TRANSCRIPTS_MB, write_report
from toolproof.store.queries import open_existing


def report(
    run_ids: Annotated[
        list[str],
        typer.Argument(
            metavar="RUN_ID", help="Runs to report on; several are compared side by side."
        ),
    ],
    output: Annotated[Path, typer.Option("-o", "--output", help="The HTML file to write.")] = Path(
        "report.html"
    ),
    store: Annotated[
        str | None, typer.Option("--store", help="SQLAlchemy URL or SQLite file [./toolproof.db].")
    ] = None,
    transcripts_mb: Annotated[
        float,
        typer.Option(
            "--transcripts-mb",
            min=0,
            help="Budget in MB for the embedded trial records (compressed); "
            "0 embeds none. Trials that did not pass come first.",
        ),
    ] = DEFAULT_TRANSCRIPTS_MB,
    title: Annotated[
        str | None, typer.Option(help="The page title (default: the suite and the run).")
    ] = None,
) -> None:
    """Write one self-contained HTML report (works offline): scores, pass^k curves, conditions,
    cost, the task × trial grid and every trial's transcript."""
    stats = write_report(
        open_existing(store), run_ids, output, title=title, transcripts_mb=transcripts_mb
    )
    records = (
        "every trial's record"
        if stats.transcripts == stats.trials
        else f"{stats.transcripts:,} of {stats.trials:,} trial records"
    )
    Console(soft_wrap=True).print(
        f"wrote {stats.path} ({stats.bytes / 1_000_000:.1f} MB; {stats.runs} run(s), "
        f"{stats.trials:,} trials, {records}) in {stats.seconds:.1f}s",
        highlight=False,
    )
