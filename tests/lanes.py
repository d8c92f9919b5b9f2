"""The two test lanes, kept honest.

`make test-fast` runs every test not marked `slow` (`pytest -m "not slow"`); `make test` and CI
run them all. A test is slow when it starts a process (the CLI, an MCP server, PostgreSQL,
Chromium, Ray, a llama.cpp server) or loads the embedded model. So that a new slow test cannot
slip into the fast lane unmarked, a test not marked `slow` is refused both, in every lane:
while its fixtures are set up and while it runs, `subprocess.Popen` (which `subprocess.run`
and asyncio's subprocesses go through) and the embedded model's loading raise, and the test
fails with a message naming the marker, even where the code under test catches the error.
A test's teardown is left alone: a session fixture's finalizer (stopping PostgreSQL) runs in
the teardown of whichever test happens to be last. tests/conftest.py installs the hooks.
"""

from __future__ import annotations

import platform
import subprocess
from collections.abc import Generator, Iterator, Sequence
from contextlib import contextmanager
from os import PathLike
from typing import Any

import pytest

from toolproof.models.local.engine import Engine

# The openai SDK's request headers ask `platform` about the machine, which runs `uname -p`
# once per process: asked here, before any test, that is no test's process.
platform.processor()

SLOW = "slow"
HOW_TO_MARK = (
    f"mark it `@pytest.mark.{SLOW}` (or its file `pytestmark = pytest.mark.{SLOW}`); "
    f'the fast lane (`make test-fast`, pytest -m "not {SLOW}") starts no process and '
    "loads no embedded model"
)


class SlowInFastLane(RuntimeError):
    """What a test not marked slow meets when it starts a process or loads the model."""


def _command(args: str | bytes | PathLike[str] | Sequence[Any]) -> str:
    if isinstance(args, str | bytes | PathLike):
        return str(args)
    return " ".join(str(part) for part in args)


@contextmanager
def refusing_slow_work() -> Iterator[list[str]]:
    """While open, starting a process or loading the embedded model raises `SlowInFastLane`;
    yields the list of what was refused, each as the words of the failure message."""
    refused: list[str] = []

    def refuse(what: str) -> SlowInFastLane:
        refused.append(what)
        return SlowInFastLane(f"this test is not marked {SLOW} but {what}: {HOW_TO_MARK}")

    class RefusedPopen(subprocess.Popen[Any]):
        def __new__(cls, args: Any, *_: Any, **__: Any) -> RefusedPopen:
            raise refuse(f"started a process ({_command(args)})")

    def refused_load(self: Engine) -> Any:
        raise refuse(f"loaded the embedded model ({self.path})")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(subprocess, "Popen", RefusedPopen)
        patch.setattr(Engine, "load", refused_load)
        yield refused


def _fast_only(item: pytest.Item) -> Generator[None, object, object]:
    """Run one phase of `item`, refusing slow work unless it is marked slow; fail it, naming
    the marker, if it tried any (whatever the code under test made of the refusal)."""
    if item.get_closest_marker(SLOW) is not None:
        return (yield)
    with refusing_slow_work() as refused:
        try:
            outcome = yield
        except BaseException:
            if refused:
                raise _unmarked(item, refused[0]) from None
            raise
    if refused:
        raise _unmarked(item, refused[0])
    return outcome


def _unmarked(item: pytest.Item, what: str) -> BaseException:
    message = f"{item.nodeid} is not marked {SLOW} but {what}: {HOW_TO_MARK}"
    return pytest.fail.Exception(message, pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, object, object]:
    """Fixtures of a test not marked slow start no process either (a session fixture that
    starts a server, set up for the first test that asks for it)."""
    return (yield from _fast_only(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    return (yield from _fast_only(item))
