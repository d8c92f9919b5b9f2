"""Fault injection through the gateway: what the agent sees for every fault kind, and seeds.

Every test runs real tools of the mini suite (with a list tool and a refresh tool added)
under a fault profile written into its suite.yaml; waits are compressed by a small time scale.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from support import MINI_FILES, MINI_SUITE, MINI_TOOLS, write_files

from toolproof.agents.baselines import RetryingOracle
from toolproof.gateway import Gateway
from toolproof.gateway.faults import EBCDIC_TEXT, FaultInjector
from toolproof.runner import trial as trials
from toolproof.runner.gold import replay_gold
from toolproof.runner.plan import PlannedTrial
from toolproof.runner.variants import Variant, VariantSetup
from toolproof.spec.conditions import FaultRule
from toolproof.suite import Suite, load_suite
from toolproof.tools.base import ToolContext, ToolResult
from toolproof.transcript import Transcript
from toolproof.world import World

EXTRA_TOOLS = '''

@tool
def list_orders(world: World, status: str | None = None) -> dict:
    """List the orders, optionally only those with one status.

    Args:
        status: Only orders with this status.
    """
    rows = [{"id": key, **dict(value)} for key, value in sorted(world["orders"].items())]
    return {"orders": [row for row in rows if status in (None, row["status"])]}


@tool
def refresh_token(world: World) -> dict:
    """Get a fresh access token."""
    return {"token": "fresh"}
'''

ORDERS = "A: {status: pending}\nB: {status: shipped}\n" + "".join(
    f"{key}: {{status: pending}}\n" for key in "CDEFGHIJKL"
)

TOOL_ENTRY = "  cancel_order: {tier: 3, weight: 0.3}\n"


def suite_with(root: Path, conditions: str) -> Suite:
    """The mini suite with twelve orders, list_orders and refresh_token, and `conditions`
    (top-level suite.yaml sections) appended."""
    assert TOOL_ENTRY in MINI_SUITE
    text = MINI_SUITE.replace(
        TOOL_ENTRY, TOOL_ENTRY + "  list_orders: {tier: 1}\n  refresh_token: {tier: 1}\n"
    )
    files = {
        **MINI_FILES,
        "suite.yaml": text + conditions,
        "tools.py": MINI_TOOLS + EXTRA_TOOLS,
        "orders.yaml": ORDERS,
    }
    return load_suite(write_files(root, files))


def profile(rules: str, refresh: bool = True) -> str:
    """A `faults:` section with one profile 'p' of these rules (YAML flow mappings)."""
    lines = "".join(f"    - {rule}\n" for rule in rules.strip().splitlines())
    head = "  refresh_tool: refresh_token\n" if refresh else ""
    return f"faults:\n{head}  profiles:\n    p:\n{lines}"


class Trial:
    """A gateway over a fresh world of task 'cancel', as one trial has it."""

    def __init__(self, suite: Suite, key: str, seed: int = 1, time_scale: float = 0.001):
        task = suite.task("cancel")
        setup = VariantSetup(suite, Variant.parse(key), time_scale)
        self.world = World(suite.start_state(task))
        self.transcript = Transcript()
        self.gateway = Gateway(
            suite.tools,
            ToolContext(self.world, seed),
            self.transcript,
            setup.conditions(task, seed),
        )

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> ToolResult:
        return asyncio.run(self.gateway.call(name, arguments or {}))

    def status(self, order: str) -> str:
        return str(self.world["orders"][order]["status"])

    def faults(self) -> list[str | None]:
        return [c.fault for c in self.transcript.tool_calls()]


def trial(tmp_path: Path, rules: str, **kwargs: Any) -> Trial:
    return Trial(suite_with(tmp_path / "suite", profile(rules)), "faults:p", **kwargs)


# ---------------------------------------------------------------- faults that stop the call


def test_rate_limit_is_a_429_with_retry_after_and_the_write_is_not_executed(
    tmp_path: Path,
) -> None:
    t = trial(tmp_path, "{kind: rate_limit, tools: [cancel_order], retry_after_s: 2.5}")
    result = t.call("cancel_order", {"order_id": "A"})
    assert result.is_error and result.error_kind == "rate_limit"
    assert result.content == {
        "error": {"status": 429, "message": "Too Many Requests", "retry_after_s": 2.5}
    }
    assert t.status("A") == "pending"
    assert t.world.diff() == []
    assert t.faults() == ["rate_limit"]
    event = t.transcript.tool_calls()[0]
    assert event.is_error and event.error_kind == "rate_limit" and event.result == result.content


@pytest.mark.parametrize(
    ("rule", "status", "kind", "message"),
    [
        ("{kind: forbidden}", 403, "forbidden", "Forbidden"),
        ("{kind: not_found}", 404, "not_found", "Not Found"),
        ("{kind: server_error}", 503, "server_error", "Service Unavailable"),
        ("{kind: server_error, status: 500}", 500, "server_error", "Internal Server Error"),
        ("{kind: forbidden, message: 'scope orders:write missing'}", 403, "forbidden", None),
    ],
)
def test_http_errors_come_back_with_their_status_and_the_call_is_not_executed(
    tmp_path: Path, rule: str, status: int, kind: str, message: str | None
) -> None:
    t = trial(tmp_path, rule)
    result = t.call("cancel_order", {"order_id": "A"})
    assert result.is_error and result.error_kind == kind
    assert result.content["error"]["status"] == status
    assert result.content["error"]["message"] == (message or "scope orders:write missing")
    assert t.status("A") == "pending" and t.world.diff() == []
    assert t.faults() == [kind]


def test_token_expired_sticks_to_the_rules_tools_until_the_refresh_tool_succeeds(
    tmp_path: Path,
) -> None:
    t = trial(
        tmp_path,
        """
        {kind: token_expired, tools: [get_order, cancel_order], max_per_trial: 1}
        {kind: server_error, tools: [refresh_token], max_per_trial: 1}
        """,
    )
    unauthorized = {"error": {"status": 401, "message": "Unauthorized: access token expired"}}
    first = t.call("get_order", {"order_id": "A"})
    assert first.error_kind == "token_expired" and first.content == unauthorized
    # every later call of the rule's tools is refused too, and nothing is executed
    assert t.call("cancel_order", {"order_id": "A"}).content == unauthorized
    assert t.call("get_order", {"order_id": "B"}).content == unauthorized
    assert t.status("A") == "pending"
    # a tool the rule does not name is not affected
    assert not t.call("list_orders").is_error
    # a refresh that fails cures nothing
    assert t.call("refresh_token").error_kind == "server_error"
    assert t.call("get_order", {"order_id": "A"}).content == unauthorized
    # a successful refresh does
    assert t.call("refresh_token").content == {"token": "fresh"}
    assert t.call("get_order", {"order_id": "A"}).content == {"status": "pending"}
    assert t.call("cancel_order", {"order_id": "A"}).content == {"status": "cancelled"}
    assert t.status("A") == "cancelled"
    assert t.faults() == [
        "token_expired",
        "token_expired",
        "token_expired",
        None,
        "server_error",
        "token_expired",
        None,
        None,
        None,
    ]


def test_token_expired_on_every_tool_never_hits_the_refresh_tool(tmp_path: Path) -> None:
    t = trial(tmp_path, "{kind: token_expired, max_per_trial: 1}")
    assert t.call("list_orders").error_kind == "token_expired"
    assert t.call("refresh_token").content == {"token": "fresh"}
    assert not t.call("list_orders").is_error


def test_timeout_is_a_504_after_the_scaled_wait(tmp_path: Path) -> None:
    t = trial(tmp_path, "{kind: timeout, tools: [cancel_order], after_s: 20}", time_scale=0.005)
    clock = time.perf_counter()
    result = t.call("cancel_order", {"order_id": "A"})
    elapsed = time.perf_counter() - clock
    assert 0.09 <= elapsed < 2.0  # 20 s x 0.005
    assert result.error_kind == "timeout"
    assert result.content == {"error": {"status": 504, "message": "Gateway Timeout after 20 s"}}
    assert t.status("A") == "pending"
    event = t.transcript.tool_calls()[0]
    assert event.fault == "timeout" and event.latency_s >= 0.09


def test_ebcdic_error_text_decodes_from_cp037_to_the_mainframe_message(tmp_path: Path) -> None:
    t = trial(tmp_path, "{kind: ebcdic, tools: [cancel_order]}")
    result = t.call("cancel_order", {"order_id": "A"})
    assert result.is_error and result.error_kind == "ebcdic"
    text = result.content["error"]
    assert isinstance(text, str) and text != EBCDIC_TEXT
    assert "TRANSACTION" not in text
    assert text.encode("latin-1").decode("cp037") == EBCDIC_TEXT
    assert EBCDIC_TEXT.startswith("IMS0105E")
    assert t.status("A") == "pending" and t.faults() == ["ebcdic"]


def test_ebcdic_carries_the_rules_own_message(tmp_path: Path) -> None:
    t = trial(tmp_path, "{kind: ebcdic, message: 'DFHAC2206 TASK FAILED'}")
    text = t.call("get_order", {"order_id": "A"}).content["error"]
    assert text.encode("latin-1").decode("cp037") == "DFHAC2206 TASK FAILED"


# ---------------------------------------------------------------- executed, answer damaged


def _json_error(text: str) -> None:
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)


def test_malformed_json_breaks_a_reads_answer_and_never_touches_a_write(tmp_path: Path) -> None:
    t = trial(tmp_path, "{kind: malformed_json}")
    result = t.call("get_order", {"order_id": "B"})
    assert result.is_error and result.error_kind == "malformed_response"
    assert isinstance(result.content, str)
    _json_error(result.content)
    whole = orjson.dumps({"status": "shipped"}).decode()
    assert result.content.startswith(whole[: len(whole) // 2])
    written = t.call("cancel_order", {"order_id": "A"})
    assert written.content == {"status": "cancelled"} and not written.is_error
    assert t.status("A") == "cancelled"
    assert t.faults() == ["malformed_json", None]


def test_truncated_cuts_a_reads_answer_short_and_never_touches_a_write(tmp_path: Path) -> None:
    t = trial(tmp_path, "{kind: truncated}")
    full = t.gateway.bindings["list_orders"].tool
    whole = orjson.dumps(
        asyncio.run(full.call({}, ToolContext(World(t.world.snapshot()), 0))).content
    ).decode()
    result = t.call("list_orders")
    assert result.is_error and result.error_kind == "truncated_response"
    assert isinstance(result.content, str)
    _json_error(result.content)
    assert whole.startswith(result.content)
    assert 0.3 * len(whole) - 1 <= len(result.content) <= 0.8 * len(whole)
    assert t.call("cancel_order", {"order_id": "A"}).content == {"status": "cancelled"}
    assert t.faults() == ["truncated", None]


def test_partial_returns_page_one_and_the_schema_gains_a_page_argument(tmp_path: Path) -> None:
    t = trial(tmp_path, "{kind: partial, page_size: 5}")
    schemas = {s.name: s.parameters for s in t.gateway.schemas}
    assert schemas["list_orders"]["properties"]["page"]["type"] == "integer"
    assert "page" in schemas["get_order"]["properties"]  # reads may be paged
    assert "page" not in schemas["cancel_order"]["properties"]  # a write never is
    first = t.call("list_orders").content
    assert [o["id"] for o in first["orders"]] == ["A", "B", "C", "D", "E"]
    assert first["pagination"] == {"page": 1, "pages": 3, "next": "call again with page=2"}
    second = t.call("list_orders", {"page": 2}).content
    assert [o["id"] for o in second["orders"]] == ["F", "G", "H", "I", "J"]
    assert second["pagination"] == {"page": 2, "pages": 3, "next": "call again with page=3"}
    last = t.call("list_orders", {"page": 3}).content
    assert [o["id"] for o in last["orders"]] == ["K", "L"]
    assert last["pagination"] == {"page": 3, "pages": 3}
    assert t.faults() == ["partial"] * 3
    # the page argument never reaches the tool
    assert t.call("list_orders", {"status": "shipped", "page": 1}).content["orders"] == [
        {"id": "B", "status": "shipped"}
    ]


def test_partial_pages_can_be_reached_under_drift(tmp_path: Path) -> None:
    conditions = profile("{kind: partial, tools: [list_orders], page_size: 5}")
    conditions += "drift:\n  v:\n    - {op: rename_tool, tool: list_orders, to: all_orders}\n"
    t = Trial(suite_with(tmp_path / "suite", conditions), "faults:p+drift:v")
    [schema] = [s.parameters for s in t.gateway.schemas if s.name == "all_orders"]
    assert "page" in schema["properties"]
    first = t.call("all_orders").content
    assert first["pagination"]["next"] == "call again with page=2"
    second = t.call("all_orders", {"page": 2})
    assert not second.is_error, second.content
    assert [o["id"] for o in second.content["orders"]] == ["F", "G", "H", "I", "J"]


def test_stale_reads_return_the_trials_start_state_after_a_write(tmp_path: Path) -> None:
    t = trial(tmp_path, "{kind: stale, tools: [get_order]}")
    assert t.call("cancel_order", {"order_id": "A"}).content == {"status": "cancelled"}
    assert t.call("get_order", {"order_id": "A"}).content == {"status": "pending"}
    assert t.status("A") == "cancelled"
    assert t.faults() == [None, "stale"]


# ---------------------------------------------------------------- latency


def rule(**fields: Any) -> FaultRule:
    return FaultRule.model_validate(fields)


def injector(rules: list[FaultRule], seed: int = 7) -> FaultInjector:
    return FaultInjector(
        rules=rules,
        tiers={"get_order": 1, "cancel_order": 3, "list_orders": 1, "refresh_token": 1},
        writes=frozenset({"cancel_order"}),
        refresh_tool="refresh_token",
        seed=seed,
    )


def test_fixed_and_uniform_latency() -> None:
    fixed = injector([rule(kind="latency", ms=250)])
    assert {fixed.decide("get_order").delay_s for _ in range(50)} == {0.25}
    uniform = injector([rule(kind="latency", dist="uniform", ms=100, max_ms=300)])
    delays = [uniform.decide("get_order").delay_s for _ in range(2000)]
    assert all(0.1 <= d <= 0.3 for d in delays)
    assert min(delays) < 0.11 and max(delays) > 0.29
    assert statistics.mean(delays) == pytest.approx(0.2, abs=0.01)


def test_lognormal_latency_has_the_configured_median_and_p95() -> None:
    faults = injector([rule(kind="latency", dist="lognormal", median_ms=120, p95_ms=900)])
    delays = sorted(faults.decide("get_order").delay_s for _ in range(4000))
    assert all(d > 0 for d in delays)
    assert statistics.median(delays) == pytest.approx(0.120, rel=0.1)
    assert delays[int(0.95 * len(delays))] == pytest.approx(0.900, rel=0.15)


def test_latency_delays_the_call_and_is_recorded_as_a_fault(tmp_path: Path) -> None:
    t = trial(tmp_path, "{kind: latency, ms: 200, tools: [get_order]}", time_scale=0.25)
    clock = time.perf_counter()
    result = t.call("get_order", {"order_id": "B"})
    assert time.perf_counter() - clock >= 0.045  # 200 ms x 0.25
    assert result.content == {"status": "shipped"}
    assert t.call("list_orders").content["orders"][0] == {"id": "A", "status": "pending"}
    assert t.faults() == ["latency", None]
    assert t.transcript.tool_calls()[0].latency_s >= 0.045


# ---------------------------------------------------------------- rates, caps, seeds


def test_rate_is_the_chance_a_matching_call_is_hit() -> None:
    faults = injector([rule(kind="server_error", rate=0.3)])
    hits = sum(faults.decide("get_order").kind == "server_error" for _ in range(2000))
    assert 0.25 <= hits / 2000 <= 0.35


def test_max_per_trial_caps_the_faults_of_one_trial() -> None:
    faults = injector([rule(kind="server_error", rate=0.5, max_per_trial=3)])
    kinds = [faults.decide("get_order").kind for _ in range(300)]
    assert kinds.count("server_error") == 3
    # the cap is per trial: another trial (another injector) is hit again
    always = [rule(kind="server_error", max_per_trial=2)]
    for seed in (8, 9):
        fresh = injector(always, seed)
        assert [fresh.decide("get_order").kind for _ in range(5)] == ["server_error"] * 2 + [
            None
        ] * 3
    capped = injector([rule(kind="latency", ms=10, max_per_trial=4)])
    assert sum(capped.decide("get_order").delay_s > 0 for _ in range(50)) == 4


def test_tools_tiers_and_writes_decide_which_calls_a_rule_matches() -> None:
    faults = injector(
        [
            rule(kind="rate_limit", tiers=[3]),
            rule(kind="not_found", tools=["list_orders"]),
            rule(kind="stale"),
        ]
    )
    assert faults.decide("cancel_order").kind == "rate_limit"
    assert faults.decide("list_orders").kind == "not_found"
    assert faults.decide("get_order").kind == "stale"
    writes_only = injector([rule(kind="malformed_json"), rule(kind="partial")])
    assert writes_only.decide("cancel_order").kind is None
    assert writes_only.paginated("cancel_order") is None
    assert writes_only.paginated("get_order") is not None


MIXED = [
    rule(kind="latency", dist="lognormal", median_ms=50, p95_ms=400, rate=0.5),
    rule(kind="rate_limit", tiers=[1], rate=0.1),
    rule(kind="server_error", rate=0.2),
    rule(kind="truncated", rate=0.3),
    rule(kind="not_found", tools=["cancel_order"], rate=0.1, max_per_trial=20),
]
TOOLS = ["get_order", "cancel_order", "list_orders"]


def schedule(seed: int) -> list[tuple[str | None, float]]:
    faults = injector(MIXED, seed)
    return [(d.kind, d.delay_s) for d in (faults.decide(TOOLS[i % 3]) for i in range(1000))]


def test_the_same_seed_makes_the_same_fault_schedule() -> None:
    first = schedule(11)
    assert first == schedule(11)
    assert {kind for kind, _ in first} >= {None, "rate_limit", "server_error", "truncated"}
    assert schedule(12) != first


def test_two_trials_with_the_same_seed_have_identical_transcripts(tmp_path: Path) -> None:
    suite = suite_with(
        tmp_path / "suite",
        profile(
            """
            {kind: server_error, rate: 0.5}
            {kind: rate_limit, rate: 0.3, retry_after_s: 0.5}
            {kind: latency, ms: 1, max_ms: 5, dist: uniform, rate: 0.5}
            """
        ),
    )
    setup = VariantSetup(suite, Variant(faults="p"), 0.001)
    task = suite.task("cancel")
    expected = asyncio.run(replay_gold(suite, task)).hash

    def run(seed: int) -> list[tuple[str, str | None, str | None]]:
        result = asyncio.run(
            trials.run_trial(
                trials.Trial(
                    PlannedTrial("cancel", 0, seed, "faults:p"),
                    suite,
                    RetryingOracle,
                    "retrying-oracle",
                    expected,
                    max_steps=30,
                    conditions=setup.conditions(task, seed),
                )
            )
        )
        return [(c.name, c.fault, c.error_kind) for c in result.transcript.tool_calls()]

    runs = {seed: run(seed) for seed in range(1, 7)}
    assert all(run(seed) == calls for seed, calls in runs.items())
    assert any(fault for calls in runs.values() for _, fault, _ in calls)
    assert len({tuple(calls) for calls in runs.values()}) > 1
