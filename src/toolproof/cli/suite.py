"""The suite commands: `init`, `validate`, `run`, `regrade`, `schema`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from toolproof.ci.gate import flag_spec
from toolproof.cli import ctrl_c_deferred
from toolproof.cli.options import (
    DriftOpt,
    ExecutorOpt,
    FailUnderOpt,
    FaultsOpt,
    InfraOpt,
    JsonOpt,
    JudgeModelOpt,
    KOpt,
    OtelContentOpt,
    OtelEndpointOpt,
    OtelFileOpt,
    RayAddressOpt,
    SeedOpt,
    StoreOpt,
    SuiteArg,
    TasksOpt,
    parse_infra,
    parse_json_value,
    parse_k,
    parse_pair,
)
from toolproof.cli.output import console, errors, finish, with_threshold_ks, writable
from toolproof.errors import UsageError
from toolproof.records import RunRecord
from toolproof.report.terminal import RunProgress
from toolproof.spec.limits import (
    MAX_CONCURRENCY,
    MAX_SECONDS,
    MAX_TEMPERATURE,
    MAX_THREADS,
    MAX_TOKENS,
    MAX_TURNS,
    real,
    whole,
)
from toolproof.store.journal import Store
from toolproof.store.queries import open_existing
from toolproof.summaries import stored_summary

if TYPE_CHECKING:
    from toolproof.results import TrialResult
    from toolproof.suite.loaded import Suite

TOOL_CHOICES = ("auto", "required", "none")


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
        from toolproof.runner.judging import resolve_judge
        from toolproof.runner.validate import validate_conditions, validate_suite
        from toolproof.suite import load_suite

    loaded = load_suite(suite)
    for warning in loaded.warnings:
        errors.print(f"[yellow]warning:[/] {warning}")
    grader = resolve_judge(judge_model or loaded.file.judge, loaded, {})
    checks = asyncio.run(validate_suite(loaded, loaded.select(tasks), grader))
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
    sound = [c.task for c in checks if c.ok]
    if len(sound) < len(checks) and (loaded.file.faults.profiles or loaded.file.drift):
        errors.print(
            f"[yellow]note:[/] the {len(checks) - len(sound)} unsound task(s) above are left out "
            "of the fault and drift checks: fix them first"
        )
    conditions = asyncio.run(validate_conditions(loaded, sound)) if sound else []
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
    bad = [c for c in checks if not c.ok]
    for check in bad:
        for problem in check.problems:
            where = f"{check.task.source}:{check.task.line}"
            errors.print(
                f"{where}: task '{check.task.id}': {problem}", markup=False, highlight=False
            )
    unsurvivable = [c for c in conditions if not c.ok]
    for condition in unsurvivable:
        errors.print(f"{condition.variant} cannot be survived: {condition.problems[0]}")
    if bad or unsurvivable:
        summary = f"{len(bad)} of {len(checks)} tasks are unsound"
        if conditions:
            summary += f"; {len(unsurvivable)} of {len(conditions)} conditions cannot be survived"
        errors.print(f"[red]{summary}")
        raise typer.Exit(1)
    survivable = f", {len(conditions)} fault profiles and drift variants survivable"
    unjudged = sum(c.rubric_unjudged for c in checks)
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
    suite: Annotated[Path | None, typer.Argument(help="Suite folder or its suite.yaml.")] = None,
    agent: Annotated[
        str | None,
        typer.Option(
            help="oracle, retrying-oracle, null, scripted:FILE, python:MODULE:FUNCTION "
            "or http://URL."
        ),
    ] = None,
    model: Annotated[
        list[str] | None,
        typer.Option("--model", help="provider/model; repeat to compare models in one run."),
    ] = None,
    base_url: Annotated[str | None, typer.Option(help="Base URL (openai-compatible).")] = None,
    request_timeout: Annotated[
        float | None,
        typer.Option(
            metavar="SECONDS",
            help="Seconds one model request may take; then it is retried as a timeout [120].",
        ),
    ] = None,
    header: Annotated[
        list[str] | None, typer.Option("--header", help="HTTP header KEY=VALUE; repeatable.")
    ] = None,
    temperature: Annotated[float | None, typer.Option(help="Model temperature.")] = None,
    max_tokens: Annotated[int | None, typer.Option(help="Max output tokens per call.")] = None,
    tool_choice: Annotated[str | None, typer.Option(help="auto, required or none.")] = None,
    parallel_tool_calls: Annotated[
        bool | None, typer.Option(help="Allow parallel tool calls.")
    ] = None,
    model_param: Annotated[
        list[str] | None,
        typer.Option("--model-param", help="Extra provider parameter KEY=JSON; repeatable."),
    ] = None,
    prompted: Annotated[
        bool, typer.Option(help="Prompted tool calling: tools in the prompt, calls parsed.")
    ] = False,
    threads: Annotated[int | None, typer.Option(help="CPU threads of a local model [2].")] = None,
    max_cost: Annotated[
        float | None, typer.Option(help="Stop starting trials once this many USD are spent.")
    ] = None,
    user_model: Annotated[
        str | None,
        typer.Option(help="provider/model simulating every task's user (instead of scripts)."),
    ] = None,
    judge_model: JudgeModelOpt = None,
    faults: FaultsOpt = None,
    drift: DriftOpt = None,
    load: Annotated[
        str | None, typer.Option(help="Load levels (concurrent agents): 1,10,50,200.")
    ] = None,
    persona: Annotated[
        list[str] | None,
        typer.Option(
            "--persona",
            help="Also run every task as this persona plays the user (a built-in or the "
            "suite's own); repeatable.",
        ),
    ] = None,
    checkpoints: Annotated[
        str | None,
        typer.Option(
            help="Also run every task stretched to these conversation lengths (user turns): "
            "3,8,15,25."
        ),
    ] = None,
    profile: Annotated[
        str | None,
        typer.Option(
            help="'full': what the Reliability Score needs and the suite's personas, in one run."
        ),
    ] = None,
    time_scale: Annotated[
        float, typer.Option(help="Multiply injected latencies and waits (0.01 for CI).")
    ] = 1.0,
    trials: Annotated[int | None, typer.Option(help="Trials per task.")] = None,
    k: KOpt = None,
    concurrency: Annotated[int | None, typer.Option(help="Trials at once.")] = None,
    executor: ExecutorOpt = "local",
    ray_address: RayAddressOpt = None,
    seed: SeedOpt = None,
    tasks: TasksOpt = None,
    max_steps: Annotated[int | None, typer.Option(help="Model turns per trial.")] = None,
    store: StoreOpt = None,
    json_path: JsonOpt = None,
    fail_under: FailUnderOpt = None,
    infra_errors: InfraOpt = "fail",
    resume: Annotated[
        str | None, typer.Option(help="Run to resume: its id, the start of it, or 'latest'.")
    ] = None,
    fresh: Annotated[bool, typer.Option(help="Start a new run even if one can resume.")] = False,
    otel_endpoint: OtelEndpointOpt = None,
    otel_file: OtelFileOpt = None,
    otel_content: OtelContentOpt = False,
) -> None:
    """Run every task many times and report pass^k; an unfinished same run is resumed."""
    with ctrl_c_deferred():
        from toolproof.models.registry import DEFAULT_MODEL
        from toolproof.runner.run import RunRequest, RunStart, check_request, run_suite
        from toolproof.suite import load_suite
        from toolproof.telemetry import OtelOptions, check_options, open_export

    writable(json_path, "--json")
    writable(otel_file, "--otel-file")
    otel = OtelOptions(otel_endpoint, otel_file, otel_content)
    check_options(otel)
    flag_spec(fail_under or [], min_flag="--fail-under")  # bad thresholds fail before the run
    request = RunRequest(  # every flag checked before the store is opened
        agent=agent,
        models=list(model or []),
        model_flags=model_flags(
            base_url=base_url,
            request_timeout=request_timeout,
            headers=header,
            temperature=temperature,
            max_tokens=max_tokens,
            tool_choice=tool_choice,
            parallel_tool_calls=parallel_tool_calls,
            params=model_param,
            prompted=prompted,
            threads=threads,
        ),
        max_cost=max_cost,
        user_model=user_model,
        judge_model=judge_model,
        faults=faults,
        drift=drift,
        load=parse_k(load, "--load", MAX_CONCURRENCY) or [],
        personas=list(persona or []),
        checkpoints=parse_k(checkpoints, "--checkpoints", MAX_TURNS) or [],
        profile=profile,
        time_scale=time_scale,
        trials=trials,
        k=with_threshold_ks(parse_k(k), fail_under) or None,
        concurrency=concurrency,
        seed=seed,
        tasks=tasks,
        max_steps=max_steps,
        infra_errors=parse_infra(infra_errors),
        executor=executor,
        ray_address=ray_address,
    )
    check_request(request)
    journal = open_existing(store) if resume else Store(store)  # resumed: it must be there
    journal.check_sound()  # a damaged store is refused before the suite even loads
    if resume:
        resume = journal.resolve(resume)
    if suite is None:
        if not resume:
            raise UsageError("give a SUITE folder, or --resume RUN_ID")
        suite = suite_folder(journal.run(resume), "give the SUITE folder")
    loaded = load_suite(suite)
    check_tool_choice(tool_choice, loaded)
    request.suite_path = str(loaded.root)
    if agent is None and not model and not resume:
        request.models = [DEFAULT_MODEL]
    progress = RunProgress(console)
    export = open_export(otel) if otel.wanted() else None

    def started(start: RunStart) -> None:
        verb = "resuming" if start.resumed else "run"
        console.print(f"{verb} [bold]{start.run_id}[/]: {start.done} of {start.total} trials done")
        if start.done < start.total:
            for name in journal.run(start.run_id).config.models:
                if name.startswith("local/"):
                    console.print(EMBEDDED.format(name=name), highlight=False)
        progress.start(start.total, start.done, start.counts)
        if export is not None:
            export.run_id = start.run_id

    def finished(result: TrialResult) -> None:
        progress.advance(result)
        if export is not None:
            export.add(result)

    try:
        report = asyncio.run(
            run_suite(
                loaded,
                request,
                journal,
                resume=resume,
                fresh=fresh,
                on_start=started,
                on_result=finished,
            )
        )
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
    if report.stopped:
        stopped = report.summary.stopped or "stopped early"
        console.print(f"[yellow]{stopped}; run again with a higher --max-cost to go on")
    finish(report.summary, json_path, fail_under)


def model_flags(
    *,
    base_url: str | None,
    request_timeout: float | None = None,
    headers: list[str] | None,
    temperature: float | None,
    max_tokens: int | None,
    tool_choice: str | None,
    parallel_tool_calls: bool | None,
    params: list[str] | None,
    prompted: bool,
    threads: int | None = None,
) -> dict[str, Any]:
    """Model settings given on the command line (only those given)."""
    flags: dict[str, Any] = {
        "base_url": base_url,
        "timeout_s": real("--request-timeout", request_timeout, MAX_SECONDS),
        "temperature": real("--temperature", temperature, MAX_TEMPERATURE, zero=True),
        "max_tokens": whole("--max-tokens", max_tokens, 1, MAX_TOKENS),
        "tool_choice": tool_choice,
        "parallel_tool_calls": parallel_tool_calls,
        "n_threads": whole("--threads", threads, 1, MAX_THREADS),
    }
    flags = {key: value for key, value in flags.items() if value is not None}
    if prompted:
        flags["prompted"] = True
    if headers:
        flags["headers"] = dict(parse_pair("--header", h, secret=True) for h in headers)
    if params:
        extra = {}
        for text in params:
            key, raw = parse_pair("--model-param", text)
            extra[key] = parse_json_value("--model-param", key, raw)
        flags["extra"] = extra
    return flags


def check_tool_choice(choice: str | None, suite: Suite) -> None:
    """--tool-choice is auto, required, none, or the name of one of the suite's tools."""
    if choice is None or choice in TOOL_CHOICES or choice in suite.tools:
        return
    raise UsageError(
        f"--tool-choice {choice}: use {', '.join(TOOL_CHOICES)}, or one of the suite's tools "
        f"to force it ({', '.join(sorted(suite.tools))})"
    )


def suite_folder(run: RunRecord, hint: str) -> Path:
    """The suite folder a stored run was made from; an imported run has none."""
    if run.config.suite_path is None:
        raise UsageError(f"run {run.id} was not made from a suite folder here: {hint}")
    return Path(run.config.suite_path)


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
        from toolproof.runner.judging import resolve_judge
        from toolproof.runner.regrade import regrade_run
        from toolproof.runtime import services_on_demand
        from toolproof.suite import load_suite

    writable(json_path, "--json")
    journal = open_existing(store)
    run_id = journal.resolve(run_id)
    stored = journal.run(run_id)
    path = suite or suite_folder(stored, "give it with --suite")
    with services_on_demand():  # no live system is called: start none it can do without
        loaded = load_suite(path)
    if judge_model and not rejudge:
        raise UsageError("--judge-model re-grades with a new judge only with --rejudge")
    name = judge_model or stored.config.judge_model or loaded.file.judge
    grader = resolve_judge(name, loaded, {}) if rejudge else None
    with journal.lease(run_id):  # not while a process is still running it
        changed = asyncio.run(regrade_run(loaded, journal, run_id, grader=grader, rejudge=rejudge))
        if grader is not None and grader.name != stored.config.judge_model:
            journal.annotate(run_id, judge_model=grader.name)
    console.print(f"re-graded run {run_id}: {changed} trial outcomes changed")
    finish(stored_summary(journal, run_id), json_path, None)


def schema(
    kind: Annotated[str, typer.Argument(help="'suite' or 'task'.")] = "suite",
) -> None:
    """Print the JSON Schema of suite.yaml or of a task, for editor completion."""
    from toolproof.spec.models import SuiteFile, TaskSpec

    if kind not in ("suite", "task"):
        raise UsageError(f"schema {kind!r}: use 'suite' or 'task'")
    model = SuiteFile if kind == "suite" else TaskSpec
    print(json.dumps(model.model_json_schema(), indent=2))
