"""Options and arguments the commands share, each declared once, and their parsers."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any

import typer

from toolproof.errors import UsageError
from toolproof.metrics.summary import InfraPolicy
from toolproof.spec.limits import MAX_TRIALS

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


def parse_k(text: str | None, flag: str = "--k", most: int = MAX_TRIALS) -> list[int] | None:
    """'1,5,10' -> [1, 5, 10]; None when not given. Each value at most `most`."""
    if not text:
        return None
    expected = f"expected positive integers such as 1,5,10, each at most {most:,}"
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UsageError(f"{flag} {text!r}: {expected}") from None
    if not values or any(not 1 <= v <= most for v in values):
        raise UsageError(f"{flag} {text!r}: {expected}")
    return values


_WORD = re.compile(r"[\w.:/+-]+")


def parse_json_value(flag: str, key: str, text: str) -> Any:
    """A KEY=JSON flag's value: JSON, or a plain word taken as a string (`effort=high`);
    anything else, JSON with nan or inf, or JSON nested too deep is a usage error."""

    def refuse(constant: str) -> Any:
        raise ValueError(f"{constant} is not a JSON number")

    try:
        return json.loads(text, parse_constant=refuse)
    except (ValueError, RecursionError) as exc:
        if _WORD.fullmatch(text):
            return text
        why = exc if isinstance(exc, ValueError) else "nested too deep"
        raise UsageError(
            f"{flag} {key}={text}: not JSON ({why}); give JSON, or a plain word as a string"
        ) from None


def parse_infra(text: str) -> InfraPolicy:
    if text not in ("fail", "exclude"):
        raise UsageError(f"--infra-errors {text!r}: use 'fail' or 'exclude'")
    return "fail" if text == "fail" else "exclude"


def parse_headers(texts: list[str] | None) -> dict[str, str]:
    """--header NAME=VALUE flags as a mapping (a malformed one is refused without its value)."""
    return dict(parse_pair("--header", text, secret=True) for text in texts or [])


def parse_params(texts: list[str] | None) -> dict[str, Any]:
    """--model-param KEY=JSON flags as a mapping of JSON values."""
    params = {}
    for text in texts or []:
        key, raw = parse_pair("--model-param", text)
        params[key] = parse_json_value("--model-param", key, raw)
    return params


def parse_pair(flag: str, text: str, *, secret: bool = False) -> tuple[str, str]:
    """'KEY=VALUE' -> ('KEY', 'VALUE'). A `secret` value (a header's: a token, often) is
    not repeated in the error."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        shown = f"{text[:4]!r}..." if secret and len(text) > 4 else repr(text)
        raise UsageError(f"{flag} {shown}: expected KEY=VALUE")
    return key.strip(), value.strip()
