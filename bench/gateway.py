"""Gateway overhead per tool call, with faults and schema drift on.

    python bench/gateway.py [--calls 20000]

Compares a tool called directly (the Python function behind it, through its argument check)
with the same call through the gateway: argument parsing, the drift mapping both ways, the
fault draw for every rule of a profile, the transcript record. The profile's rules all draw
on every call but fire rarely, and inject no sleep, so the time measured is the harness's own.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import textwrap
import time
from pathlib import Path

from toolproof.gateway.core import Gateway
from toolproof.runner.variants import Variant, VariantSetup
from toolproof.suite import load_suite
from toolproof.tools.base import ToolContext
from toolproof.transcript import Transcript
from toolproof.world import World

SUITE = """
name: gateway-bench
world: {data: [orders.json]}
backends: {b: {type: python, module: tools.py}}
tools:
  get_order: {tier: 1}
  refresh_token: {tier: 3}
faults:
  refresh_tool: refresh_token
  profiles:
    production:
      - {kind: latency, ms: 0}
      - {kind: rate_limit, rate: 0.001, retry_after_s: 0}
      - {kind: server_error, rate: 0.001}
      - {kind: timeout, rate: 0.001, after_s: 0}
      - {kind: malformed_json, rate: 0.001}
drift:
  v2:
    - {op: rename_tool, tool: get_order, to: fetch_order}
    - {op: rename_param, tool: fetch_order, param: order_id, to: id}
    - {op: rename_field, tool: get_order, field: status, to: state}
tasks:
  - id: t
    user: {opening: hi}
    expect: {must_say: [x]}
"""

TOOLS = '''
from toolproof.tools import ToolError, tool


@tool
def get_order(world, order_id: str) -> dict:
    """Look up an order.

    Args:
        order_id: The order id.
    """
    if order_id not in world["orders"]:
        raise ToolError("no such order", kind="not_found")
    return world["orders"][order_id]


@tool
def refresh_token() -> dict:
    """Get a fresh access token."""
    return {"token": "new"}
'''


async def measure(calls: int, root: Path) -> tuple[float, float, float]:
    suite = load_suite(root)
    task = suite.tasks[0]
    binding = suite.tools["get_order"]
    world = World(suite.start_state(task))
    context = ToolContext(world=world, seed=1)

    clock = time.perf_counter()
    for _ in range(calls):
        await binding.tool.call({"order_id": "W1"}, context)
    direct = (time.perf_counter() - clock) / calls

    plain = Gateway(suite.tools, context, Transcript())
    clock = time.perf_counter()
    for _ in range(calls):
        await plain.call("get_order", {"order_id": "W1"})
    clean = (time.perf_counter() - clock) / calls

    setup = VariantSetup(suite, Variant(faults="production", drift="v2"), time_scale=1.0)
    gateway = Gateway(suite.tools, context, Transcript(), setup.conditions(task, seed=1))
    clock = time.perf_counter()
    for _ in range(calls):
        await gateway.call("fetch_order", '{"id": "W1"}')
    conditions = (time.perf_counter() - clock) / calls
    return direct, clean, conditions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "suite.yaml").write_text(textwrap.dedent(SUITE))
        (root / "tools.py").write_text(TOOLS)
        (root / "orders.json").write_text('{"W1": {"status": "shipped", "total": 12.5}}')
        runs = [asyncio.run(measure(args.calls, root)) for _ in range(args.repeats)]
    direct, clean, conditions = (statistics.median(r[i] for r in runs) for i in range(3))
    print(f"{args.calls} calls x {args.repeats} repeats (medians)")
    print(f"tool called directly:                 {direct * 1e6:6.1f} us per call")
    added = (clean - direct) * 1e6
    print(f"through the gateway, clean:           {clean * 1e6:6.1f} us  (+{added:.1f} us)")
    print(
        f"through the gateway, faults + drift:  {conditions * 1e6:6.1f} us  "
        f"(+{(conditions - direct) * 1e6:.1f} us)"
    )


if __name__ == "__main__":
    main()
