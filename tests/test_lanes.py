"""The fast lane holds its marking: a test not marked slow that starts a process or loads the
embedded model fails, naming the marker, in a pytest session of its own (tests/lanes.py)."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import pytest
from lanes import SLOW, SlowInFastLane, refusing_slow_work

from toolproof.models.local.engine import Engine

PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"

SESSION_CONFTEST = 'pytest_plugins = ["lanes"]\n'

SESSION_TESTS = """
import asyncio
import subprocess

import pytest

from toolproof.models.local.engine import Engine


def test_runs_a_process():
    subprocess.run(["true"], check=True)


def test_runs_a_process_and_swallows_the_error():
    try:
        subprocess.run(["true"], check=True)
    except Exception:
        pass


def test_runs_an_asyncio_subprocess():
    async def main():
        process = await asyncio.create_subprocess_exec("true")
        await process.wait()

    asyncio.run(main())


def test_loads_the_embedded_model():
    Engine(path="model.gguf", n_ctx=512, n_threads=1).load()


@pytest.fixture
def server():
    return subprocess.Popen(["true"])


def test_uses_a_fixture_that_starts_a_server(server):
    pass


def test_computes():
    assert sum(range(4)) == 6


@pytest.mark.slow
def test_marked_slow_computes():
    assert sum(range(4)) == 6
"""


def lane_session(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    pytester.makeini(f"[pytest]\naddopts = --strict-markers\nmarkers =\n    {SLOW}: slow\n")
    pytester.makeconftest(SESSION_CONFTEST)
    pytester.makepyfile(test_session=SESSION_TESTS)
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", "-rfE", *args)


def test_a_test_not_marked_slow_that_starts_a_process_or_loads_the_model_fails_naming_the_marker(
    pytester: pytest.Pytester,
) -> None:
    session = lane_session(pytester)
    session.assert_outcomes(passed=2, failed=4, errors=1)
    out = session.stdout.str()
    for name, what in [
        ("test_runs_a_process", "started a process (true)"),
        ("test_runs_a_process_and_swallows_the_error", "started a process (true)"),
        ("test_runs_an_asyncio_subprocess", "started a process (true)"),
        ("test_loads_the_embedded_model", "loaded the embedded model (model.gguf)"),
        ("test_uses_a_fixture_that_starts_a_server", "started a process (true)"),
    ]:
        assert f"test_session.py::{name} is not marked slow but {what}: mark it" in out
    assert "`@pytest.mark.slow`" in out and 'pytest -m "not slow"' in out


def test_the_fast_lane_deselects_what_is_marked_slow(pytester: pytest.Pytester) -> None:
    session = lane_session(pytester, "-m", f"not {SLOW}", "-k", "computes")
    session.assert_outcomes(passed=1, deselected=6)


def test_refusing_slow_work_restores_processes_and_the_model_loader() -> None:
    popen, load = subprocess.Popen, Engine.load
    with refusing_slow_work() as refused, pytest.raises(SlowInFastLane, match="marked slow"):
        subprocess.check_output(["echo", "hi"])
    assert refused == ["started a process (echo hi)"]
    assert (subprocess.Popen, Engine.load) == (popen, load)


def test_the_slow_marker_is_registered_and_markers_are_strict() -> None:
    options = tomllib.loads(PYPROJECT.read_text())["tool"]["pytest"]["ini_options"]
    assert "--strict-markers" in options["addopts"].split()
    assert any(line.startswith(f"{SLOW}: ") for line in options["markers"])
