"""`toolproof validate` proves a suite sound: the oracle passes every task and each adversarial
baseline fails every task. Here each baseline meets a task deliberately too weak for it."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import line_with, write_files

from toolproof.agents.baselines import ADVERSARIES
from toolproof.runner.validate import TaskCheck, validate_suite
from toolproof.suite import load_suite

TOOLS = '''
from toolproof.tools import ToolError, tool
from toolproof.world import World


@tool
def get_order(world: World, order_id: str) -> dict:
    """Look up an order.

    Args:
        order_id: The order id, e.g. "W123".
    """
    if order_id not in world["orders"]:
        raise ToolError(f"no order {order_id}", kind="not_found")
    return world["orders"][order_id]


@tool(write=True)
def cancel_order(world: World, order_id: str) -> dict:
    """Cancel an order.

    Args:
        order_id: The order id, e.g. "W123".
    """
    world["orders"][order_id]["status"] = "cancelled"
    return world["orders"][order_id]
'''

SUITE = """
name: weak
policy: policy.md
world: {data: [orders.yaml]}
backends: {shop: {type: python, module: tools.py}}
tools:
  get_order: {tier: 1}
  cancel_order: {tier: 3}
tasks:
  - id: sound
    user: {opening: "Where is order W100?"}
    expect:
      actions: [{tool: get_order, args: {order_id: W100}}]
      must_say: [shipped]
  - id: forbid-only
    user: {opening: "Where is order W100?"}
    expect:
      forbidden_calls: [{tool: cancel_order}]
  - id: recited
    user: {opening: "Where is order W100?"}
    expect:
      must_say: [{fact: "your order has shipped", source: none}]
  - id: echoed
    user: {opening: "My reference is REF-7781."}
    expect:
      must_say: [{fact: REF-7781, source: user}]
  - id: policy-word
    user: {opening: "Who are you?"}
    expect:
      must_say: [{fact: Fernhill, source: none}]
  - id: read-but-say-nothing
    user: {opening: "Where is order W100?"}
    expect:
      actions: [{tool: get_order, args: {order_id: W100}}]
  - id: any-time
    user: {opening: "When do you open?"}
    expect:
      must_say: [{fact: "09:30", source: none}]
"""

FILES = {
    "suite.yaml": SUITE,
    "orders.yaml": "W100: {status: shipped}\n",
    "policy.md": "You answer for Fernhill Supply. Never guess.\n",
    "tools.py": TOOLS,
}

WEAK_FOR = {
    "forbid-only": "null",
    "recited": "recite-facts",
    "echoed": "echo-user",
    "policy-word": "word-salad",
    "read-but-say-nothing": "read-all",
    "any-time": "fixed-reply",
}


@pytest.fixture(scope="module")
def checks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, TaskCheck]:
    root = write_files(tmp_path_factory.mktemp("weak"), FILES)
    return {c.task.id: c for c in asyncio.run(validate_suite(load_suite(root)))}


def test_every_adversarial_baseline_is_caught_by_the_task_too_weak_for_it(
    checks: dict[str, TaskCheck],
) -> None:
    assert set(WEAK_FOR.values()) == set(ADVERSARIES)
    for task, baseline in WEAK_FOR.items():
        assert baseline in checks[task].passing_baselines, (task, checks[task].baselines)
        assert not checks[task].ok
    assert checks["sound"].ok
    assert checks["sound"].passing_baselines == []
    assert all(c.oracle == "passed" for c in checks.values())


def test_each_problem_names_the_baseline_and_what_it_does(checks: dict[str, TaskCheck]) -> None:
    assert checks["read-but-say-nothing"].problems == [
        "the read-all agent passes it: its expectations cannot tell a good agent from one "
        "that calls every read tool once and stops"
    ]
    assert checks["forbid-only"].baselines["read-all"] == "passed"
    assert checks["sound"].baselines["read-all"] == "failed: must_say: not said: 'shipped'"
    assert checks["sound"].baselines["recite-facts"] == (
        "failed: reads: decisive read not made: get_order(order_id='W100')"
    )


def test_validate_names_each_passing_baseline_in_the_table_and_the_error_lines(
    tmp_path: Path,
) -> None:
    write_files(tmp_path, FILES)
    env = {**os.environ, "COLUMNS": "250", "NO_COLOR": "1"}
    cli = Path(sys.executable).parent / "toolproof"
    result = subprocess.run(
        [str(cli), "validate", "."], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert result.returncode == 1, result.stdout + result.stderr
    rows = {line.split()[1]: line for line in result.stdout.splitlines() if line.startswith("│")}
    assert "all 6 failed" in rows["sound"]
    assert "passed: read-all" in rows["read-but-say-nothing"]
    for task, baseline in WEAK_FOR.items():
        line = line_with(SUITE.lstrip("\n"), f"- id: {task}")
        assert f"suite.yaml:{line}: task '{task}': the {baseline} agent passes it" in result.stderr
    assert "6 of 7 tasks are unsound" in result.stderr
    assert "Traceback" not in result.stderr
