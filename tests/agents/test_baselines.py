"""The baseline agents: each adversarial one does exactly the shortcut it stands for, they are
reachable by name, and the retrying oracle reads every page of a paginated answer."""

from __future__ import annotations

import asyncio

import pytest
from support import write_files

from toolproof.agents.baselines import ADVERSARIES, RetryingOracle, guess_arguments, said_apart
from toolproof.agents.registry import resolve_agent
from toolproof.errors import UsageError
from toolproof.meaning.values import tokens
from toolproof.records.trial import TrialResult
from toolproof.runner.gold import replay_gold
from toolproof.runner.plan import PlannedTrial
from toolproof.runner.trial import Trial, run_trial
from toolproof.runner.variants import Variant, VariantSetup
from toolproof.suite import Suite, load_suite

TOOLS = '''
from toolproof.tools import ToolError, tool
from toolproof.world import World


@tool
def find_customer(world: World, email: str) -> dict:
    """Find a customer by email.

    Args:
        email: The email on the account.
    """
    for customer in world["customers"].values():
        if customer["email"] == email:
            return customer
    raise ToolError("no such customer", kind="not_found")


@tool
def list_orders(world: World, customer_id: str, status: str | None = None) -> dict:
    """The orders of a customer.

    Args:
        customer_id: The customer id, e.g. "C0042".
        status: Only orders with this status.
    """
    orders = [o for o in world["orders"].values() if o["customer_id"] == customer_id]
    return {"orders": [o for o in orders if status is None or o["status"] == status]}


@tool
def get_order(world: World, order_id: str) -> dict:
    """Look up an order.

    Args:
        order_id: The order id, e.g. "W10234".
    """
    if order_id not in world["orders"]:
        raise ToolError(f"no order {order_id}", kind="not_found")
    return world["orders"][order_id]


@tool(write=True)
def cancel_order(world: World, order_id: str) -> dict:
    """Cancel an order.

    Args:
        order_id: The order id, e.g. "W10234".
    """
    world["orders"][order_id]["status"] = "cancelled"
    return world["orders"][order_id]
'''

ORDERS = "\n".join(
    f"W{100 + i}: {{id: W{100 + i}, customer_id: C0007, carrier: UPS, "
    f"status: {'shipped' if i == 6 else 'delivered'}}}"
    for i in range(8)
)

SUITE = """
name: shop
policy: policy.md
world: {data: [customers.yaml, orders.yaml]}
backends: {shop: {type: python, module: tools.py}}
tools:
  find_customer: {tier: 1}
  list_orders: {tier: 1}
  get_order: {tier: 1}
  cancel_order: {tier: 3}
faults:
  profiles:
    paged: [{kind: partial, tools: [list_orders], rate: 1.0, page_size: 3}]
tasks:
  - id: status
    user: {opening: "Hi, ana@example.com here. Where is order W106, is it late?"}
    expect:
      actions:
        - {tool: find_customer, args: {email: ana@example.com}}
        - {tool: get_order, args: {order_id: W106}}
      must_say: [shipped, [UPS, United Parcel]]
  - id: shipped-one
    user: {opening: "Which of my orders has shipped? I'm ana@example.com."}
    expect:
      actions:
        - {tool: find_customer, args: {email: ana@example.com}}
        - {tool: list_orders, args: {customer_id: C0007}}
      must_say: [W106]
"""

FILES = {
    "suite.yaml": SUITE,
    "customers.yaml": "C0007: {id: C0007, email: ana@example.com}\n",
    "orders.yaml": ORDERS + "\n",
    "policy.md": "You answer for Fernhill Supply. Never guess.\n",
    "tools.py": TOOLS,
}


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Suite:
    return load_suite(write_files(tmp_path_factory.mktemp("shop"), FILES))


def trial(suite: Suite, name: str, task: str = "status", seed: int = 3) -> TrialResult:
    expected = asyncio.run(replay_gold(suite, suite.task(task))).hash
    agent = resolve_agent(name)
    return asyncio.run(
        run_trial(Trial(PlannedTrial(task, 0, seed), suite, agent.factory, name, expected))
    )


def said(result: TrialResult) -> str:
    return result.transcript.messages("assistant")[0].content


OPENING = "Hi, ana@example.com here. Where is order W106, is it late?"


def test_every_baseline_is_an_agent_by_name() -> None:
    for name in ("oracle", "retrying-oracle", *ADVERSARIES):
        assert resolve_agent(name).label == name
    with pytest.raises(
        UsageError, match="fixed-reply, leaker, hedger, blind-refuser, over-writer, scripted:FILE"
    ):
        resolve_agent("lazy")


@pytest.mark.parametrize("name", ["null", "recite-facts", "echo-user", "word-salad", "fixed-reply"])
def test_the_baselines_that_only_talk_call_no_tool_and_fail(shop: Suite, name: str) -> None:
    result = trial(shop, name)
    assert result.transcript.tool_calls() == []
    assert result.outcome == "failed"


def test_recite_facts_states_every_form_of_every_fact(shop: Suite) -> None:
    result = trial(shop, "recite-facts")
    assert said(result) == "Here is what you need to know: shipped; UPS; United Parcel"
    assert result.reason == (
        "reads: decisive read not made: find_customer(email='ana@example.com'), "
        "get_order(order_id='W106')"
    )
    facts = next(v for v in result.verdicts if v.grader == "must_say")
    assert facts.reason == (
        "said before any tool result showed it: 'shipped', 'UPS' or 'United Parcel'"
    )


def test_facts_said_together_stay_apart_so_numbers_are_not_read_as_one() -> None:
    assert tokens(" ".join(["327", "1000"])) == ["#3271000"]
    assert tokens(said_apart(["327", "1000", "44"])) == ["327", "1000", "44"]


def test_echo_user_says_back_the_users_words(shop: Suite) -> None:
    assert said(trial(shop, "echo-user")) == OPENING


def test_word_salad_shuffles_every_word_the_agent_was_shown(shop: Suite) -> None:
    text = said(trial(shop, "word-salad"))
    words = set(text.split())
    assert {"Fernhill", "ana@example.com", "list_orders", "customer_id", "Cancel"} <= words
    assert text == said(trial(shop, "word-salad"))  # the trial's seed decides the order
    assert text != said(trial(shop, "word-salad", seed=4))


def test_fixed_reply_covers_status_words_every_time_and_date_and_the_user(shop: Suite) -> None:
    text = said(trial(shop, "fixed-reply"))
    for needle in ("delivered", "out of stock", "00:00", "13:37", "23:59", "2026-02-28"):
        assert needle in text
    assert "2026-02-29" not in text and "December 31" in text
    assert text.endswith(f"You said: {OPENING}")


def test_read_all_calls_each_read_tool_once_with_guessed_arguments(shop: Suite) -> None:
    result = trial(shop, "read-all")
    calls = [(c.name, c.arguments, c.is_error) for c in result.transcript.tool_calls()]
    assert calls == [
        ("find_customer", {"email": "ana@example.com"}, False),
        ("list_orders", {"customer_id": "C0042"}, False),  # the example: no customer id said
        ("get_order", {"order_id": "W106"}, False),
    ]
    assert said(result) == "I have looked into this for you."
    assert result.reason == "must_say: not said: 'shipped', 'UPS' or 'United Parcel'"


def test_guessed_arguments_are_typed_and_prefer_what_the_user_said() -> None:
    schema = {
        "required": ["phone", "kind", "count", "urgent", "skus", "query"],
        "properties": {
            "phone": {"type": "string", "description": "The phone on the account."},
            "kind": {"type": "string", "enum": ["standard", "express"]},
            "count": {"type": "integer"},
            "urgent": {"type": "boolean"},
            "skus": {"type": "array", "items": {"type": "string", "description": 'e.g. "AP-101"'}},
            "query": {"type": "string"},
            "optional": {"type": "string"},
        },
    }
    said = "About 3 of FW-201 and AP-204: call me at (612) 555-2591, order W7a."
    assert guess_arguments(schema, said) == {
        "phone": "(612) 555-2591",
        "kind": "standard",
        "count": 3,
        "urgent": True,
        "skus": ["AP-204"],
        "query": "FW-201",
    }


def test_the_retrying_oracle_reads_every_page_of_a_partial_answer(shop: Suite) -> None:
    task = shop.task("shipped-one")
    expected = asyncio.run(replay_gold(shop, task)).hash
    setup = VariantSetup(shop, Variant(faults="paged"), 0.001)
    result = asyncio.run(
        run_trial(
            Trial(
                PlannedTrial(task.id, 0, 5, "faults:paged"),
                shop,
                RetryingOracle,
                "retrying-oracle",
                expected,
                conditions=setup.conditions(task, 5),
            )
        )
    )
    pages = [(c.arguments or {}).get("page") for c in result.transcript.tool_calls()]
    assert pages == [None, None, 2, 3]  # find_customer, then list_orders page by page
    assert result.outcome == "passed", result.reason
