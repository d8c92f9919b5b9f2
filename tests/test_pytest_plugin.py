"""The pytest plug-in, in a pytest of its own: the gate-1 test of docs/ci.md passes as
written, and a failing assertion on a run's metric shows the run's failing tasks."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
CI_PAGE = ROOT / "docs" / "ci.md"

pytestmark = pytest.mark.slow  # each test runs pytest in a process of its own


def docs_test() -> str:
    """The Python test docs/ci.md shows for gate 1."""
    blocks = re.findall(r"```python\n(.*?)```", CI_PAGE.read_text(encoding="utf-8"), re.S)
    found = [block for block in blocks if block.startswith("# tests/test_reliability.py")]
    assert len(found) == 1, "docs/ci.md shows the gate-1 test once"
    return found[0]


def pytest_run(folder: Path, source: str, *flags: str) -> subprocess.CompletedProcess[str]:
    """pytest on one test file, with the plug-in as the `pytest11` entry point loads it, run
    from the repository's root (where the docs' paths lead)."""
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (folder / "test_reliability.py").write_text(source, encoding="utf-8")
    env = {
        **os.environ,
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",  # this plug-in alone, whatever else is installed
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
        "NO_COLOR": "1",
    }
    env.pop("CI", None)  # pytest shows an explanation whole on CI
    return subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-p", "toolproof.pytest_plugin"),
            *("-p", "no:cacheprovider", "--rootdir", str(folder), *flags),
            str(folder / "test_reliability.py"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_gate_1_test_of_the_ci_docs_passes_as_written(tmp_path: Path) -> None:
    ran = pytest_run(tmp_path, docs_test())
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-2000:]
    assert "1 passed" in ran.stdout


def test_a_failing_metric_assertion_shows_the_runs_failing_tasks(tmp_path: Path) -> None:
    failing = docs_test().replace('agent="oracle"', 'agent="null"')
    ran = pytest_run(tmp_path, failing)
    assert ran.returncode == 1, ran.stdout[-3000:]
    output = ran.stdout
    assert re.search(r"assert 0\.0 >= 0\.9: pass\^4 of run \S+ is 0\.000", output), output
    assert "of suite 'retail' 1: 0 of 136 trials passed" in output
    assert "failing tasks (34):" in output and "... and 31 more" in output
    assert re.search(r"address-change-blocked-erp-shipped +0/4 passed +reads: .{30,}\.\.\.", output)
    assert "Full output truncated" not in output
    verbose = pytest_run(tmp_path, failing, "-vv")
    assert "... and 14 more" in verbose.stdout  # all the table shows, at -vv


def test_the_plugin_is_registered_for_pytest_to_load() -> None:
    entry = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert entry["project"]["entry-points"]["pytest11"] == {"toolproof": "toolproof.pytest_plugin"}
