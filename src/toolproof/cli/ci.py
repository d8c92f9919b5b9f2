"""The CI commands: `gate`, `compare` and `verify`.

Exit 0 when everything held, 1 when the run fell short (a gate check, a tampered result),
2 on bad input (raised as ToolproofError and printed by the CLI without a traceback).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from toolproof.api import calls as api
from toolproof.ci.compare import compare_runs
from toolproof.ci.gate import flag_spec
from toolproof.cli.options import RUN_HELP, IncludeUngradableOpt, StoreOpt
from toolproof.cli.output import console, writable
from toolproof.errors import UsageError
from toolproof.perf import exit_without_teardown
from toolproof.report.compare import comparison_tables
from toolproof.report.gate import gate_json
from toolproof.report.json import write_json
from toolproof.report.junit import write_junit
from toolproof.report.markdown import write_markdown
from toolproof.report.terminal import gate_table
from toolproof.store.journal import Store
from toolproof.store.manifest import load_manifest, record_manifest
from toolproof.store.queries import open_existing
from toolproof.store.verify import verify_run


def gate(
    run_id: Annotated[str, typer.Argument(help="The run to gate (the candidate). " + RUN_HELP)],
    baseline: Annotated[
        str | None,
        typer.Option(help="Run to compare with (the model in production): no regression."),
    ] = None,
    store: StoreOpt = None,
    min_: Annotated[
        list[str] | None,
        typer.Option("--min", help="METRIC=VALUE: every model's metric at least VALUE."),
    ] = None,
    max_: Annotated[
        list[str] | None,
        typer.Option("--max", help="METRIC=VALUE: every model's metric at most VALUE."),
    ] = None,
    max_regression: Annotated[
        float | None,
        typer.Option(help="Largest significant drop of pass@1/pass^k allowed [0.03]."),
    ] = None,
    max_regressed_tasks: Annotated[
        int | None,
        typer.Option(help="Tasks allowed to regress significantly, each tested alone [0]."),
    ] = None,
    suite: Annotated[
        Path | None,
        typer.Option(help="Suite whose gate: section applies (default: the run's own)."),
    ] = None,
    junit: Annotated[Path | None, typer.Option(help="Write JUnit XML here.")] = None,
    markdown: Annotated[Path | None, typer.Option(help="Write a Markdown report here.")] = None,
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Write the gate's result as JSON here.")
    ] = None,
    include_ungradable: IncludeUngradableOpt = False,
) -> None:
    """Decide whether a run's model may ship: thresholds, regressions, integrity. Exit 1 if not."""
    flag_spec(min_ or [], max_ or [], max_regression, max_regressed_tasks=max_regressed_tasks)
    for path, flag in ((junit, "--junit"), (markdown, "--markdown"), (json_path, "--json")):
        writable(path, flag, store=store, suite=suite)
    result = api.gate(
        run_id,
        baseline=baseline,
        store=_opened(store),
        min=min_,
        max=max_,
        max_regression=max_regression,
        max_regressed_tasks=max_regressed_tasks,
        suite=suite,
        include_ungradable=include_ungradable,
    ).result
    console.print(gate_table(result))
    for warning in result.warnings:
        console.print(f"[yellow]warning:[/] {escape(warning)}", highlight=False)
    if junit:
        write_junit(result, junit)
        console.print(f"wrote {junit}")
    if markdown:
        write_markdown(result, markdown)
        console.print(f"wrote {markdown}")
    if json_path:
        write_json(gate_json(result), json_path)
        console.print(f"wrote {json_path}")
    failed = result.failed
    if failed:
        console.print(
            f"[red]gate failed: {len(failed)} of {len(result.checks)} checks",
            highlight=False,
        )
        raise typer.Exit(1)
    console.print("[green]gate passed", highlight=False)


def compare(
    run_a: Annotated[str, typer.Argument(help="Run A (the baseline). " + RUN_HELP)],
    run_b: Annotated[str, typer.Argument(help="Run B (the candidate). " + RUN_HELP)],
    store: StoreOpt = None,
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Write the comparison as JSON here.")
    ] = None,
    alpha: Annotated[float, typer.Option(help="Significance level of the tests.")] = 0.05,
    include_ungradable: IncludeUngradableOpt = False,
) -> None:
    """B − A per metric and per task, with paired tests over matched trials."""
    writable(json_path, "--json", store=store)
    journal = _opened(store)
    run_a, run_b = journal.resolve(run_a), journal.resolve(run_b)
    comparison = compare_runs(
        journal, run_a, run_b, alpha=alpha, include_ungradable=include_ungradable
    )
    for table in comparison_tables(comparison):
        console.print(table)
    for warning in comparison.warnings:
        console.print(f"[yellow]warning:[/] {escape(warning)}", highlight=False)
    regressed = comparison.regressed_tasks
    if regressed:
        console.print(
            f"[red]{len(regressed)} task(s) passed fewer matched trials in {run_b}:[/] "
            + escape(", ".join(regressed)),
            highlight=False,
        )
    flagged = comparison.significantly_regressed_tasks
    if flagged:
        console.print(
            f"[red]{len(flagged)} task(s) regressed significantly (what the gate counts):[/] "
            + escape(", ".join(flagged)),
            highlight=False,
        )
    if json_path:
        write_json(comparison.as_json(), json_path)
        console.print(f"wrote {json_path}")


def verify(
    run_id: Annotated[
        str, typer.Argument(help="The run whose stored results to check. " + RUN_HELP)
    ],
    store: StoreOpt = None,
    expect: Annotated[
        str | None,
        typer.Option(help="The manifest (or run) sha256 kept outside the store, e.g. in CI."),
    ] = None,
    record: Annotated[
        bool,
        typer.Option(help="Record a manifest for a run that has none (trusting it as is)."),
    ] = False,
    manifest: Annotated[
        Path | None, typer.Option(help="Write the recorded manifest document here.")
    ] = None,
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Write the verification as JSON here.")
    ] = None,
) -> None:
    """Recompute the hashes of a run's stored results; exit 1 when any differs from its
    manifest, naming the trial."""
    writable(manifest, "--manifest", store=store)
    writable(json_path, "--json", store=store)
    journal = _opened(store)
    run_id = journal.resolve(run_id)
    if record:
        if load_manifest(journal, run_id) is not None:
            raise UsageError(f"--record: run {run_id} already has a manifest; verify it instead")
        recorded = record_manifest(journal, run_id)
        console.print(f"recorded manifest of run {run_id}: sha256 {recorded.manifest_hash}")
    result = verify_run(journal, run_id, expect)
    if manifest:
        stored = load_manifest(journal, run_id)
        if stored is not None:
            document = {**stored.document, "manifest_hash": stored.manifest_hash}
            write_json(document, manifest, "--manifest")
            console.print(f"wrote {manifest}")
    if json_path:
        write_json(result.as_json(), json_path)
        console.print(f"wrote {json_path}")
    if result.ok:
        console.print(
            f"[green]run {run_id} verified:[/] {result.trials} trials match the manifest "
            f"recorded {result.recorded_at}\nmanifest sha256 {result.manifest_hash}\n"
            f"run sha256      {result.run_hash}",
            highlight=False,
        )
        return
    for problem in result.problems:
        console.print(problem, style="red", markup=False, highlight=False)
    if result.recorded:
        console.print(
            f"[red]run {run_id} does not match its manifest: {len(result.problems)} "
            f"problem(s), {len(result.tampered)} trial(s)",
            highlight=False,
        )
    else:
        console.print(
            "record one when the run finishes, or now with --record (trusting the run as is)",
            highlight=False,
        )
    raise typer.Exit(1)


def _opened(store: str | None) -> Store:
    """The store a CI command reads: closed, and the process ended without the
    interpreter's teardown, once the command is done (`exit_without_teardown`)."""
    journal = open_existing(store)
    exit_without_teardown(journal.close)
    return journal
