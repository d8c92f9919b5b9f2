"""Helpers shared by the tests: a small real suite, written to a temporary folder."""

from __future__ import annotations

import shutil
import signal
import subprocess
import textwrap
import time
from collections.abc import Callable, Mapping
from pathlib import Path

MINI_TOOLS = '''
from toolproof.tools import ToolError, tool
from toolproof.world import World


@tool
def get_order(world: World, order_id: str) -> dict:
    """Look up an order.

    Args:
        order_id: The order id.
    """
    if order_id not in world["orders"]:
        raise ToolError(f"no order {order_id}", kind="not_found")
    return world["orders"][order_id]


@tool(write=True)
def cancel_order(world: World, order_id: str) -> dict:
    """Cancel an order that has not shipped.

    Args:
        order_id: The order id.
    """
    order = world["orders"][order_id]
    if order["status"] != "pending":
        raise ToolError(f"order {order_id} is {order['status']}", kind="invalid_state")
    order["status"] = "cancelled"
    return order
'''

MINI_SUITE = """
name: mini
version: "2"
policy: policy.md
policy_rules: [confirm_before_write]
world:
  data: [orders.yaml]
backends:
  shop: {type: python, module: tools.py}
tools:
  get_order: {tier: 1, weight: 0.7}
  cancel_order: {tier: 3, weight: 0.3}
tasks:
  - id: cancel
    tags: [cancel]
    user:
      opening: "Please call off order A"
      replies:
        - {when: asks_confirmation, say: "Yes, go ahead."}
    expect:
      actions:
        - {tool: get_order, args: {order_id: A}}
        - {tool: cancel_order, args: {order_id: A}}
      must_say: ["cancelled"]
  - id: status
    tags: [lookup]
    user: {opening: "Where is order B?"}
    expect:
      actions: [{tool: get_order, args: {order_id: B}}]
      calls: [{tool: get_order, args: {order_id: B}}]
      must_say: [shipped]
defaults: {trials: 3, k: [1, 3], concurrency: 4}
"""

MINI_FILES = {
    "suite.yaml": MINI_SUITE,
    "orders.yaml": "A: {status: pending}\nB: {status: shipped}\n",
    "policy.md": "You are a support agent. Confirm before any change.\n",
    "tools.py": MINI_TOOLS,
}


def write_files(root: Path, files: dict[str, str]) -> Path:
    """Write a folder of text files (dedented) and return it."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


SPEC_FIXTURE = Path(__file__).parent / "spec" / "fixtures" / "mini"
SOUND = (SPEC_FIXTURE / "suite.yaml").read_text(encoding="utf-8")


def make_suite(root: Path, files: Mapping[str, str | None] | None = None) -> Path:
    """The mini suite of spec/fixtures in `root`, with `files` (name -> text) written over it;
    None deletes."""
    root.mkdir(parents=True, exist_ok=True)
    for source in SPEC_FIXTURE.iterdir():
        if source.is_file():
            shutil.copy(source, root / source.name)
    for name, text in (files or {}).items():
        path = root / name
        if text is None:
            path.unlink()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    return root


def edit(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, f"{old!r} is not in the text exactly once"
    return text.replace(old, new)


def line_with(text: str, needle: str) -> int:
    """The 1-based line of the one line of `text` that contains `needle`."""
    found = [n for n, line in enumerate(text.splitlines(), start=1) if needle in line]
    assert len(found) == 1, f"{needle!r} is on lines {found}"
    return found[0]


def kill_part_way(command: list[str], stored: Callable[[], int], at: int = 10) -> None:
    """Start `command` and SIGKILL it once `stored()` (its trials in the store) reaches `at`,
    or after two minutes: a run killed in the middle, for resume tests."""
    victim = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and stored() < at:
        time.sleep(0.05)
    victim.send_signal(signal.SIGKILL)
    victim.wait()
