"""The human-label commands: `label` (label a run's trials, or export and import a CSV) and
`agreement` (how far the graders agree with the labels). Their work is in
`toolproof.labelling`, and the terminal's side in `cli.labelling`, imported when one of them
runs: it reads whole results and transcripts, which no other command's start-up needs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from toolproof.cli.options import RUN_HELP, JsonOpt, StoreOpt
from toolproof.cli.output import console, writable
from toolproof.errors import UsageError
from toolproof.report.json import write_json
from toolproof.store.queries import open_existing

LabellerOpt = Annotated[
    str | None, typer.Option("--labeller", help="Who labels (a name kept with each label).")
]


def label(
    run_id: Annotated[str, typer.Argument(help=RUN_HELP)],
    labeller: LabellerOpt = None,
    export: Annotated[
        Path | None, typer.Option("--export", help="Write a CSV template of the labels here.")
    ] = None,
    import_: Annotated[
        Path | None, typer.Option("--import", help="Read labels from this CSV (as exported).")
    ] = None,
    store: StoreOpt = None,
) -> None:
    """Label a run's trials pass or fail by hand: each trial's outcome and each rubric
    criterion. Labels never change a stored outcome; `toolproof agreement` compares them."""
    from toolproof.cli.labelling import label_in_terminal
    from toolproof.labelling import export_labels, import_labels

    if export and import_:
        raise UsageError("--export and --import: give one")
    journal = open_existing(store)
    run_id = journal.resolve(run_id)
    if export:
        writable(export, "--export", store=store)
        rows = export_labels(journal, run_id, labeller, export)
        console.print(f"wrote {export}: {rows} rows to label")
    elif import_:
        count = import_labels(journal, run_id, import_)
        console.print(f"imported {count} labels into run {run_id}")
    else:
        if not labeller:
            raise UsageError("give --labeller NAME: each label keeps who gave it")
        label_in_terminal(journal, run_id, labeller)


def agreement_command(
    run_id: Annotated[str, typer.Argument(help=RUN_HELP)],
    json_path: JsonOpt = None,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap over tasks.")] = 0,
    store: StoreOpt = None,
) -> None:
    """How far each automated grader (the trial outcome, each rubric criterion) agrees with
    the human labels, and the labellers with each other."""
    from toolproof.cli.labelling import show_agreement
    from toolproof.labelling import agreement_found

    writable(json_path, "--json", store=store)
    journal = open_existing(store)
    run_id = journal.resolve(run_id)
    found = agreement_found(journal, run_id, seed)
    show_agreement(found)
    if json_path:
        write_json(found, json_path)
        console.print(f"wrote {json_path}")
