"""The library's calls: run a suite, validate it, re-grade a run, gate a run. Each is
synchronous (`run`) with an async twin (`arun`); the command line's `run`, `validate`,
`regrade` and `gate` call these same functions and print what they return.

    result = toolproof.run("examples/retail", agent="oracle", trials=4)
    assert result.pass_k(4) >= 0.9

Options are those of the command line, named as in Python (`--max-cost` is `max_cost`), and
checked as the command line checks them: a bad one is a `toolproof.errors.UsageError`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolproof.api.blocking import blocking
from toolproof.api.options import run_request
from toolproof.api.results import GateVerdict, RegradeResult, RunResult, ValidationResult

if TYPE_CHECKING:
    from toolproof.records.trial import TrialResult
    from toolproof.runner.config import RunRequest, RunTarget
    from toolproof.runner.run import RunStart
    from toolproof.store.journal import Store
    from toolproof.suite.loaded import Suite

Numbers = int | Sequence[int] | str
"""k values: `4`, `[1, 4]`, or the command line's `'1,4'`."""
Thresholds = Mapping[str, float] | Sequence[str]
"""Gate checks: `{"pass^4": 0.9}`, or the command line's `["pass^4=0.9"]`."""


@dataclass(frozen=True)
class PreparedRun:
    """A run checked and opened, not yet started: its request, suite, store and the run it
    resumes (the command line starts its progress display in between)."""

    request: RunRequest
    target: RunTarget


def prepare_run(
    suite: str | Path | None = None,
    *,
    model: str | Sequence[str] | None = None,
    agent: str | None = None,
    trials: int | None = None,
    k: Numbers | None = None,
    store: str | Path | None = None,
    resume: str | None = None,
    **options: Any,
) -> PreparedRun:
    """Check every option, then open the store and load the suite (the folder given, else
    the resumed run's own)."""
    from toolproof.runner.config import run_target

    request = run_request(
        agent=agent, model=model, trials=trials, k=k, resume=resume, options=options
    )
    folder = Path(suite) if suite is not None else None
    target = run_target(request, folder, _url(store), resume)
    return PreparedRun(request, target)


async def start_run(
    prepared: PreparedRun,
    *,
    fresh: bool = False,
    include_ungradable: bool = False,
    on_start: Callable[[RunStart], None] | None = None,
    on_result: Callable[[TrialResult], None] | None = None,
) -> RunResult:
    """Run (or resume) a prepared run to its end; `on_start` is told which run and how much
    is done, `on_result` each trial once it is stored."""
    from toolproof.runner.run import run_suite
    from toolproof.summaries import stored_summary

    target = prepared.target
    report = await run_suite(
        target.suite,
        prepared.request,
        target.store,
        resume=target.resume,
        fresh=fresh,
        on_start=on_start or (lambda _: None),
        on_result=on_result or (lambda _: None),
    )
    summary = report.summary
    if include_ungradable:
        summary = stored_summary(target.store, report.run_id, include_ungradable=True)
    return RunResult(
        run_id=report.run_id,
        summary=summary,
        stopped=report.stopped,
        ran=report.ran,
        store=target.store,
        include_ungradable=include_ungradable,
    )


async def arun(
    suite: str | Path | None = None,
    *,
    model: str | Sequence[str] | None = None,
    agent: str | None = None,
    trials: int | None = None,
    k: Numbers | None = None,
    store: str | Path | None = None,
    resume: str | None = None,
    fresh: bool = False,
    include_ungradable: bool = False,
    on_start: Callable[[RunStart], None] | None = None,
    on_result: Callable[[TrialResult], None] | None = None,
    **options: Any,
) -> RunResult:
    """`toolproof run`: every task of `suite` run `trials` times by the agent or each model,
    stored in `store` (default ./toolproof.db); an unfinished same run is resumed unless
    `fresh`. The suite is loaded before the first await."""
    prepared = prepare_run(
        suite,
        model=model,
        agent=agent,
        trials=trials,
        k=k,
        store=store,
        resume=resume,
        **options,
    )
    return await start_run(
        prepared,
        fresh=fresh,
        include_ungradable=include_ungradable,
        on_start=on_start,
        on_result=on_result,
    )


def run(
    suite: str | Path | None = None,
    *,
    model: str | Sequence[str] | None = None,
    agent: str | None = None,
    trials: int | None = None,
    k: Numbers | None = None,
    store: str | Path | None = None,
    resume: str | None = None,
    fresh: bool = False,
    include_ungradable: bool = False,
    on_start: Callable[[RunStart], None] | None = None,
    on_result: Callable[[TrialResult], None] | None = None,
    **options: Any,
) -> RunResult:
    """`arun`, waited for (inside a running event loop too)."""
    return blocking(
        lambda: arun(
            suite,
            model=model,
            agent=agent,
            trials=trials,
            k=k,
            store=store,
            resume=resume,
            fresh=fresh,
            include_ungradable=include_ungradable,
            on_start=on_start,
            on_result=on_result,
            **options,
        )
    )


async def avalidate(
    suite: str | Path | Suite, *, tasks: str | None = None, judge_model: str | None = None
) -> ValidationResult:
    """`toolproof validate`: gold actions run, the oracle passes every task, every
    adversarial baseline fails every task, every fault profile and drift variant is
    survivable. `suite` is a folder (or its suite.yaml), or a suite already loaded."""
    from toolproof.runner.build import judge_name
    from toolproof.runner.validate import validate as validate_all
    from toolproof.suite import load_suite
    from toolproof.suite.loaded import Suite

    loaded = suite if isinstance(suite, Suite) else load_suite(Path(suite))
    judge = judge_name(loaded, judge_model)
    validation = await validate_all(loaded, loaded.select(tasks), judge)
    return ValidationResult(
        suite=loaded.name,
        version=loaded.file.version,
        validation=validation,
        warnings=list(loaded.warnings),
    )


def validate(
    suite: str | Path | Suite, *, tasks: str | None = None, judge_model: str | None = None
) -> ValidationResult:
    """`avalidate`, waited for (inside a running event loop too)."""
    return blocking(lambda: avalidate(suite, tasks=tasks, judge_model=judge_model))


async def aregrade(
    run_id: str = "latest",
    *,
    suite: str | Path | None = None,
    store: str | Path | Store | None = None,
    rejudge: bool = False,
    judge_model: str | None = None,
) -> RegradeResult:
    """`toolproof regrade`: a run's stored transcripts graded against the suite's current
    expectations (the run's own suite folder unless `suite`), no agent run."""
    from toolproof.runner.config import suite_folder
    from toolproof.runner.regrade import regrade_run
    from toolproof.runtime import services_on_demand
    from toolproof.suite import load_suite
    from toolproof.summaries import stored_summary

    journal = _opened(store)
    run_id = journal.resolve(run_id)
    path = Path(suite) if suite is not None else None
    path = path or suite_folder(journal.run(run_id), "give it with --suite")
    with services_on_demand():  # no live system is called: start none it can do without
        loaded = load_suite(path)
    with journal.lease(run_id):  # not while a process is still running it
        regrading = regrade_run(loaded, journal, run_id, judge_model=judge_model, rejudge=rejudge)
        changed = await regrading
    return RegradeResult(run_id, changed, stored_summary(journal, run_id))


def regrade(
    run_id: str = "latest",
    *,
    suite: str | Path | None = None,
    store: str | Path | Store | None = None,
    rejudge: bool = False,
    judge_model: str | None = None,
) -> RegradeResult:
    """`aregrade`, waited for (inside a running event loop too)."""
    return blocking(
        lambda: aregrade(run_id, suite=suite, store=store, rejudge=rejudge, judge_model=judge_model)
    )


def gate(
    run_id: str = "latest",
    *,
    baseline: str | None = None,
    store: str | Path | Store | None = None,
    min: Thresholds | None = None,
    max: Thresholds | None = None,
    max_regression: float | None = None,
    max_regressed_tasks: int | None = None,
    suite: str | Path | None = None,
    include_ungradable: bool = False,
) -> GateVerdict:
    """`toolproof gate`: the suite's `gate:` section with `min`/`max` over it, and no
    significant regression against `baseline`; `.passed` says whether the run may ship."""
    from toolproof.ci.gate import evaluate_gate, flag_spec, resolve_spec

    flags = flag_spec(
        _thresholds(min, "--min"),
        _thresholds(max, "--max"),
        max_regression,
        max_regressed_tasks=max_regressed_tasks,
    )
    journal = _opened(store)
    run_id = journal.resolve(run_id)
    baseline = journal.resolve(baseline) if baseline else None
    folder = Path(suite) if suite is not None else None
    spec, sources, warnings = resolve_spec(journal.run(run_id), folder, flags, baseline)
    result = evaluate_gate(journal, run_id, spec, baseline, sources, include_ungradable)
    result.warnings[:0] = warnings
    return GateVerdict(run_id, result)


async def agate(
    run_id: str = "latest",
    *,
    baseline: str | None = None,
    store: str | Path | Store | None = None,
    min: Thresholds | None = None,
    max: Thresholds | None = None,
    max_regression: float | None = None,
    max_regressed_tasks: int | None = None,
    suite: str | Path | None = None,
    include_ungradable: bool = False,
) -> GateVerdict:
    """`gate` on a worker thread, so that the event loop goes on meanwhile."""
    return await asyncio.to_thread(
        gate,
        run_id,
        baseline=baseline,
        store=store,
        min=min,
        max=max,
        max_regression=max_regression,
        max_regressed_tasks=max_regressed_tasks,
        suite=suite,
        include_ungradable=include_ungradable,
    )


def _url(store: str | Path | None) -> str | None:
    return str(store) if store is not None else None


def _opened(store: str | Path | Store | None) -> Store:
    """A store that must exist already: opened from its URL or file, or as given."""
    from toolproof.store.journal import Store
    from toolproof.store.queries import open_existing

    return store if isinstance(store, Store) else open_existing(_url(store))


def _thresholds(given: Thresholds | None, flag: str) -> list[str]:
    """`{"pass^4": 0.9}` as the flags' `["pass^4=0.9"]`; a list of those is taken as is."""
    from toolproof.errors import UsageError

    if given is None:
        return []
    if isinstance(given, str):
        return [given]
    if isinstance(given, Mapping):
        for name, value in given.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise UsageError(f"{flag} {name}={value!r}: expected a number")
        return [f"{name}={value!r}" for name, value in given.items()]
    return list(given)
