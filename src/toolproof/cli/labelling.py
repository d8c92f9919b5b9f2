"""Labelling in the terminal, item by item, and the agreement table printed (the work of
`cli.labels`; what is to label and the numbers are `toolproof.labelling`'s)."""

from __future__ import annotations

import sys
from typing import Any

from rich.markup import escape

from toolproof.cli.output import console
from toolproof.graders.rubric import render_transcript
from toolproof.labelling import Labelled, still_to_label
from toolproof.report.agreement import agreement_table, not_measured
from toolproof.store.journal import Store
from toolproof.store.labels import Label, save_labels

ANSWERS = {"p": True, "pass": True, "f": False, "fail": False}


def label_in_terminal(journal: Store, run_id: str, labeller: str) -> None:
    """Ask for each item this labeller has not labelled yet, saving each answer at once
    (so a stopped session resumes where it stopped): p(ass), f(ail), s(kip), q(uit)."""
    todo = still_to_label(journal, run_id, labeller)
    console.print(f"run {run_id}: {len(todo)} trials to label as {escape(labeller)}")
    saved = 0
    for trial in todo:
        show_trial(trial)
        for name, automated, why in trial.items:
            console.print(
                f"[bold]{escape(name)}[/]: automated {'pass' if automated else 'fail'}"
                f" ({escape(why)})",
                highlight=False,
            )
            answer = ask()
            if answer == "quit":
                console.print(f"saved {saved} labels; run the same command to go on")
                return
            if isinstance(answer, bool):
                save_labels(journal, run_id, [Label(trial.key, name, labeller, answer)])
                saved += 1
    console.print(f"saved {saved} labels; every trial of run {run_id} is labelled")


def ask() -> bool | str:
    """One answer from the terminal: True (pass), False (fail), 'skip' or 'quit' (also at
    the end of the input)."""
    while True:
        console.print("pass / fail / skip / quit? [p/f/s/q] ", end="")
        line = sys.stdin.readline()
        if not line:
            return "quit"
        word = line.strip().lower()
        if word in ANSWERS:
            return ANSWERS[word]
        if word in ("s", "skip", "q", "quit"):
            return "skip" if word.startswith("s") else "quit"
        console.print("answer p, f, s or q")


def show_trial(trial: Labelled) -> None:
    result = trial.result
    variant, model, task_id, index = trial.key
    where = " · ".join(part for part in (model, variant) if part)
    console.rule(f"task {task_id} trial {index}" + (f" · {where}" if where else ""))
    console.print(escape(render_transcript(result.transcript)), highlight=False)
    for verdict in result.verdicts:
        mark = "[green]pass[/]" if verdict.passed else "[red]fail[/]"
        console.print(f"  {mark} {escape(verdict.grader)}: {escape(verdict.reason)}")


def show_agreement(found: dict[str, Any]) -> None:
    """Print the agreement table and what it could not measure."""
    console.print(agreement_table(found))
    for line in not_measured(found):
        console.print(f"[yellow]not measured:[/] {escape(line)}", highlight=False)
