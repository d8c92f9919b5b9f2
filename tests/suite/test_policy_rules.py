"""A suite's policy rule settings are checked against its tools before anything runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support import SOUND, edit, line_with, make_suite

# Slow: every test here runs the CLI as a process.
pytestmark = pytest.mark.slow

RULES = """policy_rules:
  - confirm_before_write
  - rule: identify_before_access
    identify: [cancel_order]
    access: [get_orders]
  - rule: read_before_write
    require:
      - {write: get_order, read: cancel_order, match: {order: order_id}}
  - rule: refuse_with_reason
    reasons: ["..."]
"""


def validate(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolproof", "validate", str(root)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_rule_settings_that_name_the_wrong_tools_are_each_reported_at_their_line(
    tmp_path: Path,
) -> None:
    text = edit(SOUND, "policy_rules: [confirm_before_write]\n", RULES)
    done = validate(make_suite(tmp_path / "s", {"suite.yaml": text}))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    out = done.stdout + done.stderr
    identify, access = line_with(text, "identify: ["), line_with(text, "access: [")
    require, reasons = line_with(text, "{write: get_order"), line_with(text, 'reasons: ["..."]')
    for problem in (
        f"suite.yaml:{identify}: identify_before_access: 'cancel_order' is not a read tool",
        f"suite.yaml:{access}: identify_before_access: unknown tool 'get_orders'",
        f"suite.yaml:{require}: read_before_write: 'cancel_order' is not a read tool",
        f"suite.yaml:{require}: read_before_write: 'get_order' is not a write tool",
        f"suite.yaml:{require}: read_before_write: get_order has no argument 'order'",
        f"suite.yaml:{reasons}: refuse_with_reason: reason '...' has no letters or digits",
    ):
        assert problem in out
    assert "6 problem(s)" in out


def test_an_unknown_rule_name_lists_the_rules_that_exist(tmp_path: Path) -> None:
    text = edit(SOUND, "policy_rules: [confirm_before_write]", "policy_rules: [be_polite]")
    done = validate(make_suite(tmp_path / "s", {"suite.yaml": text}))
    assert done.returncode == 2
    out = done.stdout + done.stderr
    assert f"suite.yaml:{line_with(text, 'be_polite')}:" in out
    assert (
        "unknown policy rule 'be_polite'; rules: confirm_before_write, identify_before_access"
        in out
    )


def test_sound_rule_settings_validate(tmp_path: Path) -> None:
    rules = """policy_rules:
  - confirm_before_write
  - rule: read_before_write
    require:
      - {write: cancel_order, read: get_order, match: {order_id: order_id}}
"""
    text = edit(SOUND, "policy_rules: [confirm_before_write]\n", rules)
    done = validate(make_suite(tmp_path / "s", {"suite.yaml": text}))
    assert done.returncode == 0, done.stdout + done.stderr
