"""`toolproof monitor`: production traces against a baseline run, dimension by dimension,
the conversation as the unit; exit 1 on a significant regression, 0 otherwise, 2 on bad
input; what a trace set cannot measure is "not measured", never 0."""

from __future__ import annotations

import importlib.util
import json
import random
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import MINI_FILES, write_files
from traced import BAD_SCRIPT, GOOD_SCRIPT, TracedRun, otlp, span, toolproof, traced_run

from toolproof.metrics.monitor import Dimension, compare_dimension, worse_by_more_than

needs_sdk = pytest.mark.skipif(
    importlib.util.find_spec("opentelemetry.sdk") is None,
    reason="the otel extra is not installed",
)
LOOPS = Dimension("loop_rate", "higher", "absolute", "")
TOKENS = Dimension("tokens", "higher", "relative", "")


def test_the_same_distribution_is_not_a_regression() -> None:
    rng = random.Random(3)
    base = [rng.gauss(100, 10) for _ in range(60)]
    same = [rng.gauss(100, 10) for _ in range(60)]
    assert worse_by_more_than(base, same, 5.0, "higher") > 0.2


def test_a_clearly_worse_sample_is_a_regression_in_its_worse_direction() -> None:
    base = [0.0] * 20 + [1.0] * 2
    worse = [0.0] * 8 + [1.0] * 14
    assert worse_by_more_than(base, worse, 0.05, "higher") < 0.01
    # The same shift is an improvement where lower is worse.
    assert worse_by_more_than(base, worse, 0.05, "lower") > 0.5


def test_a_worsening_within_the_margin_is_tolerated() -> None:
    base = [100.0, 102.0, 98.0, 101.0, 99.0] * 8
    slightly = [v + 3 for v in base]  # 3% more, with a 10% margin
    comparison = compare_dimension(TOKENS, base, slightly, max_regression=0.10, alpha=0.05)
    assert comparison.status == "ok" and comparison.allowed == pytest.approx(10.0)
    beyond = compare_dimension(TOKENS, base, [v + 30 for v in base], 0.10, 0.05)
    assert beyond.status == "regressed"


def test_a_dimension_one_side_cannot_measure_is_not_measured() -> None:
    comparison = compare_dimension(LOOPS, [0.0, 1.0], [None, None], 0.05, 0.05)
    assert comparison.status == "not measured"
    assert comparison.current is None and comparison.p_value is None
    assert comparison.baseline == 0.5


@dataclass
class Sampled:
    """A baseline run and two production samples: the same agent again, and a worse one."""

    baseline: TracedRun
    again: Path
    worse: Path

    def monitor(self, traces: Path, *extra: str | Path) -> subprocess.CompletedProcess[str]:
        return toolproof(
            "monitor",
            traces,
            "--baseline",
            self.baseline.run_id,
            "--store",
            self.baseline.store,
            *extra,
        )


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Sampled:
    if importlib.util.find_spec("opentelemetry.sdk") is None:
        pytest.skip("the otel extra is not installed")
    root = tmp_path_factory.mktemp("monitor")
    # each model turn takes 0.1 s, so a conversation's latency is the agent's and not the
    # machine's scheduling noise (a few milliseconds, over the 5% margin of a 3 ms trial)
    paced = "latency_s: 0.1\n"
    baseline = traced_run(root / "baseline", paced + GOOD_SCRIPT, "--otel-content", trials=4)
    again = traced_run(root / "again", paced + GOOD_SCRIPT, "--otel-content", trials=4)
    worse = traced_run(root / "worse", paced + BAD_SCRIPT, "--otel-content", trials=4)
    return Sampled(baseline, again.traces, worse.traces)


@pytest.mark.slow
@needs_sdk
def test_production_like_the_baseline_passes(runs: Sampled, tmp_path: Path) -> None:
    out = tmp_path / "monitor.json"
    result = runs.monitor(runs.again, "--json", out)
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(out.read_text())
    assert report["regressed"] == []
    by_name = {d["name"]: d for d in report["dimensions"]}
    assert by_name["loop_rate"]["baseline"] == by_name["loop_rate"]["current"] == 0.0
    assert by_name["policy_violation_rate"]["current"] == 0.0
    assert by_name["tokens"]["current"] == by_name["tokens"]["baseline"]
    assert report["conversations"] == report["baseline_trials"] == 8


@pytest.mark.slow
@needs_sdk
def test_a_looping_agent_that_skips_confirmation_fails_the_monitor(
    runs: Sampled, tmp_path: Path
) -> None:
    markdown = tmp_path / "alert.md"
    result = runs.monitor(runs.worse, "--markdown", markdown, "--json", tmp_path / "m.json")
    assert result.returncode == 1, result.stdout + result.stderr
    report = json.loads((tmp_path / "m.json").read_text())
    assert {"loop_rate", "policy_violation_rate", "tokens"} <= set(report["regressed"])
    by_name = {d["name"]: d for d in report["dimensions"]}
    assert by_name["loop_rate"]["current"] == 0.5  # the status conversations loop
    assert by_name["policy_violation_rate"]["current"] == 0.5  # the cancels are unconfirmed
    assert "| loop_rate | 0.000 | 0.500 |" in markdown.read_text()
    assert "regressed" in markdown.read_text()


@pytest.mark.slow
@needs_sdk
def test_traces_without_token_counts_leave_tokens_not_measured(
    runs: Sampled, tmp_path: Path
) -> None:
    trace = tmp_path / "no-tokens.jsonl"
    tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_order"}
    chat = {"gen_ai.operation.name": "chat", "gen_ai.conversation.id": "c1"}
    trace.write_text(otlp([span("m1", 1, chat), span("s1", 2, tool)]) + "\n")
    out = tmp_path / "m.json"
    result = runs.monitor(trace, "--json", out)
    by_name = {d["name"]: d for d in json.loads(out.read_text())["dimensions"]}
    assert by_name["tokens"]["status"] == "not measured"
    assert by_name["tokens"]["current"] is None
    assert by_name["recovery_rate"]["current"] is None  # no failed call to recover from
    assert "| tokens |" in result.stdout and "not measured" in result.stdout


@pytest.mark.slow
def test_a_missing_baseline_store_is_exit_2(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_text(otlp([span("s1", 1, {})]) + "\n")
    result = toolproof("monitor", trace, "--baseline", "nope", "--store", tmp_path / "x.db")
    assert result.returncode == 2 and "Traceback" not in result.stderr


@pytest.mark.slow
@needs_sdk
def test_a_missing_trace_file_is_exit_2_with_its_path(runs: Sampled, tmp_path: Path) -> None:
    missing = runs.monitor(tmp_path / "none.jsonl")
    assert missing.returncode == 2, missing.stdout + missing.stderr
    assert f"{tmp_path / 'none.jsonl'}: cannot read the trace file" in missing.stderr
    assert "Traceback" not in missing.stderr


@pytest.mark.slow
@needs_sdk
def test_traces_with_no_agent_span_are_exit_2_not_empty_conversations(
    runs: Sampled, tmp_path: Path
) -> None:
    trace = tmp_path / "http-only.jsonl"
    trace.write_text(otlp([span("h1", 1, {"http.request.method": "GET"})]) + "\n")
    result = runs.monitor(trace)
    assert result.returncode == 2
    assert f"{trace}: no agent, model or tool span" in result.stderr


# A Python agent (no model calls, so no model spans) that asks before it cancels: only its
# replies, in their place among its calls, show that it keeps confirm_before_write.
CAREFUL_AGENT = """
async def agent(conversation, tools):
    if "order A" in conversation.latest:
        await tools.call("get_order", {"order_id": "A"})
        return "Order A is pending. Shall I cancel order A?"
    if "Yes" in conversation.latest:
        await tools.call("cancel_order", {"order_id": "A"})
        return "Order A is cancelled."
    order = await tools.call("get_order", {"order_id": "B"})
    return f"Order B has {order['status']}."
"""


def python_agent_run(root: Path, *extra: str) -> TracedRun:
    """The mini suite run twice per task by CAREFUL_AGENT, its spans in an OTLP-JSON file."""
    suite = write_files(root / "mini", MINI_FILES)
    agent = write_files(root, {"careful.py": CAREFUL_AGENT}) / "careful.py"
    store, traces = root / "runs.db", root / "traces.jsonl"
    result = toolproof(
        "run", suite, "--agent", f"python:{agent}:agent", "--trials", "2", "--k", "1",
        "--store", store, "--json", root / "summary.json", "--otel-file", traces, *extra,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    run_id = json.loads((root / "summary.json").read_text())["run_id"]
    return TracedRun(root, suite, store, traces, run_id)


@pytest.mark.slow
@needs_sdk
def test_the_replies_of_an_agent_without_model_spans_are_judged_in_production(
    tmp_path: Path,
) -> None:
    run = python_agent_run(tmp_path / "content", "--otel-content")
    out = tmp_path / "m.json"
    result = toolproof(
        "monitor", run.traces, "--baseline", run.run_id, "--store", run.store, "--json", out
    )
    assert result.returncode == 0, result.stdout + result.stderr
    policy = {d["name"]: d for d in json.loads(out.read_text())["dimensions"]}[
        "policy_violation_rate"
    ]
    # every cancel was confirmed first, as the baseline's trials show
    assert policy["baseline"] == policy["current"] == 0.0
    assert policy["current_n"] == 4
    assert json.loads(run.root.joinpath("summary.json").read_text())["counts"]["passed"] == 4

    bare = python_agent_run(tmp_path / "bare")  # no content: nothing to judge the rules by
    result = toolproof(
        "monitor", bare.traces, "--baseline", run.run_id, "--store", run.store, "--json", out
    )
    policy = {d["name"]: d for d in json.loads(out.read_text())["dimensions"]}[
        "policy_violation_rate"
    ]
    assert policy["current"] is None and policy["status"] == "not measured"


@pytest.mark.slow
@needs_sdk
def test_replies_without_a_time_among_the_tool_calls_are_not_measured_not_zero(
    runs: Sampled, tmp_path: Path
) -> None:
    """Another producer's agent span with its messages as attributes only: the replies
    cannot be placed among the calls, so the rules cannot be judged."""
    said = [{"role": "user", "parts": [{"type": "text", "content": "Cancel order A please"}]}]
    replied = [{"role": "assistant", "parts": [{"type": "text", "content": "Done."}]}]
    agent = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.conversation.id": "c1",
        "gen_ai.input.messages": json.dumps(said),
        "gen_ai.output.messages": json.dumps(replied),
    }
    tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "cancel_order"}
    trace = tmp_path / "agent-only.jsonl"
    trace.write_text(otlp([span("r1", 1, agent, parent=""), span("s1", 2, tool)]) + "\n")
    out = tmp_path / "m.json"
    runs.monitor(trace, "--json", out)
    policy = {d["name"]: d for d in json.loads(out.read_text())["dimensions"]}[
        "policy_violation_rate"
    ]
    assert policy["current"] is None and policy["status"] == "not measured"
