"""A whole run: plan, resume what a journal already has, execute, summarize."""

from __future__ import annotations

import gc
import hashlib
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from toolproof import __version__
from toolproof.agents.registry import resolve_agents, resolve_user
from toolproof.ci.audit import REDACTED, record_manifest, redacted_config, redacted_url
from toolproof.errors import Problem, StoreError, SuiteError, UsageError
from toolproof.metrics.summary import InfraPolicy, RunSummary
from toolproof.models.http import close_shared
from toolproof.records import RunConfig
from toolproof.results import TrialResult
from toolproof.runner.gold import GoldReplay, replay_gold
from toolproof.runner.local import execute
from toolproof.runner.plan import TrialSpec, plan
from toolproof.runner.trial import Trial, run_trial
from toolproof.runner.variants import Variant, VariantSetup
from toolproof.spec.source import Task
from toolproof.store.journal import NewRun, Store
from toolproof.store.queries import stored_summary
from toolproof.suite.loaded import Suite


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
    faults: str | None = None
    drift: str | None = None
    load: list[int] = field(default_factory=list)
    profile: str | None = None
    time_scale: float = 1.0
    suite_path: str = ""


@dataclass
class RunStart:
    """Told to the caller before the first trial: which run, how much is already done."""

    run_id: str
    total: int
    done: int
    resumed: bool


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
        import sys

        ks = [k for k in ks if k <= trials] or [1]
        print(
            f"note: {trials} trials per task are too few for the suite's default k="
            f"{', '.join(map(str, too_big))}; reporting k={', '.join(map(str, ks))}",
            file=sys.stderr,
        )
    if request.max_cost is not None and request.max_cost <= 0:
        raise UsageError("--max-cost must be a positive amount of USD")
    return RunConfig(
        agent=request.agent,
        models=list(request.models),
        model_flags=dict(request.model_flags),
        max_cost=request.max_cost,
        user_model=request.user_model,
        variants=variant_keys(suite, request),
        score=suite.file.score.model_dump(),
        time_scale=request.time_scale,
        trials=trials,
        k=ks,
        seed=defaults.seed if request.seed is None else request.seed,
        max_steps=request.max_steps or defaults.max_steps,
        concurrency=request.concurrency or defaults.concurrency,
        infra_errors=request.infra_errors,
        tasks=[t.id for t in suite.select(request.tasks)],
        suite_path=request.suite_path or str(suite.root),
    )


def variant_keys(suite: Suite, request: RunRequest) -> list[str]:
    """The run's variants, in order: one per load level, or the full profile's set."""
    if request.time_scale <= 0:
        raise UsageError("--time-scale must be positive")
    if request.profile not in (None, "full"):
        raise UsageError(f"--profile {request.profile}: the only profile is 'full'")
    if request.profile == "full":
        if request.faults or request.drift or request.load:
            raise UsageError("--profile full chooses faults, drift and load itself")
        return [v.key for v in full_profile(suite)]
    levels: list[int | None] = list(request.load) or [None]
    return [Variant(request.faults, request.drift, level).key for level in levels]


def full_profile(suite: Suite) -> list[Variant]:
    """What the Reliability Score needs: clean trials, the fault profile, every drift variant
    and the peak load level, each as the suite defines them (absent ones are skipped)."""
    spec, score = suite.file, suite.file.score
    variants = [Variant()]
    profile = score.faults or next(iter(spec.faults.profiles), None)
    if profile:
        variants.append(Variant(faults=profile))
    variants.extend(Variant(drift=name) for name in (score.drift or list(spec.drift)))
    if spec.load:
        peak = score.load or spec.load.peak or max(spec.load.levels)
        variants.append(Variant(load=peak))
    return variants


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
        if redacted_url(again) != url:
            raise UsageError(f"--base-url {redacted_url(again)}: run {run_id} called {url}")
        flags["base_url"] = again
    return flags


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
        )
    else:
        config = settings(suite, request)
    peak = peak_concurrency(config)
    agents = resolve_agents(config.agent, config.models, suite, config.model_flags, peak)
    by_model = {a.model: a for a in agents}
    user_identity, make_user = resolve_user(config.user_model, suite, config.model_flags, peak)
    tasks = [suite.task(t) for t in config.tasks]
    setups = {
        key: VariantSetup(suite, Variant.parse(key), config.time_scale) for key in config.variants
    }
    expected = await gold_replays(suite, tasks)
    new = NewRun(
        suite_name=suite.name,
        suite_version=suite.file.version,
        suite_hash=suite.content_hash,
        fingerprint=fingerprint(suite, config, [a.identity for a in agents] + [user_identity]),
        agent=", ".join(a.label for a in agents),
        config=redacted_config(config),
        tasks=task_rows(suite, tasks),
        version=__version__,
    )
    # Everything is checked by now: only a run that can go ahead is created (or taken over).
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
        on_start(
            RunStart(
                run_id=run_id, total=len(specs), done=len(specs) - len(todo), resumed=lease.resumed
            )
        )

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
                    user=make_user,
                    conditions=setups[spec.variant].conditions(task, spec.seed),
                )
            )

        budget = Budget(config.max_cost, store.spent(run_id))

        def record(result: TrialResult) -> None:
            store.write(run_id, result)
            budget.add(result.cost_usd)
            on_result(result)

        def stop() -> bool:
            return budget.reached() or lease.lost.is_set()

        try:
            with fewer_collections():
                for key, setup in setups.items():
                    batch = [s for s in todo if s.variant == key]
                    concurrency = setup.concurrency or config.concurrency
                    await execute(batch, one, concurrency, record, stop)
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
