"""What `make demo` shows: pass@1, pass@k and pass^k side by side with a line on the gap, the
Reliability Score's missing parts with why, and a line before the embedded model's first
turn (until now a silent wait)."""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path

import pytest
from rich.console import Console
from stored import stored_run, toolproof_ci

from toolproof.report.terminal import summary_notes, summary_tables
from toolproof.store.journal import Store
from toolproof.summaries import stored_summary

EXAMPLES = Path(__file__).parents[2] / "examples"


def printed(store: Store, run_id: str) -> str:
    out = io.StringIO()
    console = Console(file=out, width=250, force_terminal=False)
    summary = stored_summary(store, run_id)
    for table in summary_tables(summary)[:1]:
        console.print(table)
    for note in summary_notes(summary):
        console.print(note)
    return out.getvalue()


def test_the_models_table_sets_pass_at_k_beside_pass_hat_k_and_says_what_the_gap_means(
    tmp_path: Path,
) -> None:
    store = Store(str(tmp_path / "runs.db"))
    # a: 3 of 4 passed, b: 1 of 4; pass@1 0.5, pass@4 1.0 (each passed once), pass^4 0.0
    run_id = stored_run(store, {"a": "PPPF", "b": "PFFF"}, k=(1, 4))
    text = printed(store, run_id)
    header = next(line for line in text.splitlines() if "pass@1" in line)
    cells = [cell.strip() for cell in header.strip("┃").split("┃")]
    assert cells[3:7] == ["pass@1", "pass@4", "pass^4", "tax@4"]
    row = next(line for line in text.splitlines() if line.startswith("│ scripted"))
    assert [cell.strip() for cell in row.strip("│").split("│")][3:7] == [
        "0.500",
        "1.000",
        "0.000",
        "0.500",
    ]
    gap = " ".join(text.split())
    assert (
        "The chance a task passes at least once in 4 tries (pass@4 1.000) against all 4 times "
        "(pass^4 0.000): the gap is success that does not repeat, and one try's pass@1 0.500 "
        "overstates pass^4 by 0.500 (tax@4)." in gap
    )
    assert "recovery_rate (no faults injected and no tool call failed)" in gap


def test_a_run_at_k_1_has_no_gap_to_explain(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "runs.db"))
    run_id = stored_run(store, {"a": "PF"}, k=(1,))
    assert "success that does not repeat" not in printed(store, run_id)


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python is not installed"
)
def test_a_run_of_the_embedded_model_says_it_is_loading_before_its_first_turn(
    tmp_path: Path,
) -> None:
    done = toolproof_ci(
        "run", EXAMPLES / "quickstart", "--tasks", "closing-time", "--trials", "1", "--k", "1",
        "--max-steps", "1", "--max-tokens", "16", "--store", tmp_path / "runs.db",
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    loading = next(i for i, line in enumerate(lines) if line.startswith("loading the embedded"))
    assert lines[loading] == (
        "loading the embedded model local/smollm2 on this machine's CPU: the first trials take "
        "the longest, while it reads each task's prompt"
    )
    assert lines[loading - 1].startswith("run ") and "1/1 trials" in lines[loading + 1]
