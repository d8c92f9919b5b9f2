"""Re-grading stored trials against a suite's current expectations, running no agent.

The final world is rebuilt from the task's initial state plus the stored world diff; every
field a record derives from its transcript (outcome, reason, verdicts, usage, cost, counts,
condition statistics) is computed again, as a live trial computes it
(`toolproof.runner.grading`). Trials that ended in an infrastructure error keep that
outcome: no agent finished them.
"""

from __future__ import annotations

from toolproof.ci.audit import record_manifest
from toolproof.results import TrialResult
from toolproof.runner.gold import GoldReplay, replay_gold
from toolproof.runner.grading import derived, judge
from toolproof.store.journal import Store, now
from toolproof.suite.loaded import Suite
from toolproof.transcript import EndEvent
from toolproof.world import World


async def regrade_run(suite: Suite, store: Store, run_id: str) -> int:
    """Re-grade every completed trial of a run; returns how many outcomes changed."""
    store.run(run_id)
    expected: dict[str, GoldReplay] = {}
    updates: list[tuple[int, TrialResult]] = []
    changed = 0
    for row_id, result in store.results(run_id):
        update = derived(result.transcript)
        if result.outcome != "infra_error":
            task = suite.task(result.task_id)
            if task.id not in expected:
                expected[task.id] = await replay_gold(suite, task)
            world = World(suite.start_state(task))
            world.apply(result.world_diff)
            ends = [e for e in result.transcript.events if isinstance(e, EndEvent)]
            failure = ends[-1].detail if ends and result.ended != "user_done" else ""
            final_hash = world.hash()
            outcome, reason, verdicts = judge(
                suite,
                task,
                result.transcript,
                world,
                final_hash,
                expected[task.id].hash,
                result.ended,
                failure,
                expected[task.id].changes,
            )
            changed += outcome != result.outcome
            update |= {
                "outcome": outcome,
                "reason": reason,
                "verdicts": verdicts,
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
    return changed
