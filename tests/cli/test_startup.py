"""What commands import: a run that calls no provider's model never pays for importing that
provider's SDK (importing the OpenAI SDK alone takes a second or more), and the commands that
read a store (the gate in CI) never import the graders, whole results or transcripts."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

# Slow: the CLI's start-up, timed in processes of its own.
pytestmark = pytest.mark.slow

EXAMPLES = Path(__file__).parents[2] / "examples"


def imported_modules(*args: str | Path) -> set[str]:
    """The modules a command imports, read from `python -X importtime`."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "toolproof", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    names = re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*([\w.]+)$", result.stderr, re.M)
    assert names, "python -X importtime printed nothing"
    return set(names)


def imported_packages(*args: str | Path) -> set[str]:
    """The top-level packages a command imports."""
    return {name.split(".")[0] for name in imported_modules(*args)}


def test_an_oracle_run_imports_no_model_provider_sdk(tmp_path: Path) -> None:
    packages = imported_packages(
        "run",
        EXAMPLES / "quickstart",
        "--agent",
        "oracle",
        "--trials",
        "1",
        "--k",
        "1",
        "--store",
        tmp_path / "runs.db",
    )
    assert "toolproof" in packages
    assert not packages & {"openai", "anthropic", "llama_cpp", "ray"}


def test_the_gate_imports_no_grader_result_or_transcript(tmp_path: Path) -> None:
    """It reads the suite's gate: section (the suite models, YAML) and the run's rows."""
    store = tmp_path / "runs.db"
    quickstart = ["run", EXAMPLES / "quickstart", "--agent", "oracle", "--trials", "1"]
    ran = subprocess.run(
        [sys.executable, "-m", "toolproof", *map(str, quickstart), "--k", "1", "--store", store],
        capture_output=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    modules = imported_modules("gate", "latest", "--min", "pass@1=0", "--store", store)
    assert "toolproof.store.verify" in modules and "toolproof.metrics.summary" in modules
    heavy = {"toolproof.transcript", "toolproof.graders", "toolproof.records.trial"}
    assert not modules & heavy
