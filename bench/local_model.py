"""Speed of the embedded model: prompt evaluation, generation, and what prefix reuse saves.

    python bench/local_model.py [--threads 2] [--tokens 128] [--repeat 3]

SmolLM2-135M-Instruct (Q4_1) in process through llama-cpp-python, on `--threads` threads:

1. Prompt evaluation on a cold KV cache, for fixed prompts of three sizes (the largest is the
   retail suite's system prompt with its 17 tools), in tokens per second.
2. Generation after the prompt, greedy, `--tokens` tokens without stopping: the model alone,
   then a whole client turn (sampling, stop checks and detokenizing included), then a tool
   call under the grammar.
3. Prefix reuse: the second turn of a retail conversation right after the first (the KV cache
   still holds the first) against the same turn on a cold cache; and a turn that follows
   another conversation, with the client's KV snapshots and without them; then the same turn
   in what stands for the next run (the model's caches emptied), restored from the disk cache
   the first turn left.

4. What one model thread is for: generation as in 2 ("model alone"), run again on the model's
   own thread and then from the main thread, which has not called llama.cpp before. Once two
   OS threads have called it, llama.cpp's thread pools contend; the client never does this.

All llama.cpp work of 1-3 runs on the engine's own thread, as in a run. The figures of 1, 2
and 4 are the best of `--repeat` runs (the median follows in brackets); those of 3 are single
runs. The load average is printed first: on a machine shared with other work every figure
moves with it, and two threads suffer most.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from toolproof.models.base import Message, ModelResponse, ModelSettings, ToolCall
from toolproof.models.local import DiskCache, LocalLlamaClient, render_prompt
from toolproof.suite import load_suite
from toolproof.tools.base import ToolSchema

RETAIL = Path(__file__).parents[1] / "examples" / "retail"
SHORT = "Write a short story about a lighthouse keeper and a cat."
MEDIUM = " ".join(
    f"Order W{10000 + i} shipped on 2026-11-{1 + i % 28:02d} by FedEx, tracking {983346738039 + i}."
    for i in range(40)
)
WEATHER = ToolSchema(
    "get_weather",
    "Get the current weather for a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def best(times: list[float]) -> str:
    return f"{min(times):.3f}s [{statistics.median(times):.3f}s]"


def rate(count: int, times: list[float]) -> str:
    return f"{count / min(times):7.1f} tok/s [{count / statistics.median(times):.1f}]"


def timed(repeat: int, run: Callable[[], object]) -> list[float]:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    repeat = args.repeat

    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}, {os.cpu_count()} CPUs")
    settings = ModelSettings(temperature=0, seed=7, max_tokens=32)
    model = LocalLlamaClient(n_threads=args.threads, settings=settings)
    engine = model._engine
    engine.disk = None  # the figures below are of this process alone; the disk cache comes last
    on_model = engine.thread.run  # where every llama.cpp call of a run is made
    started = time.perf_counter()
    llama = on_model(engine.load)
    print(f"model {Path(model.model_path).name}, {args.threads} threads, ", end="")
    print(f"loaded in {time.perf_counter() - started:.2f}s")
    import llama_cpp

    print(f"llama.cpp {llama_cpp.llama_print_system_info().decode().strip()}")

    suite = load_suite(RETAIL)
    tools = [b.schema for b in suite.tools.values()]
    task = suite.tasks[0]
    opening = Message(role="user", content=task.spec.user.opening)
    policy = Message(role="system", content=suite.policy)
    retail_prompt = render_prompt([policy, opening], tools)

    def cold() -> None:
        on_model(llama.reset)
        engine.snapshots.clear()
        engine.snapshot_bytes = 0

    print("\n1. prompt evaluation (cold cache)")
    for label, text in (
        ("short", render_prompt([Message(role="user", content=SHORT)], [])),
        ("medium", render_prompt([Message(role="user", content=MEDIUM)], [])),
        ("retail system prompt + tools", retail_prompt),
    ):
        tokens = llama.tokenize(text.encode(), add_bos=True, special=True)

        def evaluate(tokens: list[int] = tokens) -> None:
            cold()
            llama.eval(tokens)

        times = on_model(lambda evaluate=evaluate: timed(repeat, evaluate))
        print(f"   {label:30} {len(tokens):5} tokens  {rate(len(tokens), times)}")

    print(f"\n2. generation ({args.tokens} tokens, greedy)")
    story = render_prompt([Message(role="user", content=SHORT)], [])
    prompt = llama.tokenize(story.encode(), add_bos=True, special=True)

    def generation() -> list[float]:
        """Seconds from the first to the last of `--tokens` greedy tokens, `--repeat` times."""
        gaps: list[float] = []
        for _ in range(repeat):
            cold()
            stamps = []
            for _token in llama.generate(prompt, temp=0.0):
                stamps.append(time.perf_counter())
                if len(stamps) == args.tokens:
                    break
            gaps.append(stamps[-1] - stamps[0])
        return gaps

    print(f"   model alone                    {rate(args.tokens - 1, on_model(generation))}")

    text_model = LocalLlamaClient(
        n_threads=args.threads,
        settings=ModelSettings(
            temperature=0, seed=7, max_tokens=args.tokens, extra={"repeat_penalty": 1.0}
        ),
    )
    turns: list[ModelResponse] = []

    def text_turn() -> None:
        cold()
        turns.append(asyncio.run(text_model.generate([Message(role="user", content=SHORT)], [])))

    timed(repeat, text_turn)
    gen = [t.latency_s for t in turns]
    print(f"   client text turn (with prompt) {rate(turns[0].usage.output_tokens, gen)}", end="")
    print(f"  {turns[0].usage.output_tokens} tokens in {best(gen)}")

    calls: list[ModelResponse] = []
    ask = [
        Message(role="system", content="You are a weather service."),
        Message(role="user", content="Weather in Paris, please."),
    ]
    asyncio.run(model.generate(ask, [WEATHER]))  # warm: the same prompt each time after

    def call_turn() -> None:
        calls.append(asyncio.run(model.generate(ask, [WEATHER])))

    timed(repeat, call_turn)
    out = calls[0].usage.output_tokens
    made = calls[0].message.tool_calls
    what = f"{made[0].name} {made[0].raw_arguments}" if made else repr(calls[0].message.content)
    print(f"   tool call (grammar, warm)      {rate(out, [c.latency_s for c in calls])}", end="")
    print(f"  {out} tokens: {what}")

    print("\n3. prefix reuse: turn 2 of a retail conversation (policy + 17 tools), max_tokens 32")
    call = ToolCall(id="call_1", name="find_customer", arguments={"email": "x@example.org"})
    result = Message(
        role="tool",
        content='{"customer_id": "C0093", "name": "Hassan Dubois", "tier": "gold"}',
        tool_call_id="call_1",
        name="find_customer",
    )
    first = [policy, opening]
    second = [*first, Message(role="assistant", tool_calls=[call]), result]
    other = [policy, Message(role="user", content="Do you sell tents? Anything under $200?")]
    no_snapshots = LocalLlamaClient(n_threads=args.threads, settings=settings, cache_bytes=0)

    def turn(messages: list[Message], client: LocalLlamaClient = model) -> ModelResponse:
        return asyncio.run(client.generate(messages, tools))

    def show(label: str, response: ModelResponse) -> None:
        usage = response.usage
        print(
            f"   {label:40} {response.latency_s:7.2f}s  prompt {usage.input_tokens} tokens, "
            f"{usage.cached_tokens} reused"
        )

    def forget() -> None:  # snapshots of earlier scenarios would answer for this one
        engine.snapshots.clear()
        engine.snapshot_bytes = 0

    cold()
    show("cold cache", turn(second))
    forget()
    turn(first)
    show("right after turn 1", turn(second))
    forget()
    turn(first)
    turn(other)
    show("after another conversation, snapshots", turn(second))
    forget()
    turn(first, no_snapshots)
    turn(other, no_snapshots)
    show("after another conversation, none", turn(second, no_snapshots))

    # Last of 3, what the next run finds in the disk cache: turn 1 evaluated cold leaves its KV
    # state there; a new process (here: the model's cache emptied) restores it for turn 2.
    with tempfile.TemporaryDirectory() as folder:
        engine.disk = DiskCache(Path(folder))
        cold()
        turn(first)
        cold()
        show("next run, from the disk cache", turn(second))
        engine.disk = None

    print(f"\n4. generation ({args.tokens} tokens) by the thread that calls llama.cpp")
    print(f"   the model's own thread         {rate(args.tokens - 1, on_model(generation))}")
    print(f"   then the main thread too       {rate(args.tokens - 1, generation())}")


if __name__ == "__main__":
    main()
