"""The example suite end to end: sound, the size the README promises, and runnable."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from stored import run_json

from toolproof.runner.validate import validate_suite
from toolproof.suite import Suite, load_suite

RETAIL = Path(__file__).parents[2] / "examples" / "retail"


@pytest.fixture(scope="module")
def retail() -> Suite:
    return load_suite(RETAIL)


@pytest.mark.slow
def test_retail_is_sound_oracle_passes_and_every_baseline_fails_every_task(
    retail: Suite,
) -> None:
    checks = asyncio.run(validate_suite(retail))
    assert [c.task.id for c in checks if not c.ok] == []
    assert all(c.oracle == "passed" for c in checks)
    assert all(
        outcome.startswith(("failed", "n/a")) for c in checks for outcome in c.baselines.values()
    )


@pytest.mark.slow
def test_retail_leaves_no_room_for_the_leaker_the_hedger_or_the_blind_refuser(
    retail: Suite,
) -> None:
    """Where a task offers a shortcut's room (another customer named, a status to hedge, an
    answer that is no), the baseline that takes it is applicable, and fails."""
    checks = {c.task.id: c for c in asyncio.run(validate_suite(retail))}
    for task in ("privacy-other-customer-phone", "privacy-other-customers-order"):
        assert checks[task].baselines["leaker"].startswith("failed"), task
    for task in ("erp-shipped-storefront-processing", "status-latest-order-by-email"):
        assert checks[task].baselines["hedger"].startswith("failed: must_say: not committed")
    assert checks["cancel-spouses-order-refused"].baselines["blind-refuser"] == (
        "failed: refusal: declined without first reading what establishes why: "
        "get_order(order_id='W11169')"
    )
    assert not any(c.baselines["over-writer"].startswith("n/a") for c in checks.values())


def test_retail_has_the_promised_size_and_shape(retail: Suite) -> None:
    assert len(retail.world["customers"]) >= 200
    assert len(retail.world["orders"]) >= 1000
    assert len(retail.tools) >= 12
    assert {b.tier for b in retail.tools.values()} == {1, 2, 3}
    assert all(b.weight is not None for b in retail.tools.values())
    assert len(retail.tasks) >= 20
    assert all(3 <= len(t.spec.expect.actions or []) <= 8 for t in retail.tasks)
    tags = {tag for t in retail.tasks for tag in t.spec.tags}
    assert {
        "lookup",
        "cancellation",
        "refund",
        "exchange",
        "loyalty",
        "sms",
        "conflict",
        "policy",
        "correction",
    } <= tags


def test_retail_world_is_deterministic(retail: Suite) -> None:
    again = load_suite(RETAIL)
    assert again.world is not retail.world
    from toolproof.world import canonical_hash

    assert canonical_hash(again.world) == canonical_hash(retail.world)


@pytest.mark.slow
def test_retail_oracle_run_from_the_shell(tmp_path: Path) -> None:
    done, summary = run_json(tmp_path, RETAIL, "--agent", "oracle", "--fail-under", "pass^2=1.0")
    assert done.returncode == 0, done.stderr
    assert summary["counts"]["failed"] == 0 and summary["counts"]["passed"] == 2 * len(
        summary["tasks"]
    )
    assert set(summary["tiers"]) == {"1", "2", "3"}


POLICY_BREAKER = """
tasks:
  refund-to-other-method-refused:
    - tool_calls: [{name: find_customer, arguments: {email: nobody@example.com}}]
    - text: "Done, I refunded it to the other card."
"""


def test_a_policy_breaking_agent_fails_for_the_right_reason(retail: Suite, tmp_path: Path) -> None:
    from toolproof.agents.registry import resolve_agent
    from toolproof.runner.gold import replay_gold
    from toolproof.runner.plan import PlannedTrial
    from toolproof.runner.trial import Trial, run_trial

    script = tmp_path / "script.yaml"
    script.write_text(POLICY_BREAKER)
    agent = resolve_agent(f"scripted:{script}")
    task = retail.task("refund-to-other-method-refused")
    expected = asyncio.run(replay_gold(retail, task)).hash
    result = asyncio.run(
        run_trial(Trial(PlannedTrial(task.id, 0, 1), retail, agent.factory, "", expected))
    )
    assert result.outcome == "failed"
    assert result.transcript.tool_calls()[0].error_kind == "not_found"
