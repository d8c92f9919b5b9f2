"""Schema drift through the gateway: every transform as the agent sees it, mapped back to the
suite's own tools; `present()`; grading by the suite's names; bad transforms as suite errors.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from support import MINI_FILES, MINI_SUITE, MINI_TOOLS, write_files

from toolproof.agents.base import AgentFactory
from toolproof.agents.baselines import OracleAgent, RetryingOracle
from toolproof.agents.registry import resolve_agent
from toolproof.errors import SuiteError
from toolproof.gateway import Gateway
from toolproof.gateway.drift import DriftError, DriftLayer
from toolproof.records.trial import TrialResult
from toolproof.runner import trial as trials
from toolproof.runner.gold import replay_gold
from toolproof.runner.plan import PlannedTrial
from toolproof.runner.variants import Variant, VariantSetup
from toolproof.spec.conditions import RenameParam, RenameTool
from toolproof.suite import Suite, load_suite
from toolproof.tools.base import ToolContext, ToolResult
from toolproof.transcript import ToolCallEvent, Transcript
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
def search_orders(world: World, status: str | None = None, customer: str | None = None) -> list:
    """Order ids by status and customer.

    Args:
        status: The status.
        customer: The customer.
    """
    return sorted(
        key
        for key, order in world["orders"].items()
        if status in (None, order["status"]) and customer in (None, order["customer"])
    )
'''

ORDERS = """
A: {status: pending, customer: ann}
B: {status: shipped, customer: bob, shipment: {status: in_transit, carrier: UPS}}
W10001: {status: pending, customer: ann}
"""

TOOL_ENTRY = "  cancel_order: {tier: 3, weight: 0.3}\n"

DRIFT = """
drift:
  renamed:
    - {op: rename_tool, tool: get_order, to: fetch_order}
  param:
    - {op: rename_param, tool: get_order, param: order_id, to: id}
  fields:
    - {op: rename_field, tool: get_order, field: status, to: state}
  everywhere:
    - {op: rename_field, tool: "*", field: status, to: state}
  versioned:
    - op: add_required_param
      tool: cancel_order
      param: api_version
      schema: {type: string, enum: ["2024-06"]}
      value: "2024-06"
      description: The API version.
  numeric:
    - {op: change_type, tool: get_order, param: order_id, prefix: W}
  slim:
    - {op: remove_optional_param, tool: list_orders, param: status}
  split:
    - op: split_tool
      tool: search_orders
      into: {orders_by_status: [status], orders_by_customer: [customer]}
  merged:
    - {op: merge_tools, tools: [get_order, cancel_order], into: orders}
  distracted:
    - op: add_distractors
      tools:
        - name: get_order_v1
          description: Look up an order (legacy API).
          parameters: {type: object, properties: {order_id: {type: string}}}
  v2:
    - {op: rename_tool, tool: get_order, to: fetch_order}
    - {op: rename_param, tool: cancel_order, param: order_id, to: id}
    - {op: rename_field, tool: cancel_order, field: status, to: state}
"""


def suite_text(conditions: str) -> str:
    assert TOOL_ENTRY in MINI_SUITE
    extra = "  list_orders: {tier: 1}\n  search_orders: {tier: 2}\n"
    return MINI_SUITE.replace(TOOL_ENTRY, TOOL_ENTRY + extra) + conditions


def write_suite(root: Path, conditions: str) -> Path:
    files = {
        **MINI_FILES,
        "suite.yaml": suite_text(conditions),
        "tools.py": MINI_TOOLS + EXTRA_TOOLS,
        "orders.yaml": ORDERS,
    }
    return write_files(root, files)


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Suite:
    return load_suite(write_suite(tmp_path_factory.mktemp("drift"), DRIFT))


class Trial:
    """A gateway of task 'cancel' under one variant, over a fresh world."""

    def __init__(self, suite: Suite, key: str) -> None:
        task = suite.task("cancel")
        setup = VariantSetup(suite, Variant.parse(key), 0.001)
        self.drift = setup.drift
        self.world = World(suite.start_state(task))
        self.transcript = Transcript()
        self.gateway = Gateway(
            suite.tools, ToolContext(self.world, 1), self.transcript, setup.conditions(task, 1)
        )

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> ToolResult:
        return asyncio.run(self.gateway.call(name, arguments or {}))

    def schema(self, name: str) -> dict[str, Any]:
        found = [s.parameters for s in self.gateway.schemas if s.name == name]
        assert len(found) == 1, f"{name} is listed {len(found)} times"
        return found[0]

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.gateway.schemas]

    def last(self) -> ToolCallEvent:
        return self.transcript.tool_calls()[-1]


def drifted(suite: Suite, name: str) -> Trial:
    return Trial(suite, f"drift:{name}")


# ---------------------------------------------------------------- the transforms


def test_rename_tool(suite: Suite) -> None:
    t = drifted(suite, "renamed")
    assert t.names == ["fetch_order", "cancel_order", "list_orders", "search_orders"]
    old = t.call("get_order", {"order_id": "B"})
    assert old.is_error and old.error_kind == "unknown_tool"
    new = t.call("fetch_order", {"order_id": "B"})
    assert new.content["status"] == "shipped" and not new.is_error
    event = t.last()
    assert (event.name, event.tool, event.tool_arguments) == (
        "fetch_order",
        "get_order",
        {"order_id": "B"},
    )
    assert event.canonical_name == "get_order"


def test_rename_param(suite: Suite) -> None:
    t = drifted(suite, "param")
    assert t.schema("get_order")["required"] == ["id"]
    assert set(t.schema("get_order")["properties"]) == {"id"}
    assert t.call("get_order", {"id": "B"}).content["status"] == "shipped"
    assert t.last().tool_arguments == {"order_id": "B"}
    old = t.call("get_order", {"order_id": "B"})
    assert old.error_kind == "invalid_arguments" and "order_id" in old.content["error"]


def test_rename_field_renames_nested_fields_and_leaves_the_world_alone(suite: Suite) -> None:
    t = drifted(suite, "fields")
    result = t.call("get_order", {"order_id": "B"})
    assert result.content == {
        "state": "shipped",
        "customer": "bob",
        "shipment": {"state": "in_transit", "carrier": "UPS"},
    }
    assert t.world["orders"]["B"]["status"] == "shipped"
    assert t.world.diff() == []
    # only the named tool's answers change
    assert t.call("list_orders", {"status": "shipped"}).content["orders"][0]["status"] == "shipped"
    assert t.call("cancel_order", {"order_id": "A"}).content["status"] == "cancelled"
    assert t.world["orders"]["A"]["status"] == "cancelled"


def test_rename_field_on_every_tool(suite: Suite) -> None:
    t = drifted(suite, "everywhere")
    rows = t.call("list_orders").content["orders"]
    assert rows[1] == {
        "id": "B",
        "state": "shipped",
        "customer": "bob",
        "shipment": {"state": "in_transit", "carrier": "UPS"},
    }
    assert t.call("cancel_order", {"order_id": "A"}).content["state"] == "cancelled"
    assert t.world["orders"]["A"] == {"status": "cancelled", "customer": "ann"}


def test_add_required_param(suite: Suite) -> None:
    t = drifted(suite, "versioned")
    schema = t.schema("cancel_order")
    assert schema["required"] == ["order_id", "api_version"]
    assert schema["properties"]["api_version"] == {
        "type": "string",
        "enum": ["2024-06"],
        "description": "The API version.",
    }
    missing = t.call("cancel_order", {"order_id": "A"})
    assert missing.error_kind == "invalid_arguments"
    assert missing.content["error"] == "api_version: missing required argument"
    wrong = t.call("cancel_order", {"order_id": "A", "api_version": "2023-01"})
    assert wrong.error_kind == "invalid_arguments"
    assert wrong.content["error"] == "api_version: invalid value"
    assert t.world["orders"]["A"]["status"] == "pending"
    right = t.call("cancel_order", {"order_id": "A", "api_version": "2024-06"})
    assert right.content["status"] == "cancelled" and not right.is_error
    assert t.last().tool_arguments == {"order_id": "A"}  # stripped before the suite tool
    assert t.world["orders"]["A"]["status"] == "cancelled"


def test_change_type_takes_integers_and_puts_the_prefix_back(suite: Suite) -> None:
    t = drifted(suite, "numeric")
    assert t.schema("get_order")["properties"]["order_id"] == {
        "type": "integer",
        "description": "The order id.",
    }
    result = t.call("get_order", {"order_id": 10001})
    assert result.content["customer"] == "ann" and not result.is_error
    assert t.last().tool_arguments == {"order_id": "W10001"}
    for wrong in ("W10001", "10001", True):
        rejected = t.call("get_order", {"order_id": wrong})
        assert rejected.error_kind == "invalid_arguments"
        assert rejected.content["error"] == "order_id: must be an integer"


def test_remove_optional_param(suite: Suite) -> None:
    t = drifted(suite, "slim")
    assert "status" not in t.schema("list_orders")["properties"]
    assert len(t.call("list_orders").content["orders"]) == 3
    sent = t.call("list_orders", {"status": "pending"})
    assert sent.error_kind == "invalid_arguments"
    assert sent.content["error"] == "status: unexpected argument"


def test_split_tool_parts_take_subsets_and_reach_the_original(suite: Suite) -> None:
    t = drifted(suite, "split")
    assert "search_orders" not in t.names
    assert set(t.schema("orders_by_status")["properties"]) == {"status"}
    assert set(t.schema("orders_by_customer")["properties"]) == {"customer"}
    assert t.call("orders_by_status", {"status": "pending"}).content == ["A", "W10001"]
    assert (t.last().tool, t.last().tool_arguments) == ("search_orders", {"status": "pending"})
    assert t.call("orders_by_customer", {"customer": "bob"}).content == ["B"]
    assert (t.last().tool, t.last().tool_arguments) == ("search_orders", {"customer": "bob"})
    other = t.call("orders_by_status", {"customer": "bob"})
    assert other.error_kind == "invalid_arguments"
    assert t.call("search_orders", {"status": "pending"}).error_kind == "unknown_tool"


def test_merge_tools_is_one_tool_with_an_action(suite: Suite) -> None:
    t = drifted(suite, "merged")
    assert "get_order" not in t.names and "cancel_order" not in t.names
    schema = t.schema("orders")
    assert schema["properties"]["action"]["enum"] == ["get_order", "cancel_order"]
    assert schema["required"] == ["action"]
    assert "order_id" in schema["properties"]
    got = t.call("orders", {"action": "get_order", "order_id": "B"})
    assert got.content["status"] == "shipped"
    assert (t.last().name, t.last().tool) == ("orders", "get_order")
    done = t.call("orders", {"action": "cancel_order", "order_id": "A"})
    assert done.content["status"] == "cancelled"
    assert (t.last().tool, t.last().tool_arguments) == ("cancel_order", {"order_id": "A"})
    assert t.world["orders"]["A"]["status"] == "cancelled"
    for bad in ({"order_id": "A"}, {"action": "delete_order", "order_id": "A"}):
        result = t.call("orders", bad)
        assert result.error_kind == "invalid_arguments"
        assert result.content["error"] == "action: must be one of get_order, cancel_order"


def test_distractors_are_listed_and_deprecated(suite: Suite) -> None:
    t = drifted(suite, "distracted")
    assert t.names[-1] == "get_order_v1" and "get_order" in t.names
    assert "order_id" in t.schema("get_order_v1")["properties"]
    result = t.call("get_order_v1", {"order_id": "B"})
    assert result.is_error and result.error_kind == "deprecated"
    assert "deprecated" in result.content["error"]
    assert t.last().tool is None
    assert t.call("get_order", {"order_id": "B"}).content["status"] == "shipped"


# ---------------------------------------------------------------- present()

PRESENT = [
    ("renamed", "get_order", {"order_id": "B"}, ("fetch_order", {"order_id": "B"})),
    ("param", "get_order", {"order_id": "B"}, ("get_order", {"id": "B"})),
    ("fields", "get_order", {"order_id": "B"}, ("get_order", {"order_id": "B"})),
    (
        "versioned",
        "cancel_order",
        {"order_id": "A"},
        ("cancel_order", {"order_id": "A", "api_version": "2024-06"}),
    ),
    ("numeric", "get_order", {"order_id": "W10001"}, ("get_order", {"order_id": 10001})),
    ("slim", "list_orders", {}, ("list_orders", {})),
    (
        "split",
        "search_orders",
        {"customer": "ann"},
        ("orders_by_customer", {"customer": "ann"}),
    ),
    ("split", "search_orders", {"status": "shipped"}, ("orders_by_status", {"status": "shipped"})),
    (
        "merged",
        "cancel_order",
        {"order_id": "A"},
        ("orders", {"order_id": "A", "action": "cancel_order"}),
    ),
    ("distracted", "get_order", {"order_id": "B"}, ("get_order", {"order_id": "B"})),
    ("v2", "cancel_order", {"order_id": "A"}, ("cancel_order", {"id": "A"})),
]


@pytest.mark.parametrize(("variant", "tool", "args", "expected"), PRESENT)
def test_present_maps_a_suite_call_to_the_drifted_api_and_back(
    suite: Suite,
    variant: str,
    tool: str,
    args: dict[str, Any],
    expected: tuple[str, dict[str, Any]],
) -> None:
    t = drifted(suite, variant)
    assert t.gateway.present(tool, args) == expected
    assert t.drift is not None
    mapped = t.drift.to_suite(*expected)
    assert not isinstance(mapped, ToolResult), mapped
    assert mapped[1:] == (tool, args)


@pytest.mark.parametrize(("variant", "tool", "args", "expected"), PRESENT)
def test_what_present_sends_fits_the_schema_the_agent_is_shown(
    suite: Suite,
    variant: str,
    tool: str,
    args: dict[str, Any],
    expected: tuple[str, dict[str, Any]],
) -> None:
    t = drifted(suite, variant)
    name, arguments = t.gateway.present(tool, args)
    Draft202012Validator(t.schema(name)).validate(arguments)
    assert not t.call(name, arguments).is_error


@pytest.mark.parametrize(
    ("variant", "tool", "args"),
    [
        ("slim", "list_orders", {"status": "pending"}),
        ("numeric", "get_order", {"order_id": "A"}),
        ("split", "search_orders", {"status": "pending", "customer": "ann"}),
    ],
)
def test_present_refuses_a_call_the_drifted_api_cannot_express(
    suite: Suite, variant: str, tool: str, args: dict[str, Any]
) -> None:
    with pytest.raises(DriftError):
        drifted(suite, variant).gateway.present(tool, args)


def test_present_without_drift_is_the_identity(suite: Suite) -> None:
    t = Trial(suite, "")
    assert t.gateway.present("get_order", {"order_id": "B"}) == ("get_order", {"order_id": "B"})


# ---------------------------------------------------------------- grading by suite names

SCRIPT = """
tasks:
  status:
    - tool_calls: [{name: fetch_order, arguments: {order_id: B}}]
    - text: "Order B has shipped."
"""


def drift_trial(suite: Suite, task_id: str, variant: str, factory: AgentFactory) -> TrialResult:
    task = suite.task(task_id)
    setup = VariantSetup(suite, Variant(drift=variant), 0.001)
    expected = asyncio.run(replay_gold(suite, task)).hash
    return asyncio.run(
        trials.run_trial(
            trials.Trial(
                PlannedTrial(task_id, 0, 3, f"drift:{variant}"),
                suite,
                factory,
                "agent",
                expected,
                max_steps=10,
                conditions=setup.conditions(task, 3),
            )
        )
    )


def test_a_required_call_passes_when_the_agent_called_the_renamed_tool(
    suite: Suite, tmp_path: Path
) -> None:
    script = write_files(tmp_path, {"script.yaml": SCRIPT}) / "script.yaml"
    result = drift_trial(suite, "status", "renamed", resolve_agent(f"scripted:{script}").factory)
    assert result.outcome == "passed", result.reason
    [call] = result.transcript.tool_calls()
    assert (call.name, call.tool, call.is_error) == ("fetch_order", "get_order", False)
    assert [v.grader for v in result.verdicts if v.grader == "calls" and v.passed] == ["calls"]


@pytest.mark.parametrize("task_id", ["status", "cancel"])
def test_the_retrying_oracle_follows_drift_and_the_plain_oracle_breaks(
    suite: Suite, task_id: str
) -> None:
    good = drift_trial(suite, task_id, "v2", RetryingOracle)
    assert good.outcome == "passed", good.reason
    assert all(not c.is_error for c in good.transcript.tool_calls())
    plain = drift_trial(suite, task_id, "v2", OracleAgent)
    assert plain.outcome == "failed"
    assert plain.transcript.tool_calls()[0].is_error


# ---------------------------------------------------------------- bad transforms


def line_of(text: str, needle: str) -> int:
    found = [n for n, line in enumerate(text.splitlines(), start=1) if line == needle]
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize(
    ("transform", "message"),
    [
        ("{op: rename_tool, tool: lookup_order, to: fetch}", "no tool 'lookup_order'"),
        ("{op: rename_param, tool: get_order, param: id, to: key}", "no parameter 'id'"),
        ("{op: change_type, tool: get_order, param: number}", "no parameter 'number'"),
        ("{op: remove_optional_param, tool: cancel_order, param: order_id}", "is required"),
        ("{op: remove_optional_param, tool: list_orders, param: limit}", "no parameter 'limit'"),
        ("{op: split_tool, tool: search_orders, into: {a: [status, page]}}", "'page'"),
        ("{op: merge_tools, tools: [get_order, ship_order], into: orders}", "'ship_order'"),
        (
            "{op: add_required_param, tool: refund, param: v, schema: {type: string}, value: x}",
            "no tool 'refund'",
        ),
    ],
)
def test_a_bad_transform_is_a_suite_error_at_its_drift_variant(
    tmp_path: Path, transform: str, message: str
) -> None:
    conditions = "drift:\n  good:\n    - {op: rename_tool, tool: get_order, to: x}\n"
    conditions += f"  bad:\n    - {transform}\n"
    root = write_suite(tmp_path / "suite", conditions)
    text = (root / "suite.yaml").read_text(encoding="utf-8")
    with pytest.raises(SuiteError) as caught:
        load_suite(root)
    [problem] = caught.value.problems
    assert problem.path.endswith("suite.yaml")
    assert problem.line == line_of(text, "  bad:")
    assert "drift variant 'bad'" in problem.message and message in problem.message


def test_transforms_apply_in_order_to_the_drifted_api(suite: Suite) -> None:
    schemas = {name: binding.schema for name, binding in suite.tools.items()}
    layer = DriftLayer(
        [
            RenameTool(op="rename_tool", tool="get_order", to="fetch_order"),
            RenameParam(op="rename_param", tool="fetch_order", param="order_id", to="id"),
        ],
        schemas,
    )
    assert layer.present("get_order", {"order_id": "B"}) == ("fetch_order", {"id": "B"})
    with pytest.raises(DriftError):
        DriftLayer(
            [
                RenameParam(op="rename_param", tool="get_order", param="order_id", to="id"),
                RenameParam(op="rename_param", tool="get_order", param="order_id", to="key"),
            ],
            schemas,
        )


# ---------------------------------------------------------------- known bugs


def test_rename_field_on_an_unknown_tool_is_a_suite_error(tmp_path: Path) -> None:
    conditions = "drift:\n  bad:\n    - {op: rename_field, tool: lookup, field: status, to: s}\n"
    with pytest.raises(SuiteError, match="lookup"):
        load_suite(write_suite(tmp_path / "suite", conditions))


def test_rename_field_by_the_tools_new_name_renames_its_answers(tmp_path: Path) -> None:
    conditions = """
drift:
  v:
    - {op: rename_tool, tool: get_order, to: fetch_order}
    - {op: rename_field, tool: fetch_order, field: status, to: state}
"""
    t = drifted(load_suite(write_suite(tmp_path / "suite", conditions)), "v")
    assert t.call("fetch_order", {"order_id": "A"}).content == {
        "state": "pending",
        "customer": "ann",
    }


def test_rename_field_everywhere_reaches_the_tools_of_a_merged_tool(tmp_path: Path) -> None:
    conditions = """
drift:
  v:
    - {op: merge_tools, tools: [get_order, cancel_order], into: orders}
    - {op: rename_field, tool: "*", field: status, to: state}
"""
    t = drifted(load_suite(write_suite(tmp_path / "suite", conditions)), "v")
    assert t.call("list_orders").content["orders"][0]["state"] == "pending"
    result = t.call("orders", {"action": "get_order", "order_id": "A"})
    assert result.content == {"state": "pending", "customer": "ann"}


MERGE = "    - {op: merge_tools, tools: [get_order, cancel_order], into: orders}\n"
MERGE_READS = "    - {op: merge_tools, tools: [list_orders, search_orders], into: find}\n"


@pytest.mark.parametrize(
    ("transforms", "tool", "arguments", "accepted"),
    [
        (
            MERGE + "    - {op: rename_param, tool: orders, param: order_id, to: id}\n",
            "orders",
            {"action": "get_order", "id": "B"},
            True,
        ),
        (
            MERGE + "    - {op: add_required_param, tool: orders, param: v, "
            "schema: {type: string}, value: '2'}\n",
            "orders",
            {"action": "get_order", "order_id": "B", "v": "2"},
            True,
        ),
        (
            MERGE + "    - {op: change_type, tool: orders, param: order_id, prefix: W}\n",
            "orders",
            {"action": "get_order", "order_id": 10001},
            True,
        ),
        (
            MERGE_READS + "    - {op: remove_optional_param, tool: find, param: status}\n",
            "find",
            {"action": "list_orders", "status": "pending"},
            False,
        ),
    ],
    ids=["rename_param", "add_required_param", "change_type", "remove_optional_param"],
)
def test_a_parameter_transform_of_a_merged_tool_is_a_located_suite_error(
    tmp_path: Path, transforms: str, tool: str, arguments: dict[str, Any], accepted: bool
) -> None:
    # the schema would promise what the calls cannot keep: transform the tools, then merge
    root = write_suite(tmp_path / "suite", "drift:\n  v:\n" + transforms)
    with pytest.raises(SuiteError) as caught:
        load_suite(root)
    problem = caught.value.problems[0]
    assert problem.path.endswith("suite.yaml") and problem.line is not None
    assert f"'{tool}' is a merged tool: transform its tools before merging them" in problem.message


@pytest.mark.parametrize(
    "transform",
    [
        "{op: rename_tool, tool: get_order, to: cancel_order}",
        "{op: add_distractors, tools: [{name: get_order, description: Old lookup.}]}",
        "{op: split_tool, tool: search_orders, into: {get_order: [status], by: [customer]}}",
    ],
)
def test_a_transform_that_duplicates_a_tool_name_is_a_suite_error(
    tmp_path: Path, transform: str
) -> None:
    conditions = f"drift:\n  clash:\n    - {transform}\n"
    with pytest.raises(SuiteError, match="clash"):
        load_suite(write_suite(tmp_path / "suite", conditions))
