"""A labelled corpus of trials, graded, and each rule's false passes and false failures.

A corpus file names a suite and holds cases: a task of it, the agent's turns (as a scripted
agent's file gives them), optionally other words for the scripted user, and the verdict a
careful person gives. An honest case is one a careful person passes: every rule that judges
it must pass, and a rule that fails it makes a false failure. An adversarial case takes a
shortcut and names the rules a careful person says it breaks: each of those that passes it
makes a false pass. Each case is played as any trial is (the suite's tools, its scripted user,
every grader), so the rates measure the graders as they judge real runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from toolproof.agents.base import Agent, TrialContext
from toolproof.agents.loop import LoopAgent
from toolproof.agents.registry import AgentChoice
from toolproof.errors import Problem, SuiteError
from toolproof.models.scripted import ScriptedModel, ScriptedTurn
from toolproof.records.run import RunConfig
from toolproof.records.trial import TrialResult
from toolproof.runner.build import Wiring, build
from toolproof.runner.plan import PlannedTrial
from toolproof.runner.trial import run_trial
from toolproof.spec.base import Strict
from toolproof.spec.source import shown, validation_problems
from toolproof.spec.task import Task
from toolproof.spec.user import UserReply, UserTurn
from toolproof.spec.yamlload import load_yaml
from toolproof.suite import Suite, load_suite
from toolproof.transcript import Transcript
from toolproof.users.scripted import ScriptedUsers, User, UserFactory

OUTCOME = "outcome"
"""The row of the whole trial's verdict, beside each rule's."""


class UserWords(Strict):
    """Other words for the task's scripted user: its turns and replies, replaced."""

    turns: list[UserTurn] | None = None
    replies: list[UserReply] | None = None


class Case(Strict):
    """One labelled trial."""

    id: str
    task: str
    kind: Literal["honest", "adversarial"]
    variation: str = Field(
        description="What the case varies (honest: a wording, a format, context) or which "
        "shortcut it takes (adversarial)."
    )
    breaks: list[str] = Field(
        default_factory=list,
        description="Adversarial: the rules (verdict names) a careful person says it breaks; "
        "a rule that gives no verdict on the case missed it.",
    )
    user: UserWords | None = None
    turns: list[ScriptedTurn] = Field(min_length=1)
    note: str = ""


class CorpusFile(Strict):
    suite: str = Field(description="The suite's folder, relative to this file.")
    cases: list[Case]


@dataclass(frozen=True)
class Graded:
    """A case and how the graders judged it."""

    case: Case
    suite: str
    passed: bool
    verdicts: dict[str, tuple[bool, str]]
    """Each rule's verdict: passed, and its reason."""

    def misjudged(self) -> list[str]:
        """The rules (and `outcome`) this case shows wrong: a false failure of an honest case,
        a false pass of an adversarial one."""
        if self.case.kind == "honest":
            wrong = [rule for rule, (ok, _) in self.verdicts.items() if not ok]
            return wrong + ([OUTCOME] if not self.passed else [])
        wrong = [rule for rule in self.case.breaks if self.verdicts.get(rule, (True, ""))[0]]
        return wrong + ([OUTCOME] if self.passed else [])


@dataclass
class Rate:
    """One rule's error counts over a corpus."""

    honest: int = 0
    false_failures: int = 0
    adversarial: int = 0
    false_passes: int = 0

    @property
    def false_failure_rate(self) -> float | None:
        return self.false_failures / self.honest if self.honest else None

    @property
    def false_pass_rate(self) -> float | None:
        return self.false_passes / self.adversarial if self.adversarial else None


@dataclass
class Rates:
    """Every rule's error counts, and the cases behind them."""

    rules: dict[str, Rate] = field(default_factory=dict)
    graded: list[Graded] = field(default_factory=list)

    def worst(self) -> float:
        """The highest false-pass or false-failure rate of any rule."""
        return max(
            (
                r
                for rate in self.rules.values()
                for r in (rate.false_pass_rate, rate.false_failure_rate)
                if r is not None
            ),
            default=0.0,
        )


def rates(graded: Iterable[Graded]) -> Rates:
    """Per rule: over honest cases, how many it failed; over adversarial cases that break
    it, how many it passed. `outcome` counts whole trials the same way."""
    out = Rates()
    for item in graded:
        out.graded.append(item)
        wrong = set(item.misjudged())
        if item.case.kind == "honest":
            for rule in [*item.verdicts, OUTCOME]:
                rate = out.rules.setdefault(rule, Rate())
                rate.honest += 1
                rate.false_failures += rule in wrong
        else:
            for rule in [*item.case.breaks, OUTCOME]:
                rate = out.rules.setdefault(rule, Rate())
                rate.adversarial += 1
                rate.false_passes += rule in wrong
    return out


def load_corpus(path: Path) -> tuple[Suite, list[Case]]:
    """A corpus file and its suite; problems located as suite problems are."""
    data = load_yaml(path, shown(path))
    try:
        corpus = CorpusFile.model_validate(data)
    except ValidationError as exc:
        raise SuiteError(validation_problems(exc, data, shown(path))) from None
    suite = load_suite(path.parent / corpus.suite)
    known = {task.id for task in suite.tasks}
    ids = [case.id for case in corpus.cases]
    where = shown(path)
    problems = [
        Problem(where, None, f"case {case.id!r}: the suite has no task {case.task!r}")
        for case in corpus.cases
        if case.task not in known
    ]
    problems += [
        Problem(where, None, f"case id {i!r} is used twice")
        for i in sorted(set(ids))
        if ids.count(i) > 1
    ]
    problems += [
        Problem(where, None, f"case {case.id!r}: an adversarial case names the rules it breaks")
        for case in corpus.cases
        if case.kind == "adversarial" and not case.breaks
    ]
    if problems:
        raise SuiteError(problems)
    return suite, corpus.cases


def _user(case: Case, users: UserFactory) -> UserFactory:
    """The run's scripted user side, saying the case's words where it gives its own."""
    if case.user is None or not isinstance(users, ScriptedUsers):
        return users
    words = {
        key: value
        for key, value in (("turns", case.user.turns), ("replies", case.user.replies))
        if value is not None
    }

    def user(task: Task, transcript: Transcript, seed: int) -> User:
        return users.play(task, task.spec.user.model_copy(update=words), transcript)

    return user


async def grade_case(wiring: Wiring, case: Case) -> Graded:
    """Play a case as a trial of its task and collect every verdict."""

    def agent(context: TrialContext) -> Agent:
        return LoopAgent(ScriptedModel(case.turns), context)

    choice = AgentChoice("corpus", agent, "corpus")
    trial = wiring.trial(PlannedTrial(case.task, 0, 11), choice)
    played = replace(trial, user=_user(case, trial.user), max_steps=max(30, 2 * len(case.turns)))
    result: TrialResult = await run_trial(played)
    verdicts = {v.grader: (v.passed, v.reason) for v in result.verdicts}
    return Graded(case, wiring.suite.name, result.outcome == "passed", verdicts)


async def grade_corpus(paths: Iterable[Path]) -> Rates:
    """Every case of every corpus file, graded, and the error counts."""
    graded: list[Graded] = []
    for path in paths:
        suite, cases = load_corpus(path)
        tasks = sorted({c.task for c in cases})
        config = RunConfig(tasks=tasks, variants=[""], seed=suite.file.defaults.seed)
        wiring = await build(suite, config, code_only=True)
        graded += await asyncio.gather(*(grade_case(wiring, c) for c in cases))
    return rates(graded)
