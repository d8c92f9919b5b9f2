"""Options and arguments the commands share, each declared once, and their parsers."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

StoreOpt = Annotated[
    str | None, typer.Option("--store", help="SQLAlchemy URL or SQLite file [./toolproof.db].")
]
JsonOpt = Annotated[Path | None, typer.Option("--json", help="Write the summary as JSON here.")]
KOpt = Annotated[str | None, typer.Option("--k", help="k values, comma-separated: 1,5,10.")]
FailUnderOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--fail-under",
        help="METRIC=VALUE: exit 1 when the metric is below it (the gate's --min; any metric "
        "the gate accepts).",
    ),
]
InfraOpt = Annotated[
    str,
    typer.Option(
        "--infra-errors",
        help="Count infra errors as failures ('fail') or leave them out ('exclude').",
    ),
]
IncludeUngradableOpt = Annotated[
    bool,
    typer.Option(
        "--include-ungradable",
        help="Count the tasks marked `ungradable:` (nothing they check can fail) in the "
        "numbers; by default they are left out and listed apart.",
    ),
]
SuiteArg = Annotated[Path, typer.Argument(help="Suite folder or its suite.yaml.")]
TasksOpt = Annotated[str | None, typer.Option("--tasks", help="Task ids or tags.")]
FaultsOpt = Annotated[str | None, typer.Option(help="Fault profile of the suite.")]
DriftOpt = Annotated[str | None, typer.Option(help="Schema drift variant of the suite.")]
SeedOpt = Annotated[int | None, typer.Option(help="Suite seed.")]
JudgeModelOpt = Annotated[
    str | None,
    typer.Option(help="provider/model grading tasks' rubrics [the suite's judge:]."),
]
ExecutorOpt = Annotated[
    str,
    typer.Option(
        "--executor",
        help="Where trials run: 'local' (this process) or 'ray' (a Ray cluster; "
        "needs toolproof[ray]).",
    ),
]
RayAddressOpt = Annotated[
    str | None,
    typer.Option(
        "--ray-address",
        metavar="ADDR",
        help="The Ray cluster to join (HOST:PORT, ray://HOST:PORT or 'auto') [a local one].",
    ),
]
RUN_HELP = "A run: its id, the start of it, or 'latest'."

# ---------------------------------------------------------------- `toolproof run`

RunSuiteArg = Annotated[Path | None, typer.Argument(help="Suite folder or its suite.yaml.")]
AgentOpt = Annotated[
    str | None,
    typer.Option(
        help="oracle, retrying-oracle, null, scripted:FILE, python:MODULE:FUNCTION or http://URL."
    ),
]
ModelsOpt = Annotated[
    list[str] | None,
    typer.Option("--model", help="provider/model; repeat to compare models in one run."),
]
BaseUrlOpt = Annotated[str | None, typer.Option(help="Base URL (openai-compatible).")]
RequestTimeoutOpt = Annotated[
    float | None,
    typer.Option(
        metavar="SECONDS",
        help="Seconds one model request may take; then it is retried as a timeout [120].",
    ),
]
HeaderOpt = Annotated[
    list[str] | None, typer.Option("--header", help="HTTP header KEY=VALUE; repeatable.")
]
TemperatureOpt = Annotated[float | None, typer.Option(help="Model temperature.")]
MaxTokensOpt = Annotated[int | None, typer.Option(help="Max output tokens per call.")]
ToolChoiceOpt = Annotated[str | None, typer.Option(help="auto, required or none.")]
ParallelToolCallsOpt = Annotated[bool | None, typer.Option(help="Allow parallel tool calls.")]
ModelParamOpt = Annotated[
    list[str] | None,
    typer.Option("--model-param", help="Extra provider parameter KEY=JSON; repeatable."),
]
PromptedOpt = Annotated[
    bool, typer.Option(help="Prompted tool calling: tools in the prompt, calls parsed.")
]
ThreadsOpt = Annotated[int | None, typer.Option(help="CPU threads of a local model [2].")]
MaxCostOpt = Annotated[
    float | None, typer.Option(help="Stop starting trials once this many USD are spent.")
]
UserModelOpt = Annotated[
    str | None,
    typer.Option(help="provider/model simulating every task's user (instead of scripts)."),
]
LoadOpt = Annotated[str | None, typer.Option(help="Load levels (concurrent agents): 1,10,50,200.")]
PersonaOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--persona",
        help="Also run every task as this persona plays the user (a built-in or the suite's "
        "own); repeatable.",
    ),
]
CheckpointsOpt = Annotated[
    str | None,
    typer.Option(
        help="Also run every task stretched to these conversation lengths (user turns): 3,8,15,25."
    ),
]
ProfileOpt = Annotated[
    str | None,
    typer.Option(
        help="'full': what the Reliability Score needs and the suite's personas, in one run."
    ),
]
TimeScaleOpt = Annotated[
    float, typer.Option(help="Multiply injected latencies and waits (0.01 for CI).")
]
TrialsOpt = Annotated[int | None, typer.Option(help="Trials per task.")]
ConcurrencyOpt = Annotated[int | None, typer.Option(help="Trials at once.")]
MaxStepsOpt = Annotated[int | None, typer.Option(help="Model turns per trial.")]
AgentTimeoutOpt = Annotated[
    float | None,
    typer.Option(
        help="Seconds one turn of a Python agent may take (default: the suite's, else 300)."
    ),
]
ResumeOpt = Annotated[
    str | None, typer.Option(help="Run to resume: its id, the start of it, or 'latest'.")
]
FreshOpt = Annotated[bool, typer.Option(help="Start a new run even if one can resume.")]
OtelEndpointOpt = Annotated[
    str | None,
    typer.Option(
        "--otel-endpoint",
        metavar="URL",
        help="Send each trial as OpenTelemetry GenAI spans to this OTLP/HTTP collector "
        "(http://host:4318 or its /v1/traces URL); needs toolproof[otel].",
    ),
]
OtelFileOpt = Annotated[
    Path | None,
    typer.Option(
        "--otel-file",
        metavar="FILE",
        help="Append each trial's spans to this OTLP-JSON file (one request per line); "
        "needs toolproof[otel].",
    ),
]
OtelContentOpt = Annotated[
    bool,
    typer.Option(
        "--otel-content",
        help="Put message content, tool arguments and tool results in the spans (they may "
        "hold personal data; off by default).",
    ),
]
