"""Re-grading stored trials against a suite's current expectations, running no agent.

The final world is rebuilt from the task's initial state plus the stored world diff; every
field a record derives from its transcript (outcome, reason, verdicts, blame, usage, cost,
counts, condition statistics) is computed again, as a live trial computes it
(`toolproof.runner.grading`). Trials that ended in an infrastructure error keep that
outcome: no agent finished them.

A rubric is graded from the judge verdicts the trial recorded, calling no model, as long as
they were given for the task's current rubric (the same criteria and controls, asked the same
way); `rejudge` asks the judge model again for every trial with a rubric, and its controls
once.
"""

from __future__ import annotations

from toolproof.errors import InfraError, UsageError
from toolproof.graders.rubric import JudgeRecord, judge_prompt
from toolproof.records.trial import TrialResult
from toolproof.runner.build import judge_name, make_judge
from toolproof.runner.gold import GoldReplay, replay_gold
from toolproof.runner.grading import derived, judge
from toolproof.runner.judging import JudgeModel, control_prompts, goal, judge_rubric
from toolproof.spec.task import Task
from toolproof.store.journal import Store, now
from toolproof.store.manifest import record_manifest
from toolproof.suite.loaded import Suite
from toolproof.transcript import EndEvent
from toolproof.world import World


def still_valid(task: Task, result: TrialResult) -> bool:
    """Whether a trial's recorded judge verdicts answer the task's current rubric: each
    criterion's prompt is the one it would be asked now, and so are its controls' (a trial
    judged before controls were asked has none)."""
    record, criteria = result.judge, task.spec.expect.criteria()
    if record is None or [v.name for v in record.criteria] != list(criteria):
        return False
    if [c.name for c in record.controls] != list(criteria):
        return False
    asked = all(
        v.prompt == judge_prompt(goal(task), result.transcript, v.name, criteria[v.name])
        for v in record.criteria
    )
    return asked and all(
        [item.prompt for item in c.items]
        == [prompt for _, _, prompt in control_prompts(task, c.name, criteria[c.name])]
        for c in record.controls
    )


async def rubric_record(
    task: Task, result: TrialResult, grader: JudgeModel | None, rejudge: bool
) -> JudgeRecord | None:
    """The judge verdicts a re-graded trial is graded with: recorded ones, or (`rejudge`)
    new ones. Verdicts that no longer answer the rubric, without `rejudge`, are a usage error
    (raised before anything is written)."""
    if not task.spec.expect.rubric:
        return None
    if not rejudge:
        if not still_valid(task, result):
            raise UsageError(
                f"task '{task.id}' trial {result.trial} has no judge verdicts for the task's "
                "current rubric: re-grade with --rejudge (and --judge-model) to judge it again"
            )
        return result.judge
    if grader is None:
        raise UsageError("--rejudge needs a judge model: give --judge-model provider/model")
    return await judge_rubric(grader, task, result.transcript, result.seed)


async def regrade_run(
    suite: Suite,
    store: Store,
    run_id: str,
    *,
    judge_model: str | None = None,
    rejudge: bool = False,
) -> int:
    """Re-grade every completed trial of a run; returns how many outcomes changed. With
    `rejudge` the judge model (`judge_model`, else the run's own, else the suite's) is asked
    again, and becomes the run's."""
    config = store.run(run_id).config
    grader = make_judge(
        judge_name(suite, judge_model, stored=config.judge_model, rejudge=rejudge), suite
    )
    expected: dict[str, GoldReplay] = {}
    updates: list[tuple[int, TrialResult]] = []
    changed = 0
    for row_id, result in store.results(run_id):
        known = next((t for t in suite.tasks if t.id == result.task_id), None)
        update = derived(result.transcript, task=known)
        if result.outcome != "infra_error":
            task = suite.task(result.task_id)
            if task.id not in expected:
                expected[task.id] = await replay_gold(suite, task)
            world = World(suite.start_state(task))
            world.apply(result.world_diff)
            ends = [e for e in result.transcript.events if isinstance(e, EndEvent)]
            failure = ends[-1].detail if ends and result.ended != "user_done" else ""
            final_hash = world.hash()
            rubric: JudgeRecord | None = None
            try:
                rubric = None if failure else await rubric_record(task, result, grader, rejudge)
            except InfraError as exc:
                update |= {"outcome": "infra_error", "reason": str(exc), "verdicts": []}
                update |= {"blame": None}
                changed += 1  # it was graded before
            else:
                judgement = judge(
                    suite,
                    task,
                    result.transcript,
                    world,
                    final_hash,
                    expected[task.id].hash,
                    result.ended,
                    failure,
                    rubric,
                    expected_changes=expected[task.id].changes,
                )
                changed += judgement.outcome != result.outcome
                update = derived(result.transcript, judgement, known) | judgement.record()
            update |= {
                "judge": rubric,
                "final_hash": final_hash,
                "expected_hash": expected[task.id].hash,
                "task_hash": task.content_hash,
            }
        updates.append((row_id, result.model_copy(update=update)))
    for row_id, result in updates:
        store.replace(row_id, result)
    store.annotate(run_id, regraded_at=now(), regraded_with_suite=suite.content_hash)
    if store.run(run_id).finished:
        record_manifest(store, run_id)
    if grader is not None and grader.name != config.judge_model:
        store.annotate(run_id, judge_model=grader.name)
    return changed
