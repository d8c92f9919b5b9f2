"""`toolproof init DIR`: a starter suite that `validate` passes as written and the oracle
passes on every task; it never writes over anything."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from stored import run_json, toolproof_ci

# Slow: every test here runs the CLI as a process.
pytestmark = pytest.mark.slow


def test_an_initialised_suite_validates_and_the_oracle_passes_it(tmp_path: Path) -> None:
    suite = tmp_path / "desk"
    made = toolproof_ci("init", suite, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    files = sorted(str(p.relative_to(suite)) for p in suite.rglob("*") if p.is_file())
    assert files == [
        "README.md",
        "data/orders.yaml",
        "policy.md",
        "suite.yaml",
        "tasks/orders.yaml",
        "tools.py",
    ]
    spec = yaml.safe_load((suite / "suite.yaml").read_text())
    assert spec["name"] == "desk" and spec["policy_rules"] == ["confirm_before_write"]
    assert f"next: toolproof validate {suite}" in made.stdout

    valid = toolproof_ci("validate", suite, cwd=tmp_path)
    assert valid.returncode == 0, valid.stdout + valid.stderr
    assert "suite 'desk' is sound: 2 tasks checked" in valid.stdout
    # every baseline fails each task, or has no room there for its shortcut (n/a)
    assert len(re.findall(r"all \d+ failed", valid.stdout)) == 2
    assert "passed:" not in valid.stdout

    ran, summary = run_json(tmp_path, suite, "--agent", "oracle")
    assert ran.returncode == 0, ran.stderr
    assert summary["counts"] == {"passed": 4, "failed": 0, "infra_error": 0, "total": 4}
    assert {t["id"] for t in summary["tasks"]} == {"where-is-my-order", "cancel-pending-order"}


def test_init_takes_a_name_and_an_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    made = toolproof_ci("init", tmp_path / "empty", "--name", "help desk: EU", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert yaml.safe_load((tmp_path / "empty" / "suite.yaml").read_text())["name"] == (
        "help desk: EU"
    )


def test_init_never_writes_over_a_folder_or_a_file(tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine")
    done = toolproof_ci("init", taken, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"error: init {taken}: a folder that is not empty; give a new or empty folder"
    )
    assert [p.name for p in taken.iterdir()] == ["notes.txt"]
    file = tmp_path / "suite.txt"
    file.write_text("mine")
    done = toolproof_ci("init", file, cwd=tmp_path)
    assert done.returncode == 2 and "a file; give a new or empty folder" in done.stderr
    assert file.read_text() == "mine"
