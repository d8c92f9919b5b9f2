"""`toolproof label` and `toolproof agreement` end to end: a real run in a real SQLite store,
labels given in the terminal and through a CSV, agreement computed from them."""

from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path

import pytest
from stored import toolproof_ci
from support import MINI_FILES, write_files

from toolproof.store.journal import Store
from toolproof.store.labels import run_labels


def toolproof(*args: str | Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """The command as a user types it, with nothing (or `stdin`) typed in."""
    return toolproof_ci(*args, stdin=stdin)


@pytest.fixture
def oracle_run(tmp_path: Path) -> tuple[Path, str]:
    """Six oracle trials (two tasks, three each), every one passed."""
    suite = write_files(tmp_path / "mini", MINI_FILES)
    db = tmp_path / "s.db"
    done = toolproof("run", suite, "--agent", "oracle", "--store", db, "--k", "1")
    assert done.returncode == 0, done.stderr
    return db, Store(str(db)).resolve("latest")


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.slow
def test_labels_in_the_terminal_are_saved_at_once_and_a_second_session_resumes(
    oracle_run: tuple[Path, str],
) -> None:
    db, run_id = oracle_run
    first = toolproof(
        "label", "latest", "--labeller", "ann", "--store", db, stdin="p\nmaybe\nf\nq\n"
    )
    assert first.returncode == 0, first.stderr
    assert "run " + run_id + ": 6 trials to label as ann" in first.stdout
    assert "task cancel trial 0" in first.stdout and "Please call off order A" in first.stdout
    assert "answer p, f, s or q" in first.stdout
    assert "saved 2 labels; run the same command to go on" in first.stdout
    assert [(lab.trial[2:], lab.passed) for lab in run_labels(Store(str(db)), run_id)] == [
        (("cancel", 0), True),
        (("cancel", 1), False),
    ]
    again = toolproof("label", run_id[:12], "--labeller", "ann", "--store", db, stdin="s\np\n")
    assert "4 trials to label as ann" in again.stdout
    assert "saved 1 labels" in again.stdout  # skipped one, then the input ended
    labels = run_labels(Store(str(db)), run_id)
    assert len(labels) == 3
    shown = toolproof("show", run_id, "--store", db, "--json", db.parent / "show.json")
    assert shown.returncode == 0
    assert json.loads((db.parent / "show.json").read_text())["counts"]["passed"] == 6


@pytest.mark.slow
def test_export_import_then_agreement_matches_the_hand_computation(
    oracle_run: tuple[Path, str], tmp_path: Path
) -> None:
    db, run_id = oracle_run
    template = tmp_path / "labels.csv"
    done = toolproof("label", "latest", "--export", template, "--labeller", "ann", "--store", db)
    assert done.returncode == 0, done.stderr
    rows = read_csv(template)
    assert len(rows) == 6
    assert {(r["criterion"], r["automated"], r["labeller"], r["label"]) for r in rows} == {
        ("outcome", "pass", "ann", "")
    }
    # ann fails cancel trial 2 and status trial 1, passes the rest.
    for row in rows:
        failing = (row["task_id"], row["trial"]) in {("cancel", "2"), ("status", "1")}
        row["label"] = "fail" if failing else "pass"
    with template.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    imported = toolproof("label", "latest", "--import", template, "--store", db)
    assert imported.returncode == 0, imported.stderr
    assert f"imported 6 labels into run {run_id}" in imported.stdout
    out = tmp_path / "agreement.json"
    found = toolproof("agreement", "latest", "--json", out, "--store", db)
    assert found.returncode == 0, found.stderr
    report = json.loads(out.read_text())
    outcome = report["graders"]["outcome"]
    # Six pairs (grader pass, ann): four (P,P), two (P,F). p_o = 4/6; the grader passes
    # 6/6, ann 4/6: p_e = 1 * 4/6 + 0 * 2/6 = 4/6; kappa = (4/6 - 4/6) / (1 - 4/6) = 0.
    assert outcome["pairs"] == 6 and outcome["cohen_kappa"] == pytest.approx(0.0)
    # Alpha: o_PP = 4 units * 2 = 8, o_PF = o_FP = 2; n = 12, n_P = 10, n_F = 2:
    # 1 - 11 * 4 / (2 * 10 * 2) = 1 - 44/40 = -0.1.
    assert outcome["krippendorff_alpha"] == pytest.approx(-0.1)
    # ann passed 4 pairs, the grader passed all 4: TPR 1; ann failed 2, the grader passed
    # both: FPR 1.
    assert outcome["true_positive_rate"] == 1.0 and outcome["false_positive_rate"] == 1.0
    assert report["humans"]["cohen_kappa"] is None
    assert "only 0 pairs of labels" in report["humans"]["not_measured"]["cohen_kappa"]
    assert "outcome" in found.stdout
    # one labeller: people with each other is one line, not a row of dashes per criterion
    assert "people on outcome" not in found.stdout
    assert (
        "not measured: people with each other: no item was labelled by two people; a second "
        "person's labels on the same trials measure it" in found.stdout
    )


@pytest.mark.slow
def test_a_bad_label_file_names_each_bad_row_and_imports_nothing(
    oracle_run: tuple[Path, str], tmp_path: Path
) -> None:
    db, run_id = oracle_run
    template = tmp_path / "labels.csv"
    toolproof("label", run_id, "--export", template, "--labeller", "bob", "--store", db)
    rows = read_csv(template)
    rows[0]["label"] = "pass"
    rows[1]["label"] = "maybe"
    rows[2]["label"], rows[2]["labeller"] = "fail", ""
    rows[3]["label"], rows[3]["task_id"] = "pass", "refund"
    rows[4]["label"], rows[4]["trial"] = "pass", "two"
    with template.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    bad = toolproof("label", run_id, "--import", template, "--store", db)
    assert bad.returncode == 2
    lines = bad.stderr.splitlines()
    assert f"{template}:3: label 'maybe': use pass or fail (or leave it empty)" in lines
    assert f"{template}:4: no labeller: say who gave the label" in lines
    assert any(
        line.startswith(f"{template}:5: run {run_id} has no labelled item task 'refund'")
        for line in lines
    )
    assert f"{template}:6: trial 'two' is not a number" in lines
    assert run_labels(Store(str(db)), run_id) == []


@pytest.mark.slow
def test_label_without_a_labeller_is_a_usage_error(oracle_run: tuple[Path, str]) -> None:
    db, _ = oracle_run
    done = toolproof("label", "latest", "--store", db)
    assert done.returncode == 2
    assert "give --labeller NAME" in done.stderr


@pytest.mark.slow
def test_a_label_file_that_is_not_text_is_one_located_line(
    oracle_run: tuple[Path, str], tmp_path: Path
) -> None:
    db, _ = oracle_run
    binary = tmp_path / "labels.csv"
    binary.write_bytes(b"task_id,variant\n\xff\xfe\x00garbage\n")
    done = toolproof("label", "latest", "--import", binary, "--store", db)
    assert done.returncode == 2
    assert f"{binary}:" in done.stderr and "not a UTF-8 CSV file" in done.stderr


@pytest.mark.slow
def test_agreement_shows_people_with_each_other_per_criterion_as_well_as_pooled(
    oracle_run: tuple[Path, str], tmp_path: Path
) -> None:
    db, _ = oracle_run
    for labeller, answers in (("ann", "p\np\np\np\np\nf\n"), ("bob", "p\np\np\np\nf\nf\n")):
        done = toolproof("label", "latest", "--labeller", labeller, "--store", db, stdin=answers)
        assert "saved 6 labels" in done.stdout, done.stdout
    out = tmp_path / "agreement.json"
    found = toolproof("agreement", "latest", "--json", out, "--store", db)
    assert found.returncode == 0, found.stderr
    report = json.loads(out.read_text())
    # Six pairs (ann, bob): four (P,P), one (P,F), one (F,F). p_o = 5/6; ann passes 5/6, bob
    # 4/6: p_e = 20/36 + 2/36 = 22/36; kappa = (30/36 - 22/36) / (14/36) = 4/7.
    # Alpha: o_PP 8, o_FF 2, o_PF = o_FP = 1; n = 12, n_P = 9, n_F = 3:
    # 1 - 11 * 2 / (2 * 9 * 3) = 16/27.
    on_outcome = report["humans_by_criterion"]["outcome"]
    assert on_outcome["pairs"] == 6
    assert on_outcome["cohen_kappa"] == pytest.approx(4 / 7)
    assert on_outcome["krippendorff_alpha"] == pytest.approx(16 / 27)
    assert report["humans"]["cohen_kappa"] == pytest.approx(4 / 7)  # one criterion: the same
    rows = {line.split("│")[1].strip(): line for line in found.stdout.splitlines() if "│" in line}
    assert "0.571" in rows["people with each other"] and "0.593" in rows["people on outcome"]
