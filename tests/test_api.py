"""The library API: `toolproof.run`, `validate`, `regrade` and `gate` (and their async twins)
run real suites into real stores and return typed results; a bad option is the command
line's usage error; a call works inside an event loop that is already running."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from support import edit

import toolproof
from toolproof.errors import UsageError


def test_a_run_returns_its_summary_tasks_and_trials(mini_dir: Path, tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    result = toolproof.run(mini_dir, agent="oracle", trials=3, store=store)
    assert isinstance(result, toolproof.RunResult)
    assert result.summary.counts.total == 6 and result.summary.counts.passed == 6
    assert result.summary.run_id == result.run_id and result.ran == 6
    assert [(row.id, row.passed, row.trials) for row in result.tasks] == [
        ("cancel", 3, 3),
        ("status", 3, 3),
    ]
    assert {(t.task_id, t.trial, t.outcome) for t in result.trials} == {
        (task, trial, "passed") for task in ("cancel", "status") for trial in range(3)
    }
    assert result.pass_k(3) == 1.0 and result.pass_at(1) == 1.0
    assert result.failing == [] and "every task passed every trial" in repr(result)


def test_a_failing_run_shows_its_failing_tasks_and_its_lowest_pass_k(
    mini_dir: Path, tmp_path: Path
) -> None:
    result = toolproof.run(mini_dir, agent="null", trials=2, k=[1, 2], store=tmp_path / "r.db")
    assert result.pass_k(2) == 0.0 and result.pass_k(2).name == "pass^2"
    assert [row.id for row in result.failing] == ["cancel", "status"]
    table = result.table()
    assert "0 of 4 trials passed" in table and "failing tasks (2):" in table
    assert "  cancel  0/2 passed  " in table


def test_pass_k_at_a_k_the_run_did_not_report_is_computed_from_its_trials(
    mini_dir: Path, tmp_path: Path
) -> None:
    result = toolproof.run(mini_dir, agent="oracle", trials=3, k=1, store=tmp_path / "r.db")
    assert result.summary.k == [1]
    assert result.pass_k(3) == 1.0 and result.pass_k(2) == 1.0
    with pytest.raises(toolproof.ToolproofError, match="4"):
        result.pass_k(4)  # more than the 3 trials each task has


def test_run_works_inside_a_running_event_loop_and_arun_is_its_twin(
    mini_dir: Path, tmp_path: Path
) -> None:
    async def cell() -> tuple[toolproof.RunResult, toolproof.RunResult]:
        blocking = toolproof.run(mini_dir, agent="oracle", trials=1, k=1, store=tmp_path / "a.db")
        awaited = await toolproof.arun(
            mini_dir, agent="oracle", trials=1, k=1, store=tmp_path / "b.db"
        )
        return blocking, awaited

    blocking, awaited = asyncio.run(cell())
    assert blocking.summary.counts.passed == awaited.summary.counts.passed == 2
    assert blocking.run_id != awaited.run_id


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"trials": 0}, r"^--trials 0: give a whole number from 1 to 100,000$"),
        ({"k": "1,x"}, r"^--k '1,x': expected positive integers"),
        ({"k": [1, 4]}, r"^k=4 needs at least 4 trials per task, but --trials is 3$"),
        ({"trails": 3}, r"^unknown run option 'trails'; besides suite, model, agent"),
        ({"max_cost": "1"}, r"^--max-cost '1': expected int or float$"),
        ({"prompted": 1}, r"^--prompted 1: expected bool$"),
        ({"temperature": float("nan")}, r"^--temperature nan: give a number from 0 to"),
        ({"infra_errors": "skip"}, r"^--infra-errors 'skip': use 'fail' or 'exclude'$"),
        ({"header": ["Authorization"]}, r"^--header 'Auth'\.\.\.: expected KEY=VALUE$"),
    ],
)
def test_a_bad_option_is_the_command_lines_usage_error(
    mini_dir: Path, tmp_path: Path, options: dict[str, object], message: str
) -> None:
    store = tmp_path / "runs.db"
    with pytest.raises(UsageError, match=message):
        toolproof.run(mini_dir, agent="oracle", store=store, **options)


def test_validate_proves_a_suite_sound_or_names_its_problems(mini_dir: Path) -> None:
    sound = toolproof.validate(mini_dir)
    assert sound.ok and [c.task.id for c in sound.checks] == ["cancel", "status"]
    assert sound.problems == [] and "mini 2: sound, 2 tasks" in repr(sound)
    suite = mini_dir / "suite.yaml"
    suite.write_text(edit(suite.read_text(), "must_say: [shipped]", "must_say: [lost]"))
    unsound = asyncio.run(toolproof.avalidate(mini_dir, tasks="status"))
    assert not unsound.ok and [c.task.id for c in unsound.checks] == ["status"]
    assert unsound.problems and unsound.problems[0].startswith(
        "task 'status': the oracle agent fails it"
    )


def test_gate_and_regrade_read_a_stored_run(mini_dir: Path, tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    ran = toolproof.run(mini_dir, agent="oracle", trials=3, store=store)
    held = toolproof.gate(ran.run_id, store=store, min={"pass^3": 0.9})
    assert held.passed and held.failed == []
    short = asyncio.run(toolproof.agate("latest", store=store, min=["pass@1=1.01"]))
    assert not short.passed and [c.name for c in short.failed] == ["pass@1 ≥ 1.01"]
    assert "failed 1 of" in repr(short)
    with pytest.raises(UsageError, match=r"--min pass@1='high': expected a number"):
        toolproof.gate(store=store, min={"pass@1": "high"})  # type: ignore[dict-item]
    suite = mini_dir / "suite.yaml"
    suite.write_text(edit(suite.read_text(), "must_say: [shipped]", "must_say: [lost]"))
    regraded = toolproof.regrade("latest", store=store)
    assert regraded.run_id == ran.run_id and regraded.changed == 3
    assert regraded.summary.counts.passed == 3
    again = asyncio.run(toolproof.aregrade(ran.run_id, store=store))
    assert again.changed == 0


@pytest.mark.slow
def test_importing_toolproof_imports_none_of_the_api_or_the_runner() -> None:
    """`import toolproof` stays quick: its names are imported when first used."""
    shown = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, toolproof; toolproof.RunResult; "
            "print(sorted(m for m in sys.modules if m.startswith('toolproof')))",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    assert "'toolproof.api'" in shown and "'toolproof.runner'" not in shown
    assert "'toolproof.metrics.summary'" in shown  # the options' infra policy type, no more
    bare = subprocess.run(
        [sys.executable, "-c", "import sys, toolproof; print(sorted(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    assert [name for name in eval(bare) if name.startswith("toolproof")] == [
        "toolproof",
        "toolproof.version",
    ]
