"""Reading suite.yaml: a key under its old name is read as its new one, located as written.

`tools:` (the tools an agent sees) was once `spectra:`. A suite that still says `spectra:`
loads as if it said `tools:`, with a warning at the line; one that says both is a located
error, not a silent choice of one.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import SOUND, edit, line_with, make_suite

from toolproof.errors import SuiteError
from toolproof.spec.read import read_suite
from toolproof.suite import load_suite

OLD_KEY = edit(SOUND, "tools:\n", "spectra:\n")
BOTH_KEYS = edit(SOUND, "tasks:\n", "spectra:\n  get_order: {tier: 2}\ntasks:\n")
CLI = Path(sys.executable).parent / "toolproof"


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A suite folder that is also the working directory, so problems name `suite.yaml`."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_suite_that_says_spectra_loads_its_tools_from_it(here: Path) -> None:
    with load_suite(make_suite(here, {"suite.yaml": OLD_KEY})) as suite:
        assert list(suite.tools) == ["get_order", "cancel_order"]
        assert (suite.tools["get_order"].tier, suite.tools["cancel_order"].weight) == (1, 0.3)
        assert suite.warnings == [
            f"suite.yaml:{line_with(OLD_KEY, 'spectra:')}: 'spectra:' is the old name of "
            "'tools:'; it is read as 'tools:', rename it"
        ]


def test_a_suite_that_says_tools_has_no_warning_about_names(here: Path) -> None:
    with load_suite(make_suite(here)) as suite:
        assert list(suite.tools) == ["get_order", "cancel_order"]
        assert suite.warnings == []


def test_a_problem_under_spectra_is_located_at_its_line(here: Path) -> None:
    text = edit(OLD_KEY, "spectra:\n", "spectra:\n  refund_order: {tier: 2}\n")
    with pytest.raises(SuiteError) as info:
        load_suite(make_suite(here, {"suite.yaml": text}))
    [problem] = info.value.problems
    assert (problem.path, problem.line) == ("suite.yaml", line_with(text, "refund_order"))
    assert "tool 'refund_order' not found in backend 't'" in problem.message


def test_a_bad_entry_under_spectra_is_located_as_a_tools_entry(here: Path) -> None:
    text = edit(OLD_KEY, "{tier: 1, weight: 0.7}", "{tier: 7, weight: 0.7}")
    source = read_suite(make_suite(here, {"suite.yaml": text}))
    [problem] = source.problems
    assert (problem.path, problem.line) == ("suite.yaml", line_with(text, "tier: 7"))
    assert problem.message.startswith("tools.get_order.tier: ")


def test_a_suite_giving_both_tools_and_spectra_is_a_located_error(here: Path) -> None:
    with pytest.raises(SuiteError) as info:
        load_suite(make_suite(here, {"suite.yaml": BOTH_KEYS}))
    [problem] = info.value.problems
    assert (problem.path, problem.line) == ("suite.yaml", line_with(BOTH_KEYS, "spectra:"))
    assert problem.message == (
        "'spectra:' is the old name of 'tools:'; give the list once, under 'tools:'"
    )


@pytest.mark.slow
def test_validate_names_the_line_of_a_second_tool_list(here: Path) -> None:
    make_suite(here, {"suite.yaml": BOTH_KEYS})
    result = subprocess.run(
        [str(CLI), "validate", "."],
        cwd=here,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2, result.stderr
    assert f"suite.yaml:{line_with(BOTH_KEYS, 'spectra:')}: 'spectra:' is the old name" in (
        result.stderr
    )
    assert "Traceback" not in result.stderr
