"""Progress while a run goes: a live bar on a terminal, plain lines anywhere else."""

from __future__ import annotations

import io

from rich.console import Console

from toolproof.records.trial import TrialResult
from toolproof.report.terminal import RunProgress
from toolproof.transcript import Transcript


def finished(task: str, trial: int, outcome: str, reason: str = "") -> TrialResult:
    return TrialResult(
        task_id=task,
        trial=trial,
        seed=trial,
        model="local/smollm2",
        outcome=outcome,  # type: ignore[arg-type]
        reason=reason,
        transcript=Transcript(),
    )


def test_without_a_terminal_each_finished_trial_prints_a_line() -> None:
    out = io.StringIO()
    progress = RunProgress(Console(file=out, force_terminal=False, width=200), every=0.0)
    progress.start(total=3, done=0)
    progress.advance(finished("carrier", 0, "passed"))
    progress.advance(finished("carrier", 1, "failed", "must_say: 'Speedpost' never said"))
    progress.advance(finished("shop-phone", 0, "infra_error", "connection\n  refused"))
    progress.stop()
    lines = out.getvalue().splitlines()
    assert len(lines) == 3, lines
    assert lines[0].endswith(
        "1/3 trials: 1 passed, 0 failed, 0 infra errors; last: carrier #0 (local/smollm2) passed"
    )
    assert "2/3 trials: 1 passed, 1 failed" in lines[1]
    assert lines[1].endswith("failed: must_say: 'Speedpost' never said")
    assert lines[2].endswith("shop-phone #0 (local/smollm2) infra error: connection refused")


def test_without_a_terminal_lines_are_spaced_but_the_last_trial_always_prints() -> None:
    out = io.StringIO()
    progress = RunProgress(Console(file=out, force_terminal=False, width=200), every=3600.0)
    progress.start(total=4, done=1)
    for trial in range(3):
        progress.advance(finished("carrier", trial, "passed"))
    lines = out.getvalue().splitlines()
    # the last line counts trial 3 too, which finished without a line: no number is skipped
    assert [line.split("] ")[1].split(" trials")[0] for line in lines] == ["2/4", "3–4/4"]


def test_spaced_lines_count_every_trial_since_the_line_before() -> None:
    out = io.StringIO()
    progress = RunProgress(Console(file=out, force_terminal=False, width=200), every=3600.0)
    progress.start(total=7, done=0)
    for trial in range(5):
        progress.advance(finished("carrier", trial, "passed"))
    progress.printed = -3600.0  # as if two seconds had passed
    progress.advance(finished("carrier", 5, "passed"))
    progress.advance(finished("carrier", 6, "failed", "max_steps"))
    counted = [line.split("] ")[1].split(" trials")[0] for line in out.getvalue().splitlines()]
    assert counted == ["1/7", "2–6/7", "7/7"]


def test_a_resumed_run_counts_the_trials_done_before_so_progress_agrees_with_the_summary() -> None:
    out = io.StringIO()
    progress = RunProgress(Console(file=out, force_terminal=False, width=200), every=0.0)
    progress.start(total=4, done=3, counts={"passed": 2, "failed": 1})
    progress.advance(finished("carrier", 3, "passed"))
    progress.stop()
    assert "4/4 trials: 3 passed, 1 failed, 0 infra errors" in out.getvalue()
