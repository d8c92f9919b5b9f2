"""The suite commands: `init`, `validate`, `run`, `regrade`, `schema`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from toolproof.api import calls as api
from toolproof.api.options import parse_k
from toolproof.ci.gate import flag_spec, with_threshold_ks
from toolproof.cli.options import (
    AgentOpt,
    AgentTimeoutOpt,
    BaseUrlOpt,
    CheckpointsOpt,
    ConcurrencyOpt,
    DriftOpt,
    ExecutorOpt,
    FailUnderOpt,
    FaultsOpt,
    FreshOpt,
    HeaderOpt,
    IncludeUngradableOpt,
    InfraOpt,
    JsonOpt,
    JudgeModelOpt,
    KOpt,
    LoadOpt,
    MaxCostOpt,
    MaxStepsOpt,
    MaxTokensOpt,
    ModelParamOpt,
    ModelsOpt,
    OtelContentOpt,
    OtelEndpointOpt,
    OtelFileOpt,
    ParallelToolCallsOpt,
    PersonaOpt,
    ProfileOpt,
    PromptedOpt,
    RayAddressOpt,
    RequestTimeoutOpt,
    ResumeOpt,
    RunSuiteArg,
    SeedOpt,
    StoreOpt,
    SuiteArg,
    TasksOpt,
    TemperatureOpt,
    ThreadsOpt,
    TimeScaleOpt,
    ToolChoiceOpt,
    TrialsOpt,
    UserModelOpt,
)
from toolproof.cli.output import console, errors, finish, writable
from toolproof.errors import UsageError
from toolproof.perf import ctrl_c_deferred
from toolproof.report.terminal import RunProgress
from toolproof.store.queries import open_existing

if TYPE_CHECKING:
    from toolproof.api.calls import PreparedRun
    from toolproof.api.results import RunResult
    from toolproof.records.trial import TrialResult
    from toolproof.runner.run import RunStart
    from toolproof.telemetry import OtelOptions


def init(
    folder: Annotated[Path, typer.Argument(help="The new suite's folder (new or empty).")],
    name: Annotated[str | None, typer.Option(help="The suite's name [the folder's].")] = None,
) -> None:
    """Start a suite: a policy, a read tool, a write tool that needs the customer's yes, two
    tasks and a README, sound as written (`toolproof validate` passes it)."""
    from toolproof.suite.scaffold import write_scaffold

    written = write_scaffold(folder, name)
    console.print(f"wrote a suite in {folder}:", highlight=False)
    for path in written:
        console.print(f"  {path.relative_to(folder)}", highlight=False)
    console.print(
        f"next: toolproof validate {folder}, then toolproof run {folder} --agent oracle",
        highlight=False,
    )


def validate(suite: SuiteArg, tasks: TasksOpt = None, judge_model: JudgeModelOpt = None) -> None:
    """Prove a suite sound: gold actions run, the oracle passes every task, and every
    adversarial baseline (null, recite-facts, echo-user, word-salad, read-all, fixed-reply)
    fails every task. Rubrics are judged only with a judge model."""
    with ctrl_c_deferred():
        from toolproof.runner import validate as _  # noqa: F401 - its imports, Ctrl-C held
        from toolproof.suite import load_suite

    loaded = load_suite(suite)
    for warning in loaded.warnings:
        errors.print(f"[yellow]warning:[/] {warning}")
    validation = api.validate(loaded, tasks=tasks, judge_model=judge_model).validation
    checks, conditions = validation.checks, validation.conditions
    for check in checks:
        if check.rubric_unjudged:
            errors.print(
                f"[yellow]warning:[/] task '{check.task.id}': its rubric was not judged (no "
                "judge model): graded by its code expectations alone; give --judge-model",
                highlight=False,
            )
    table = Table(
        title=f"{loaded.name} {loaded.file.version}: {len(checks)} tasks", title_justify="left"
    )
    for column in ("task", "gold actions", "oracle", "baselines", "problems"):
        table.add_column(column)
    for check in checks:
        passing = check.passing_baselines
        spare = len(check.inapplicable)
        failed = f"[green]all {len(check.baselines) - spare} failed" + (
            f"[/] ({spare} n/a)" if spare else ""
        )
        table.add_row(
            check.task.id,
            str(check.gold_actions),
            "[green]passed" if check.oracle == "passed" else f"[red]{escape(check.oracle)}",
            f"[red]passed: {', '.join(passing)}" if passing else failed,
            escape("; ".join(check.problems)),
        )
    console.print(table)
    if validation.left_out:
        errors.print(
            f"[yellow]note:[/] the {validation.left_out} unsound task(s) above are left out "
            "of the fault and drift checks: fix them first"
        )
    if conditions:
        survival = Table(title="fault profiles and drift variants", title_justify="left")
        for column in ("condition", "retrying oracle", "plain oracle", "problems"):
            survival.add_column(column)
        for condition in conditions:
            survival.add_row(
                condition.variant,
                f"{condition.retrying_passed}/{condition.tasks}",
                f"{condition.plain_passed}/{condition.tasks}",
                "; ".join(condition.problems[:3]),
            )
        console.print(survival)
    bad, unsurvivable = validation.unsound, validation.unsurvivable
    for check in bad:
        for problem in check.problems:
            where = f"{check.task.source}:{check.task.line}"
            errors.print(
                f"{where}: task '{check.task.id}': {problem}", markup=False, highlight=False
            )
    for condition in unsurvivable:
        errors.print(f"{condition.variant} cannot be survived: {condition.problems[0]}")
    if not validation.ok:
        summary = f"{len(bad)} of {len(checks)} tasks are unsound"
        if conditions:
            summary += f"; {len(unsurvivable)} of {len(conditions)} conditions cannot be survived"
        errors.print(f"[red]{summary}")
        raise typer.Exit(1)
    survivable = f", {len(conditions)} fault profiles and drift variants survivable"
    unjudged = validation.unjudged
    console.print(
        f"[green]suite '{loaded.name}' is sound: {len(checks)} tasks checked"
        + (survivable if conditions else "")
        + (f"[/] [yellow](by code alone: {unjudged} rubric(s) not judged)" if unjudged else "")
    )


EMBEDDED = (
    "loading the embedded model {name} on this machine's CPU: the first trials take the "
    "longest, while it reads each task's prompt"
)
"""Said before an embedded model's first turn, which is otherwise a silent wait."""


def run(
    suite: RunSuiteArg = None,
    agent: AgentOpt = None,
    model: ModelsOpt = None,
    base_url: BaseUrlOpt = None,
    request_timeout: RequestTimeoutOpt = None,
    header: HeaderOpt = None,
    temperature: TemperatureOpt = None,
    max_tokens: MaxTokensOpt = None,
    tool_choice: ToolChoiceOpt = None,
    parallel_tool_calls: ParallelToolCallsOpt = None,
    model_param: ModelParamOpt = None,
    prompted: PromptedOpt = False,
    threads: ThreadsOpt = None,
    max_cost: MaxCostOpt = None,
    user_model: UserModelOpt = None,
    judge_model: JudgeModelOpt = None,
    faults: FaultsOpt = None,
    drift: DriftOpt = None,
    load: LoadOpt = None,
    persona: PersonaOpt = None,
    checkpoints: CheckpointsOpt = None,
    profile: ProfileOpt = None,
    time_scale: TimeScaleOpt = 1.0,
    trials: TrialsOpt = None,
    k: KOpt = None,
    concurrency: ConcurrencyOpt = None,
    executor: ExecutorOpt = "local",
    ray_address: RayAddressOpt = None,
    seed: SeedOpt = None,
    tasks: TasksOpt = None,
    max_steps: MaxStepsOpt = None,
    agent_timeout: AgentTimeoutOpt = None,
    store: StoreOpt = None,
    json_path: JsonOpt = None,
    fail_under: FailUnderOpt = None,
    infra_errors: InfraOpt = "fail",
    include_ungradable: IncludeUngradableOpt = False,
    resume: ResumeOpt = None,
    fresh: FreshOpt = False,
    otel_endpoint: OtelEndpointOpt = None,
    otel_file: OtelFileOpt = None,
    otel_content: OtelContentOpt = False,
) -> None:
    """Run every task many times and report pass^k; an unfinished same run is resumed."""
    with ctrl_c_deferred():
        from toolproof.runner import config as _  # noqa: F401 - its imports, Ctrl-C held
        from toolproof.telemetry import OtelOptions, check_options

    writable(json_path, "--json", store=store, suite=suite)
    writable(otel_file, "--otel-file", store=store, suite=suite)
    otel = OtelOptions(otel_endpoint, otel_file, otel_content)
    check_options(otel)
    flag_spec(fail_under or [], min_flag="--fail-under")  # bad thresholds fail before the run
    prepared = api.prepare_run(
        suite,
        agent=agent,
        model=model,
        trials=trials,
        k=with_threshold_ks(parse_k(k), fail_under),
        store=store,
        resume=resume,
        base_url=base_url,
        request_timeout=request_timeout,
        temperature=temperature,
        max_tokens=max_tokens,
        tool_choice=tool_choice,
        parallel_tool_calls=parallel_tool_calls,
        threads=threads,
        prompted=prompted,
        header=header,
        model_param=model_param,
        max_cost=max_cost,
        user_model=user_model,
        judge_model=judge_model,
        faults=faults,
        drift=drift,
        load=load,
        persona=persona,
        checkpoints=checkpoints,
        profile=profile,
        time_scale=time_scale,
        concurrency=concurrency,
        seed=seed,
        tasks=tasks,
        max_steps=max_steps,
        agent_timeout=agent_timeout,
        infra_errors=infra_errors,
        executor=executor,
        ray_address=ray_address,
    )
    result = run_with_progress(prepared, fresh, otel, include_ungradable)
    if result.stopped:
        stopped = result.summary.stopped or "stopped early"
        console.print(f"[yellow]{stopped}; run again with a higher --max-cost to go on")
    finish(result.summary, json_path, fail_under)


def run_with_progress(
    prepared: PreparedRun, fresh: bool, otel: OtelOptions, include_ungradable: bool
) -> RunResult:
    """The run, its progress shown as trials are stored (and each sent as spans where
    asked); Ctrl-C stops it with the finished trials kept."""
    from toolproof.telemetry import open_export

    progress = RunProgress(console)
    export = open_export(otel) if otel.wanted() else None

    def started(start: RunStart) -> None:
        verb = "resuming" if start.resumed else "run"
        console.print(f"{verb} [bold]{start.run_id}[/]: {start.done} of {start.total} trials done")
        if start.done < start.total:
            for name in start.models:
                if name.startswith("local/"):
                    console.print(EMBEDDED.format(name=name), highlight=False)
        progress.start(start.total, start.done, start.counts)
        if export is not None:
            export.run_id = start.run_id

    def finished(result: TrialResult) -> None:
        progress.advance(result)
        if export is not None:
            export.add(result)

    running = api.start_run(
        prepared,
        fresh=fresh,
        include_ungradable=include_ungradable,
        on_start=started,
        on_result=finished,
    )
    try:
        return asyncio.run(running)
    except KeyboardInterrupt:
        progress.stop()
        errors.print(
            "[yellow]interrupted: finished trials are stored; run the same command to resume"
        )
        raise typer.Exit(130) from None
    finally:
        progress.stop()
        if export is not None:
            export.close()


def regrade(
    run_id: Annotated[str, typer.Argument(help="The run to re-grade (id, its start, 'latest').")],
    suite: Annotated[Path | None, typer.Option(help="Suite folder [the run's own].")] = None,
    store: StoreOpt = None,
    json_path: JsonOpt = None,
    rejudge: Annotated[
        bool,
        typer.Option(help="Ask the judge model again (by default recorded verdicts are used)."),
    ] = False,
    judge_model: JudgeModelOpt = None,
) -> None:
    """Re-grade a run's stored transcripts against the suite's current expectations."""
    with ctrl_c_deferred():
        from toolproof.runner import regrade as _  # noqa: F401 - its imports, Ctrl-C held
        from toolproof.runner.config import suite_folder

    writable(json_path, "--json", store=store, suite=suite)
    journal = open_existing(store)
    run_id = journal.resolve(run_id)
    path = suite or suite_folder(journal.run(run_id), "give it with --suite")
    writable(json_path, "--json", store=store, suite=path)
    regraded = api.regrade(
        run_id, suite=path, store=journal, rejudge=rejudge, judge_model=judge_model
    )
    console.print(f"re-graded run {run_id}: {regraded.changed} trial outcomes changed")
    finish(regraded.summary, json_path, None)


def schema(
    kind: Annotated[str, typer.Argument(help="'suite' or 'task'.")] = "suite",
) -> None:
    """Print the JSON Schema of suite.yaml or of a task, for editor completion."""
    from toolproof.spec.suite import SuiteFile
    from toolproof.spec.task import TaskSpec

    if kind not in ("suite", "task"):
        raise UsageError(f"schema {kind!r}: use 'suite' or 'task'")
    model = SuiteFile if kind == "suite" else TaskSpec
    print(json.dumps(model.model_json_schema(), indent=2))
