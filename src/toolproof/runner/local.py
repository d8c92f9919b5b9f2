"""The local executor: trials under asyncio, at most `concurrency` at a time.

Workers pull from one iterator, so memory holds `concurrency` trials, not the whole plan.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable

from toolproof.results import TrialResult
from toolproof.runner.plan import TrialSpec


async def execute(
    specs: Iterable[TrialSpec],
    run_one: Callable[[TrialSpec], Awaitable[TrialResult]],
    concurrency: int,
    on_result: Callable[[TrialResult], None],
    should_stop: Callable[[], bool] = lambda: False,
) -> None:
    """Run every spec; each result goes to `on_result` as soon as it is finished."""
    pending = iter(specs)

    async def worker() -> None:
        for spec in pending:
            if should_stop():
                return
            on_result(await run_one(spec))

    async with asyncio.TaskGroup() as group:
        for _ in range(max(1, concurrency)):
            group.create_task(worker())
