"""The local executor: at most `concurrency` trials at once, and a finished trial's slot
handed on before its grading, so the next trial's first model call goes out first."""

from __future__ import annotations

import asyncio

from toolproof.records.trial import TrialResult
from toolproof.runner.local import execute, hand_over
from toolproof.runner.plan import PlannedTrial
from toolproof.transcript import Transcript


def specs(count: int) -> list[PlannedTrial]:
    return [PlannedTrial(task_id="t", trial=i, seed=i) for i in range(count)]


def finished(spec: PlannedTrial) -> TrialResult:
    return TrialResult(
        task_id=spec.task_id,
        trial=spec.trial,
        seed=spec.seed,
        outcome="passed",
        transcript=Transcript(),
        duration_s=0.0,
        started_at="2026-01-01T00:00:00+00:00",
    )


def run(count: int, concurrency: int, *, early: bool = True) -> tuple[list[str], int]:
    """Trials that wait, hand over, then 'grade'; (what happened in order, most at once)."""
    events: list[str] = []
    talking = peak = 0

    async def one(spec: PlannedTrial) -> TrialResult:
        nonlocal talking, peak
        events.append(f"start {spec.trial}")
        talking += 1
        peak = max(peak, talking)
        await asyncio.sleep(0.01)
        talking -= 1
        await hand_over()
        events.append(f"grade {spec.trial}")
        return finished(spec)

    results: list[TrialResult] = []
    asyncio.run(execute(specs(count), one, concurrency, results.append, early=early))
    assert sorted(r.trial for r in results) == list(range(count))
    return events, peak


def test_next_trial_starts_before_the_finished_one_is_graded() -> None:
    events, _ = run(3, 1)
    assert events == ["start 0", "start 1", "grade 0", "start 2", "grade 1", "grade 2"]


def test_without_early_hand_over_a_trial_is_recorded_before_the_next_starts() -> None:
    events, _ = run(3, 1, early=False)
    assert events == ["start 0", "grade 0", "start 1", "grade 1", "start 2", "grade 2"]


def test_no_more_than_concurrency_trials_talk_at_once() -> None:
    events, peak = run(40, 7)
    assert peak == 7
    assert len([e for e in events if e.startswith("grade")]) == 40


def test_a_stop_asked_for_starts_no_further_trial() -> None:
    started: list[int] = []
    recorded: list[TrialResult] = []

    async def one(spec: PlannedTrial) -> TrialResult:
        started.append(spec.trial)
        await hand_over()
        return finished(spec)

    asyncio.run(execute(specs(10), one, 1, recorded.append, lambda: len(recorded) >= 2))
    # each trial starts as the one before hands over, before that one is recorded: trial 3
    # starts with one trial recorded, and when it hands over two are: nothing more starts
    assert started == [0, 1, 2, 3]
    assert len(recorded) == 4
