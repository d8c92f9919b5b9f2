"""A whole run, the batch layer: plan, resume what a journal already has, execute, summarize.

The run's config comes from `runner.config`, its trials' parts from `runner.build`; here they
are planned, sent to an executor (this process, or Ray's actors) and written to the store as
they finish."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.exc import DBAPIError

from toolproof.errors import StoreError, UsageError
from toolproof.metrics.summary import RunSummary
from toolproof.models.http import close_shared
from toolproof.perf import fewer_collections
from toolproof.records.run import RunConfig
from toolproof.records.trial import TrialResult
from toolproof.runner.build import RunOne, Wiring, build
from toolproof.runner.config import (
    RunRequest,
    check_request,
    check_size,
    peak_concurrency,
    resumed_config,
    run_config,
)
from toolproof.runner.local import execute
from toolproof.runner.plan import PlannedTrial, plan
from toolproof.spec.task import Task
from toolproof.store.journal import NewRun, Store, WriteFailed
from toolproof.store.manifest import record_manifest
from toolproof.store.writer import TrialWriter
from toolproof.suite.loaded import Suite
from toolproof.summaries import stored_summary
from toolproof.tools.guard import suite_code_guarded
from toolproof.version import __version__


@dataclass
class RunStart:
    """Told to the caller before the first trial: which run, how much is already done."""

    run_id: str
    total: int
    done: int
    resumed: bool
    counts: dict[str, int] = field(default_factory=dict)
    """The outcomes of the trials already done (a resumed run's progress starts from them)."""
    models: list[str] = field(default_factory=list)
    """The run's models (none where one agent runs)."""


@dataclass
class RunReport:
    run_id: str
    ran: int
    summary: RunSummary
    stopped: bool = False


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
                "ungradable": task.spec.ungradable,
            }
        )
    return rows


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
        config = resumed_config(store.run(resume), suite, request)
    else:
        config = run_config(suite, request)
    check_size(config)
    if request.executor not in EXECUTORS:
        raise UsageError(f"--executor {request.executor}: use {' or '.join(EXECUTORS)}")
    if request.ray_address and request.executor != "ray":
        raise UsageError("--ray-address needs --executor ray")
    wiring = await build(suite, config, slots=peak_concurrency(config))
    new = NewRun(
        suite_name=suite.name,
        suite_version=suite.file.version,
        suite_hash=suite.content_hash,
        fingerprint=fingerprint(suite, config, wiring.identities),
        agent=", ".join(a.label for a in wiring.agents.values()),
        config=config.redacted(),
        tasks=task_rows(suite, wiring.tasks),
        version=__version__,
    )
    # Everything is checked by now, the executor's workers too: only a run that can go ahead
    # is created (or taken over).
    async with executor(request, wiring) as run_one:
        return await drive(store, new, wiring, run_one, (resume, fresh), on_start, on_result)


async def drive(
    store: Store,
    new: NewRun,
    wiring: Wiring,
    run_one: RunOne,
    opening: tuple[str | None, bool],
    on_start: Callable[[RunStart], None],
    on_result: Callable[[TrialResult], None],
) -> RunReport:
    """Create (or take over) the run and execute what it still lacks, writing each result as
    it arrives: the same whichever executor `run_one` sends trials to."""
    config, tasks = wiring.config, wiring.tasks
    resume, fresh = opening
    with store.open_run(new, resume=resume, fresh=fresh) as lease:
        run_id = lease.run_id
        specs = [
            spec
            for key in config.variants
            for spec in plan(tasks, config.trials, config.seed, list(wiring.agents), key)
        ]
        done = store.done(run_id)
        todo: list[PlannedTrial] = [s for s in specs if s.key not in done]
        before = Counter(row["outcome"] for row in store.outcomes(run_id)) if done else {}
        on_start(
            RunStart(
                run_id=run_id,
                total=len(specs),
                done=len(specs) - len(todo),
                resumed=lease.resumed,
                counts=dict(before),
                models=list(config.models),
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
            with writer, fewer_collections(), suite_code_guarded():
                for key, setup in wiring.variants.items():
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


@asynccontextmanager
async def executor(request: RunRequest, wiring: Wiring) -> AsyncIterator[RunOne]:
    """The run's trials: in this process, or on a Ray cluster's actors (started here and
    stopped when the run ends; the driver still writes every result)."""
    if request.executor == "local":
        yield wiring.runner()
        return
    from toolproof.runner.ray import ray_trials

    async with ray_trials(wiring, request.ray_address) as remote:
        yield remote


@dataclass
class Budget:
    """--max-cost: no new trial starts once the spent amount reaches the limit."""

    limit: float | None
    spent: float = 0.0

    def add(self, cost: float | None) -> None:
        self.spent += cost or 0.0

    def reached(self) -> bool:
        return self.limit is not None and self.spent >= self.limit
