"""Runs written straight into a store with chosen outcomes, and the CLI run as a user runs
it: shared by the tests of compare, the gate, audit and the PostgreSQL store."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from toolproof.cli import app
from toolproof.errors import ToolproofError
from toolproof.records.run import RunConfig
from toolproof.records.trial import TrialResult
from toolproof.store.journal import Store
from toolproof.transcript import Transcript

OUTCOME = {"P": "passed", "F": "failed", "I": "infra_error"}
MINI = Path(__file__).parent / "spec" / "fixtures" / "mini"


def mini_suite(root: Path, extra: str = "") -> Path:
    """A copy of the two-task fixture suite in `root`, with `extra` YAML added to suite.yaml."""
    shutil.copytree(MINI, root)
    suite_file = root / "suite.yaml"
    suite_file.write_text(suite_file.read_text(encoding="utf-8") + extra, encoding="utf-8")
    return root


def toolproof_ci(
    *args: str | Path, cwd: Path | None = None, stdin: str | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run the command line as a user would (typing `stdin`, if given)."""
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "toolproof", *map(str, args)],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert "Traceback" not in result.stdout + result.stderr, result.stderr
    return result


def run_json(
    tmp_path: Path, suite: str | Path, *flags: str | Path, timeout: float = 120
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """`toolproof run SUITE FLAGS` from the shell, two trials of each task with k 1,2, into
    `tmp_path`'s runs.db, and the JSON summary it wrote to run.json ({} when it wrote none)."""
    out = tmp_path / "run.json"
    done = toolproof_ci(
        "run",
        suite,
        "--trials",
        "2",
        "--k",
        "1,2",
        "--store",
        tmp_path / "runs.db",
        "--json",
        out,
        *flags,
        cwd=tmp_path,
        timeout=timeout,
    )
    return done, json.loads(out.read_text()) if out.exists() else {}


@dataclass
class Outcome:
    """What a command did: its exit code, its output, and the user error it raised."""

    code: int
    stdout: str
    error: ToolproofError | None = None


def invoke(*args: str | Path) -> Outcome:
    """Run a command in this process; a user error exits 2, as in `toolproof.cli.main`."""
    result = CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})
    if isinstance(result.exception, ToolproofError):
        return Outcome(2, result.stdout, result.exception)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Outcome(result.exit_code, result.stdout)


def stored_run(
    store: Store,
    outcomes: Mapping[str, str],
    *,
    agent: str = "scripted",
    models: Sequence[str] = ("",),
    variants: Sequence[str] = ("",),
    seed: int = 0,
    k: Sequence[int] = (1,),
    suite: str = "mini",
    task_hashes: Mapping[str, str] | None = None,
    finished: bool = True,
    cost: float | None = 0.0,
    infra: str = "fail",
    suite_path: str = "",
    notes: Sequence[str] = (),
) -> str:
    """A run with the given outcomes: task -> 'PPF' (passed, passed, failed; I = infra
    error), the same for every model and variant."""
    trials = max(len(v) for v in outcomes.values())
    run_id = store.create_run(
        suite_name=suite,
        suite_version="1",
        suite_hash="0" * 64,
        fingerprint=uuid.uuid4().hex,
        agent=agent,
        config=RunConfig(
            agent=agent,
            models=[m for m in models if m],
            model_flags={},
            variants=list(variants),
            trials=trials,
            k=list(k),
            seed=seed,
            infra_errors="exclude" if infra == "exclude" else "fail",
            tasks=list(outcomes),
            **({"notes": list(notes)} if notes else {}),
            suite_path=suite_path,
        ),
        tasks=[
            {
                "task_id": task,
                "task_hash": (task_hashes or {}).get(task, f"hash-{task}"),
                "tags": [],
                "tools": {},
            }
            for task in outcomes
        ],
        version="test",
    )
    for variant in variants:
        for model in models:
            for task, letters in outcomes.items():
                for index, letter in enumerate(letters):
                    outcome = OUTCOME[letter]
                    reason = {"passed": "", "failed": "state: wrong order"}.get(
                        outcome, "provider: 503 overloaded"
                    )
                    store.write(
                        run_id,
                        TrialResult(
                            task_id=task,
                            trial=index,
                            seed=seed * 1000 + index,
                            variant=variant,
                            model=model,
                            outcome=outcome,  # type: ignore[arg-type]
                            reason=reason,
                            transcript=Transcript(),
                            duration_s=0.5,
                            cost_usd=cost,
                            started_at="2026-01-01T00:00:00+00:00",
                        ),
                    )
    if finished:
        store.finish(run_id)
    return run_id
