"""Tool and agent code that tries to end, signal, interrupt, fork or outlast the harness:
each ends only its own call or turn, with a reason, and the harness is as it was after."""

from __future__ import annotations

import _thread
import asyncio
import os
import posix
import signal
import threading
import time
from typing import Any

import pytest

from toolproof.bigints import checked, storable
from toolproof.errors import ToolCrashed
from toolproof.tools.base import ToolContext, ToolResult
from toolproof.tools.guard import TurnOverran, suite_code_guarded, within_turn
from toolproof.tools.python import tool
from toolproof.world import World, freeze

REAL = (os._exit, posix._exit, os.kill, signal.signal, signal.setitimer, _thread.interrupt_main)


class Custom(BaseException):
    """A BaseException of the tool's own."""


@tool(timeout_s=2)
def hostile(how: str) -> Any:
    """Misbehaves.

    Args:
        how: Which way.
    """
    if how == "posix_exit":
        posix._exit(3)
    if how == "sigterm":
        os.kill(os.getpid(), signal.SIGTERM)
    if how == "interrupt_main":
        _thread.interrupt_main()
    if how == "disarm":
        signal.setitimer(signal.ITIMER_REAL, 0)
    if how == "ignore_alarm":
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
    if how == "custom":
        raise Custom("mine")
    if how == "generator_exit":
        raise GeneratorExit
    if how == "cancelled":
        raise asyncio.CancelledError
    if how == "bigint":
        return {"n": 2**70, "huge": 10**5000}
    return "fine"


@tool(timeout_s=0.5)
def swallows(world: World, how: str) -> str:
    """Writes to the world, then misbehaves.

    Args:
        how: Which way.
    """
    world["orders"]["A"]["status"] = "touched"
    if how == "swallow":
        while True:
            try:
                time.sleep(3600)
            except BaseException:
                continue
    if how == "exit":
        os._exit(9)
    return "done"


def call(t: Any, arguments: dict[str, Any], world: World | None = None) -> ToolResult:
    context = ToolContext(
        world=world or World(freeze({"orders": {"A": {"status": "new"}}})), seed=1
    )
    result: ToolResult = asyncio.run(t.__toolproof_tool__.call(arguments, context))
    return result


@pytest.mark.parametrize(
    ("how", "said"),
    [
        ("posix_exit", "called os._exit(3)"),
        ("sigterm", "called os.kill(its own process, SIGTERM), refused"),
        ("interrupt_main", "called _thread.interrupt_main(), refused"),
        ("disarm", "called signal.setitimer(ITIMER_REAL), refused"),
        ("ignore_alarm", "called signal.signal(SIGALRM), refused"),
        ("custom", "raised Custom: mine"),
        ("generator_exit", "raised GeneratorExit"),
        ("cancelled", "raised CancelledError"),
    ],
)
def test_a_tool_that_ends_signals_or_interrupts_the_process_crashes_only_its_call(
    how: str, said: str
) -> None:
    with pytest.raises(ToolCrashed) as crashed:
        call(hostile, {"how": how})
    assert str(crashed.value).startswith(f"hostile {said}")
    assert (os._exit, posix._exit, os.kill, signal.signal, signal.setitimer) == REAL[:5]
    assert _thread.interrupt_main is REAL[5]
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_integers_beyond_64_bits_are_kept_as_text() -> None:
    assert storable({"n": 2**70, "ok": [1, 2**63 - 1]}) == {
        "n": "1180591620717411303424",
        "ok": [1, 2**63 - 1],
    }
    assert storable([10**5000]) == ["<an integer of about 5001 digits>"]
    small = {"a": [1, {"b": 2}]}
    assert checked(small) is small


def test_a_process_isolated_tool_changes_the_world_as_in_process() -> None:
    isolated = swallows.__toolproof_tool__.bounded(0.5, "process")  # type: ignore[attr-defined]
    world = World(freeze({"orders": {"A": {"status": "new"}}}))
    result = asyncio.run(isolated.call({"how": "return"}, ToolContext(world=world, seed=1)))
    assert result == ToolResult("done")
    assert world["orders"]["A"]["status"] == "touched"
    assert [c.path for c in world.diff()] == ["/orders/A/status"]


@pytest.mark.parametrize(
    ("how", "said"),
    [
        ("swallow", "did not return within 0.5 s (its timeout_s); its worker process was killed"),
        ("exit", "'s worker process ended without an answer (exit status 9)"),
    ],
)
def test_a_process_isolated_tool_that_hangs_or_exits_is_killed_and_its_world_untouched(
    how: str, said: str
) -> None:
    isolated = swallows.__toolproof_tool__.bounded(0.5, "process")  # type: ignore[attr-defined]
    world = World(freeze({"orders": {"A": {"status": "new"}}}))
    clock = time.monotonic()
    with pytest.raises(ToolCrashed) as crashed:
        asyncio.run(isolated.call({"how": how}, ToolContext(world=world, seed=1)))
    assert time.monotonic() - clock < 5
    assert str(crashed.value).startswith("swallows") and said in str(crashed.value)
    assert world["orders"]["A"]["status"] == "new"


def test_a_turn_that_blocks_the_event_loop_is_interrupted_past_its_deadline() -> None:
    async def blocks() -> str:
        time.sleep(30)
        return "never"

    async def turn() -> str:
        with suite_code_guarded():
            return await within_turn(blocks(), 0.3)

    clock = time.monotonic()
    with pytest.raises(TurnOverran):
        asyncio.run(turn())
    assert time.monotonic() - clock < 5


def test_a_turn_that_awaits_forever_ends_at_its_deadline() -> None:
    async def waits() -> str:
        await asyncio.Event().wait()
        return "never"

    clock = time.monotonic()
    with pytest.raises(TurnOverran):
        asyncio.run(within_turn(waits(), 0.2))
    assert time.monotonic() - clock < 1


def test_a_thread_that_calls_os_exit_after_its_tool_returned_is_told_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with suite_code_guarded():
        later = threading.Thread(target=lambda: os._exit(5), name="late")
        later.start()
        later.join()
    assert capsys.readouterr().err == (
        "warning: thread late of the suite's code ended: os._exit(5) refused\n"
    )
    assert os._exit is REAL[0]


@tool(timeout_s=2)
async def writes_later(world: World) -> dict[str, Any]:
    """Writes to the world after an await.

    Args:
        world: The trial's world.
    """
    await asyncio.sleep(0.01)
    world["orders"]["B"] = {"status": "new", "n": 2**70}
    return {"n": 2**70}


def test_a_process_isolated_async_tool_runs_on_a_loop_of_its_own() -> None:
    isolated = writes_later.__toolproof_tool__.bounded(2, "process")  # type: ignore[attr-defined]
    world = World(freeze({"orders": {"A": {"status": "new"}}}))
    result = asyncio.run(isolated.call({}, ToolContext(world=world, seed=1)))
    assert result == ToolResult({"n": "1180591620717411303424"})
    assert world["orders"]["B"] == {"status": "new", "n": "1180591620717411303424"}


def test_a_dead_threads_warning_shows_its_escape_sequences_rather_than_obeying_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from toolproof.tools import guard

    thread = threading.Thread(name="\x1b]0;owned\x07", target=lambda: None)
    error = RuntimeError("\x1b[2J wiped")
    guard._thread_ended(threading.ExceptHookArgs([RuntimeError, error, None, thread]))
    line = capsys.readouterr().err
    assert "\x1b" not in line and "\x07" not in line
    assert line == (
        "warning: thread \\x1b]0;owned\\x07 of the suite's code ended: "
        "RuntimeError: \\x1b[2J wiped\n"
    )
