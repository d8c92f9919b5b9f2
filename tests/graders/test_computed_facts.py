"""A fact worked out from values the tools show (a total, a refund, a price difference) is
grounded in the reads of its operands: said after tool results showed every operand it
counts; recited, or said after only some of them, it is unsourced; a fact that is not the
operation over its operands is a located suite error. A task whose grading rests on such a
fact is sound: the recite-facts baseline fails it, the oracle passes it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from scripted import call, play, steps, verdict
from support import line_with, write_files

from toolproof.errors import SuiteError
from toolproof.runner.validate import validate_suite
from toolproof.suite import Suite, load_suite

TOOLS = '''
from toolproof.tools import tool
from toolproof.world import World


@tool
def get_order(world: World, order_id: str) -> dict:
    """Look up an order: its item and the item's price.

    Args:
        order_id: The order id, e.g. "W100".
    """
    return world["orders"][order_id]


@tool
def get_shipping(world: World, order_id: str) -> dict:
    """Look up how an order ships, and the fee.

    Args:
        order_id: The order id, e.g. "W100".
    """
    return world["shipping"][order_id]
'''

TOTAL = "{fact: '66.04', computed: {op: sum, of: ['54.04', '12']}}"

SUITE = f"""
name: computed
policy: policy.md
world: {{data: [orders.yaml, shipping.yaml]}}
backends: {{shop: {{type: python, module: tools.py}}}}
tools:
  get_order: {{tier: 1}}
  get_shipping: {{tier: 1}}
tasks:
  - id: total
    user: {{opening: "What did order W100 cost me in all, with shipping?"}}
    expect:
      actions:
        - {{tool: get_order, args: {{order_id: W100}}}}
        - {{tool: get_shipping, args: {{order_id: W100}}}}
      reads: []
      must_say: [{TOTAL}]
"""

FILES = {
    "suite.yaml": SUITE,
    "policy.md": "Answer questions about orders from the records.\n",
    "orders.yaml": "W100: {item: desk lamp, price: 54.04}\n",
    "shipping.yaml": "W100: {carrier: UPS, fee: 12}\n",
    "tools.py": TOOLS,
}

ORDER = call("get_order", order_id="W100")
SHIPPING = call("get_shipping", order_id="W100")
SAID = "Your order W100 came to $66.04 in all, shipping included."


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_files(tmp_path_factory.mktemp("computed"), FILES)


@pytest.fixture(scope="module")
def suite(root: Path) -> Suite:
    return load_suite(root)


def test_a_total_said_after_the_reads_of_its_operands_counts(suite: Suite, tmp_path: Path) -> None:
    result = play(suite, "total", steps(ORDER, SHIPPING, say=SAID), tmp_path)
    assert verdict(result, "must_say") == (True, "every fact said, each after a source")


def test_a_recited_total_is_unsourced(suite: Suite, tmp_path: Path) -> None:
    passed, reason = verdict(play(suite, "total", steps(say=SAID), tmp_path), "must_say")
    assert not passed
    assert reason.startswith("said before any tool result showed it: '66.04'")


def test_a_total_said_after_reading_only_one_operand_is_unsourced(
    suite: Suite, tmp_path: Path
) -> None:
    passed, reason = verdict(play(suite, "total", steps(ORDER, say=SAID), tmp_path), "must_say")
    assert not passed
    assert reason.startswith("said before any tool result showed it: '66.04'")


def test_the_recite_facts_baseline_fails_the_task_and_the_oracle_passes_it(root: Path) -> None:
    [check] = asyncio.run(validate_suite(load_suite(root)))
    assert check.oracle == "passed"
    assert check.ok, check.problems
    assert check.baselines["recite-facts"].startswith(
        "failed: must_say: said before any tool result showed it: '66.04'"
    )


@pytest.mark.parametrize(
    ("fact", "message"),
    [
        (
            "{fact: '66.05', computed: {op: sum, of: ['54.04', '12']}}",
            "computed: the sum of 54.04, 12 is 66.04, but the fact says '66.05'",
        ),
        (
            "{fact: '42.04', computed: {op: difference, of: ['54.04', '12', '1']}}",
            "a difference has two operands",
        ),
        (
            "{fact: '66.04', computed: {op: sum, of: ['54.04', twelve]}}",
            "computed operand 'twelve' is not a number",
        ),
        (
            "{fact: '66.04', source: none, computed: {op: sum, of: ['54.04', '12']}}",
            "computed is for facts worked out from tool results (source: tools)",
        ),
    ],
)
def test_a_computed_fact_that_does_not_add_up_is_a_located_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fact: str, message: str
) -> None:
    text = SUITE.replace(TOTAL, fact)
    monkeypatch.chdir(write_files(tmp_path, {**FILES, "suite.yaml": text}))
    with pytest.raises(SuiteError) as info:
        load_suite(Path())
    [problem] = info.value.problems
    assert (problem.path, problem.line) == ("suite.yaml", line_with(text.lstrip("\n"), fact))
    assert message in problem.message


def test_a_difference_and_a_product_ground_in_their_operands() -> None:
    from toolproof.spec.expectations import Fact

    refund = Fact.model_validate(
        {"fact": "$42.04", "computed": {"op": "difference", "of": [54.04, 12]}}
    )
    assert refund.computed is not None and refund.computed.of == ["54.04", "12"]
    Fact.model_validate({"fact": "1,200", "computed": {"op": "product", "of": ["3", "400"]}})
