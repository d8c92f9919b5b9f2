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
from toolproof.runner.validate import TaskCheck, validate, validate_suite
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

# The shortcuts of agents that read: each task is open to one through a setting of its own.
ACCOUNT_TOOLS = '''
from typing import Literal

from toolproof.tools import ToolError, tool
from toolproof.world import World


@tool
def find_customer(world: World, email: str) -> dict:
    """Find a customer by email.

    Args:
        email: The email on the account.
    """
    for cid, customer in world["customers"].items():
        if customer["email"] == email:
            return {"customer_id": cid, **customer}
    raise ToolError("no such customer", kind="not_found")


@tool
def get_order(
    world: World, order_id: str, status: Literal["processing", "shipped", "cancelled"] | None = None
) -> dict:
    """Look up an order.

    Args:
        order_id: The order id, e.g. "W123".
        status: Only if the order has this status.
    """
    if order_id not in world["orders"]:
        raise ToolError(f"no order {order_id}", kind="not_found")
    return {"order_id": order_id, **world["orders"][order_id]}


@tool(write=True)
def cancel_order(world: World, order_id: str) -> dict:
    """Cancel an order.

    Args:
        order_id: The order id, e.g. "W123".
    """
    if order_id not in world["orders"]:
        raise ToolError(f"no order {order_id}", kind="not_found")
    world["orders"][order_id]["status"] = "cancelled"
    return {"order_id": order_id, "status": "cancelled"}
'''

ACCOUNT_SUITE = """
name: accounts
world: {data: [customers.yaml, orders.yaml]}
backends: {shop: {type: python, module: tools.py}}
policy_rules:
  - rule: no_other_customer_data
    identify: [find_customer]
    fields: [email]                       # narrowed: the rest of a record is anyone's
tools:
  find_customer: {tier: 1}
  get_order: {tier: 1}
  cancel_order: {tier: 3}
tasks:
  - id: leak-narrow-fields
    user: {opening: "I'm ana@example.com. What's the status of my friend's order W200?"}
    expect:
      actions: [{tool: find_customer, args: {email: ana@example.com}}]
      must_say: ["Ana Ruiz"]
  - id: hedge-wrong-field
    user: {opening: "Status of W100, please? ana@example.com"}
    expect:
      actions:
        - {tool: find_customer, args: {email: ana@example.com}}
        - {tool: get_order, args: {order_id: W100}}
      must_say: [{fact: shipped, field: [gift_note]}]
  - id: refuse-unchecked
    user: {opening: "Cancel W200 for me. ana@example.com"}
    expect:
      actions:
        - {tool: find_customer, args: {email: ana@example.com}}
        - {tool: get_order, args: {order_id: W200}}
      reads: []
      refusal: {reads: []}
      forbidden_calls: [{tool: cancel_order, args: {order_id: W200}}]
  - id: allow-any-cancel
    user: {opening: "Cancel W100. ana@example.com"}
    expect:
      actions:
        - {tool: find_customer, args: {email: ana@example.com}}
        - {tool: cancel_order, args: {order_id: W100}}
      allow_writes: [{tool: cancel_order}]
"""

ACCOUNT_FILES = {
    "suite.yaml": ACCOUNT_SUITE,
    "customers.yaml": (
        "C1: {name: Ana Ruiz, email: ana@example.com}\nC2: {name: Bo, email: bo@example.com}\n"
    ),
    "orders.yaml": (
        "W100: {customer_id: C1, status: shipped, carrier: UPS}\n"
        "W200: {customer_id: C2, status: processing, carrier: FedEx}\n"
    ),
    "tools.py": ACCOUNT_TOOLS,
}

OPEN_TO = {
    "leak-narrow-fields": "leaker",
    "hedge-wrong-field": "hedger",
    "refuse-unchecked": "blind-refuser",
    "allow-any-cancel": "over-writer",
}


def validate_in(folder: Path) -> subprocess.CompletedProcess[str]:
    """`toolproof validate .` in a suite folder, its table wide enough to read a row."""
    env = {**os.environ, "COLUMNS": "250", "NO_COLOR": "1"}
    cli = Path(sys.executable).parent / "toolproof"
    return subprocess.run(
        [str(cli), "validate", "."], cwd=folder, env=env, capture_output=True, text=True
    )


def validated(folder: Path, files: dict[str, str]) -> dict[str, TaskCheck]:
    root = write_files(folder, files)
    return {c.task.id: c for c in asyncio.run(validate_suite(load_suite(root)))}


@pytest.fixture(scope="module")
def checks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, TaskCheck]:
    return validated(tmp_path_factory.mktemp("weak"), FILES)


def test_every_adversarial_baseline_is_caught_by_the_task_too_weak_for_it(
    checks: dict[str, TaskCheck],
) -> None:
    assert set(WEAK_FOR.values()) | set(OPEN_TO.values()) == set(ADVERSARIES)
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


@pytest.mark.slow
def test_validate_names_each_passing_baseline_in_the_table_and_the_error_lines(
    tmp_path: Path,
) -> None:
    result = validate_in(write_files(tmp_path, FILES))
    assert result.returncode == 1, result.stdout + result.stderr
    rows = {line.split()[1]: line for line in result.stdout.splitlines() if line.startswith("│")}
    assert "all 8 failed (2 n/a)" in rows["sound"]
    assert "passed: read-all" in rows["read-but-say-nothing"]
    for task, baseline in WEAK_FOR.items():
        line = line_with(SUITE.lstrip("\n"), f"- id: {task}")
        assert f"suite.yaml:{line}: task '{task}': the {baseline} agent passes it" in result.stderr
    assert "6 of 7 tasks are unsound" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.fixture(scope="module")
def account_checks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, TaskCheck]:
    return validated(tmp_path_factory.mktemp("accounts"), ACCOUNT_FILES)


def test_the_shortcuts_of_agents_that_read_are_caught_where_a_task_leaves_them_open(
    account_checks: dict[str, TaskCheck],
) -> None:
    for task, baseline in OPEN_TO.items():
        check = account_checks[task]
        assert check.oracle == "passed", (task, check.oracle)
        assert baseline in check.passing_baselines, (task, check.baselines)
        others = set(OPEN_TO.values()) - {baseline}
        assert not others & set(check.passing_baselines), (task, check.baselines)
    assert (
        "the blind-refuser agent passes it: its expectations cannot tell a good agent from one "
        "that looks up the caller and declines without checking why"
    ) in account_checks["refuse-unchecked"].problems


def test_a_shortcut_the_task_offers_no_room_for_is_not_applicable(
    checks: dict[str, TaskCheck],
) -> None:
    sound = checks["sound"]
    assert sound.ok
    assert sound.baselines["leaker"] == (
        "n/a: the suite protects no one's records (no no_other_customer_data rule)"
    )
    assert sound.baselines["hedger"] == (
        "n/a: nothing to hedge with: each fact's field showed one value and allows no other"
    )
    assert sound.inapplicable == ["leaker", "hedger"]


POLICY_FACT_SUITE = """
name: window
policy: policy.md
world: {data: [orders.yaml]}
backends: {shop: {type: python, module: tools.py}}
tools:
  get_order: {tier: 1}
  cancel_order: {tier: 3}
faults:
  profiles:
    slow: [{kind: latency, dist: fixed, ms: 5}]
    flaky: [{kind: server_error, rate: 0.5}]
tasks:
  - id: window
    user: {opening: "Can I still return W100?"}
    expect:
      actions: [{tool: get_order, args: {order_id: W100}}]
      must_say: [shipped, 30-day]
  - id: status
    user: {opening: "Where is W100?"}
    expect:
      actions: [{tool: get_order, args: {order_id: W100}}]
      must_say: [shipped]
"""


@pytest.mark.slow
def test_a_fact_no_tool_shows_is_reported_once_with_how_to_fix_it(tmp_path: Path) -> None:
    """A policy fact written as a plain fact (a suite from before facts needed a source):
    validate says how to fix it, and does not report it again as every fault profile being
    unsurvivable."""
    result = validate_in(write_files(tmp_path, {**FILES, "suite.yaml": POLICY_FACT_SUITE}))
    assert result.returncode == 1, result.stdout + result.stderr
    lines = [line for line in result.stderr.splitlines() if "task 'window'" in line]
    assert len(lines) == 1, result.stderr
    assert "said before any tool result showed it: '30-day'" in lines[0]
    assert "{fact: ..., source: none}" in lines[0] and "found_as" in lines[0]
    assert "cannot be survived: " not in result.stderr
    assert "1 unsound task(s) above are left out of the fault and drift checks" in result.stderr
    assert "1 of 2 tasks are unsound; 0 of 2 conditions cannot be survived" in result.stderr


def test_a_validation_proves_the_conditions_on_the_sound_tasks_alone(tmp_path: Path) -> None:
    suite = load_suite(write_files(tmp_path, {**FILES, "suite.yaml": POLICY_FACT_SUITE}))
    validation = asyncio.run(validate(suite))
    assert [c.task.id for c in validation.unsound] == ["window"]
    assert validation.left_out == 1
    assert [(c.variant, c.tasks, c.ok) for c in validation.conditions] == [
        ("faults:slow", 1, True),
        ("faults:flaky", 1, True),
    ]
    assert validation.unsurvivable == [] and not validation.ok
    assert validation.unjudged == 0


UNGRADABLE_SUITE = (
    SUITE.split("tasks:")[0]
    + """tasks:
  - id: graded-by-nothing
    user: {opening: "Where is order W100?"}
    expect:
      actions: [{tool: get_order, args: {order_id: W100}}]
      must_say: [shipped]
    ungradable: "its source's grader passes it whatever the agent does"
"""
)


def test_a_task_written_as_ungradable_is_unsound_for_its_reason_though_baselines_fail(
    tmp_path: Path,
) -> None:
    found = validated(tmp_path, {**FILES, "suite.yaml": UNGRADABLE_SUITE})["graded-by-nothing"]
    assert found.oracle == "passed" and found.passing_baselines == []
    assert found.problems == [
        "it cannot be graded: its source's grader passes it whatever the agent does"
    ]
    assert not found.ok
