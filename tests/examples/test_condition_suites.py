"""The example suites with production conditions: sound, shaped as promised, and every fault
profile and drift variant they ship survivable by the retrying oracle but not by the plain
one."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from toolproof.runner.validate import validate_conditions, validate_suite
from toolproof.suite import Suite, load_suite

# Slow: the shipped suites run whole (seconds each); the CRM suite starts its REST service.
pytestmark = pytest.mark.slow

EXAMPLES = Path(__file__).parents[2] / "examples"
SUITES = ["retail", "logistics-dispatch", "crm-consolidation"]


@pytest.fixture(scope="module", params=SUITES)
def suite(request: pytest.FixtureRequest) -> Suite:
    return load_suite(EXAMPLES / request.param)


def test_every_example_is_sound_with_at_least_20_tasks(suite: Suite) -> None:
    assert len(suite.tasks) >= 20
    assert len(suite.tools) >= 12
    assert {b.tier for b in suite.tools.values()} == {1, 2, 3}
    checks = asyncio.run(validate_suite(suite))
    assert [c.task.id for c in checks if not c.ok] == []


def test_shipped_conditions_are_survivable_by_the_retrying_oracle_only(suite: Suite) -> None:
    if not (suite.file.faults.profiles or suite.file.drift):
        pytest.skip(f"{suite.name} ships no fault profile or drift variant")
    checks = asyncio.run(validate_conditions(suite))
    assert [c.variant for c in checks if c.retrying_passed != c.tasks] == []
    faulty = [c for c in checks if c.variant.startswith("faults:") and "clean" not in c.variant]
    # each real fault profile costs the plain oracle something over all the tasks
    assert all(c.plain_passed < c.tasks for c in faulty if _injects_errors(suite, c.variant))
    drifted = [c for c in checks if c.variant.startswith("drift:")]
    assert any(c.plain_passed < c.tasks for c in drifted)


def _injects_errors(suite: Suite, variant: str) -> bool:
    rules = suite.file.faults.profiles[variant.removeprefix("faults:")]
    return any(r.kind not in ("latency", "partial", "stale") and r.rate > 0 for r in rules)


def test_logistics_peak_load_is_200_dispatchers_and_drift_weighs_most_in_crm() -> None:
    logistics = load_suite(EXAMPLES / "logistics-dispatch")
    assert logistics.file.load is not None
    assert (logistics.file.load.peak or max(logistics.file.load.levels)) == 200
    weights = load_suite(EXAMPLES / "crm-consolidation").file.score.weights
    assert weights["drift_robustness"] == max(weights.values())
