"""The same small eval run by inspect_ai and by toolproof: the harness's own time per trial.

    python bench/inspect_compare.py [--tasks 20] [--trials 10] [--turns 4] [--concurrency 10]

Every trial asks for one record's value: a model scripted in process answers at once with a
call of the `lookup` tool on each of its first `turns - 1` turns, then with the answer, and
a scorer checks the answer holds the value. inspect_ai runs it as `--tasks` samples x
`--trials` epochs on its `mockllm/model` provider (custom outputs), with `use_tools` and
`generate`, scored by `includes`, logging to a temporary folder. toolproof runs the same as a
suite of `--tasks` tasks x `--trials` trials with `--agent scripted:FILE` (its model loop on a
script), a Python tool over an isolated world, the must_say and required-call graders, and a
SQLite store. Both run `--concurrency` trials at once, in this one process, one after the other.

With the model instant, the wall time of a whole eval (trials, scoring, writing the log or the
store, the summary) divided by its trials is the harness's overhead per trial. Each harness
first runs an eval of one trial, which takes its imports and start-up (printed apart: once
per process, not per trial). The process CPU is printed too (steadier on a busy machine).
inspect_ai is optional: `pip install -e '.[inspect]'`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from headline import cpu_s, write_suite

from toolproof.runner.run import RunRequest, run_suite
from toolproof.store import Store
from toolproof.suite import load_suite

ANSWER = "It is 7319."


def timed(work: Eval, tasks: int, trials: int) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, trials passed) of one whole eval."""
    cpu, clock = cpu_s(), time.perf_counter()
    passed = work(tasks, trials)
    return time.perf_counter() - clock, cpu_s() - cpu, passed


Eval = Callable[[int, int], int]
"""Runs `tasks` x `trials` of the eval; returns how many trials passed."""


def toolproof_eval(root: Path, args: argparse.Namespace) -> Eval:
    """The toolproof side: the headline bench's suite, a scripted model in the agent loop."""
    suites = {}
    for tasks in sorted({1, args.tasks}):
        (root / f"suite{tasks}").mkdir()
        suites[tasks] = write_suite(root / f"suite{tasks}", tasks)
    call = {"name": "lookup", "arguments": {"key": "a"}}
    usage = {"input_tokens": 200, "output_tokens": 20}
    turns: list[dict[str, Any]] = [{"tool_calls": [call], "usage": usage}] * (args.turns - 1)
    script = root / "script.yaml"
    answer = {"text": ANSWER, "usage": usage}
    script.write_text(json.dumps({"default": [*turns, answer]}))  # JSON is YAML

    def work(tasks: int, trials: int) -> int:
        suite = load_suite(suites[tasks])
        request = RunRequest(
            agent=f"scripted:{script}", trials=trials, k=[1], concurrency=args.concurrency
        )
        store = Store(str(root / f"toolproof-{tasks}x{trials}.db"))
        report = asyncio.run(run_suite(suite, request, store))
        return report.summary.counts.passed

    return work


def inspect_eval(root: Path, args: argparse.Namespace) -> Eval:
    """The inspect_ai side: mockllm with scripted outputs, one tool, `includes` scoring."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_run
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate, use_tools
    from inspect_ai.tool import Tool, ToolChoice, ToolInfo, tool

    records = {"a": {"value": 7319}}

    @tool
    def lookup() -> Tool:
        async def execute(key: str) -> str:
            """Read one record.

            Args:
                key: The record key.
            """
            return json.dumps(records[key])

        return execute

    def scripted(
        messages: list[ChatMessage],
        _tools: list[ToolInfo],
        _choice: ToolChoice,
        _config: GenerateConfig,
    ) -> ModelOutput:
        done = sum(1 for m in messages if m.role == "tool")
        if done < args.turns - 1:
            output = ModelOutput.for_tool_call("mockllm/model", "lookup", {"key": "a"})
        else:
            output = ModelOutput.from_content("mockllm/model", ANSWER)
        # given usage, as toolproof's script gives it (else mockllm counts tokens itself)
        output.usage = ModelUsage(input_tokens=200, output_tokens=20, total_tokens=220)
        return output

    def work(tasks: int, trials: int) -> int:
        task = Task(
            dataset=[
                Sample(input="What is the value of record a?", target="7319", id=f"t{i}")
                for i in range(tasks)
            ],
            solver=[use_tools(lookup()), generate()],
            scorer=includes(),
        )
        model = get_model("mockllm/model", custom_outputs=scripted)
        (log,) = inspect_run(
            task,
            model=model,
            epochs=trials,
            max_samples=args.concurrency,
            log_dir=str(root / "logs"),
            display="none",
        )
        if log.status != "success":
            raise SystemExit(f"inspect_ai's eval failed: {log.error.message if log.error else ''}")
        scores = [s.scores for s in log.samples or []]
        return sum(1 for s in scores if s and next(iter(s.values())).value == "C")

    return work


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=10)
    args = parser.parse_args()
    try:
        import inspect_ai
    except ImportError:
        raise SystemExit(
            "inspect_ai is not installed: pip install -e '.[inspect]' to compare with it"
        ) from None

    total = args.tasks * args.trials
    print(
        f"{args.tasks} tasks x {args.trials} trials of {args.turns} model turns "
        f"({args.turns - 1} tool calls), {args.concurrency} at once; model answers instantly"
    )
    per_trial: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, make in (
            (f"inspect_ai {inspect_ai.__version__}", inspect_eval),
            ("toolproof", toolproof_eval),
        ):
            root = Path(tmp) / name.split()[0]
            root.mkdir()
            work = make(root, args)
            first, _, _ = timed(work, 1, 1)  # imports and start-up: once per process
            wall, cpu, passed = timed(work, args.tasks, args.trials)
            per_trial[name] = (wall / total, cpu / total)
            print(
                f"  {name}: first eval of 1 trial {first:.2f} s (start-up); then {passed} of "
                f"{total} passed in {wall:.2f} s: {1000 * wall / total:.2f} ms per trial, "
                f"CPU {1000 * cpu / total:.2f} ms per trial"
            )
    (inspect_wall, inspect_cpu), (toolproof_wall, toolproof_cpu) = per_trial.values()
    print(
        f"inspect_ai's overhead per trial / toolproof's: {inspect_wall / toolproof_wall:.1f}x "
        f"in wall time, {inspect_cpu / toolproof_cpu:.1f}x in CPU"
    )


if __name__ == "__main__":
    main()
