"""Proving a suite sound before any model is blamed.

For every task: its gold actions replay without error, the oracle agent passes it, and every
adversarial baseline (`toolproof.agents.baselines.ADVERSARIES`: the null agent, one that
recites the expected facts, one that echoes the user, word salad, one that calls every read
tool once and stops, one fixed reply of the usual answers) fails it. A task one of them passes
cannot tell a good agent from that one.

A task with a rubric is judged by the judge model when one is given, like any other grader.
Without one its trials are graded by code alone and the task is marked `rubric_unjudged`: a
rubric-only task then fails validation (every baseline passes its empty code expectations),
and a task whose code expectations hold the baselines off is shown as sound only with the
note that its rubric was not judged.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from toolproof.agents.baselines import ADVERSARIES
from toolproof.agents.registry import resolve_agent
from toolproof.graders.base import allowed_values
from toolproof.graders.communication import (
    HINT,
    UNSOURCED,
    competitors,
    fact_fields,
    record,
)
from toolproof.records.run import RunConfig
from toolproof.records.trial import TrialResult
from toolproof.runner.build import Wiring, build
from toolproof.runner.gold import GoldReplay, replay_gold
from toolproof.runner.grading import ownership
from toolproof.runner.plan import PlannedTrial, derive_seed
from toolproof.runner.trial import run_trial
from toolproof.runner.variants import Variant
from toolproof.spec.task import Task
from toolproof.suite.loaded import Suite


@dataclass
class TaskCheck:
    """The validation of one task."""

    task: Task
    gold_actions: int
    oracle: str
    baselines: dict[str, str]
    """Each adversarial baseline by name: 'failed: REASON', or 'passed'."""
    problems: list[str] = field(default_factory=list)
    rubric_unjudged: bool = False
    """The task has a rubric and no judge model graded it."""

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def passing_baselines(self) -> list[str]:
        return [name for name, outcome in self.baselines.items() if outcome == "passed"]

    @property
    def inapplicable(self) -> list[str]:
        """The baselines whose shortcut the task offers no room for (`n/a: why`)."""
        return [name for name, outcome in self.baselines.items() if outcome.startswith("n/a")]


def _shown(result: TrialResult) -> str:
    return "passed" if result.outcome == "passed" else f"failed: {result.reason}"


def validation_config(
    suite: Suite,
    tasks: list[Task],
    *,
    variants: list[str] | None = None,
    time_scale: float = 1.0,
    judge_model: str | None = None,
) -> RunConfig:
    """The settings a validation's trials are built from: the first trial of each task under
    the suite's defaults, in the clean variant or in each of `variants`; its agents (the
    baselines) are named trial by trial."""
    defaults = suite.file.defaults
    return RunConfig(
        variants=variants or [""],
        time_scale=time_scale,
        seed=defaults.seed,
        max_steps=defaults.max_steps,
        tasks=[task.id for task in tasks],
        judge_model=judge_model,
    )


async def gold_of(suite: Suite, tasks: list[Task]) -> dict[str, GoldReplay]:
    """Each task's gold replay, a failing one too: validate reports its errors."""
    return {task.id: await replay_gold(suite, task) for task in tasks}


def first_trial(wiring: Wiring, task: Task, variant: str = "") -> PlannedTrial:
    """A task's trial 0 in a variant, seeded as a run seeds it."""
    return PlannedTrial(task.id, 0, derive_seed(wiring.config.seed, variant, task.id, 0), variant)


async def check_task(wiring: Wiring, task: Task, limit: asyncio.Semaphore) -> TaskCheck:
    suite, replay, spec = wiring.suite, wiring.expected[task.id], first_trial(wiring, task)
    unjudged = bool(task.spec.expect.rubric) and wiring.judge is None

    async def trial(name: str) -> TrialResult:
        async with limit:
            return await run_trial(wiring.trial(spec, resolve_agent(name)))

    names = ["oracle", *ADVERSARIES]
    results = dict(zip(names, await asyncio.gather(*map(trial, names)), strict=True))
    oracle = results.pop("oracle")
    problems = list(replay.errors)
    if task.spec.ungradable:
        problems.append(f"it cannot be graded: {task.spec.ungradable}")
    if oracle.outcome != "passed":
        hint = ""
        said = oracle.transcript.messages("assistant")
        if said and "(yes/no)" in said[-1].content:
            hint = "; the scripted user never said yes to the oracle's request for confirmation"
        elif UNSOURCED in oracle.reason:
            hint = f"; {HINT}"
        problems.append(f"the oracle agent fails it ({oracle.reason}{hint})")
    shown = {name: _shown(result) for name, result in results.items()}
    for name, result in results.items():
        if result.outcome == "passed" and (why := inapplicable(name, suite, task, result)):
            shown[name] = f"n/a: {why}"
            continue
        if result.outcome == "passed":
            problems.append(
                f"the {name} agent passes it: its expectations cannot tell a good agent from "
                f"one that {ADVERSARIES[name].does}"
                + (" (its rubric was not judged: give --judge-model)" if unjudged else "")
            )
    return TaskCheck(
        task=task,
        gold_actions=len(task.spec.expect.actions or []),
        oracle=_shown(oracle),
        baselines=shown,
        problems=problems,
        rubric_unjudged=unjudged,
    )


def inapplicable(name: str, suite: Suite, task: Task, result: TrialResult) -> str | None:
    """Why a baseline that passed a task found no room for its shortcut there, or None: the
    leaker was shown no one else's records, the hedger had no competing value to offer for
    any fact, and the over-writer had no write tool. A pass with room for the shortcut makes
    the task unsound."""
    if name == "leaker":
        owners = ownership(suite, task)
        if owners is None:
            return "the suite protects no one's records (no no_other_customer_data rule)"
        others = {
            owner
            for call in result.transcript.tool_calls()
            if not call.is_error
            for owner, _, _ in owners.leaves(call.result, call.canonical_arguments)
            if owner is not None and owner not in owners.caller
        }
        return None if others else "its lookups showed no one else's records"
    if name == "hedger":
        seen = record(result.transcript)
        alternatives = allowed_values({n: b.schema.parameters for n, b in suite.tools.items()})
        facts = task.spec.expect.facts()
        found = [f.model_copy(update={"field": None}) for f in facts]
        if any(competitors(f, seen, alternatives, []) for f in [*facts, *found]):
            return None
        loose = [f.options[0] for f in facts if not fact_fields(f, seen, alternatives)]
        if loose:
            return (
                f"no tool result shows {loose[0]!r} as the value of a field (text, or a value "
                "inside one), so nothing can compete with it; name its field (field: ...) if "
                "one does"
            )
        return "nothing to hedge with: each fact's field showed one value and allows no other"
    if name == "over-writer" and not any(b.write for b in suite.tools.values()):
        return "the suite has no write tool"
    return None


async def validate_suite(
    suite: Suite, tasks: list[Task] | None = None, judge_model: str | None = None
) -> list[TaskCheck]:
    """Check every task (reported in order), with as many trials at once as the suite's
    default concurrency; the suite is sound when every check is ok. Rubrics are judged by
    `judge_model` where one is named, else left unjudged (graded by code alone)."""
    chosen = tasks or suite.tasks
    config = validation_config(suite, chosen, judge_model=judge_model)
    gold = await gold_of(suite, chosen)
    wiring = await build(suite, config, expected=gold, code_only=judge_model is None)
    limit = asyncio.Semaphore(suite.file.defaults.concurrency)
    return list(await asyncio.gather(*(check_task(wiring, t, limit) for t in chosen)))


@dataclass
class ConditionCheck:
    """A fault profile or drift variant: survivable by the retrying oracle on every task?"""

    variant: str
    retrying_passed: int
    plain_passed: int
    tasks: int
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


async def check_condition(wiring: Wiring, variant: str) -> ConditionCheck:
    retrying = plain = 0
    problems = []
    for task in wiring.tasks:
        spec = first_trial(wiring, task, variant)
        good = await run_trial(wiring.trial(spec, resolve_agent("retrying-oracle")))
        naive = await run_trial(wiring.trial(spec, resolve_agent("oracle")))
        retrying += good.outcome == "passed"
        plain += naive.outcome == "passed"
        if good.outcome != "passed":
            problems.append(f"task '{task.id}': the retrying oracle fails ({good.reason})")
    return ConditionCheck(variant, retrying, plain, len(wiring.tasks), problems)


async def validate_conditions(
    suite: Suite, tasks: list[Task] | None = None, time_scale: float = 0.001
) -> list[ConditionCheck]:
    """Every fault profile and drift variant of the suite, each proved survivable."""
    chosen = tasks or suite.tasks
    variants = [Variant(faults=name).key for name in suite.file.faults.profiles]
    variants += [Variant(drift=name).key for name in suite.file.drift]
    if not variants:
        return []
    config = validation_config(suite, chosen, variants=variants, time_scale=time_scale)
    wiring = await build(suite, config, expected=await gold_of(suite, chosen))
    return [await check_condition(wiring, variant) for variant in variants]


@dataclass
class Validation:
    """A whole validation: each task's check, then each condition's (fault profile, drift
    variant), proved on the sound tasks alone."""

    checks: list[TaskCheck]
    conditions: list[ConditionCheck]
    declares_conditions: bool
    """The suite declares fault profiles or drift variants."""

    @property
    def unsound(self) -> list[TaskCheck]:
        return [check for check in self.checks if not check.ok]

    @property
    def left_out(self) -> int:
        """The unsound tasks left out of the condition checks (none where the suite declares
        no condition)."""
        return len(self.unsound) if self.declares_conditions else 0

    @property
    def unsurvivable(self) -> list[ConditionCheck]:
        return [condition for condition in self.conditions if not condition.ok]

    @property
    def unjudged(self) -> int:
        """The tasks whose rubric no judge model graded."""
        return sum(check.rubric_unjudged for check in self.checks)

    @property
    def ok(self) -> bool:
        """The suite is sound: every task, and every condition survivable."""
        return not (self.unsound or self.unsurvivable)


async def validate(
    suite: Suite, tasks: list[Task] | None = None, judge_model: str | None = None
) -> Validation:
    """`validate_suite`, then `validate_conditions` over the tasks that proved sound (an
    unsound task would fail every condition for its own reason)."""
    checks = await validate_suite(suite, tasks, judge_model)
    sound = [check.task for check in checks if check.ok]
    conditions = await validate_conditions(suite, sound) if sound else []
    declared = bool(suite.file.faults.profiles or suite.file.drift)
    return Validation(checks, conditions, declared)
