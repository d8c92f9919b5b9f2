"""Ctrl-C while modules load: held back until they have loaded, then a KeyboardInterrupt
(a KeyboardInterrupt raised inside a C extension's initialization crashed the interpreter,
one raised in an import's clean-up callback was ignored)."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from toolproof.cli import ctrl_c_deferred


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
