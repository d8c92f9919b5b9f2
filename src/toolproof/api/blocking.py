"""Synchronous calls that work wherever they are made: in a plain script, and inside an
event loop that is already running (a Jupyter cell, an async test), where `asyncio.run`
would refuse."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def blocking(work: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run the coroutine `work` makes to its end and return its value: on this thread when
    no event loop runs here, else on a worker thread with a loop of its own (the running
    loop is blocked meanwhile, as a synchronous call blocks it)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work())
    with ThreadPoolExecutor(1, thread_name_prefix="toolproof") as worker:
        return worker.submit(lambda: asyncio.run(work())).result()
