"""Python-function tools: the @tool decorator, schemas from hints and docstrings, calls."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import decimal
import enum
import inspect
import os
import signal
import sys
import threading
import time
from typing import Any, Literal

import jsonschema
import pytest

from toolproof.errors import ToolCrashed
from toolproof.tools.base import ToolContext, ToolError, ToolResult
from toolproof.tools.python import PythonTool, parse_docstring, tool, tools_in
from toolproof.world import World, freeze, thaw

REAL_EXIT = os._exit
BASE = freeze(
    {
        "orders": {
            "W1": {"status": "pending", "items": ["i1", "i2"]},
            "W2": {"status": "delivered", "items": ["i3"]},
        }
    }
)


@tool(write=True)
def cancel_order(
    world: World,
    order_id: str,
    reason: Literal["no_longer_needed", "ordered_by_mistake"],
    item_ids: list[str],
    quantity: int = 1,
    note: str | None = None,
) -> dict[str, Any]:
    """Cancel a pending order.

    Only pending orders can be cancelled.

    Args:
        world: The trial's world (never shown to the model).
        order_id: The order's id, such as 'W1'.
        reason: Why the user cancels.
            One of the two listed reasons.
        item_ids: Items to cancel.
        quantity (int): How many of each item.

    Returns:
        The updated order.
    """
    order = world["orders"].get(order_id)
    if order is None:
        raise ToolError(f"order {order_id} not found", kind="not_found")
    if order["status"] != "pending":
        raise ToolError("only pending orders can be cancelled")
    order["status"] = "cancelled"
    order["reason"] = reason
    order["cancelled"] = {"items": item_ids, "quantity": quantity, "note": note}
    return order


@tool
def get_order(world: World, order_id: str) -> dict[str, Any]:
    """Read an order."""
    return world["orders"][order_id]


@tool(name="list_statuses", description="Every order's status.")
def statuses(world: World, context: ToolContext) -> list[Any]:
    """Overridden by the decorator."""
    return [
        [order_id, order["status"], context.seed] for order_id, order in world["orders"].items()
    ]


@tool
async def count_items(world: World, order_id: str, pause: float = 0.0) -> int:
    """Count an order's items, asynchronously.

    Arguments:
        order_id: The order.
        pause: Seconds to wait first.
    """
    await asyncio.sleep(pause)
    return len(world["orders"][order_id]["items"])


@tool
def divide(a: int, b: int) -> float:
    """Divide a by b.

    Parameters:
        a: The dividend.
        b: The divisor.
    """
    return a / b


def _call(t: Any, arguments: dict[str, Any], world: World | None = None) -> ToolResult:
    context = ToolContext(world=world if world is not None else World(BASE), seed=7)
    result: ToolResult = asyncio.run(t.__toolproof_tool__.call(arguments, context))
    return result


def last_line(func: Any) -> int:
    """The line of a function's last statement in this file."""
    lines, first = inspect.getsourcelines(func)
    return first + len(lines) - 1


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


# ---------------------------------------------------------------- the decorator


def test_decorated_function_stays_callable() -> None:
    world = World(BASE)
    order = cancel_order(world, "W1", "no_longer_needed", ["i1"])
    assert order["status"] == "cancelled"
    assert divide(6, 3) == 2.0
    assert asyncio.run(count_items(World(BASE), "W2")) == 1


def test_decorator_attaches_a_python_tool() -> None:
    registered = cancel_order.__toolproof_tool__
    assert isinstance(registered, PythonTool)
    assert registered.func is cancel_order
    assert registered.name == "cancel_order"
    assert registered.write is True
    assert get_order.__toolproof_tool__.write is False


def test_decorator_can_rename_and_redescribe() -> None:
    schema = statuses.__toolproof_tool__.schema
    assert schema.name == "list_statuses"
    assert schema.description == "Every order's status."


def test_tools_in_finds_registered_tools_in_definition_order() -> None:
    def helper() -> None:
        """Not a tool."""

    namespace = {"b": divide, "helper": helper, "a": cancel_order, "n": 3}
    assert [t.name for t in tools_in(namespace)] == ["divide", "cancel_order"]


def test_star_arguments_are_refused() -> None:
    def spread(*values: int) -> int:
        return sum(values)

    def keywords(**values: int) -> int:
        return len(values)

    with pytest.raises(TypeError, match="not supported"):
        tool(spread)
    with pytest.raises(TypeError, match="not supported"):
        tool(keywords)


# ---------------------------------------------------------------- schema


def test_description_is_the_docstring_before_args() -> None:
    schema = cancel_order.__toolproof_tool__.schema
    assert schema.description == "Cancel a pending order.\n\nOnly pending orders can be cancelled."


def test_schema_describes_parameters_from_hints_and_docstring() -> None:
    parameters = cancel_order.__toolproof_tool__.schema.parameters
    assert parameters["type"] == "object"
    assert parameters["additionalProperties"] is False
    assert list(parameters["properties"]) == ["order_id", "reason", "item_ids", "quantity", "note"]
    props = parameters["properties"]
    assert props["order_id"] == {"type": "string", "description": "The order's id, such as 'W1'."}
    # a continuation line joins the parameter's description
    assert props["reason"] == {
        "type": "string",
        "enum": ["no_longer_needed", "ordered_by_mistake"],
        "description": "Why the user cancels. One of the two listed reasons.",
    }
    assert props["item_ids"] == {
        "type": "array",
        "items": {"type": "string"},
        "description": "Items to cancel.",
    }
    # `quantity (int):` is read as the parameter quantity
    assert props["quantity"] == {
        "type": "integer",
        "default": 1,
        "description": "How many of each item.",
    }
    assert props["note"]["default"] is None
    assert "description" not in props["note"]  # not documented


def test_required_lists_exactly_the_parameters_without_defaults() -> None:
    parameters = cancel_order.__toolproof_tool__.schema.parameters
    assert sorted(parameters["required"]) == ["item_ids", "order_id", "reason"]


def test_world_and_context_are_not_parameters() -> None:
    for t in (cancel_order, get_order, statuses, count_items):
        properties = t.__toolproof_tool__.schema.parameters["properties"]
        assert "world" not in properties
        assert "context" not in properties
    assert statuses.__toolproof_tool__.schema.parameters["properties"] == {}
    assert statuses.__toolproof_tool__.injected == ["world", "context"]


def test_schemas_have_no_title_keys() -> None:
    for t in (cancel_order, get_order, statuses, count_items, divide):
        assert "title" not in _keys(t.__toolproof_tool__.schema.parameters)


def test_arguments_section_synonyms_are_read() -> None:
    count = count_items.__toolproof_tool__.schema
    assert count.parameters["properties"]["pause"]["description"] == "Seconds to wait first."
    assert count.parameters["properties"]["pause"]["type"] == "number"
    div = divide.__toolproof_tool__.schema
    assert div.parameters["properties"]["b"]["description"] == "The divisor."
    assert div.description == "Divide a by b."


def test_schemas_are_valid_json_schema() -> None:
    for t in (cancel_order, get_order, statuses, count_items, divide):
        jsonschema.Draft202012Validator.check_schema(t.__toolproof_tool__.schema.parameters)


def test_parse_docstring_stops_parameters_at_the_next_section() -> None:
    doc = """Summary line.

    More text.

    Args:
        x: First.
        *rest: The others,
            continued.

    Returns:
        y: not a parameter.
    """
    assert parse_docstring(doc) == (
        "Summary line.\n\nMore text.",
        {"x": "First.", "rest": "The others, continued."},
    )


def test_parse_docstring_of_nothing_is_empty() -> None:
    assert parse_docstring(None) == ("", {})


def test_a_parameter_named_title_is_in_the_schema() -> None:
    @tool
    def create_ticket(title: str, body: str) -> str:
        """Open a ticket.

        Args:
            title: The ticket's title.
            body: The ticket's text.
        """
        return title

    parameters = create_ticket.__toolproof_tool__.schema.parameters
    assert parameters["properties"]["title"] == {
        "type": "string",
        "description": "The ticket's title.",
    }
    assert parameters["required"] == ["title", "body"]
    assert "title" not in _keys(parameters["properties"]["title"])


# ---------------------------------------------------------------- argument checks

VALID = {"order_id": "W1", "reason": "ordered_by_mistake", "item_ids": ["i1"]}


def test_valid_arguments_have_no_problems() -> None:
    registered = cancel_order.__toolproof_tool__
    assert registered.check_arguments(VALID) == []
    assert registered.check_arguments({**VALID, "quantity": 2, "note": None}) == []


def test_missing_arguments_are_named() -> None:
    problems = cancel_order.__toolproof_tool__.check_arguments({"order_id": "W1"})
    assert problems == [
        "reason: missing required argument",
        "item_ids: missing required argument",
    ]


def test_unexpected_arguments_are_named() -> None:
    problems = cancel_order.__toolproof_tool__.check_arguments({**VALID, "force": True})
    assert problems == ["force: unexpected argument"]


def test_injected_parameters_cannot_be_passed_as_arguments() -> None:
    problems = get_order.__toolproof_tool__.check_arguments({"order_id": "W1", "world": {}})
    assert problems == ["world: unexpected argument"]


@pytest.mark.parametrize(
    ("bad", "where"),
    [
        ({"order_id": 1}, "order_id"),
        ({"reason": "changed_mind"}, "reason"),
        ({"item_ids": "i1"}, "item_ids"),
        ({"item_ids": ["i1", 2]}, "item_ids.1"),
        ({"quantity": "2"}, "quantity"),
        ({"quantity": True}, "quantity"),
        ({"quantity": 1.5}, "quantity"),
        ({"note": 3}, "note"),
    ],
)
def test_wrong_types_are_reported_with_the_argument_name(bad: dict[str, Any], where: str) -> None:
    problems = cancel_order.__toolproof_tool__.check_arguments({**VALID, **bad})
    assert len(problems) == 1
    assert problems[0].startswith(f"{where}: ")
    assert "missing" not in problems[0]
    assert "unexpected" not in problems[0]


def test_an_integer_is_a_valid_number() -> None:
    assert count_items.__toolproof_tool__.check_arguments({"order_id": "W1", "pause": 0}) == []


@pytest.mark.parametrize(
    "arguments",
    [
        VALID,
        {**VALID, "quantity": 3},
        {**VALID, "quantity": "3"},
        {**VALID, "quantity": True},
        {**VALID, "reason": "other"},
        {**VALID, "item_ids": [1]},
        {**VALID, "extra": 1},
        {"order_id": "W1"},
        {**VALID, "note": None},
    ],
)
def test_argument_checks_agree_with_the_schema_the_model_sees(arguments: dict[str, Any]) -> None:
    registered = cancel_order.__toolproof_tool__
    schema_ok = jsonschema.Draft202012Validator(registered.schema.parameters).is_valid(arguments)
    assert schema_ok == (registered.check_arguments(arguments) == [])


def test_an_integral_float_is_accepted_where_the_schema_accepts_it() -> None:
    registered = cancel_order.__toolproof_tool__
    arguments = {**VALID, "quantity": 1.0}
    assert jsonschema.Draft202012Validator(registered.schema.parameters).is_valid(arguments)
    assert registered.check_arguments(arguments) == []


# ---------------------------------------------------------------- calls


def test_call_runs_the_function_on_the_trials_world() -> None:
    world = World(BASE)
    result = _call(cancel_order, {**VALID, "quantity": 2}, world)
    assert result == ToolResult(
        content={
            "status": "cancelled",
            "items": ["i1", "i2"],
            "reason": "ordered_by_mistake",
            "cancelled": {"items": ["i1"], "quantity": 2, "note": None},
        }
    )
    assert world["orders"]["W1"]["status"] == "cancelled"
    assert thaw(BASE)["orders"]["W1"]["status"] == "pending"


def test_defaults_fill_omitted_arguments() -> None:
    result = _call(cancel_order, VALID)
    assert result.content["cancelled"] == {"items": ["i1"], "quantity": 1, "note": None}


def test_invalid_arguments_come_back_as_an_error_without_calling() -> None:
    world = World(BASE)
    result = _call(cancel_order, {"order_id": "W1", "reason": "nope", "item_ids": []}, world)
    assert result.is_error
    assert result.error_kind == "invalid_arguments"
    assert result.content["error"].startswith("reason: ")
    assert world["orders"]["W1"]["status"] == "pending"
    assert world.diff() == []


def test_several_invalid_arguments_are_all_reported() -> None:
    result = _call(cancel_order, {"order_id": 5, "extra": 1})
    message = result.content["error"]
    for name in ("order_id", "reason", "item_ids", "extra"):
        assert f"{name}: " in message
    assert message.count("; ") == 3


def test_tool_error_keeps_its_kind_and_message() -> None:
    result = _call(cancel_order, {**VALID, "order_id": "W9"})
    assert result == ToolResult(
        content={"error": "order W9 not found"}, is_error=True, error_kind="not_found"
    )


def test_tool_error_kind_defaults_to_tool_error() -> None:
    result = _call(cancel_order, {**VALID, "order_id": "W2"})
    assert result.is_error
    assert result.error_kind == "tool_error"
    assert result.content == {"error": "only pending orders can be cancelled"}


def test_other_exceptions_become_errors_naming_the_exception_type_and_its_line() -> None:
    result = _call(divide, {"a": 1, "b": 0})
    assert result.is_error
    assert result.error_kind == "exception"
    line = last_line(divide)
    assert result.content == {
        "error": f"ZeroDivisionError: division by zero (at test_python_tools.py:{line})"
    }
    missing = _call(get_order, {"order_id": "W9"})
    assert missing.error_kind == "exception"
    line = last_line(get_order)
    assert missing.content == {"error": f"KeyError: 'W9' (at test_python_tools.py:{line})"}


def test_results_are_plain_data_detached_from_the_world() -> None:
    world = World(BASE)
    result = _call(get_order, {"order_id": "W1"}, world)
    assert type(result.content) is dict
    assert type(result.content["items"]) is list
    world["orders"]["W1"]["status"] = "changed after the call"
    world["orders"]["W1"]["items"].append("i9")
    assert result.content == {"status": "pending", "items": ["i1", "i2"]}


def test_results_of_untouched_state_are_not_frozen() -> None:
    result = _call(get_order, {"order_id": "W2"})
    result.content["items"].append("mutable")  # would raise on frozen data
    assert result.content["items"] == ["i3", "mutable"]


def test_context_is_injected() -> None:
    result = _call(statuses, {})
    assert result.content == [["W1", "pending", 7], ["W2", "delivered", 7]]


def test_async_tools_are_awaited() -> None:
    assert count_items.__toolproof_tool__.is_async
    result = _call(count_items, {"order_id": "W1", "pause": 0.0})
    assert result == ToolResult(content=2)
    failed = _call(count_items, {"order_id": "W9"})
    assert failed.error_kind == "exception"
    assert failed.content["error"].startswith("KeyError")


# ---------------------------------------------------------------- calls that must end


@tool(timeout_s=0.2)
def stuck(until: float = 3600.0) -> str:
    """Does not return in time, even when told to stop once.

    Args:
        until: Seconds it keeps going.
    """
    with contextlib.suppress(BaseException):  # swallows the first interruption
        time.sleep(until)
    time.sleep(until)
    return "done"


@tool(timeout_s=0.2)
async def stuck_async() -> str:
    """Waits forever."""
    await asyncio.sleep(3600)
    return "done"


@tool
def quits(how: Literal["sys", "os", "interrupt"]) -> str:
    """Tries to end the process.

    Args:
        how: By sys.exit, os._exit or a KeyboardInterrupt.
    """
    if how == "sys":
        sys.exit(4)
    if how == "os":
        os._exit(4)
    raise KeyboardInterrupt


def test_a_call_past_its_timeout_is_cut_even_when_it_swallows_the_interruption() -> None:
    clock = time.monotonic()
    with pytest.raises(ToolCrashed, match=r"^stuck did not return within 0.2 s"):
        _call(stuck, {})
    assert time.monotonic() - clock < 5
    assert _call(stuck, {"until": 0.0}) == ToolResult(content="done")
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_a_timer_set_before_a_call_is_put_back_after_it() -> None:
    signal.setitimer(signal.ITIMER_REAL, 600.0)
    try:
        _call(stuck, {"until": 0.0})
        left, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 590.0 < left <= 600.0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def test_a_call_off_the_main_thread_is_cut_on_a_thread_of_its_own() -> None:
    """Where no signal can interrupt it (an executor's or Ray's event loop thread)."""
    caught: list[BaseException] = []

    def elsewhere() -> None:
        try:
            _call(stuck, {})
        except BaseException as exc:
            caught.append(exc)

    worker = threading.Thread(target=elsewhere)
    worker.start()
    worker.join(timeout=10)
    assert not worker.is_alive()
    assert [str(exc) for exc in caught] == ["stuck did not return within 0.2 s (its timeout_s)"]


def test_an_async_call_past_its_timeout_is_cut() -> None:
    with pytest.raises(ToolCrashed, match=r"^stuck_async did not return within 0.2 s"):
        _call(stuck_async, {})


@pytest.mark.parametrize(
    ("how", "said"),
    [("sys", "called sys.exit(4)"), ("os", "called os._exit(4)"), ("interrupt", "raised Keyb")],
)
def test_a_call_that_tries_to_end_the_process_crashes_its_trial(how: str, said: str) -> None:
    with pytest.raises(ToolCrashed) as crashed:
        _call(quits, {"how": how})
    assert str(crashed.value).startswith(f"quits {said}")
    assert crashed.value.code == "tool_crashed"
    assert os._exit is REAL_EXIT


def test_a_backend_timeout_applies_unless_the_tool_sets_its_own() -> None:
    plain = get_order.__toolproof_tool__
    assert plain.timeout_s == 30.0
    assert plain.bounded(5.0).timeout_s == 5.0 and plain.timeout_s == 30.0
    assert stuck.__toolproof_tool__.bounded(5.0).timeout_s == 0.2
    with pytest.raises(ValueError, match="timeout_s=nan"):
        tool(timeout_s=float("nan"))


def test_result_errors_wrap_the_message() -> None:
    assert ToolResult.error("kind", "text") == ToolResult(
        content={"error": "text"}, is_error=True, error_kind="kind"
    )


# ---------------------------------------------------------------- types a JSON argument carries


class Shelf(enum.Enum):
    FRONT = "front"
    BACK = "back"


@tool
def schedule(
    day: datetime.date,
    at: datetime.datetime,
    amount: decimal.Decimal,
    shelf: Shelf,
    speed: Literal["slow", "fast"],
) -> dict[str, Any]:
    """Schedule a delivery.

    Args:
        day: The day.
        at: When exactly.
        amount: The amount to charge.
        shelf: Where it goes.
        speed: How fast.
    """
    return {
        "weekday": day.isoweekday(),
        "hour": at.hour,
        "doubled": amount * 2,
        "shelf": shelf,
        "speed": speed,
        "on": day,
    }


SCHEDULED = {
    "day": "2026-03-02",
    "at": "2026-03-02T14:30:00",
    "amount": "19.95",
    "shelf": "back",
    "speed": "fast",
}


def test_dates_decimals_enums_and_literals_arrive_as_their_json_strings() -> None:
    assert schedule.__toolproof_tool__.check_arguments(SCHEDULED) == []
    result = _call(schedule, SCHEDULED)
    assert not result.is_error, result.content
    assert result.content == {
        "weekday": 1,
        "hour": 14,
        "doubled": "39.90",
        "shelf": "back",
        "speed": "fast",
        "on": "2026-03-02",
    }


def test_a_date_that_is_not_one_is_an_argument_error() -> None:
    problems = schedule.__toolproof_tool__.check_arguments({**SCHEDULED, "day": "next monday"})
    assert len(problems) == 1 and problems[0].startswith("day: "), problems
    result = _call(schedule, {**SCHEDULED, "shelf": "attic"})
    assert result.error_kind == "invalid_arguments"
    assert "shelf" in result.content["error"]


def test_the_schema_writes_a_date_as_a_formatted_string() -> None:
    properties = schedule.__toolproof_tool__.schema.parameters["properties"]
    assert properties["day"]["type"] == "string" and properties["day"]["format"] == "date"
    parameters = schedule.__toolproof_tool__.schema.parameters
    assert parameters["$defs"]["Shelf"]["enum"] == ["front", "back"]
    assert properties["speed"]["enum"] == ["slow", "fast"]


class Coordinates:
    """A class that no JSON value turns into."""


def test_a_hint_no_json_argument_can_carry_is_refused_where_the_tool_is_defined() -> None:
    def locate(where: Coordinates) -> str:
        return str(where)

    def count(seen: dict[int, str]) -> int:
        return len(seen)

    with pytest.raises(TypeError, match="parameter 'where' has the type Coordinates"):
        tool(locate)
    with pytest.raises(TypeError, match=r"dict keys of int \(JSON keys are strings\)"):
        tool(count)
