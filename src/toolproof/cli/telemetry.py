"""The production-loop commands: `import trace` (an incident drafted as a task) and
`monitor` (production traces scored against a baseline run)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from toolproof.cli.options import IncludeUngradableOpt, StoreOpt
from toolproof.cli.output import console, errors, writable
from toolproof.errors import UsageError
from toolproof.format import inert
from toolproof.perf import ctrl_c_deferred
from toolproof.spec.limits import real

if TYPE_CHECKING:  # the suite machinery loads only when a command reads a suite
    from toolproof.suite.loaded import Suite

TracesArg = Annotated[
    Path,
    typer.Argument(
        help="A trace file: OTLP-JSON (one request per line, or one in the file) or the SDK's "
        "one span per line; GenAI or OpenInference attribute names."
    ),
]
SuiteOpt = Annotated[
    Path | None,
    typer.Option("--suite", help="The suite whose tools and policy the traces are read with."),
]


def suite_for_traces(path: Path | None) -> Suite | None:
    """The suite, loaded without starting the live systems it can do without."""
    if path is None:
        return None
    with ctrl_c_deferred():
        from toolproof.runtime import services_on_demand
        from toolproof.suite import load_suite

    with services_on_demand():
        return load_suite(path)


def import_trace(
    traces: TracesArg,
    suite: SuiteOpt = None,
    output: Annotated[
        Path | None,
        typer.Option("-o", "--output", help="Write the draft task here [standard output]."),
    ] = None,
    conversation: Annotated[
        str | None,
        typer.Option(help="The conversation to draft (gen_ai.conversation.id or session.id)."),
    ] = None,
) -> None:
    """Draft a task from one production conversation: its user turns, its calls as the
    starting gold actions, the tool outputs as notes; the expectations are TODOs."""
    from toolproof.importers.trace import draft_task
    from toolproof.report.json import write_text
    from toolproof.telemetry.traces import conversations, pick

    if output is not None and output.exists():
        raise UsageError(f"-o {output}: the file exists; give a new file name")
    writable(output, "-o", suite=suite)
    loaded = suite_for_traces(suite)
    draft = draft_task(pick(conversations(traces), conversation, traces), loaded)
    for problem in draft.problems:
        errors.print(f"[yellow]warning:[/] {problem}", highlight=False)
    if output is None:
        print(inert(draft.text), end="")  # the file, -o, holds the text as it is
        return
    write_text(output, draft.text, "-o")
    console.print(
        f"wrote draft task {draft.task_id} to {output}: fill its TODOs, then delete its "
        "`draft:` line",
        highlight=False,
    )


def monitor(
    traces: Annotated[
        list[Path],
        typer.Argument(
            metavar="TRACES...",
            help="Trace files of sampled production conversations (the formats of `import trace`).",
        ),
    ],
    baseline: Annotated[
        str, typer.Option(help="The run production is held to (id, its start, 'latest').")
    ],
    suite: SuiteOpt = None,
    store: StoreOpt = None,
    max_regression: Annotated[
        float,
        typer.Option(
            min=0,
            help="How much worse is tolerated: points for rates (0.05 = 5 points), a share "
            "of the baseline for tokens, latency and calls (0.05 = 5%).",
        ),
    ] = 0.05,
    alpha: Annotated[
        float, typer.Option(min=0, max=1, help="Significance level of each test.")
    ] = 0.05,
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Write the comparison as JSON here.")
    ] = None,
    markdown_path: Annotated[
        Path | None, typer.Option("--markdown", help="Write the comparison as Markdown here.")
    ] = None,
    include_ungradable: IncludeUngradableOpt = False,
) -> None:
    """Score production traces with the graders that need no gold (policy, loops, recovery,
    economics) and compare each with the baseline run; exit 1 on a significant regression."""
    from toolproof.ci.monitor import (
        Policy,
        baseline_measures,
        baseline_suite,
        production_measures,
        ungradable_tasks,
    )
    from toolproof.ci.monitor import monitor as compare
    from toolproof.report.json import write_json, write_text
    from toolproof.report.monitor import monitor_markdown
    from toolproof.store.queries import open_existing

    real("--max-regression", max_regression, 1_000_000, zero=True)
    real("--alpha", alpha, 1)
    writable(json_path, "--json", store=store, suite=suite)
    writable(markdown_path, "--markdown", store=store, suite=suite)
    journal = open_existing(store)
    run_id = journal.resolve(baseline)
    policy = Policy.of(suite_for_traces(suite or baseline_suite(journal, run_id)))
    current = production_measures(traces, policy)
    report = compare(
        current,
        baseline_measures(journal, run_id, policy, include_ungradable),
        baseline_run=run_id,
        max_regression=max_regression,
        alpha=alpha,
        left_out=[] if include_ungradable else list(ungradable_tasks(journal, run_id)),
    )
    text = monitor_markdown(report)
    print(inert(text), end="")
    if json_path:
        write_json(report.as_json(), json_path)
    if markdown_path:
        write_text(markdown_path, text, "--markdown")
    if report.regressed:
        raise typer.Exit(1)
