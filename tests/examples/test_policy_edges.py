"""The retail suite's policy-edge tasks end to end, from the shell: the oracle keeps every
policy rule; an agent that reaches the right end state but skips the check the policy
requires fails, the rule is named, the failure is the agent's, and the gate holds it to
policy_adherence."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from stored import run_json, toolproof_ci

# Slow: every test here runs the CLI as a process.
pytestmark = pytest.mark.slow

RETAIL = Path(__file__).parents[2] / "examples" / "retail"

SKIPS_THE_CHECK = """
tasks:
  refund-skipping-the-payment-check:
    - tool_calls:
        - {name: find_customer, arguments: {email: jamal.delgado@example.org}}
        - {name: get_order, arguments: {order_id: W10780}}
    - text: "I can refund $178.00 for the two bent trekking poles to your PayPal. Shall I go ahead?"
    - tool_calls:
        - name: refund_payment
          arguments: {charge_id: ch_3Kh1qBuD5GRwh9xho8xFpNIO, amount: 178.0,
                      payment_method_id: pm_paypal_0034}
    - text: "Done: $178.00 is on its way back to your PayPal."
"""


def run(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    return run_json(tmp_path, RETAIL, "--fail-under", "policy_adherence=0.95", *args, timeout=300)


def test_the_oracle_keeps_every_policy_rule_on_the_policy_edge_tasks(tmp_path: Path) -> None:
    done, summary = run(tmp_path, "--agent", "oracle", "--tasks", "policy-edge")
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(summary["tasks"]) == 3
    assert summary["counts"]["passed"] == 6
    assert summary["metrics"]["policy_adherence"] == 1.0
    model = summary["models"][0]
    assert model["policy"]["violations"] == {}
    assert model["blame"] == {"agent": 0, "user_simulator": 0, "environment": 0, "grader": 0}


def test_the_right_end_state_with_the_required_check_skipped_fails_on_policy(
    tmp_path: Path,
) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(SKIPS_THE_CHECK)
    done, summary = run(
        tmp_path,
        "--agent",
        f"scripted:{script}",
        "--tasks",
        "refund-skipping-the-payment-check",
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert summary["counts"] == {"passed": 0, "failed": 2, "infra_error": 0, "total": 2}
    [task] = summary["tasks"]
    assert task["failures"] == [
        "read_before_write: refund_payment called without "
        "get_payment(id='ch_3Kh1qBuD5GRwh9xho8xFpNIO') before it"
    ]
    assert summary["metrics"]["policy_adherence"] == 0.0
    model = summary["models"][0]
    assert model["policy"]["violations"] == {"read_before_write": 2}
    assert model["blame"]["agent"] == 2
    assert model["blame_rules"] == {"agent": {"policy_violation": 2}}
    # the terminal summary shows both, and the gate names the metric that fell short
    out = done.stdout + done.stderr
    assert "failed trials by blame" in out and "policy_violation 2" in out
    assert "read_before_write" in out
    assert "policy_adherence" in out
    # the gate's Markdown shows who is to blame and the violations per rule
    markdown = tmp_path / "gate.md"
    gate = toolproof_ci(
        "gate",
        summary["run_id"],
        "--store",
        tmp_path / "runs.db",
        "--min",
        "policy_adherence=0.95",
        "--markdown",
        markdown,
    )
    assert gate.returncode == 1, gate.stdout + gate.stderr
    text = markdown.read_text()
    assert "| ❌ | policy_adherence ≥ 0.95 | policy_adherence = 0.0000 is below 0.95 |" in text
    assert "| agent | 2 | `policy_violation` 2 |" in text
    assert "| `read_before_write` | 2 |" in text
