"""serve-tools end to end: the `toolproof serve-tools` command as a real MCP server, driven by
the MCP SDK's own client over stdio and over streamable HTTP, then the stored trial.

The suite is the mini suite with a fault profile whose rule always fires and a drift variant.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from judges import JUDGE, scripted, suite_with_rubric, trial_requests, verdict
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from servers import model_server
from support import MINI_FILES, MINI_SUITE, write_files

from toolproof.cli.serve import serve_tools
from toolproof.errors import UsageError
from toolproof.records.trial import TrialResult
from toolproof.runner.config import RunRequest, run_config
from toolproof.runner.served import ServedRun, serve
from toolproof.store.journal import Store
from toolproof.suite import load_suite
from toolproof.transcript import Transcript

CLI = str(Path(sys.executable).parent / "toolproof")

CONDITIONS = """
faults:
  profiles:
    always:
      - {kind: server_error, tools: [get_order], rate: 1.0}
drift:
  v2:
    - {op: rename_tool, tool: get_order, to: fetch_order}
    - {op: rename_param, tool: get_order, param: order_id, to: orderId}
"""

Session = Callable[[Client], Awaitable[dict[str, Any]]]


@pytest.fixture
def suite_dir(tmp_path: Path) -> Path:
    return write_files(tmp_path / "mini", {**MINI_FILES, "suite.yaml": MINI_SUITE + CONDITIONS})


def text(result: Any) -> str:
    return str(result.content[0].text)


def serve_stdio(
    suite_dir: Path, db: Path, args: list[str], session: Session
) -> tuple[dict[str, Any], str]:
    """Spawn `toolproof serve-tools` as the client's stdio server and run `session` against
    it; returns what the session found and the server's stderr."""
    params = StdioServerParameters(
        command=CLI,
        args=["serve-tools", str(suite_dir), "--store", str(db), *args],
        env=dict(os.environ),
    )
    log = db.with_suffix(".log")
    found: dict[str, Any] = {}

    async def main() -> None:
        with log.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                found.update(await session(client))

    anyio.run(main)
    return found, log.read_text()


@contextmanager
def http_server(suite_dir: Path, db: Path, args: list[str]) -> Iterator[tuple[str, Any]]:
    """`toolproof serve-tools --transport http --port 0`; yields (endpoint URL, process)."""
    command = [CLI, "serve-tools", str(suite_dir), "--store", str(db), "--transport", "http"]
    process = subprocess.Popen(
        [*command, "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = ""
        for line in process.stdout:
            if line.startswith("MCP endpoint: "):
                url = line.split()[-1]
                break
        assert url.startswith("http://127.0.0.1:"), process.stderr and process.stderr.read()
        yield url, process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)


def stored(db: Path) -> list[TrialResult]:
    store = Store(str(db))
    return [result for run in store.runs() for _, result in store.results(run["id"])]


# ---------------------------------------------------------------- stdio


@pytest.mark.slow
def test_stdio_serves_the_suites_tools_the_opening_and_a_passing_conversation(
    suite_dir: Path, tmp_path: Path
) -> None:
    db = tmp_path / "served.db"

    async def session(client: Client) -> dict[str, Any]:
        listed = await client.list_tools()
        opening = await client.get_prompt("opening")
        found = {
            "tools": {t.name: t for t in listed.tools},
            "opening": opening.messages[0].content,
            "instructions": client.instructions,
            "order": json.loads(text(await client.call_tool("get_order", {"order_id": "A"}))),
        }
        asked = await client.call_tool(
            "finish", {"answer": "Order A is pending. Shall I cancel it?"}
        )
        found["asked"] = json.loads(text(asked))
        await client.call_tool("cancel_order", {"order_id": "A"})
        done = await client.call_tool("finish", {"answer": "Order A is cancelled."})
        found["done"] = json.loads(text(done))
        late = await client.call_tool("get_order", {"order_id": "A"})
        found["late"] = (late.is_error, text(late))
        return found

    found, log = serve_stdio(suite_dir, db, ["--task", "cancel"], session)
    tools = found["tools"]
    assert sorted(tools) == ["cancel_order", "finish", "get_order"]
    assert tools["get_order"].input_schema["properties"]["order_id"]["type"] == "string"
    assert tools["get_order"].description.startswith("Look up an order.")
    assert tools["finish"].input_schema["required"] == ["answer"]
    assert found["opening"].text == "Please call off order A"
    assert found["instructions"].startswith("You are a support agent.")
    assert "'finish'" in found["instructions"]
    assert found["order"] == {"status": "pending"}
    assert found["asked"] == {"done": False, "user": "Yes, go ahead."}
    assert found["done"] == {"done": True}
    assert found["late"][0] and "conversation is over" in found["late"][1]

    [result] = stored(db)
    assert (result.task_id, result.trial, result.variant, result.outcome) == (
        "cancel",
        0,
        "",
        "passed",
    )
    assert result.agent == "mcp"
    assert [m.role for m in result.transcript.messages()] == ["user", "assistant"] * 2
    assert [c.name for c in result.transcript.tool_calls()] == ["get_order", "cancel_order"]
    assert result.world_diff and result.final_hash == result.expected_hash
    assert "the user says: Please call off order A" in log
    assert "trial cancel #0: passed" in log


@pytest.mark.slow
def test_stdio_disconnect_without_finish_fails_the_trial_into_the_same_run(
    suite_dir: Path, tmp_path: Path
) -> None:
    db = tmp_path / "served.db"

    async def answered(client: Client) -> dict[str, Any]:
        await client.call_tool("get_order", {"order_id": "B"})
        return {
            "done": json.loads(text(await client.call_tool("finish", {"answer": "B shipped."})))
        }

    async def walked_away(client: Client) -> dict[str, Any]:
        return {"order": text(await client.call_tool("get_order", {"order_id": "B"}))}

    found, _ = serve_stdio(suite_dir, db, ["--task", "status"], answered)
    assert found["done"] == {"done": True}
    _, log = serve_stdio(suite_dir, db, ["--task", "status"], walked_away)
    assert "trial status #1: failed: disconnected" in log

    first, second = sorted(stored(db), key=lambda r: r.trial)
    assert (first.trial, first.outcome) == (0, "passed")
    assert (second.trial, second.outcome, second.ended) == (1, "failed", "disconnected")
    assert second.reason.startswith("disconnected: the client left")
    [run] = Store(str(db)).runs()
    assert run["trials"] == 2 and run["agent"] == "mcp"


@pytest.mark.slow
def test_stdio_faults_reach_the_client_and_are_recorded(suite_dir: Path, tmp_path: Path) -> None:
    db = tmp_path / "served.db"

    async def session(client: Client) -> dict[str, Any]:
        failed = await client.call_tool("get_order", {"order_id": "B"})
        await client.call_tool("finish", {"answer": "Sorry, the order system is down."})
        return {"failed": (failed.is_error, json.loads(text(failed)))}

    found, _ = serve_stdio(suite_dir, db, ["--task", "status", "--faults", "always"], session)
    is_error, body = found["failed"]
    assert is_error and body["error"]["status"] == 503
    [result] = stored(db)
    assert (result.variant, result.outcome) == ("faults:always", "failed")
    assert [c.fault for c in result.transcript.tool_calls()] == ["server_error"]


# ---------------------------------------------------------------- streamable HTTP


@pytest.mark.slow
def test_http_serves_drifted_tools_and_grades_when_the_user_is_done(
    suite_dir: Path, tmp_path: Path
) -> None:
    db = tmp_path / "served.db"
    with http_server(suite_dir, db, ["--task", "status", "--drift", "v2"]) as (url, process):

        async def main() -> dict[str, Any]:
            async with Client(url) as client:
                listed = await client.list_tools()
                order = await client.call_tool("fetch_order", {"orderId": "B"})
                done = await client.call_tool("finish", {"answer": "Order B has shipped."})
                return {
                    "tools": {t.name: t.input_schema for t in listed.tools},
                    "order": json.loads(text(order)),
                    "done": json.loads(text(done)),
                }

        found = anyio.run(main)
        out, _ = process.communicate(timeout=60)
    assert sorted(found["tools"]) == ["cancel_order", "fetch_order", "finish"]
    assert "orderId" in found["tools"]["fetch_order"]["properties"]
    assert found["order"] == {"status": "shipped"} and found["done"] == {"done": True}
    assert process.returncode == 0
    assert "trial status #0: passed" in out
    [result] = stored(db)
    assert (result.variant, result.outcome) == ("drift:v2", "passed")
    [call] = result.transcript.tool_calls()
    assert (call.name, call.tool, call.tool_arguments) == (
        "fetch_order",
        "get_order",
        {"order_id": "B"},
    )


@pytest.mark.slow
def test_http_stopped_mid_conversation_grades_the_trial(suite_dir: Path, tmp_path: Path) -> None:
    db = tmp_path / "served.db"
    with http_server(suite_dir, db, ["--task", "status"]) as (url, process):

        async def main() -> str:
            async with Client(url) as client:
                return text(await client.call_tool("get_order", {"order_id": "B"}))

        assert json.loads(anyio.run(main)) == {"status": "shipped"}
        process.send_signal(signal.SIGINT)
        out, _ = process.communicate(timeout=60)
    assert process.returncode == 0
    assert "failed: disconnected" in out
    [result] = stored(db)
    assert (result.outcome, result.ended) == ("failed", "disconnected")


# ---------------------------------------------------------------- the run a served trial joins


def test_a_taken_or_out_of_range_trial_is_a_usage_error(suite_dir: Path, tmp_path: Path) -> None:
    suite = load_suite(suite_dir)
    store = Store(str(tmp_path / "runs.db"))
    asked = RunRequest(agent="mcp:mine", trials=2, seed=7)
    run = ServedRun(store, suite, run_config(suite, asked, served=suite.task("status")), "mine")
    assert run.choose_trial("status", None) == 0
    with pytest.raises(UsageError, match="2 trials per task"):
        run.choose_trial("status", 2)
    run.write(
        TrialResult(task_id="status", trial=0, seed=1, outcome="passed", transcript=Transcript())
    )
    assert run.choose_trial("status", None) == 1
    with pytest.raises(UsageError, match="already has trial 0 of task 'status'"):
        run.choose_trial("status", 0)
    run.write(
        TrialResult(task_id="status", trial=1, seed=2, outcome="failed", transcript=Transcript())
    )
    with pytest.raises(UsageError, match="already has all 2 trials of task 'status'"):
        run.choose_trial("status", None)
    assert run.choose_trial("cancel", None) == 0
    assert ServedRun(store, suite, run.config, "other").choose_trial("status", 0) == 0
    for trial in (0, 1):
        run_id = run.write(
            TrialResult(
                task_id="cancel", trial=trial, seed=3, outcome="passed", transcript=Transcript()
            )
        )
    assert store.run(run_id).finished and len(store.runs()) == 1
    assert run.choose_trial("status", None) == 0  # the next trial starts a new run


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"task_id": "nosuch"}, "has no task 'nosuch'"),
        ({"faults": "nosuch"}, "no such fault profile"),
        ({"drift": "nosuch"}, "no such drift variant"),
        ({"finish": "get_order"}, "has a tool named 'get_order'"),
        ({"drift": "v2", "finish": "fetch_order"}, "has a tool named 'fetch_order'"),
    ],
)
def test_bad_serve_options_are_usage_errors_before_serving(
    suite_dir: Path, tmp_path: Path, options: dict[str, Any], message: str
) -> None:
    store = Store(str(tmp_path / "runs.db"))
    arguments: dict[str, Any] = {"task_id": "status", **options}
    with pytest.raises(UsageError, match=message):
        asyncio.run(serve(load_suite(suite_dir), store=store, **arguments))
    with pytest.raises(UsageError, match="--transport 'pigeon'"):
        serve_tools(suite_dir, "status", transport="pigeon")
    assert store.runs() == []


# ---------------------------------------------------------------- a task with a rubric


async def answer_status(client: Client) -> dict[str, Any]:
    await client.call_tool("get_order", {"order_id": "B"})
    done = await client.call_tool("finish", {"answer": "Order B has shipped."})
    return {"done": json.loads(text(done))}


@pytest.mark.slow
def test_a_served_rubric_task_is_graded_by_the_judge_model_like_a_local_trial(
    tmp_path: Path,
) -> None:
    db = tmp_path / "served.db"

    def judge(name: str, n: int) -> tuple[int, dict[str, Any]]:
        return verdict(name == "polite", "the agent never said the order shipped")

    with model_server(scripted(judge)) as (url, seen):
        suite = suite_with_rubric(tmp_path / "suite", url)
        args = ["--task", "status", "--judge-model", JUDGE]
        found, log = serve_stdio(suite, db, args, answer_status)
    assert found["done"] == {"done": True}
    trials = trial_requests(seen)
    assert len(trials) == 2  # one call per criterion
    assert len(seen.bodies) == 6  # after each criterion's 2 controls
    assert "Order B has shipped." in trials[0]["messages"][-1]["content"]
    [result] = stored(db)
    assert result.outcome == "failed"
    assert result.reason == (
        "rubric: criterion 'names_status' failed: the agent never said the order shipped"
    )
    assert result.judge is not None and result.judge.model == JUDGE
    assert [(c.name, c.passed) for c in result.judge.criteria] == [
        ("polite", True),
        ("names_status", False),
    ]
    assert "trial status #0: failed: rubric: criterion 'names_status' failed" in log
    [run] = Store(str(db)).runs()
    assert Store(str(db)).run(run["id"]).config.judge_model == JUDGE


@pytest.mark.slow
def test_a_served_rubric_task_without_a_judge_model_is_refused_before_serving(
    tmp_path: Path,
) -> None:
    db = tmp_path / "served.db"
    suite = suite_with_rubric(tmp_path / "suite", "http://127.0.0.1:9/v1")
    done = subprocess.run(
        [CLI, "serve-tools", str(suite), "--task", "status", "--store", str(db)],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert "task(s) status have a rubric, which a judge model grades: give --judge-model" in (
        done.stderr
    )
    assert "Traceback" not in done.stderr and "serving task" not in done.stderr
    assert not db.exists() or Store(str(db)).runs() == []
