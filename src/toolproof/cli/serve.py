"""`toolproof serve-tools`: one trial's tools as an MCP server (`toolproof.runner.served`)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Annotated, Any

import typer

from toolproof.cli.options import (
    DriftOpt,
    FaultsOpt,
    JudgeModelOpt,
    SeedOpt,
    StoreOpt,
    SuiteArg,
)
from toolproof.errors import UsageError
from toolproof.perf import ctrl_c_deferred
from toolproof.spec.limits import MAX_SEED, MAX_TIME_SCALE, MAX_TRIALS, real, whole
from toolproof.store.journal import Store


def serve_tools(
    suite: SuiteArg,
    task: Annotated[str, typer.Option("--task", help="The task whose trial is served.")],
    trial: Annotated[
        int | None,
        typer.Option("--trial", help="Trial index (default: the first one the run lacks)."),
    ] = None,
    trials: Annotated[
        int | None, typer.Option("--trials", help="Trials per task in the run.")
    ] = None,
    faults: FaultsOpt = None,
    drift: DriftOpt = None,
    seed: SeedOpt = None,
    time_scale: Annotated[float, typer.Option(help="Multiply injected latencies and waits.")] = 1.0,
    transport: Annotated[str, typer.Option(help="stdio or http (streamable HTTP).")] = "stdio",
    port: Annotated[int, typer.Option(help="HTTP port on 127.0.0.1 (0: any free one).")] = 8765,
    agent: Annotated[
        str, typer.Option("--agent", help="A label for the agent under test, stored with the run.")
    ] = "mcp",
    finish_tool: Annotated[
        str, typer.Option(help="Name of the tool the agent answers the user with.")
    ] = "finish",
    judge_model: JudgeModelOpt = None,
    store: StoreOpt = None,
    fresh: Annotated[bool, typer.Option(help="Put the trial in a new run.")] = False,
) -> None:
    """Serve one trial's tools (faults and drift applied) as an MCP server, then grade it."""
    with ctrl_c_deferred():
        from toolproof.runner.served import serve
        from toolproof.suite import load_suite

    if transport not in ("stdio", "http"):
        raise UsageError(f"--transport {transport!r}: use 'stdio' or 'http'")
    whole("--trials", trials, 1, MAX_TRIALS)
    whole("--trial", trial, 0, (trials or MAX_TRIALS) - 1)
    whole("--seed", seed, 0, MAX_SEED)
    whole("--port", port, 0, 65_535)
    real("--time-scale", time_scale, MAX_TIME_SCALE)
    say = _printer(sys.stderr if transport == "stdio" else sys.stdout)
    result, run_id = asyncio.run(
        serve(
            load_suite(suite),
            task_id=task,
            trial=trial,
            trials=trials,
            faults=faults,
            drift=drift,
            seed=seed,
            time_scale=time_scale,
            transport="stdio" if transport == "stdio" else "http",
            port=port,
            label=agent,
            finish=finish_tool,
            judge_model=judge_model,
            store=Store(store),
            fresh=fresh,
            say=say,
        )
    )
    if result is None:
        say("no client used the server: nothing stored")
        return
    verdict = result.outcome + (f": {result.reason}" if result.reason else "")
    say(f"trial {result.task_id} #{result.trial}: {verdict}")
    say(f"stored in run {run_id} (toolproof show {run_id})")


def _printer(stream: Any) -> Callable[[str], None]:
    def say(text: str) -> None:
        print(text, file=stream, flush=True)

    return say
