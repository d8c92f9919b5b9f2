"""The HTML report's personas and long conversations section: in a real browser, a table of
each persona and checkpoint with the run's own numbers, and the chart against turns."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from stored import mini_suite

from toolproof.report.html import write_report
from toolproof.runner.run import RunRequest, run_suite
from toolproof.store import Store
from toolproof.suite import load_suite

# Slow: the report opened in headless Chromium.
pytestmark = pytest.mark.slow


def test_in_chromium_personas_and_checkpoints_are_drawn_with_their_chart(
    tmp_path: Path, chromium: Any
) -> None:
    suite = load_suite(mini_suite(tmp_path / "mini"))
    store = Store(str(tmp_path / "runs.db"))
    request = RunRequest(
        agent="oracle", trials=2, k=[1, 2], personas=["corrector"], checkpoints=[3, 6]
    )
    report = asyncio.run(run_suite(suite, request, store))
    page = tmp_path / "report.html"
    write_report(store, [report.run_id], page)
    dom = chromium.dump_dom(page.as_uri())
    section = dom[dom.index('id="conversations"') : dom.index('id="breakdown"')]
    text = re.sub(r"<[^>]+>", "|", section)
    assert "|corrector|" in text and "|3|" in text and "|6|" in text
    summary = report.summary
    assert summary.checkpoints is not None and summary.checkpoint_degradation is not None
    six = summary.checkpoints["6"]
    assert f"|{six.user_turns:.2f}|" in text
    assert not re.search(r">(?:undefined|NaN)<", section)
    # the chart of pass rates against conversation length was taken over by Chart.js
    canvas = re.search(r"<canvas[^>]*>", section)
    assert canvas is not None and "box-sizing: border-box" in canvas.group(0)
