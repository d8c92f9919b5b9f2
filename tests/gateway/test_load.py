"""Shared load: the token bucket and queue every trial of a load level competes for, through
the capacity model itself, the gateway, and a whole run at two load levels.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from support import MINI_FILES, MINI_SUITE, write_files

from toolproof.gateway import Gateway
from toolproof.gateway.load import SharedCapacity
from toolproof.runner.run import RunRequest, run_suite
from toolproof.runner.variants import Variant, VariantSetup
from toolproof.spec.conditions import Capacity
from toolproof.store import Store
from toolproof.suite import Suite, load_suite
from toolproof.tools.base import ToolContext, ToolResult
from toolproof.transcript import Transcript
from toolproof.world import World


def capacity(**fields: Any) -> Capacity:
    return Capacity.model_validate(fields)


def admitted(result: tuple[float, ToolResult | None]) -> bool:
    return result[1] is None


# ---------------------------------------------------------------- the token bucket


def test_a_burst_is_admitted_then_429_with_the_capacitys_retry_after() -> None:
    load = SharedCapacity({"get_order": capacity(rate_per_s=1, burst=3, retry_after_s=2.5)})
    assert [admitted(load.admit("get_order")) for _ in range(3)] == [True, True, True]
    delay, rejected = load.admit("get_order")
    assert delay == 0.0 and rejected is not None
    assert rejected.is_error and rejected.error_kind == "rate_limit"
    assert rejected.content == {
        "error": {
            "status": 429,
            "message": "Too Many Requests: shared rate limit reached",
            "retry_after_s": 2.5,
        }
    }
    state = load.tools["get_order"]
    assert (state.calls, state.rejected, state.in_flight) == (4, 1, 3)


def test_the_bucket_refills_at_its_rate_compressed_by_the_time_scale() -> None:
    fast = SharedCapacity({"*": capacity(rate_per_s=2, burst=1)}, time_scale=0.01)
    slow = SharedCapacity({"*": capacity(rate_per_s=2, burst=1)}, time_scale=1.0)
    for load in (fast, slow):
        assert admitted(load.admit("get_order"))
        assert not admitted(load.admit("get_order"))
    assert fast.tools["get_order"].bucket.rate == pytest.approx(200.0)  # 2 per 0.01 s
    assert slow.tools["get_order"].bucket.rate == pytest.approx(2.0)
    time.sleep(0.03)  # 6 tokens at 200/s (capped at the burst); 0.06 at 2/s
    assert admitted(fast.admit("get_order"))
    assert not admitted(fast.admit("get_order"))  # the burst caps the refill
    assert not admitted(slow.admit("get_order"))


def test_an_empty_bucket_admits_again_once_refilled() -> None:
    load = SharedCapacity({"*": capacity(rate_per_s=1, burst=2)}, time_scale=0.02)
    assert [admitted(load.admit("t")) for _ in range(3)] == [True, True, False]
    time.sleep(0.05)  # one token every 0.02 s
    assert admitted(load.admit("t"))


def test_queueing_latency_grows_with_calls_in_flight_beyond_the_servers() -> None:
    load = SharedCapacity({"*": capacity(latency_ms=100, servers=2)}, time_scale=0.5)
    # 100 ms x max(1, in_flight / 2) x 0.5
    delays = [load.admit("get_order")[0] for _ in range(5)]
    assert delays == pytest.approx([0.05, 0.05, 0.075, 0.1, 0.125])
    state = load.tools["get_order"]
    assert (state.in_flight, state.peak) == (5, 5)
    load.release("get_order")
    load.release("get_order")
    assert state.in_flight == 3
    assert load.admit("get_order")[0] == pytest.approx(0.1)  # 4 in flight
    assert (state.in_flight, state.peak, state.rejected) == (4, 5, 0)


def test_a_rejected_call_is_not_in_flight() -> None:
    load = SharedCapacity({"*": capacity(rate_per_s=1, burst=1, latency_ms=10, servers=1)})
    assert admitted(load.admit("get_order"))
    assert not admitted(load.admit("get_order"))
    assert load.tools["get_order"].in_flight == 1
    load.release("get_order")
    assert load.tools["get_order"].in_flight == 0


def test_tools_without_capacity_and_no_star_are_unlimited() -> None:
    load = SharedCapacity({"cancel_order": capacity(rate_per_s=1, burst=1, latency_ms=50)})
    assert all(load.admit("get_order") == (0.0, None) for _ in range(500))
    assert load.of("get_order") is None and "get_order" not in load.tools
    load.release("get_order")  # nothing to release, and no error
    assert admitted(load.admit("cancel_order"))
    assert not admitted(load.admit("cancel_order"))


def test_star_gives_every_other_tool_its_own_bucket() -> None:
    load = SharedCapacity(
        {"*": capacity(rate_per_s=1, burst=1), "get_order": capacity(rate_per_s=1, burst=3)}
    )
    assert [admitted(load.admit("get_order")) for _ in range(4)] == [True, True, True, False]
    assert [admitted(load.admit("cancel_order")) for _ in range(2)] == [True, False]
    assert [admitted(load.admit("list_orders")) for _ in range(2)] == [True, False]


def test_without_a_rate_only_the_queue_applies() -> None:
    load = SharedCapacity({"*": capacity(burst=1, latency_ms=10, servers=1)})
    delays = [load.admit("get_order")[0] for _ in range(50)]
    assert delays[0] == pytest.approx(0.01) and delays[-1] == pytest.approx(0.5)
    assert load.tools["get_order"].rejected == 0


# ---------------------------------------------------------------- through the gateway

LOAD = """
load:
  levels: [1, 5]
  capacity:
    cancel_order: {rate_per_s: 0.001, burst: 2, retry_after_s: 3}
    get_order: {latency_ms: 20, servers: 2}
"""


@pytest.fixture
def loaded(tmp_path: Path) -> Suite:
    return load_suite(
        write_files(tmp_path / "suite", {**MINI_FILES, "suite.yaml": MINI_SUITE + LOAD})
    )


def gateway(setup: VariantSetup, suite: Suite) -> tuple[Gateway, World]:
    task = suite.task("cancel")
    world = World(suite.start_state(task))
    gw = Gateway(suite.tools, ToolContext(world, 1), Transcript(), setup.conditions(task, 1))
    return gw, world


def test_every_trial_of_a_load_level_shares_one_bucket(loaded: Suite) -> None:
    setup = VariantSetup(loaded, Variant(load=5), time_scale=1.0)
    first, first_world = gateway(setup, loaded)
    second, second_world = gateway(setup, loaded)
    assert not asyncio.run(first.call("cancel_order", {"order_id": "A"})).is_error
    assert not asyncio.run(second.call("cancel_order", {"order_id": "A"})).is_error
    assert first_world["orders"]["A"]["status"] == second_world["orders"]["A"]["status"]
    assert second_world["orders"]["A"]["status"] == "cancelled"
    refused = asyncio.run(first.call("cancel_order", {"order_id": "A"}))
    assert refused.error_kind == "rate_limit"
    assert refused.content["error"]["retry_after_s"] == 3
    event = first.transcript.tool_calls()[-1]
    assert event.fault == "load_rate_limit" and event.is_error
    # a fresh trial of another setup (another load level) has its own capacity
    other, _ = gateway(VariantSetup(loaded, Variant(load=1), time_scale=1.0), loaded)
    assert not asyncio.run(other.call("cancel_order", {"order_id": "A"})).is_error


def test_a_refused_write_is_not_executed(loaded: Suite) -> None:
    setup = VariantSetup(loaded, Variant(load=5), time_scale=1.0)
    assert setup.load is not None
    for _ in range(2):
        assert admitted(setup.load.admit("cancel_order"))
    gw, world = gateway(setup, loaded)
    assert asyncio.run(gw.call("cancel_order", {"order_id": "A"})).error_kind == "rate_limit"
    assert world["orders"]["A"]["status"] == "pending" and world.diff() == []


def test_concurrent_calls_queue_and_every_slot_is_released(loaded: Suite) -> None:
    setup = VariantSetup(loaded, Variant(load=5), time_scale=1.0)
    gw, _ = gateway(setup, loaded)

    async def six() -> list[ToolResult]:
        return await asyncio.gather(*(gw.call("get_order", {"order_id": "B"}) for _ in range(6)))

    clock = time.perf_counter()
    results = asyncio.run(six())
    elapsed = time.perf_counter() - clock
    assert all(r.content == {"status": "shipped"} for r in results)
    assert setup.load is not None
    state = setup.load.tools["get_order"]
    assert (state.peak, state.in_flight, state.calls) == (6, 0, 6)
    # 20 ms x max(1, n / 2) for n = 1..6 calls in flight
    expected = [0.02, 0.02, 0.03, 0.04, 0.05, 0.06]
    latencies = sorted(c.latency_s for c in gw.transcript.tool_calls())
    assert all(got >= want - 0.002 for got, want in zip(latencies, expected, strict=True))
    assert elapsed >= 0.058
    assert all(c.fault is None for c in gw.transcript.tool_calls())


def test_a_call_that_fails_still_releases_its_slot(loaded: Suite) -> None:
    setup = VariantSetup(loaded, Variant(load=5), time_scale=0.01)
    gw, _ = gateway(setup, loaded)
    assert asyncio.run(gw.call("get_order", {"order_id": "Z"})).error_kind == "not_found"
    assert asyncio.run(gw.call("get_order", {"order_id": 5})).error_kind == "invalid_arguments"
    assert setup.load is not None
    assert setup.load.tools["get_order"].in_flight == 0


# ---------------------------------------------------------------- a run at two load levels

TIGHT = """
load:
  levels: [1, 20]
  capacity:
    "*": {rate_per_s: 10, burst: 2, latency_ms: 100, servers: 2, retry_after_s: 1}
"""


def test_tight_capacity_gives_more_tool_errors_at_20_concurrent_trials_than_at_1(
    tmp_path: Path,
) -> None:
    suite = load_suite(
        write_files(tmp_path / "suite", {**MINI_FILES, "suite.yaml": MINI_SUITE + TIGHT})
    )
    store = Store(str(tmp_path / "runs.db"))
    report = asyncio.run(
        run_suite(suite, RunRequest(load=[1, 20], time_scale=0.01, trials=10), store)
    )
    variants = report.summary.models[0].variants
    assert set(variants) == {"load:1", "load:20"}
    one, twenty = variants["load:1"].load, variants["load:20"].load
    assert one is not None and twenty is not None
    assert one.trials == twenty.trials == 20
    assert twenty.tool_errors > one.tool_errors
    assert twenty.tool_error_rate is not None and one.tool_error_rate is not None
    assert twenty.tool_error_rate > one.tool_error_rate
    low, high = variants["load:20"].pass_rate, variants["load:1"].pass_rate
    assert low is not None and low < high == 1.0
    rows = [result for _, result in store.results(report.run_id)]
    faults = {
        call.fault
        for result in rows
        if result.variant == "load:20"
        for call in result.transcript.tool_calls()
    }
    assert "load_rate_limit" in faults
