"""A whole run: plan, resume what a journal already has, execute, summarize."""

from __future__ import annotations

import asyncio
import gc
import hashlib
import json
import sys
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from sqlalchemy.exc import DBAPIError

from toolproof.agents.registry import AgentChoice, resolve_agents, resolve_user
from toolproof.errors import Problem, StoreError, SuiteError, UsageError
from toolproof.metrics.summary import InfraPolicy, RunSummary
from toolproof.models.http import close_shared
from toolproof.records import RunConfig
from toolproof.redact import REDACTED, redacted
from toolproof.results import TrialResult
from toolproof.runner.gold import GoldReplay, replay_gold
from toolproof.runner.judging import JudgeModel, judge_name, resolve_judge
from toolproof.runner.local import execute
from toolproof.runner.plan import TrialSpec, plan
from toolproof.runner.trial import Trial, run_trial
from toolproof.runner.variants import Variant, VariantSetup
from toolproof.spec.limits import (
    MAX_CONCURRENCY,
    MAX_COST_USD,
    MAX_RUN_TRIALS,
    MAX_SEED,
    MAX_STEPS,
    MAX_TIME_SCALE,
    MAX_TRIALS,
    MAX_TURNS,
    real,
    whole,
)
from toolproof.spec.metrics import CATALOGUE, DECLARED
from toolproof.spec.models import BUILTIN_PERSONAS
from toolproof.spec.source import Task
from toolproof.store.journal import NewRun, Store, WriteFailed
from toolproof.store.manifest import record_manifest
from toolproof.store.writer import TrialWriter
from toolproof.suite.loaded import Suite
from toolproof.summaries import stored_summary
from toolproof.users.personas import resolve_persona
from toolproof.users.scripted import UserFactory
from toolproof.version import __version__


@dataclass
class RunRequest:
    """What to run; None means the suite's default."""

    agent: str | None = None
    models: list[str] = field(default_factory=list)
    model_flags: dict[str, Any] = field(default_factory=dict)
    trials: int | None = None
    k: list[int] | None = None
    concurrency: int | None = None
    seed: int | None = None
    tasks: str | None = None
    max_steps: int | None = None
    infra_errors: InfraPolicy = "fail"
    max_cost: float | None = None
    user_model: str | None = None
    judge_model: str | None = None
    faults: str | None = None
    drift: str | None = None
    load: list[int] = field(default_factory=list)
    personas: list[str] = field(default_factory=list)
    checkpoints: list[int] = field(default_factory=list)
    """Conversation lengths (user turns) to stretch every task to."""
    profile: str | None = None
    time_scale: float = 1.0
    suite_path: str = ""
    executor: str = "local"
    """Where trials run: 'local' (this process) or 'ray' (actors on a Ray cluster)."""
    ray_address: str | None = None


@dataclass
class RunStart:
    """Told to the caller before the first trial: which run, how much is already done."""

    run_id: str
    total: int
    done: int
    resumed: bool
    counts: dict[str, int] = field(default_factory=dict)
    """The outcomes of the trials already done (a resumed run's progress starts from them)."""


@dataclass
class RunReport:
    run_id: str
    ran: int
    summary: RunSummary
    stopped: bool = False


def settings(suite: Suite, request: RunRequest) -> RunConfig:
    """The run's effective settings, checked. A k asked for above the trial count is a usage
    error; a k of the suite's defaults above the trial count is left out, with a note on
    stderr, so that a quick run with fewer trials needs no --k of its own."""
    defaults = suite.file.defaults
    trials = request.trials or defaults.trials
    ks = sorted(set(request.k or defaults.k))
    too_big = [k for k in ks if k > trials]
    if too_big and request.k:
        raise UsageError(
            f"k={too_big[0]} needs at least {too_big[0]} trials per task, but --trials is {trials}"
        )
    if too_big:
        ks = [k for k in ks if k <= trials] or [1]
        print(
            f"note: {trials} trials per task are too few for the suite's default k="
            f"{', '.join(map(str, too_big))}; reporting k={', '.join(map(str, ks))}",
            file=sys.stderr,
        )
    max_steps = request.max_steps or defaults.max_steps
    beyond = checkpoints_beyond(request, max_steps)
    if beyond:
        print(f"note: {beyond}", file=sys.stderr)
    tasks = suite.select(request.tasks)
    judge_model = judge_name(suite, request.judge_model, tasks)
    return RunConfig(
        agent=request.agent,
        models=list(request.models),
        model_flags=dict(request.model_flags),
        max_cost=request.max_cost,
        user_model=request.user_model,
        **({"judge_model": judge_model} if judge_model else {}),
        variants=variant_keys(suite, request),
        score=score_settings(suite),
        time_scale=request.time_scale,
        trials=trials,
        k=ks,
        seed=defaults.seed if request.seed is None else request.seed,
        max_steps=max_steps,
        concurrency=request.concurrency or defaults.concurrency,
        infra_errors=request.infra_errors,
        tasks=[t.id for t in tasks],
        suite_path=request.suite_path or str(suite.root),
    )


def checkpoints_beyond(request: RunRequest, max_steps: int) -> str | None:
    """Why the longest checkpoints cannot be reached, when an agent's turns count against
    max_steps (a model, a script, an HTTP agent): each user message takes at least one turn,
    so a conversation of more user messages than max_steps is cut before it gets there."""
    over = [n for n in sorted(set(request.checkpoints)) if n > max_steps]
    agent = request.agent or ""
    counted = bool(request.models) or agent.startswith(("scripted:", "http://", "https://"))
    if not over or not counted:
        return None
    return (
        f"--checkpoints {','.join(map(str, over))}: a conversation of {over[0]} user turns "
        f"needs at least {over[0]} agent turns, more than max_steps ({max_steps}) allows, so "
        f"its trials are cut at max_steps; give --max-steps {max(over)} or more (each tool "
        "call takes a turn too)"
    )


def check_request(request: RunRequest) -> None:
    """Every number of a request finite and in range (named as the command line's flags),
    so that nothing a run stores overflows the store or fails to read back, and nothing
    it plans exhausts memory."""
    whole("--trials", request.trials, 1, MAX_TRIALS)
    whole("--concurrency", request.concurrency, 1, MAX_CONCURRENCY)
    whole("--seed", request.seed, 0, MAX_SEED)
    whole("--max-steps", request.max_steps, 1, MAX_STEPS)
    real("--max-cost", request.max_cost, MAX_COST_USD)
    real("--time-scale", request.time_scale, MAX_TIME_SCALE)
    for k in request.k or []:
        whole("--k", k, 1, MAX_TRIALS)
    for level in request.load:
        whole("--load", level, 1, MAX_CONCURRENCY)
    for turns in request.checkpoints:
        whole("--checkpoints", turns, 1, MAX_TURNS)


def check_size(config: RunConfig) -> None:
    """A run plans at most MAX_RUN_TRIALS trials (every model, variant, task and trial)."""
    total = max(len(config.models), 1) * len(config.variants) * len(config.tasks) * config.trials
    if total > MAX_RUN_TRIALS:
        raise UsageError(
            f"the run would plan {total:,} trials ({config.trials:,} per task), more than "
            f"{MAX_RUN_TRIALS:,}: give fewer --trials, tasks, models or conditions"
        )


def variant_keys(suite: Suite, request: RunRequest) -> list[str]:
    """The run's variants, in order: one per load level, or the full profile's set; each
    followed by one per persona and one per checkpoint (the plain one is their baseline)."""
    if request.profile not in (None, "full"):
        raise UsageError(f"--profile {request.profile}: the only profile is 'full'")
    if request.profile == "full":
        if request.faults or request.drift or request.load or request.personas:
            raise UsageError("--profile full chooses faults, drift, load and personas itself")
        lacking = lacking_conditions(suite)
        if lacking:
            print(f"note: --profile full: {lacking}", file=sys.stderr)
        bases = full_profile(suite)
    else:
        levels: list[int | None] = list(request.load) or [None]
        bases = [Variant(request.faults, request.drift, level) for level in levels]
    personas = rewriting(suite, request.personas)
    turns = sorted(set(request.checkpoints))
    # personas and checkpoints vary the plain conditions: each load level, or the clean trials
    extended = [Variant()] if request.profile == "full" else bases
    keys = []
    for base in bases:
        keys.append(base.key)
        if base in extended:
            keys += [replace(base, persona=name).key for name in personas]
            keys += [replace(base, turns=n).key for n in turns]
    return keys


def rewriting(suite: Suite, names: list[str]) -> list[str]:
    """The named personas, once each, but those that play every task as written
    (`cooperative`): the plain variant already runs exactly that, so such a persona gets a
    note rather than the same trials a second time."""
    kept = []
    for name in dict.fromkeys(names):
        if not resolve_persona(name, suite.file.personas).plain:
            kept.append(name)
            continue
        print(
            f"note: persona {name} plays every task as written, as the plain trials do: "
            "their numbers are its numbers, so it is not run a second time",
            file=sys.stderr,
        )
    return kept


def profile_personas(suite: Suite) -> list[str]:
    """The personas `--profile full` runs: the suite's own, or every confusing or messy
    built-in when it declares none (`cooperative` is the plain variant already)."""
    if suite.file.personas:
        return rewriting(suite, list(suite.file.personas))
    return [p for p in BUILTIN_PERSONAS if p != "cooperative"]


def full_profile(suite: Suite) -> list[Variant]:
    """What the Reliability Score needs: clean trials and its conditions
    (`score_conditions`); and the clean trials as each of the suite's personas plays the
    user (profile_personas)."""
    return [
        Variant(),
        *score_conditions(suite),
        *(Variant(persona=name) for name in profile_personas(suite)),
    ]


def score_conditions(suite: Suite) -> list[Variant]:
    """The conditions the Reliability Score's parts other than pass^k are measured under:
    the fault profile, every drift variant and the peak load level, each as the suite
    defines them (absent ones are skipped)."""
    spec, score = suite.file, suite.file.score
    variants = []
    profile = score.faults or next(iter(spec.faults.profiles), None)
    if profile:
        variants.append(Variant(faults=profile))
    variants.extend(Variant(drift=name) for name in (score.drift or list(spec.drift)))
    if spec.load:
        peak = score.load or spec.load.peak or max(spec.load.levels)
        variants.append(Variant(load=peak))
    return variants


SCORE_SECTIONS = tuple(
    (part.under, DECLARED[part.under], part.name)
    for part in CATALOGUE
    if part.score_weight is not None and part.under is not None
)
"""Each condition the score needs: its suite.yaml section, what the suite declares in it, and
the part of the score it measures."""


def lacking_conditions(suite: Suite) -> str | None:
    """What `--profile full` cannot run on this suite and what to add for it, in a sentence;
    None when the suite declares every condition the score needs."""
    declared = score_conditions(suite)
    lacking = [entry for entry in SCORE_SECTIONS if not any(getattr(v, entry[0]) for v in declared)]
    if not lacking:
        return None
    sections, nouns, parts = zip(*lacking, strict=True)
    only = " (the run has clean trials and personas only)" if not declared else ""
    return (
        f"suite '{suite.name}' declares no {listed(nouns, 'or')}, so {listed(parts, 'and')} "
        f"cannot be measured{only}; add {listed([f'`{s}:`' for s in sections], 'and')} to "
        "suite.yaml to measure " + ("it" if len(lacking) == 1 else "them") + " (docs/conditions.md)"
    )


def listed(items: Sequence[str], last: str) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} {last} {items[-1]}"


def score_settings(suite: Suite) -> dict[str, Any]:
    """The Reliability Score's settings a run stores: the suite's `score:` section, and the
    variants its parts are measured under on this suite (`conditions`; empty when the suite
    declares none), so that a summary suggests `--profile full` only where it adds a part."""
    return {
        **suite.file.score.model_dump(),
        "conditions": [v.key for v in score_conditions(suite)],
    }


def restored_secrets(stored: dict[str, Any], given: dict[str, Any], run_id: str) -> dict[str, Any]:
    """A resumed run's model settings. The store keeps header names, not their values, and
    a base URL without the credentials in it (secrets, often), so those come from the command
    again; a header or credentials the run used that the command does not give is a usage
    error."""
    headers = stored.get("headers") or {}
    supplied = given.get("headers") or {}
    missing = [
        name for name, value in headers.items() if value == REDACTED and name not in supplied
    ]
    if missing:
        raise UsageError(
            f"run {run_id} sent the header(s) {', '.join(missing)}, whose values are not "
            "stored: give them again with --header NAME=VALUE to resume it"
        )
    flags = dict(stored)
    if headers:
        flags["headers"] = {name: supplied.get(name, value) for name, value in headers.items()}
    url = stored.get("base_url")
    if isinstance(url, str) and f"{REDACTED}@" in url:
        again = given.get("base_url")
        if not isinstance(again, str):
            raise UsageError(
                f"run {run_id} called {url}, whose credentials are not stored: give them "
                "again with --base-url to resume it"
            )
        if redacted(again) != url:
            raise UsageError(f"--base-url {redacted(again)}: run {run_id} called {url}")
        flags["base_url"] = again
    return flags


def restored_agent(stored: str | None, given: str | None, run_id: str) -> dict[str, str]:
    """A resumed run's agent, when the store keeps its URL without the credentials in it:
    the command gives it again (a usage error otherwise)."""
    if not stored or f"{REDACTED}@" not in stored:
        return {}
    if given is None or redacted(given) != stored:
        raise UsageError(
            f"run {run_id} ran the agent at {stored}, whose credentials are not stored: give "
            "it again with --agent to resume it"
        )
    return {"agent": given}


def peak_concurrency(config: RunConfig) -> int:
    """The most trials the run has at once: --concurrency, or its highest load level."""
    levels = [Variant.parse(key).load or 0 for key in config.variants]
    return max([config.concurrency, *levels])


def fingerprint(suite: Suite, config: RunConfig, identities: list[str]) -> str:
    """Identifies 'the same command': the same suite content, agents, user side and plan."""
    key = {
        "suite": suite.content_hash,
        "agents": identities,
        "trials": config.trials,
        "seed": config.seed,
        "max_steps": config.max_steps,
        "tasks": config.tasks,
        "variants": config.variants,
    }
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()


def task_rows(suite: Suite, tasks: list[Task]) -> list[dict[str, Any]]:
    rows = []
    for task in tasks:
        expect = task.spec.expect
        used = {a.tool for a in expect.actions or []} | {c.tool for c in expect.calls}
        rows.append(
            {
                "task_id": task.id,
                "task_hash": task.content_hash,
                "tags": list(task.spec.tags),
                "tools": {
                    name: [suite.tools[name].tier, suite.tools[name].weight]
                    for name in sorted(used)
                    if name in suite.tools
                },
            }
        )
    return rows


async def gold_replays(suite: Suite, tasks: list[Task]) -> dict[str, GoldReplay]:
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


async def run_suite(
    suite: Suite,
    request: RunRequest,
    store: Store,
    *,
    resume: str | None = None,
    fresh: bool = False,
    on_start: Callable[[RunStart], None] = lambda _: None,
    on_result: Callable[[TrialResult], None] = lambda _: None,
) -> RunReport:
    """Run (or resume) every trial of the request and return the run's summary."""
    check_request(request)
    if resume:
        stored = store.run(resume)
        if stored.suite_hash != suite.content_hash:
            raise UsageError(
                f"run {resume} was made with a different version of suite '{suite.name}'; "
                "resume needs the same suite content (use `toolproof regrade` to re-grade)"
            )
        config = stored.config.with_(
            concurrency=request.concurrency or stored.config.concurrency,
            model_flags=restored_secrets(stored.config.model_flags, request.model_flags, resume),
            **restored_agent(stored.config.agent, request.agent, resume),
        )
    else:
        config = settings(suite, request)
    check_size(config)
    if request.executor not in EXECUTORS:
        raise UsageError(f"--executor {request.executor}: use {' or '.join(EXECUTORS)}")
    if request.ray_address and request.executor != "ray":
        raise UsageError("--ray-address needs --executor ray")
    peak = peak_concurrency(config)
    agents = resolve_agents(config.agent, config.models, suite, config.model_flags, peak)
    user_identity, make_user = resolve_user(config.user_model, suite, config.model_flags, peak)
    tasks = [suite.task(t) for t in config.tasks]
    grader = resolve_judge(
        judge_name(suite, config.judge_model, tasks), suite, config.model_flags, peak
    )
    setups = {
        key: VariantSetup(suite, Variant.parse(key), config.time_scale) for key in config.variants
    }
    expected = await gold_replays(suite, tasks)
    one = trial_runner(suite, config, agents, make_user, expected, setups, grader)
    new = NewRun(
        suite_name=suite.name,
        suite_version=suite.file.version,
        suite_hash=suite.content_hash,
        fingerprint=fingerprint(
            suite,
            config,
            [a.identity for a in agents] + [user_identity] + ([grader.identity] if grader else []),
        ),
        agent=", ".join(a.label for a in agents),
        config=config.redacted(),
        tasks=task_rows(suite, tasks),
        version=__version__,
    )
    # Everything is checked by now, the executor's workers too: only a run that can go ahead
    # is created (or taken over).
    async with executor(request, suite, config, expected, one) as run_one:
        return await drive(
            store,
            new,
            (config, agents, tasks, setups),
            run_one,
            (resume, fresh),
            on_start,
            on_result,
        )


async def drive(
    store: Store,
    new: NewRun,
    plan_of: tuple[RunConfig, list[AgentChoice], list[Task], dict[str, VariantSetup]],
    run_one: RunOne,
    opening: tuple[str | None, bool],
    on_start: Callable[[RunStart], None],
    on_result: Callable[[TrialResult], None],
) -> RunReport:
    """Create (or take over) the run and execute what it still lacks, writing each result as
    it arrives: the same whichever executor `run_one` sends trials to."""
    config, agents, tasks, setups = plan_of
    resume, fresh = opening
    with store.open_run(new, resume=resume, fresh=fresh) as lease:
        run_id = lease.run_id
        models = [a.model for a in agents]
        specs = [
            spec
            for key in config.variants
            for spec in plan(tasks, config.trials, config.seed, models, key)
        ]
        done = store.done(run_id)
        todo: list[TrialSpec] = [s for s in specs if s.key not in done]
        before = Counter(row["outcome"] for row in store.outcomes(run_id)) if done else {}
        on_start(
            RunStart(
                run_id=run_id,
                total=len(specs),
                done=len(specs) - len(todo),
                resumed=lease.resumed,
                counts=dict(before),
            )
        )

        budget = Budget(config.max_cost, store.spent(run_id))

        told = Stored(on_result, asyncio.get_running_loop())
        writer = TrialWriter(store, run_id, told.written)

        def record(result: TrialResult) -> None:
            if told.failure is not None:
                return  # raised once the trials in flight are done
            try:
                writer.put(result)
            except WriteFailed:  # the run stops; the trial runs again on resume
                return
            budget.add(result.cost_usd)

        def stop() -> bool:
            failed = writer.failure is not None or told.failure is not None
            return budget.reached() or lease.lost.is_set() or failed

        try:
            with writer, fewer_collections():
                for key, setup in setups.items():
                    batch = [s for s in todo if s.variant == key]
                    concurrency = setup.concurrency or config.concurrency
                    early = config.max_cost is None  # a budget counts each trial first
                    await execute(batch, run_one, concurrency, record, stop, early=early)
            await asyncio.sleep(0)  # on_result for the last batch, told as the writer closed
            told.check()
        except WriteFailed as exc:
            raise stopped_writing(store, run_id, len(specs), exc) from None
        finally:
            await close_shared()  # the run's connections to model providers
        if lease.lost.is_set():
            raise StoreError(
                f"run {run_id} was taken over by another process while this one was stalled "
                "past its lease; the trials recorded so far are kept"
            )
        if budget.reached():
            store.annotate(
                run_id, stopped=f"budget reached: ${budget.spent:.4f} of ${budget.limit}"
            )
        else:
            store.finish(run_id)
            record_manifest(store, run_id)
    return RunReport(
        run_id=run_id,
        ran=len(store.done(run_id)) - (len(specs) - len(todo)),
        summary=stored_summary(store, run_id),
        stopped=budget.reached(),
    )


def stopped_writing(store: Store, run_id: str, total: int, exc: WriteFailed) -> StoreError:
    """A run the store stopped taking trials from (a full disk): how many trials it kept,
    and that the same command resumes it."""
    try:
        kept = f"{len(store.done(run_id)):,} of {total:,} trials are kept"
    except DBAPIError:  # cannot even be read now: what it holds is still whole
        kept = "the trials recorded so far are kept"
    return StoreError(
        f"cannot write to the results store {store.shown} ({exc.reason}): run {run_id} "
        f"stopped; {kept}; once the store can be written again, run the same command to "
        "resume it"
    )


@dataclass
class Stored:
    """Tells the caller's `on_result` of each trial once it is in the store, on the event
    loop (the writer's thread hands each committed batch over), so progress never counts a
    trial a kill could still lose. What `on_result` raises stops the run (`check`)."""

    on_result: Callable[[TrialResult], None]
    loop: asyncio.AbstractEventLoop
    failure: Exception | None = None

    def written(self, batch: list[TrialResult]) -> None:
        self.loop.call_soon_threadsafe(self._tell, batch)

    def _tell(self, batch: list[TrialResult]) -> None:
        try:
            for result in batch:
                if self.failure is None:
                    self.on_result(result)
        except Exception as exc:
            self.failure = exc

    def check(self) -> None:
        if self.failure is not None:
            raise self.failure


EXECUTORS = ("local", "ray")

RunOne = Callable[[TrialSpec], Awaitable[TrialResult]]


def trial_runner(
    suite: Suite,
    config: RunConfig,
    agents: list[AgentChoice],
    make_user: UserFactory,
    expected: dict[str, GoldReplay],
    setups: dict[str, VariantSetup],
    grader: JudgeModel | None,
) -> RunOne:
    """How one planned trial runs in this process: the same on the driver and in a Ray actor,
    so both executors build every trial alike."""
    by_model = {a.model: a for a in agents}

    async def one(spec: TrialSpec) -> TrialResult:
        agent = by_model[spec.model]
        task = suite.task(spec.task_id)
        return await run_trial(
            Trial(
                spec=spec,
                suite=suite,
                agent=agent.factory,
                agent_label=agent.label,
                expected_hash=expected[spec.task_id].hash,
                expected_changes=expected[spec.task_id].changes,
                max_steps=config.max_steps,
                user=setups[spec.variant].user(make_user),
                conditions=setups[spec.variant].conditions(task, spec.seed),
                judge=grader,
            )
        )

    return one


@asynccontextmanager
async def executor(
    request: RunRequest,
    suite: Suite,
    config: RunConfig,
    expected: dict[str, GoldReplay],
    local: RunOne,
) -> AsyncIterator[RunOne]:
    """The run's trials: in this process, or on a Ray cluster's actors (started here and
    stopped when the run ends; the driver still writes every result)."""
    if request.executor == "local":
        yield local
        return
    from toolproof.runner.ray import ray_trials

    async with ray_trials(suite, config, expected, request.ray_address) as remote:
        yield remote


@contextmanager
def fewer_collections() -> Iterator[None]:
    """While trials run, collect garbage less often and never scan what was built before
    (modules, the suite, the clients): with hundreds of trials in flight, Python's default
    collections stalled every trial, up to 0.3 s at a time and ~8% of the run in all
    (bench/headline.py). Memory stays flat: trials still free what they made."""
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(20_000, 20, 20)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


@dataclass
class Budget:
    """--max-cost: no new trial starts once the spent amount reaches the limit."""

    limit: float | None
    spent: float = 0.0

    def add(self, cost: float | None) -> None:
        self.spent += cost or 0.0

    def reached(self) -> bool:
        return self.limit is not None and self.spent >= self.limit
