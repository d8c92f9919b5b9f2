"""`toolproof import trace`: a production conversation drafted as a task, from traces
toolproof wrote and from OpenInference traces; what cannot be mapped is a located warning."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from traced import GOOD_SCRIPT, attributes, otlp, span, spans_of, toolproof, traced_run

from toolproof.errors import SuiteError
from toolproof.suite import load_suite

# Slow: every test here runs the CLI as a process.
pytestmark = pytest.mark.slow


@pytest.mark.skipif(
    __import__("importlib").util.find_spec("opentelemetry.sdk") is None,
    reason="the otel extra is not installed",
)
def test_a_run_exported_and_imported_back_gives_the_trials_user_turns_and_calls(
    tmp_path: Path,
) -> None:
    run = traced_run(tmp_path, GOOD_SCRIPT, "--otel-content")
    trial = next(r for r in run.results() if r.task_id == "cancel")
    conversation = next(
        attributes(s)["gen_ai.conversation.id"]
        for s in spans_of(run.traces)
        if attributes(s).get("toolproof.task") == "cancel"
    )
    draft = tmp_path / "incident.yaml"
    result = toolproof(
        "import",
        "trace",
        run.traces,
        "--conversation",
        conversation,
        "--suite",
        run.suite,
        "-o",
        draft,
    )
    assert result.returncode == 0, result.stderr
    (task,) = yaml.safe_load(draft.read_text())
    users = [m.content for m in trial.transcript.messages("user")]
    assert [task["user"]["opening"], *(t["say"] for t in task["user"]["turns"])] == users
    assert task["expect"]["actions"] == [
        {"tool": c.name, "args": c.arguments}
        for c in trial.transcript.tool_calls()
        if not c.is_error
    ]
    assert "get_order" in draft.read_text() and '"status": "pending"' in draft.read_text()

    # The draft does not load until its draft line is deleted; then its gold actions replay.
    suite_text = (run.suite / "suite.yaml").read_text()
    (run.suite / "suite.yaml").write_text(
        suite_text.replace("defaults:", "  - incident.yaml\ndefaults:")
    )
    (run.suite / "incident.yaml").write_text(draft.read_text())
    with pytest.raises(SuiteError, match="draft"):
        load_suite(run.suite)
    lines = [line for line in draft.read_text().splitlines() if "draft:" not in line]
    (run.suite / "incident.yaml").write_text("\n".join(lines) + "\n")
    loaded = load_suite(run.suite)
    assert [a.tool for a in loaded.task("incident-cancel").spec.expect.actions or []] == [
        "get_order",
        "cancel_order",
    ]


def test_an_openinference_trace_is_drafted_with_its_user_turns_and_tool_calls(
    tmp_path: Path,
) -> None:
    trace = tmp_path / "phoenix.jsonl"
    llm = {
        "openinference.span.kind": "LLM",
        "session.id": "sess-42",
        "llm.model_name": "gpt-4o",
        "llm.input_messages.0.message.role": "system",
        "llm.input_messages.0.message.content": "You are a support agent.",
        "llm.input_messages.1.message.role": "user",
        "llm.input_messages.1.message.content": "Where is order B?",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "get_order",
        "llm.token_count.prompt": 50,
        "llm.token_count.completion": 5,
    }
    tool = {
        "openinference.span.kind": "TOOL",
        "tool.name": "get_order",
        "tool.parameters": '{"order_id": "B"}',
        "output.value": '{"status": "shipped"}',
    }
    trace.write_text(
        otlp(
            [
                span("r1", 0, {"openinference.span.kind": "AGENT"}, ""),
                span("l1", 1, llm),
                span("t1", 2, tool),
            ]
        )
        + "\n"
    )
    result = toolproof("import", "trace", trace)
    assert result.returncode == 0, result.stderr
    (task,) = yaml.safe_load(result.stdout)
    assert task["id"] == "incident-sess-42"
    assert task["user"]["opening"] == "Where is order B?"
    assert task["expect"]["actions"] == [{"tool": "get_order", "args": {"order_id": "B"}}]
    assert task["draft"]


def test_what_cannot_be_mapped_is_a_located_warning_not_a_crash(tmp_path: Path) -> None:
    trace = tmp_path / "odd.jsonl"
    tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.conversation.id": "c1"}
    bad_args = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "get_order",
        "gen_ai.tool.call.arguments": "{not json",
    }
    trace.write_text(otlp([span("s1", 1, tool), span("s2", 2, bad_args)]) + "\n")
    result = toolproof("import", "trace", trace)
    assert result.returncode == 0, result.stderr
    assert f"{trace}:1: span s1: a tool span without gen_ai.tool.name" in result.stderr
    assert f"{trace}:1: span s2: attribute gen_ai.tool.call.arguments is not JSON" in result.stderr
    assert "no user message in the trace" in result.stderr
    assert "Traceback" not in result.stderr
    (task,) = yaml.safe_load(result.stdout)
    assert task["user"]["opening"].startswith("TODO")


def test_a_file_that_is_not_a_trace_is_a_located_error(tmp_path: Path) -> None:
    trace = tmp_path / "broken.jsonl"
    trace.write_text(otlp([span("s1", 1, {})]) + "\n{oops\n")
    result = toolproof("import", "trace", trace)
    assert result.returncode == 2
    assert f"{trace}:2: not JSON" in result.stderr
    assert "Traceback" not in result.stderr


def test_import_trace_never_overwrites_a_file(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_text(otlp([span("s1", 1, {})]) + "\n")
    existing = tmp_path / "task.yaml"
    existing.write_text("keep me\n")
    result = toolproof("import", "trace", trace, "-o", existing)
    assert result.returncode == 2 and "the file exists" in result.stderr
    assert existing.read_text() == "keep me\n"
