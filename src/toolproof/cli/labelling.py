"""The work of the human-label commands (`cli.labels`): the label CSV's export and import,
labelling in the terminal, and the agreement table."""

from __future__ import annotations

import csv
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from toolproof.cli.output import console
from toolproof.errors import Problem, SuiteError, UsageError
from toolproof.format import fixed
from toolproof.graders.rubric import render_transcript
from toolproof.metrics.agreement import Item, agreement
from toolproof.records.trial import TrialResult
from toolproof.store.journal import Store
from toolproof.store.labels import Label, TrialKey, run_labels, save_labels, trial_items, trial_key

COLUMNS = ("task_id", "variant", "model", "trial", "criterion", "automated", "labeller", "label")
"""The label CSV's columns, in order: which trial and criterion, the automated verdict (to
read, not to edit), who labels and their `pass` or `fail`."""


@dataclass(frozen=True)
class Labelled:
    """A trial as the label commands read it: its result's key and what can be labelled."""

    key: TrialKey
    result: TrialResult
    items: list[tuple[str, bool, str]]


def labelled_trials(store: Store, run_id: str) -> list[Labelled]:
    """The run's trials that have something to label, in trial order."""
    found = [
        Labelled(trial_key(result), result, trial_items(result))
        for _, result in store.results(run_id)
    ]
    return sorted((t for t in found if t.items), key=lambda t: t.key)


def export_labels(journal: Store, run_id: str, labeller: str | None, path: Path) -> int:
    """Write the template: one row per trial and criterion (a labeller's own labels filled
    in where given). Returns how many rows."""
    given = {
        (lab.trial, lab.criterion): lab.passed
        for lab in run_labels(journal, run_id)
        if lab.labeller == labeller
    }
    rows = [
        [
            trial.key[2],
            trial.key[0],
            trial.key[1],
            trial.key[3],
            name,
            "pass" if automated else "fail",
            labeller or "",
            {True: "pass", False: "fail", None: ""}[given.get((trial.key, name))],
        ]
        for trial in labelled_trials(journal, run_id)
        for name, automated, _ in trial.items
    ]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        writer.writerows(rows)
    return len(rows)


def import_labels(journal: Store, run_id: str, path: Path) -> int:
    """Read labelled rows (rows with an empty label are skipped); every bad row is reported,
    located, and then nothing is imported."""
    if not path.is_file():
        raise UsageError(f"--import {path}: no such file")
    known = {
        (trial.key, name)
        for trial in labelled_trials(journal, run_id)
        for name, _, _ in trial.items
    }
    problems: list[Problem] = []
    labels: list[Label] = []
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        try:
            missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                raise SuiteError.at(path, 1, f"missing column(s) {', '.join(missing)}")
            for row in reader:
                found = _row_label(row, known, run_id)
                if isinstance(found, str):
                    problems.append(Problem(str(path), reader.line_num, found))
                elif found is not None:
                    labels.append(found)
        except (UnicodeDecodeError, csv.Error) as exc:
            raise SuiteError.at(
                path, reader.line_num + 1, f"not a UTF-8 CSV file ({exc})"
            ) from None
    if problems:
        raise SuiteError(problems)
    return save_labels(journal, run_id, labels)


def _row_label(
    row: dict[str, str], known: set[tuple[TrialKey, str]], run_id: str
) -> Label | str | None:
    """The label a CSV row gives, None for a row left blank, or what is wrong with it."""
    value = (row.get("label") or "").strip().lower()
    if not value:
        return None
    if value not in ("pass", "fail"):
        return f"label {value!r}: use pass or fail (or leave it empty)"
    labeller = (row.get("labeller") or "").strip()
    if not labeller:
        return "no labeller: say who gave the label"
    try:
        trial = int(row.get("trial") or "")
    except ValueError:
        return f"trial {row.get('trial')!r} is not a number"
    key: TrialKey = (
        row.get("variant") or "",
        row.get("model") or "",
        row.get("task_id") or "",
        trial,
    )
    criterion = row.get("criterion") or ""
    if (key, criterion) not in known:
        return (
            f"run {run_id} has no labelled item task {key[2]!r} trial {trial} criterion "
            f"{criterion!r} (variant {key[0]!r}, model {key[1]!r})"
        )
    return Label(trial=key, criterion=criterion, labeller=labeller, passed=value == "pass")


ANSWERS = {"p": True, "pass": True, "f": False, "fail": False}


def label_in_terminal(journal: Store, run_id: str, labeller: str) -> None:
    """Ask for each item this labeller has not labelled yet, saving each answer at once
    (so a stopped session resumes where it stopped): p(ass), f(ail), s(kip), q(uit)."""
    done = {
        (lab.trial, lab.criterion)
        for lab in run_labels(journal, run_id)
        if lab.labeller == labeller
    }
    todo = [
        trial
        for trial in labelled_trials(journal, run_id)
        if any((trial.key, name) not in done for name, _, _ in trial.items)
    ]
    console.print(f"run {run_id}: {len(todo)} trials to label as {escape(labeller)}")
    saved = 0
    for trial in todo:
        show_trial(trial)
        for name, automated, why in trial.items:
            if (trial.key, name) in done:
                continue
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


def agreement_found(journal: Store, run_id: str, seed: int) -> dict[str, Any]:
    """How far each automated grader agrees with the run's human labels, and the labellers
    with each other (`metrics.agreement`)."""
    humans: dict[tuple[TrialKey, str], dict[str, bool]] = {}
    for lab in run_labels(journal, run_id):
        humans.setdefault((lab.trial, lab.criterion), {})[lab.labeller] = lab.passed
    items = [
        Item(task=trial.key[2], grader=name, automated=automated, humans=humans[(trial.key, name)])
        for trial in labelled_trials(journal, run_id)
        for name, automated, _ in trial.items
        if (trial.key, name) in humans
    ]
    return {"run_id": run_id, "labelled_items": len(items), **agreement(items, seed=seed)}


def show_agreement(found: dict[str, Any]) -> None:
    """Print the agreement table and what it could not measure."""
    console.print(agreement_table(found))
    for line in not_measured(found):
        console.print(f"[yellow]not measured:[/] {escape(line)}", highlight=False)


SHORT = {
    "cohen_kappa": "kappa",
    "krippendorff_alpha": "alpha",
    "true_positive_rate": "TPR",
    "false_positive_rate": "FPR",
}
"""The statistics by their column names."""


def not_measured(found: dict[str, Any]) -> list[str]:
    """What the labels cannot support, compactly: one line per reason and set of statistics,
    naming every row it holds for; with no item labelled by two people, one line for people
    with each other (their rows are left out of the table)."""
    held: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for who, part in _rows(found):
        by_reason: dict[str, list[str]] = {}
        for metric, why in part["not_measured"].items():
            name = metric.removesuffix("_interval")
            shown = SHORT[name] + (" interval" if name != metric else "")
            by_reason.setdefault(why, []).append(shown)
        for why, metrics in by_reason.items():
            held.setdefault((why, tuple(metrics)), []).append(who)
    lines = [f"{_listed(who)}: {_listed(list(m))} ({why})" for (why, m), who in held.items()]
    if not _people_paired(found):
        lines.append(
            "people with each other: no item was labelled by two people; a second person's "
            "labels on the same trials measure it"
        )
    return lines


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _people_paired(found: dict[str, Any]) -> bool:
    return bool(found["humans"]["pairs"])


def agreement_table(found: dict[str, Any]) -> Table:
    table = Table(
        title=f"run {found['run_id']}: {found['labelled_items']} labelled items, "
        f"labellers: {', '.join(found['labellers']) or 'none'}",
        title_justify="left",
    )
    for column in ("grader", "items", "pairs", "kappa", "alpha", "TPR", "FPR"):
        table.add_column(column, justify="left" if column == "grader" else "right")
    for name, part in _rows(found):
        table.add_row(
            escape(name),
            str(part["items"]),
            str(part["pairs"]),
            _with_interval(part, "cohen_kappa"),
            _number(part.get("krippendorff_alpha")),
            _with_interval(part, "true_positive_rate"),
            _with_interval(part, "false_positive_rate"),
        )
    return table


def _rows(found: dict[str, Any]) -> list[tuple[str, Any]]:
    """Each grader's part, then people's with each other (pooled over the criteria, then per
    criterion) when some item was labelled by two people."""
    people = [
        ("people with each other", found["humans"]),
        *((f"people on {name}", part) for name, part in found["humans_by_criterion"].items()),
    ]
    return [*found["graders"].items(), *(people if _people_paired(found) else [])]


def _number(value: Any) -> str:
    return "–" if value is None else fixed(value)


def _with_interval(part: dict[str, Any], name: str) -> str:
    if name not in part:
        return ""
    interval = part.get(f"{name}_interval")
    shown = _number(part[name])
    if interval is not None:
        shown += f" [{fixed(interval[0], 2)}, {fixed(interval[1], 2)}]"
    return escape(shown)
