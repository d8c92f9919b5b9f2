"""Human labels on a run: which trials have something to label (`labelled_trials`), what a
labeller has still to label, the label CSV's export and import (every bad row reported,
located, and then nothing imported), and how far the graders agree with the labels
(`agreement_found`, through `metrics.agreement`). The command line asks and prints; this
module decides."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolproof.errors import Problem, SuiteError, UsageError
from toolproof.files import write_atomic
from toolproof.metrics.agreement import Item, agreement
from toolproof.records.trial import TrialResult
from toolproof.store.journal import Store
from toolproof.store.labels import Label, run_labels, save_labels, trial_items, trial_key
from toolproof.store.rows import TrialKey

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
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow(COLUMNS)
    writer.writerows(rows)
    write_atomic(path, text.getvalue(), "--export")
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


def still_to_label(journal: Store, run_id: str, labeller: str) -> list[Labelled]:
    """The labelled trials with an item this labeller has not labelled yet, each holding
    only those items, in trial order: what labelling in the terminal asks, so that a
    stopped session resumes where it stopped."""
    done = {
        (lab.trial, lab.criterion)
        for lab in run_labels(journal, run_id)
        if lab.labeller == labeller
    }
    found = [
        Labelled(trial.key, trial.result, [i for i in trial.items if (trial.key, i[0]) not in done])
        for trial in labelled_trials(journal, run_id)
    ]
    return [trial for trial in found if trial.items]


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
