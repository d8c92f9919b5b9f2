"""One trial: an isolated world, the gateway, the agent and the user, then the graders.

A suite with real backends also gets the trial's environment around the conversation: a
fresh trial_dir and the setup hook before it; the task's checks against the real systems
after it (recorded in the transcript); then its servers stop and the teardown hook runs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from toolproof.agents.base import AgentFactory, TrialContext
from toolproof.agents.registry import desk
from toolproof.errors import AgentFailure, InfraError
from toolproof.gateway import Conditions, Gateway
from toolproof.graders.rubric import JudgeRecord
from toolproof.models.trial import trial_scope
from toolproof.records.trial import TrialResult
from toolproof.runner.grading import declined, derived, judge
from toolproof.runner.judging import JudgeModel, judge_rubric
from toolproof.runner.local import hand_over
from toolproof.runner.plan import PlannedTrial
from toolproof.runtime import TrialEnvironment
from toolproof.seeds import stream_seed
from toolproof.suite.loaded import Suite
from toolproof.tools.base import ToolContext
from toolproof.transcript import EndEvent, Transcript
from toolproof.users.scripted import ScriptedUsers, UserFactory, scripted_user
from toolproof.world import Change, World


@dataclass(frozen=True)
class Trial:
    """Everything one trial needs: which trial of which suite, whose agent, under what."""

    planned: PlannedTrial
    suite: Suite
    agent: AgentFactory
    agent_label: str = ""
    expected_hash: str | None = None
    """The hash of the world the task's gold actions leave (None: no world expectation)."""
    max_steps: int = 30
    agent_timeout_s: float = 300.0
    """Seconds one turn of the agent may take (Python agents: `within_turn`)."""
    user: UserFactory = scripted_user
    conditions: Conditions | None = None
    expected_changes: tuple[Change, ...] = ()
    """What the gold actions change (to say where a differing final state differs)."""
    judge: JudgeModel | None = None
    """The model grading the task's rubric (a run checks one is given where one is needed)."""
    code_only: bool = False
    """Grade by the code graders alone, leaving a rubric unjudged (validate without a judge:
    the rubric is reported as not judged, never as passed)."""


def user_tools(
    suite: Suite, context: ToolContext, transcript: Transcript, conditions: Conditions | None
) -> Gateway | None:
    """The user's own tools (the suite's `user: tools:`), or None: the same faults, load and
    world as the agent's, no schema drift (that is the agent's API changing), every call
    recorded as the user's."""
    if not suite.user_tools:
        return None
    theirs = None
    if conditions is not None:
        theirs = Conditions(
            faults=conditions.faults,
            load=conditions.load,
            time_scale=conditions.time_scale,
            stale_state=conditions.stale_state,
        )
    return Gateway(suite.user_tools, context, transcript, theirs, by="user")


async def run_trial(trial: Trial) -> TrialResult:
    """Run one (task, trial) to its end and grade it; model calls made inside know which
    trial they serve (`models.trial`)."""
    with trial_scope(trial.planned.task_id, trial.planned.seed):
        return await _run_trial(trial)


async def _run_trial(trial: Trial) -> TrialResult:
    spec, suite = trial.planned, trial.suite
    task = suite.task(spec.task_id)
    started_at = datetime.now(UTC).isoformat(timespec="milliseconds")
    clock = time.perf_counter()
    transcript = Transcript()
    world = World(suite.start_state(task))
    environment: TrialEnvironment | None = None
    if suite.runtime is not None:
        environment = suite.runtime.trial(task.id, spec.seed)
        environment.world = world
    context = ToolContext(
        world=world,
        seed=stream_seed(spec.seed, "tools"),
        extras=environment.extras if environment else {},
    )
    gateway = Gateway(suite.tools, context, transcript, trial.conditions)
    user_gateway = user_tools(suite, context, transcript, trial.conditions)
    agent = trial.agent(
        TrialContext(
            suite=suite,
            task=task,
            seed=spec.seed,
            transcript=transcript,
            max_steps=trial.max_steps,
            turn_timeout_s=trial.agent_timeout_s,
            declined=declined(suite, task),
            user_tools=user_gateway,
        )
    )
    users = trial.user
    if isinstance(users, ScriptedUsers) and users.desk is None:
        users = ScriptedUsers(desk(suite))  # the suite's tools, so it hears proposals
    user = users(task, transcript, spec.seed)
    if user_gateway is not None:
        user.reach(user_gateway)
    ended, failure, infra = "user_done", "", ""
    message: str | None = user.opening()
    closing = ""
    try:
        try:
            if environment is not None:
                await environment.open()
            while message is not None:
                transcript.say("user", message)
                reply = await agent.reply(message, gateway)
                transcript.say("assistant", reply)
                message = await user.respond(reply)
        except AgentFailure as exc:
            ended, failure = exc.code, str(exc)
        except InfraError as exc:
            ended, infra = "infra_error", str(exc)
        transcript.add(EndEvent(t=transcript.now(), reason=ended, detail=failure or infra))
        if environment is not None and not infra:
            for event in await environment.run_checks(task.spec.expect.check, transcript.now):
                transcript.add(event)
    finally:
        if environment is not None:
            closing = await environment.close()
    if closing and not infra:
        infra = f"after the trial: {closing}"
    final_hash = world.hash()
    rubric: JudgeRecord | None = None
    if not infra and not failure and task.spec.expect.rubric and not trial.code_only:
        if trial.judge is None:
            infra = "the task's rubric needs a judge model, and none was given"
        else:
            try:
                rubric = await judge_rubric(trial.judge, task, transcript, spec.seed)
            except InfraError as exc:
                infra = str(exc)
    await hand_over()  # no more I/O: the next trial need not wait for this one's grading
    judgement = None
    graded: dict[str, Any] = {"outcome": "infra_error", "reason": infra}
    if not infra:
        judgement = judge(
            suite,
            task,
            transcript,
            world,
            final_hash,
            trial.expected_hash,
            ended,
            failure,
            rubric,
            expected_changes=trial.expected_changes,
        )
        graded = judgement.record()
    return TrialResult(
        task_id=spec.task_id,
        trial=spec.trial,
        seed=spec.seed,
        variant=spec.variant,
        model=spec.model,
        agent=trial.agent_label,
        task_hash=task.content_hash,
        ended=ended,
        transcript=transcript,
        world_diff=world.diff(),
        final_hash=final_hash,
        expected_hash=trial.expected_hash,
        started_at=started_at,
        duration_s=round(time.perf_counter() - clock, 6),
        judge=rubric,
        **graded,
        **derived(transcript, judgement, task),
    )
