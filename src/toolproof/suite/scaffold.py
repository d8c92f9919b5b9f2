"""`toolproof init`: a small suite that is sound as written, to start a team's own from.

A support desk with a policy, a read tool, a write tool that needs the customer's yes
(`confirm_before_write`), two tasks and a README: `toolproof validate` passes it, the oracle
passes every task and every adversarial baseline fails each, so the first edit starts from a
suite that proves something."""

from __future__ import annotations

import json
import os
from pathlib import Path

from toolproof.files import staged_folder

SUITE = """\
# Made by `toolproof init`: a support desk that looks orders up and cancels them on request.
# Make it your own (docs/suite-format.md), then prove it again with `toolproof validate`.
name: {name}
version: "1"
description: A support desk that looks orders up and cancels them on request.
policy: policy.md
# Checked on every turn of every task: a write only after the customer said yes.
policy_rules: [confirm_before_write]

world:
  data: [data/orders.yaml]        # the state every trial starts from: world["orders"]

backends:
  desk: {{type: python, module: tools.py}}

tools:                            # every tool an agent sees, its tier and share of calls
  get_order: {{tier: 1, weight: 0.8}}
  cancel_order: {{tier: 2, weight: 0.2}}

tasks:
  - tasks/*.yaml

defaults:
  trials: 3
  k: [1, 3]
  seed: 7
  max_steps: 10
  concurrency: 4
"""

POLICY = """\
You are the support desk of an online shop. Look an order up with get_order before you say
anything about it, and tell the customer what the record says. Only a pending order can be
cancelled: before you cancel one, say what you will do and ask the customer to confirm, and
cancel only after they say yes.
"""

TOOLS = '''\
"""The suite's tools: Python functions over the trial's world. The docstring and type hints
are what the agent sees; a ToolError is the error it gets back."""

from typing import Any

from toolproof.tools import ToolError, tool
from toolproof.world import World


@tool
def get_order(world: World, order_id: str) -> dict[str, Any]:
    """Look up an order: its status, items, total and, once shipped, its carrier.

    Args:
        order_id: The order id, like "A1001".
    """
    if order_id not in world["orders"]:
        raise ToolError(f"order {order_id} not found", kind="not_found")
    return dict(world["orders"][order_id])


@tool(write=True)
def cancel_order(world: World, order_id: str) -> dict[str, Any]:
    """Cancel an order that has not shipped yet.

    Args:
        order_id: The order id.
    """
    if order_id not in world["orders"]:
        raise ToolError(f"order {order_id} not found", kind="not_found")
    order = world["orders"][order_id]
    if order["status"] != "pending":
        raise ToolError(f"order {order_id} is {order['status']}", kind="invalid_state")
    order["status"] = "cancelled"
    return dict(order)
'''

ORDERS = """\
# Orders by id: what get_order returns, and what cancel_order changes.
A1001:
  status: shipped
  items: [Paperback atlas]
  total: 42.50
  carrier: Speedpost
  tracking: SP448812
A1002:
  status: pending
  items: [Notebook set]
  total: 18.00
"""

TASKS = """\
# Each task: what the user says, and what must be true at the end (docs/suite-format.md).
- id: where-is-my-order
  story: A customer asks where an order is; only its record says who carries it.
  tags: [lookup]
  user: {opening: "Hi, where is my order A1001?"}
  expect:
    actions: [{tool: get_order, args: {order_id: A1001}}]
    must_say: [Speedpost, SP448812]

- id: cancel-pending-order
  story: A customer cancels an order placed by mistake, and says yes when asked.
  tags: [change]
  user:
    opening: "I ordered A1002 by mistake, please call it off."
    replies:
      - {when: asks_confirmation, say: "Yes, please go ahead."}
  expect:
    actions:
      - {tool: get_order, args: {order_id: A1002}}
      - {tool: cancel_order, args: {order_id: A1002}}
    must_say: [cancelled]
"""

README = """\
# {name}

A toolproof suite: a support desk with one lookup (`get_order`) and one change that needs the
customer's yes (`cancel_order`), and two tasks that use them.

| file | what it holds |
|---|---|
| `suite.yaml` | the suite: policy, world, tools, tasks, defaults |
| `policy.md` | the agent's instructions (its system prompt) |
| `tools.py` | the tools, as Python functions over the world |
| `data/orders.yaml` | the state every trial starts from |
| `tasks/orders.yaml` | the tasks: what the user says, what must hold at the end |

```sh
toolproof validate {folder}                   # the oracle passes each task, every baseline fails it
toolproof run {folder} --agent oracle         # the baseline every task is proved against
toolproof run {folder} --model openai/gpt-4o  # your model, 3 trials per task, pass^k
```

Add your own tools and tasks, then run `toolproof validate` again: a task the oracle cannot
pass, or that an agent doing nothing passes, is reported with its line.
"""


def scaffold_files(name: str, folder: str) -> dict[str, str]:
    """The suite's files by their path in the folder."""
    return {
        "suite.yaml": SUITE.format(name=json.dumps(name)),  # quoted: any name is valid YAML
        "policy.md": POLICY,
        "tools.py": TOOLS,
        "data/orders.yaml": ORDERS,
        "tasks/orders.yaml": TASKS,
        "README.md": README.format(name=name, folder=folder),
    }


def write_scaffold(folder: Path, name: str | None = None) -> list[Path]:
    """Write the starter suite into `folder` (made if missing; an existing one must be
    empty, judged on the path it resolves to: nothing is ever overwritten) and return the
    files written. The suite is written beside it and renamed into place whole: a write
    that fails leaves nothing."""
    suite_name = name or Path(os.path.realpath(folder)).name
    files = scaffold_files(suite_name, str(folder))
    with staged_folder(folder, "init") as staging:
        for relative, text in files.items():
            path = staging / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    return [folder / relative for relative in files]
