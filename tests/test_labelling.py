"""Human labels on a stored run, in process over a real SQLite file: what is left to label,
the CSV's round trip, a bad row located, and the agreement computed from the labels."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from stored import stored_run

from toolproof.errors import SuiteError
from toolproof.labelling import (
    agreement_found,
    export_labels,
    import_labels,
    labelled_trials,
    still_to_label,
)
from toolproof.store.journal import Store
from toolproof.store.labels import Label, run_labels, save_labels


@pytest.fixture
def run(tmp_path: Path) -> tuple[Store, str]:
    store = Store(str(tmp_path / "s.db"))
    return store, stored_run(store, {"a": "PPF", "b": "PI"})


def test_infra_errors_have_nothing_to_label_and_a_labeller_resumes_where_they_stopped(
    run: tuple[Store, str],
) -> None:
    store, run_id = run
    keys = [trial.key for trial in labelled_trials(store, run_id)]
    assert keys == [("", "", "a", 0), ("", "", "a", 1), ("", "", "a", 2), ("", "", "b", 0)]
    save_labels(store, run_id, [Label(("", "", "a", 0), "outcome", "ann", True)])
    left = [trial.key for trial in still_to_label(store, run_id, "ann")]
    assert left == keys[1:]
    assert len(still_to_label(store, run_id, "bo")) == 4


def test_an_exported_file_filled_in_imports_and_the_agreement_counts_it(
    run: tuple[Store, str], tmp_path: Path
) -> None:
    store, run_id = run
    path = tmp_path / "labels.csv"
    assert export_labels(store, run_id, "ann", path) == 4
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["task_id"], r["trial"], r["automated"]) for r in rows] == [
        ("a", "0", "pass"),
        ("a", "1", "pass"),
        ("a", "2", "fail"),
        ("b", "0", "pass"),
    ]
    for row, label in zip(rows, ("pass", "fail", "fail", ""), strict=True):
        row["label"] = label
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    assert import_labels(store, run_id, path) == 3
    assert [(lab.trial[2:], lab.passed) for lab in run_labels(store, run_id)] == [
        (("a", 0), True),
        (("a", 1), False),
        (("a", 2), False),
    ]
    found = agreement_found(store, run_id, seed=0)
    assert found["labelled_items"] == 3
    assert found["graders"]["outcome"]["items"] == 3


def test_every_bad_row_is_located_and_nothing_is_imported(
    run: tuple[Store, str], tmp_path: Path
) -> None:
    store, run_id = run
    path = tmp_path / "labels.csv"
    export_labels(store, run_id, "ann", path)
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[1] += "maybe"
    lines[2] = lines[2].replace(",ann,", ",,") + "pass"
    lines[3] += "fail"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(SuiteError) as raised:
        import_labels(store, run_id, path)
    assert [(p.line, p.message) for p in raised.value.problems] == [
        (2, "label 'maybe': use pass or fail (or leave it empty)"),
        (3, "no labeller: say who gave the label"),
    ]
    assert run_labels(store, run_id) == []
