"""The HTML report on a 100,000-trial run: time to write it and the size of the file.

    python bench/report.py [--tasks 200] [--trials 50] [--models 2] [--variants 5]
                           [--transcripts-mb 10] [--out FILE]

A synthetic run shaped like a `--profile full` comparison of two models (200 tasks x 50
trials x 2 models x 5 variants: clean, a fault profile, two drift variants and a load level;
100,000 trials) is written straight into a temporary SQLite store with executemany. Every
trial is a whole stored record with a small realistic transcript (a user message, model turns
with tool calls, tool results, a rate-limit error and its retry under faults, the reply),
verdicts and a world diff. Then the `report` command's own function renders it, and the bench
prints the time, the file size and how many trial records the file holds.
Targets: under 10 s and under 15 MB.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from toolproof.cli.results import report
from toolproof.records.run import RunConfig
from toolproof.store import Store
from toolproof.store.rows import stored_row
from toolproof.store.schema import trials

MODELS = [
    ("openai/gpt-4o", 2.50, 10.00),
    ("anthropic/claude-sonnet-4-5", 3.00, 15.00),
    ("openai/gpt-4o-mini", 0.15, 0.60),
    ("anthropic/claude-haiku-4-5", 1.00, 5.00),
]
VARIANTS = ["", "faults:production", "drift:v2-api", "drift:v3-api", "load:50"]
TAGS = ["cancellation", "refund", "lookup", "exchange", "loyalty", "privacy", "erp", "sms"]
TOOLS = {
    "find_customer": (1, 0.15),
    "get_order": (1, 0.20),
    "get_payment": (2, 0.05),
    "cancel_order": (2, 0.03),
    "refund_payment": (3, 0.02),
}
REASONS = [
    "state: final state differs from the gold actions' result",
    "calls: missing call cancel_order(order_id={order})",
    "must_say: not said: '${amount}'",
    "confirm_before_write: wrote before the user confirmed",
    "max_steps: the agent used all 30 model turns",
]
INFRA = "infra: {model} answered 503 Service Unavailable after 3 retries"


def task_rows(tasks: int) -> list[dict[str, Any]]:
    rows = []
    for i in range(tasks):
        used = ["find_customer", "get_order"] + (
            ["cancel_order", "refund_payment"] if i % 3 else []
        )
        rows.append(
            {
                "task_id": f"task-{i:04d}",
                "task_hash": f"{i:016x}",
                "tags": [TAGS[i % len(TAGS)], TAGS[(i * 7 + 3) % len(TAGS)]],
                "tools": {name: list(TOOLS[name]) for name in used},
            }
        )
    return rows


def record(
    rng: random.Random,
    task: int,
    trial: int,
    model: str,
    price: tuple[float, float],
    variant: str,
    outcome: str,
    reason: str,
    started: datetime,
) -> dict[str, Any]:
    """One stored trial row, as the store writes it: the columns derived from the whole
    result, the result compressed and its record hash."""
    order = f"W{11000 + task}"
    email = f"customer{task}@example.com"
    amount = 20 + task % 300
    t = 0.0
    tokens_in, tokens_out = 0, 0
    events: list[dict[str, Any]] = []
    latencies: list[float] = []

    def model_call(content: str, calls: list[dict[str, Any]]) -> None:
        nonlocal t, tokens_in, tokens_out
        latency = round(rng.lognormvariate(-0.3, 0.4), 3)
        usage_in, usage_out = 900 + 150 * len(events) + rng.randint(0, 50), rng.randint(20, 90)
        tokens_in += usage_in
        tokens_out += usage_out
        latencies.append(latency)
        t = round(t + latency, 3)
        events.append(
            {
                "type": "model_call",
                "t": t,
                "model": model,
                "role": "agent",
                "content": content,
                "tool_calls": calls,
                "usage": {"input_tokens": usage_in, "output_tokens": usage_out},
                "latency_s": latency,
                "cost_usd": round((usage_in * price[0] + usage_out * price[1]) / 1e6, 6),
                "stop_reason": "tool_calls" if calls else "stop",
            }
        )

    def tool(name: str, arguments: dict[str, Any], result: Any, error: str | None = None) -> None:
        nonlocal t
        latency = round(rng.uniform(0.02, 0.2), 3)
        t = round(t + latency, 3)
        events.append(
            {
                "type": "tool_call",
                "t": t,
                "call_id": f"call_{len(events)}",
                "name": name,
                "arguments": arguments,
                "result": result,
                "is_error": error is not None,
                "error_kind": error,
                "latency_s": latency,
                "fault": error if error == "rate_limit" else None,
            }
        )

    events.append(
        {
            "type": "message",
            "t": 0.0,
            "role": "user",
            "content": f"Hi, please cancel my order {order} and refund it. My email is {email}.",
        }
    )
    model_call("", [{"id": "c1", "name": "find_customer", "arguments": {"email": email}}])
    tool("find_customer", {"email": email}, {"customer_id": f"C{task:04d}", "name": "Sam Doe"})
    model_call("", [{"id": "c2", "name": "get_order", "arguments": {"order_id": order}}])
    faulted = variant.startswith("faults") and rng.random() < 0.3
    if faulted:
        error = {"error": {"status": 429, "message": "Too Many Requests", "retry_after_s": 2}}
        tool("get_order", {"order_id": order}, error, "rate_limit")
        model_call("", [{"id": "c3", "name": "get_order", "arguments": {"order_id": order}}])
    tool(
        "get_order",
        {"order_id": order},
        {"order_id": order, "status": "processing", "total": float(amount), "items": 2},
    )
    text = (
        f"Your order {order} is cancelled and ${amount}.00 is refunded."
        if outcome == "passed"
        else "I could not finish that, sorry."
    )
    model_call(text, [])
    events.append({"type": "message", "t": t, "role": "assistant", "content": text})
    events.append({"type": "end", "t": t, "reason": "user_done", "detail": ""})
    passed = outcome == "passed"
    cost = round((tokens_in * price[0] + tokens_out * price[1]) / 1e6, 6)
    duration = round(t + rng.uniform(0.01, 0.05), 3)
    stats = {
        "failed": {"rate_limit": 1} if faulted else {},
        "recovered": {"rate_limit": 1} if faulted else {},
        "looped": False,
        "faulted": faulted,
        "tool_errors": int(faulted),
    }
    result = {
        "task_id": f"task-{task:04d}",
        "trial": trial,
        "seed": rng.getrandbits(62),
        "variant": variant,
        "model": model,
        "agent": model,
        "task_hash": f"{task:016x}",
        "outcome": outcome,
        "reason": reason,
        "ended": "user_done",
        "verdicts": [
            {"grader": "state", "passed": passed, "reason": "final state as expected"},
            {"grader": "must_say", "passed": passed, "reason": reason or "every fact said"},
        ],
        "transcript": {"events": events},
        "world_diff": [
            {
                "op": "replace",
                "path": f"/orders/{order}/status",
                "value": "cancelled",
                "old": "processing",
            }
        ]
        if passed
        else [],
        "final_hash": "0" * 32,
        "expected_hash": "0" * 32 if passed else "1" * 32,
        "started_at": started.isoformat(timespec="milliseconds"),
        "duration_s": duration,
        "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out},
        "cost_usd": cost,
        "user_cost_usd": 0.0,
        "tool_calls": sum(e["type"] == "tool_call" for e in events),
        "turns": sum(e["type"] == "model_call" for e in events),
        "conditions": stats,
    }
    return stored_row(result)


def build(
    store: Store, tasks: int, n_trials: int, n_models: int, n_variants: int, seed: int = 7
) -> str:
    """Write the synthetic run; return its id."""
    rng = random.Random(seed)
    models = MODELS[:n_models]
    variants = VARIANTS[:n_variants]
    run_id = store.create_run(
        suite_name="synthetic",
        suite_version="1",
        suite_hash="0" * 64,
        fingerprint=f"bench-{rng.getrandbits(64):x}",
        agent="model",
        config=RunConfig(
            k=[1, 5, 10] if n_trials >= 10 else [1],
            seed=seed,
            infra_errors="fail",
            variants=variants,
            trials=n_trials,
        ),
        tasks=task_rows(tasks),
        version="bench",
    )
    start = datetime(2026, 1, 1, tzinfo=UTC)
    batch: list[dict[str, Any]] = []
    with store.engine.begin() as conn:
        for m, (model, price_in, price_out) in enumerate(models):
            skill = 6.0 - 1.5 * m
            for v, variant in enumerate(variants):
                for task in range(tasks):
                    p = rng.betavariate(skill, 1.0) - 0.08 * v
                    for trial in range(n_trials):
                        draw = rng.random()
                        if draw < 0.004:
                            outcome, reason = "infra_error", INFRA.format(model=model)
                        elif draw < p:
                            outcome, reason = "passed", ""
                        else:
                            outcome = "failed"
                            template = REASONS[(task + trial) % len(REASONS)]
                            reason = template.format(order=f"W{11000 + task}", amount=task % 300)
                        when = start + timedelta(seconds=(m * 1000 + task) * 2 + trial * 0.5)
                        row = record(
                            rng, task, trial, model, (price_in, price_out), variant, outcome,
                            reason, when,
                        )  # fmt: skip
                        batch.append({"run_id": run_id, **row})
                        if len(batch) >= 5000:
                            conn.execute(trials.insert(), batch)
                            batch = []
        if batch:
            conn.execute(trials.insert(), batch)
    store.finish(run_id)
    return run_id


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--models", type=int, default=2, choices=range(1, len(MODELS) + 1))
    parser.add_argument("--variants", type=int, default=5, choices=range(1, len(VARIANTS) + 1))
    parser.add_argument("--transcripts-mb", type=float, default=10.0)
    parser.add_argument("--out", type=Path, default=None, help="Keep the report here.")
    args = parser.parse_args()
    total = args.tasks * args.trials * args.models * args.variants
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(str(Path(tmp) / "bench.db"))
        began = time.perf_counter()
        run_id = build(store, args.tasks, args.trials, args.models, args.variants)
        built = time.perf_counter() - began
        db_mb = (Path(tmp) / "bench.db").stat().st_size / 1e6
        print(f"synthetic run {run_id}: {total:,} trials written in {built:.1f}s ({db_mb:.0f} MB)")
        out = args.out or Path(tmp) / "report.html"
        began = time.perf_counter()
        report(
            [run_id],
            output=out,
            store=str(Path(tmp) / "bench.db"),
            transcripts_mb=args.transcripts_mb,
            title=None,
        )
        seconds = time.perf_counter() - began
        size = out.stat().st_size / 1e6
        verdict = "ok" if seconds < 10 and size < 15 else "OVER TARGET"
        print(
            f"report: {seconds:.2f}s, {size:.2f} MB for {total:,} trials "
            f"(targets: under 10 s, under 15 MB): {verdict}"
        )


if __name__ == "__main__":
    main()
