"""The interpreter's defaults set aside: the garbage collector paused, frozen or slowed and
restored after; Ctrl-C while modules load held back until they have loaded, then a
KeyboardInterrupt (a KeyboardInterrupt raised inside a C extension's initialization crashed
the interpreter, one raised in an import's clean-up callback was ignored)."""

from __future__ import annotations

import ast
import gc
import os
import signal
import threading
from pathlib import Path

import pytest

from toolproof.perf import ctrl_c_deferred, fewer_collections, gc_frozen, gc_paused


def test_ctrl_c_in_the_block_is_raised_after_it() -> None:
    reached_the_end = False
    with pytest.raises(KeyboardInterrupt), ctrl_c_deferred():
        os.kill(os.getpid(), signal.SIGINT)
        reached_the_end = True
    assert reached_the_end
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_without_ctrl_c_the_block_ends_as_usual() -> None:
    with ctrl_c_deferred():
        pass
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_an_error_in_the_block_goes_through_and_the_handler_is_restored() -> None:
    with pytest.raises(ZeroDivisionError), ctrl_c_deferred():
        _ = 1 / 0
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_handler_of_someone_else_is_left_alone() -> None:
    seen: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda number, _frame: seen.append(number))
    try:
        with ctrl_c_deferred():
            os.kill(os.getpid(), signal.SIGINT)
        assert seen == [signal.SIGINT]
    finally:
        signal.signal(signal.SIGINT, previous)


def test_off_the_main_thread_the_block_just_runs() -> None:
    ran: list[bool] = []

    def block() -> None:
        with ctrl_c_deferred():
            ran.append(True)

    worker = threading.Thread(target=block)
    worker.start()
    worker.join()
    assert ran == [True]


def test_a_paused_collector_resumes_only_after_the_outermost_pause() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_paused_before_stays_paused() -> None:
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_fewer_collections_freezes_what_exists_and_restores_the_thresholds() -> None:
    before = gc.get_threshold()
    with fewer_collections():
        assert gc.get_threshold() == (20_000, 20, 20)
        assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_frozen_objects_are_unfrozen_after_an_error() -> None:
    with pytest.raises(ZeroDivisionError), gc_frozen():
        assert gc.get_freeze_count() > 0
        _ = 1 / 0
    assert gc.get_freeze_count() == 0


SRC = Path(__file__).parent.parent / "src" / "toolproof"


def _set_aside(tree: ast.AST) -> list[str]:
    """What a module does to the interpreter that only `perf` may: import the collector,
    end the process without its teardown."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name == "gc" for a in node.names):
            found.append(f"line {node.lineno}: import gc")
        elif isinstance(node, ast.ImportFrom) and node.module == "gc":
            found.append(f"line {node.lineno}: from gc import")
        elif isinstance(node, ast.Call) and ast.unparse(node.func) == "os._exit":
            found.append(f"line {node.lineno}: os._exit(...)")
    return found


def test_only_perf_sets_the_collector_aside_or_skips_the_teardown() -> None:
    found = {
        str(path.relative_to(SRC)): what
        for path in sorted(SRC.rglob("*.py"))
        if path.name != "perf.py"
        and (what := _set_aside(ast.parse(path.read_text(encoding="utf-8"))))
    }
    assert found == {}
    assert _set_aside(ast.parse((SRC / "perf.py").read_text(encoding="utf-8")))
