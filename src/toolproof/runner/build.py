"""Build: a run's typed configuration turned into what each of its trials needs.

The one place trials are wired, for every entry point: `toolproof run` (in this process and
in each Ray actor), serve-tools, validate and regrade. A `RunConfig` names its agent or
models, its user side, its judge model and its variants; `build` resolves each name once
(agents through `AGENTS`, every model through `PROVIDERS`, with the run's model overrides),
replays the gold actions of its tasks, and returns a `Wiring` that makes each planned trial's
`Trial`. Which judge model a command uses is `judge_name`'s rule alone.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from toolproof.agents.registry import AgentChoice, model_client, resolve_agents, resolve_user
from toolproof.errors import Problem, SuiteError, UsageError
from toolproof.records.run import RunConfig
from toolproof.records.trial import TrialResult
from toolproof.runner.gold import GoldReplay, replay_gold
from toolproof.runner.judging import JudgeModel, hold_answers
from toolproof.runner.plan import PlannedTrial
from toolproof.runner.trial import Trial, run_trial
from toolproof.runner.variants import Variant, VariantSetup
from toolproof.spec.overrides import ModelOverrides
from toolproof.spec.task import Task
from toolproof.suite.loaded import Suite
from toolproof.users.scripted import UserFactory

RunOne = Callable[[PlannedTrial], Awaitable[TrialResult]]
"""Runs one planned trial to its graded result (in this process, or on a Ray actor)."""


def judge_name(
    suite: Suite,
    given: str | None,
    *,
    stored: str | None = None,
    graded: Sequence[Task] = (),
    rejudge: bool | None = None,
) -> str | None:
    """The judge model a command uses: the one `given` (--judge-model), else the run's own
    (`stored`: the judge a stored run was graded by), else the suite's `judge:`, else none.

    `graded` are the tasks its trials grade: one with a rubric and no judge model is a usage
    error before any trial starts. `rejudge` is regrade's rule (None elsewhere): a re-grade
    reads the recorded verdicts and needs no judge, unless it is asked to judge again; a
    --judge-model without --rejudge is a usage error."""
    if rejudge is not None:
        if given and not rejudge:
            raise UsageError("--judge-model re-grades with a new judge only with --rejudge")
        if not rejudge:
            return None
    name = given or stored or suite.file.judge
    needing = [task.id for task in graded if task.spec.expect.rubric]
    if needing and name is None:
        raise UsageError(
            f"task(s) {', '.join(needing[:5])} have a rubric, which a judge model grades: give "
            "--judge-model provider/model, or judge: in suite.yaml"
        )
    return name


def make_judge(
    name: str | None,
    suite: Suite,
    overrides: ModelOverrides | None = None,
    slots: int | None = None,
) -> JudgeModel | None:
    """The judge model's client, its settings from toolproof.yaml, the suite and the run's
    overrides (as the agents' and the simulated user's); None when there is no judge."""
    if name is None:
        return None
    identity, client = model_client(name, suite, overrides or ModelOverrides(), slots)
    hold_answers(client)
    return JudgeModel(name=name, identity=identity, client=client)


async def gold_replays(suite: Suite, tasks: Sequence[Task]) -> dict[str, GoldReplay]:
    """Replay every task's gold actions; a failing or unrepeatable gold replay is a suite
    error."""
    out: dict[str, GoldReplay] = {}
    problems: list[Problem] = []
    for task in tasks:
        replay = await replay_gold(suite, task)
        problems.extend(Problem(task.source, task.line, e) for e in replay.errors)
        out[task.id] = replay
    if problems:
        raise SuiteError(problems)
    return out


@dataclass(frozen=True)
class Wiring:
    """What every trial of a run is made from, each name of its config resolved once."""

    suite: Suite
    config: RunConfig
    agents: dict[str, AgentChoice]
    """The agent of each model's trials, by model ('' for an agent that is no model); none
    for a served run, whose agent is whoever connects."""
    user_identity: str
    user: UserFactory
    judge: JudgeModel | None
    variants: dict[str, VariantSetup]
    expected: dict[str, GoldReplay]
    """Each task's gold replay: the world its trials must end with, and what changed."""
    code_only: bool = False
    """Grade rubrics by code alone, unjudged (validate without a judge model)."""

    @property
    def tasks(self) -> list[Task]:
        return [self.suite.task(task_id) for task_id in self.config.tasks]

    @property
    def identities(self) -> list[str]:
        """Who plays and who grades: the agents, the user side and the judge."""
        judge = [self.judge.identity] if self.judge else []
        return [a.identity for a in self.agents.values()] + [self.user_identity] + judge

    def trial(self, spec: PlannedTrial, agent: AgentChoice | None = None) -> Trial:
        """One planned trial: the agent of its model (or the one given), its variant's user
        side and conditions, its task's expected world, and the judge."""
        chosen = agent or self.agents[spec.model]
        setup = self.variants[spec.variant]
        gold = self.expected[spec.task_id]
        return Trial(
            planned=spec,
            suite=self.suite,
            agent=chosen.factory,
            agent_label=chosen.label,
            expected_hash=gold.hash,
            expected_changes=gold.changes,
            max_steps=self.config.max_steps,
            agent_timeout_s=self.config.agent_timeout_s,
            user=setup.user(self.user),
            conditions=setup.conditions(self.suite.task(spec.task_id), spec.seed),
            judge=self.judge,
            code_only=self.code_only,
        )

    def runner(self) -> RunOne:
        """How one planned trial runs in this process: the same on the driver and in a Ray
        actor, so both executors build every trial alike."""

        async def one(spec: PlannedTrial) -> TrialResult:
            return await run_trial(self.trial(spec))

        return one


async def build(
    suite: Suite,
    config: RunConfig,
    *,
    slots: int | None = None,
    expected: dict[str, GoldReplay] | None = None,
    code_only: bool = False,
) -> Wiring:
    """Resolve every name `config` gives, in the order a user meets their errors: the agents
    (none for a served run), the user side, the judge model, the variants; then replay its
    tasks' gold actions (a suite error when one fails), unless `expected` already holds them.
    `slots` is the most trials at once: where each remote model's limit of calls in flight
    starts."""
    overrides = config.model_flags
    agents: list[AgentChoice] = []
    if not config.served:  # a served run's agent is whoever connects to it
        agents = resolve_agents(config.agent, config.models, suite, overrides, slots)
    user_identity, user = resolve_user(config.user_model, suite, overrides, slots)
    judge = make_judge(config.judge_model, suite, overrides, slots)
    variants = {
        key: VariantSetup(suite, Variant.parse(key), config.time_scale) for key in config.variants
    }
    if expected is None:
        expected = await gold_replays(suite, [suite.task(t) for t in config.tasks])
    return Wiring(
        suite=suite,
        config=config,
        agents={a.model: a for a in agents},
        user_identity=user_identity,
        user=user,
        judge=judge,
        variants=variants,
        expected=expected,
        code_only=code_only,
    )
