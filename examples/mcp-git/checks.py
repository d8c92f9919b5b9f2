"""Final-state checks of the mcp-git suite, run on each trial's real repository.

A check passes when it returns; a failed `assert` fails it with its message.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

MAIN_HEAD = "2068fb700330a76aeec66f23503b903529750c53"  # "Raise request timeout to 60s"
BRANCHES = ["experiment", "main", "release-1.0"]


def git(trial_dir: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    done = subprocess.run(
        ["git", *args], cwd=trial_dir / "repo", env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr.strip()}"
    return done.stdout.strip()


def lines(text: str) -> list[str]:
    return sorted(line for line in text.splitlines() if line)


def staged_files(trial_dir: Path) -> list[str]:
    return lines(git(trial_dir, "diff", "--cached", "--name-only"))


def unchanged(trial_dir: Path) -> None:
    """Nothing was committed, staged, unstaged or switched: a read-only task stayed one."""
    assert git(trial_dir, "rev-parse", "HEAD") == MAIN_HEAD, "HEAD moved"
    assert git(trial_dir, "branch", "--show-current") == "main", "no longer on main"
    assert lines(git(trial_dir, "branch", "--format=%(refname:short)")) == BRANCHES, (
        "the branches changed"
    )
    assert staged_files(trial_dir) == ["docs/CHANGELOG.md"], "the staged files changed"


def staged(trial_dir: Path, files: list[str]) -> None:
    """Exactly these files are staged."""
    found = staged_files(trial_dir)
    assert found == sorted(files), f"staged: {found or 'nothing'}, expected {sorted(files)}"


def head_commit(trial_dir: Path, message: str, files: list[str]) -> None:
    """A new commit on main, right after the old head, with this message and these files."""
    assert git(trial_dir, "branch", "--show-current") == "main", "not on main"
    subject = git(trial_dir, "log", "-1", "--format=%s")
    assert subject == message, f"HEAD is {subject!r}, expected {message!r}"
    parent = git(trial_dir, "rev-parse", "HEAD~1")
    assert parent == MAIN_HEAD, "the new commit does not follow the old head of main"
    changed = lines(git(trial_dir, "show", "--name-only", "--format=", "HEAD"))
    assert changed == sorted(files), f"the commit holds {changed}, expected {sorted(files)}"


def branch_at(trial_dir: Path, name: str, base: str) -> None:
    """A branch exists and points where `base` points."""
    heads = lines(git(trial_dir, "branch", "--format=%(refname:short)"))
    assert name in heads, f"no branch {name!r} (branches: {', '.join(heads)})"
    tip, expected = git(trial_dir, "rev-parse", name), git(trial_dir, "rev-parse", base)
    assert tip == expected, f"{name} is at {tip[:7]}, expected {base} ({expected[:7]})"
