"""The headline workload: many models at once against a slow OpenAI-compatible server.

    python bench/headline.py [--tasks 50] [--trials 10] [--models 5] [--turns 8] [--delay 1.0]
                             [--concurrency 100,500]

A real HTTP server runs in a subprocess (its CPU is not the harness's): it answers
POST /v1/chat/completions after `--delay` seconds and scripts every trial the same way: a
tool call on each of the first `turns - 1` turns, then the answer. toolproof runs `--tasks`
tasks x `--trials` trials x `--models` models (`openai-compatible/m1`...) through the real
adapters, retry layer and store, once per `--concurrency` level.

The ideal wall time at concurrency C is ceil(trials in all / C) x turns x delay: every slot
always waiting on the server. The bench prints the ratio to that, the harness's CPU per model
call, and resident memory sampled as trials finish (it should stay flat: results stream to the
store and are not held).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import resource
import tempfile
import time
from pathlib import Path

import orjson
from concurrency import TOOLS, rss_mb
from stub_server import Answer, serve, server_stats, start

from toolproof.records.trial import TrialResult
from toolproof.runner.run import RunRequest, RunStart, run_suite
from toolproof.spec.overrides import ModelOverrides
from toolproof.store import Store
from toolproof.suite import load_suite


def scripted(turns: int) -> Answer:
    """The server's script: a tool call on each of the first `turns - 1` turns, then the
    answer."""

    def answer(path: bytes, raw: bytes) -> bytes:
        body = orjson.loads(raw)
        done = sum(1 for m in body["messages"] if m["role"] == "tool")
        message: dict[str, object] = {"role": "assistant", "content": "It is 7319."}
        if done < turns - 1:
            call = {"name": "lookup", "arguments": '{"key": "a"}'}
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": f"call_{done}", "type": "function", "function": call}],
            }
        return orjson.dumps(
            {
                "id": "chatcmpl-bench",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 200, "completion_tokens": 20, "total_tokens": 220},
            }
        )

    return answer


def write_suite(root: Path, tasks: int) -> Path:
    """`tasks` lookups of one record, a task file each; the answer must give its value."""
    (root / "tools.py").write_text(TOOLS)
    (root / "records.json").write_text('{"a": {"value": 7319}}')
    (root / "tasks").mkdir()
    for i in range(tasks):
        (root / "tasks" / f"t{i}.yaml").write_text(
            f"id: t{i}\n"
            "user: {opening: 'What is the value of record a?'}\n"
            "expect: {actions: [{tool: lookup, args: {key: a}}], must_say: ['7319']}\n"
        )
    suite = {
        "name": "headline",
        "world": {"data": ["records.json"]},
        "backends": {"b": {"type": "python", "module": "tools.py"}},
        "tools": {"lookup": {"tier": 1}},
        "tasks": ["tasks/*.yaml"],
    }
    (root / "suite.yaml").write_text(json.dumps(suite))  # JSON is YAML
    return root


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def one_level(root: Path, url: str, args: argparse.Namespace, concurrency: int) -> None:
    """One run at `concurrency`, with what its time went to."""
    suite = load_suite(root)
    store = Store(str(root / f"c{concurrency}.db"))
    models = [f"openai-compatible/m{i + 1}" for i in range(args.models)]
    request = RunRequest(
        models=models,
        model_flags=ModelOverrides(base_url=url),
        trials=args.trials,
        k=[1],
        concurrency=concurrency,
    )
    total = args.tasks * args.trials * args.models
    samples: list[tuple[int, float]] = []
    done = 0
    first = last = 0.0

    def on_start(_: RunStart) -> None:
        nonlocal first
        first = time.perf_counter()

    def on_result(_: TrialResult) -> None:
        nonlocal done, last
        done += 1
        last = time.perf_counter()
        if done % max(1, total // 10) == 0:
            samples.append((done, rss_mb()))

    server = server_stats(url.removesuffix("/v1"))
    cpu, clock = cpu_s(), time.perf_counter()
    report = asyncio.run(run_suite(suite, request, store, on_start=on_start, on_result=on_result))
    wall, cpu = time.perf_counter() - clock, cpu_s() - cpu
    after = server_stats(url.removesuffix("/v1"))
    answers = after["answers"] - server["answers"]
    late = (after["late_s"] - server["late_s"]) / max(1, answers)
    counts = report.summary.counts
    ideal = math.ceil(total / concurrency) * args.turns * args.delay
    calls = total * args.turns
    print(f"concurrency {concurrency}: {counts.passed} passed of {counts.total}")
    print(
        f"  wall {wall:.1f} s, ideal {ideal:.1f} s: {wall / ideal:.3f}x "
        f"({100 * (wall / ideal - 1):+.1f}%)"
    )
    print(
        f"  of which: {first - clock:.1f} s before the first trial (clients, gold replay), "
        f"{last - first:.1f} s of trials ({last - first - ideal:+.1f} s over ideal), "
        f"{clock + wall - last:.1f} s after the last (summary)"
    )
    per_slot = math.ceil(total / concurrency) * args.turns  # model calls one after another
    print(
        f"  the server answered {1000 * late:.1f} ms late on average (at most "
        f"{1000 * after['max_late_s']:.0f} ms so far): ~{late * per_slot:.1f} s of the "
        f"{per_slot} calls a slot makes in turn, time the server's process took, not the harness"
    )
    print(f"  harness CPU {cpu:.1f} s: {1000 * cpu / calls:.2f} ms per model call")
    print("  RSS (MiB) after N trials: " + ", ".join(f"{n}: {mb:.0f}" for n, mb in samples))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tasks", type=int, default=50)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--models", type=int, default=5)
    parser.add_argument("--turns", type=int, default=8)
    parser.add_argument("--delay", type=float, default=1.0)
    parser.add_argument("--concurrency", default="100,500")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(scripted(args.turns), args.delay))
        return

    server, root = start(__file__, f"--turns={args.turns}", f"--delay={args.delay}")
    url = f"{root}/v1"
    try:
        with tempfile.TemporaryDirectory() as tmp:
            config = Path(tmp) / "toolproof.yaml"
            config.write_text("{}\n")
            os.environ["TOOLPROOF_CONFIG"] = str(config)  # no user settings leak in
            folder = write_suite(Path(tmp), args.tasks)
            shape = (
                f"{args.tasks} tasks x {args.trials} trials x {args.models} models, "
                f"{args.turns} model turns of {args.delay} s"
            )
            print(shape)
            for level in (int(c) for c in args.concurrency.split(",")):
                one_level(folder, url, args, level)
        print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
