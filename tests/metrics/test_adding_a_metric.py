"""docs/architecture.md walks through adding a metric; this runs its two blocks as they are
written, on a real run under a fault profile, and checks what the page says follows: the
metric is in the JSON summary, the gate holds a run to it, the gate's Markdown lists it,
`compare` gives both runs' values, and a misspelt name is refused."""

from __future__ import annotations

import asyncio
import json
import re
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from stored import invoke
from support import MINI_FILES, MINI_SUITE, write_files

from toolproof.ci.compare import compare_runs
from toolproof.metrics.compute import RECORDED
from toolproof.runner.run import RunRequest, run_suite
from toolproof.spec.metrics import CATALOGUE
from toolproof.store import Store
from toolproof.suite import load_suite
from toolproof.summaries import stored_summary

DOC = Path(__file__).parents[2] / "docs" / "architecture.md"
NAME = "tool_errors_per_trial"
FAULTS = """
faults:
  profiles:
    flaky:
      - {kind: server_error, rate: 0.5}
"""


def example() -> list[str]:
    """The Python blocks of the page's "Adding a metric" section, as written."""
    text = DOC.read_text(encoding="utf-8")
    section = text[
        text.index("## Adding a metric") : text.index("\n## ", text.index("## Adding a metric"))
    ]
    blocks = re.findall(r"^( *)```python\n(.*?)^\1```", section, re.MULTILINE | re.DOTALL)
    return [textwrap.dedent(body) for _, body in blocks]


@pytest.fixture
def added() -> Iterator[None]:
    """The page's metric, defined and computed for one test, and taken out again."""
    blocks = example()
    assert len(blocks) == 2
    try:
        for block in blocks:
            exec(block, {})
        yield
    finally:
        if RECORDED.computation(NAME) is not None:
            RECORDED.unregister(NAME)
        if NAME in [d.name for d in CATALOGUE]:
            CATALOGUE.undefine(NAME)


def faulted_run(root: Path, store: Store, seed: int) -> str:
    """The mini suite with the plain oracle (it never retries) under a flaky fault profile."""
    suite_dir = root / "suite"
    if not suite_dir.exists():
        write_files(suite_dir, {**MINI_FILES, "suite.yaml": MINI_SUITE + FAULTS})
    request = RunRequest(
        agent="oracle", faults="flaky", trials=3, k=[1], seed=seed, time_scale=0.001
    )
    return asyncio.run(run_suite(load_suite(suite_dir), request, store, fresh=True)).run_id


def test_a_metric_added_as_the_architecture_page_shows_is_computed_shown_and_gated(
    added: None, tmp_path: Path
) -> None:
    db = tmp_path / "runs.db"
    store = Store(str(db))
    run_id = faulted_run(tmp_path, store, seed=1)
    rows = store.outcomes(run_id)
    expected = sum(row["tool_errors"] for row in rows) / len(rows)
    assert expected > 0
    assert stored_summary(store, run_id).models[0].metrics[NAME] == pytest.approx(expected)

    out = tmp_path / "summary.json"
    assert invoke("show", run_id, "--store", db, "--json", out).code == 0
    assert json.loads(out.read_text(encoding="utf-8"))["metrics"][NAME] == pytest.approx(expected)

    page = tmp_path / "gate.md"
    held = invoke(
        "gate", run_id, "--store", db, "--max", f"{NAME}={expected + 0.01}", "--markdown", page
    )
    assert held.code == 0
    assert f"| `{NAME}` | {expected:.4f} |" in page.read_text(encoding="utf-8")
    assert invoke("gate", run_id, "--store", db, "--max", f"{NAME}={expected / 2}").code == 1
    misspelt = invoke("gate", run_id, "--store", db, "--min", "tool_error_per_trial=1")
    assert misspelt.code == 2 and NAME in str(misspelt.error)

    other = faulted_run(tmp_path, store, seed=2)
    [pair] = compare_runs(store, run_id, other).pairs
    [diff] = [m for m in pair.metrics if m.name == NAME]
    assert diff.a == pytest.approx(expected) and diff.b is not None


def test_without_the_page_s_blocks_the_metric_is_no_name_at_all(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    run_id = faulted_run(tmp_path, Store(str(db)), seed=1)
    refused = invoke("gate", run_id, "--store", db, "--max", f"{NAME}=1")
    assert refused.code == 2 and f"unknown metric '{NAME}'" in str(refused.error)
