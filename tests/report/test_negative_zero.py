"""No number is shown as `-0.000`: a value that rounds to zero (a negative zero, or the last
bit of a float's error, as in the checkpoint degradation of a flat run over 3, 8 and 15 user
turns: -1.8e-16) is shown as zero in the terminal, the Markdown, the gate and the HTML
report."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from stored import mini_suite, toolproof_ci

from toolproof.format import fixed, fmt
from toolproof.metrics.checkpoints import degradation
from toolproof.report.html import write_report
from toolproof.runner.run import RunRequest, run_suite
from toolproof.store import Store
from toolproof.suite import load_suite


@pytest.mark.parametrize(
    ("value", "digits", "signed", "shown"),
    [
        (-0.0, 3, False, "0.000"),
        (-1.8e-16, 3, False, "0.000"),
        (-0.0004, 3, False, "0.000"),
        (-0.0004, 3, True, "+0.000"),
        (-0.0006, 3, False, "-0.001"),
        (-0.00004, 4, True, "+0.0000"),
        (0.25, 2, True, "+0.25"),
    ],
)
def test_a_value_that_rounds_to_zero_is_shown_without_a_sign(
    value: float, digits: int, signed: bool, shown: str
) -> None:
    assert fixed(value, digits, signed) == shown
    assert fmt(value, digits, signed) == shown


@pytest.fixture(scope="module")
def flat(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The oracle at checkpoints 3, 8 and 15: every rate 1.0, a degradation of -1.8e-16."""
    root = tmp_path_factory.mktemp("flat")
    suite = load_suite(mini_suite(root / "mini"))
    store = Store(str(root / "runs.db"))
    request = RunRequest(agent="oracle", trials=2, k=[1, 2], checkpoints=[3, 8, 15])
    report = asyncio.run(run_suite(suite, request, store))
    assert report.summary.checkpoint_degradation is not None
    assert -1e-12 < report.summary.checkpoint_degradation.value < 0  # the float's error
    return root / "runs.db", report.run_id


@pytest.mark.slow
def test_the_terminal_markdown_and_gate_show_a_flat_degradation_as_zero(
    flat: tuple[Path, str], tmp_path: Path
) -> None:
    store, run_id = flat
    shown = toolproof_ci("show", run_id, "--store", store)
    assert "(pass@1 lost per 10 user turns): 0.000 [0.000, 0.000]" in shown.stdout
    markdown = tmp_path / "gate.md"
    gate = toolproof_ci(
        "gate", run_id, "--store", store, "--max", "checkpoint_degradation=0.05",
        "--markdown", markdown,
    )  # fmt: skip
    assert gate.returncode == 0, gate.stdout + gate.stderr
    for text in (shown.stdout, gate.stdout, markdown.read_text()):
        assert not re.search(r"[-−]0\.0+\b", text)
    assert "checkpoint_degradation = 0.0000" in gate.stdout


@pytest.mark.slow
def test_in_chromium_a_flat_degradation_is_shown_as_zero(
    flat: tuple[Path, str], tmp_path: Path, chromium: Any
) -> None:
    store, run_id = flat
    page = tmp_path / "report.html"
    write_report(Store(str(store)), [run_id], page)
    dom = chromium.dump_dom(page.as_uri())
    text = re.sub(r"<[^>]+>", "|", dom)
    assert not re.search(r"[-−]0\.0+\b", text)
    assert re.search(r"\|0\.000\|", text)


def test_the_degradation_of_flat_rates_is_a_float_error_below_zero() -> None:
    """Why the formatting matters: the metric itself is exact only to the float."""
    rates = {n: {"a": 1.0, "b": 0.5} for n in (3, 8, 15)}
    assert -1e-12 < degradation(rates, 0)["value"] < 0
