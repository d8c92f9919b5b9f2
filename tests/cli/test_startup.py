"""What `toolproof run` imports before its first trial: a run that calls no provider's
model never pays for importing that provider's SDK (importing the OpenAI SDK alone takes a
second or more)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).parents[2] / "examples"


def imported_packages(*args: str | Path) -> set[str]:
    """The top-level packages a command imports, read from `python -X importtime`."""
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
    return {name.split(".")[0] for name in names}


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
