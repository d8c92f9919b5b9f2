"""The local executor: trials under asyncio, at most `concurrency` at a time.

Each of `concurrency` slots runs one trial after another, pulling specs from one iterator,
so memory holds `concurrency` trials, not the whole plan. A trial hands its slot on as soon
as it needs no more I/O (`hand_over`): the next trial starts, and sends its first model call,
before the finished one is graded. When hundreds of trials end at the same moment, their
grading then runs while the next ones wait on the model, not in front of them.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable, Iterable

from toolproof.records.trial import TrialResult
from toolproof.runner.plan import PlannedTrial

_slot: contextvars.ContextVar[Callable[[], None] | None] = contextvars.ContextVar(
    "toolproof_slot", default=None
)


async def hand_over() -> None:
    """Give the running trial's slot to the next trial and let that one start first (a
    no-op outside the local executor, or when the slot was handed on already)."""
    start_next = _slot.get()
    if start_next is None:
        return
    _slot.set(None)
    start_next()
    await asyncio.sleep(0)  # the next trial runs up to its first model call


async def execute(
    specs: Iterable[PlannedTrial],
    run_one: Callable[[PlannedTrial], Awaitable[TrialResult]],
    concurrency: int,
    on_result: Callable[[TrialResult], None],
    should_stop: Callable[[], bool] = lambda: False,
    *,
    early: bool = True,
) -> None:
    """Run every spec; each result goes to `on_result` as soon as it is finished.

    With `early` false a slot passes on only after `on_result`: when `should_stop` depends
    on the finished trial (a cost budget), the next one must not start before it is counted.
    """
    pending = iter(specs)
    base = contextvars.copy_context()  # each trial starts from the caller's context

    async with asyncio.TaskGroup() as group:

        def start_next() -> bool:
            """Start the next trial; False when there is none to start."""
            if should_stop():
                return False
            spec = next(pending, None)
            if spec is None:
                return False
            handed = False

            def once() -> None:
                nonlocal handed
                if not handed:
                    handed = True
                    start_next()

            context = base.copy()
            if early:
                context.run(_slot.set, once)
            group.create_task(slot(spec, once), context=context)
            return True

        async def slot(spec: PlannedTrial, once: Callable[[], None]) -> None:
            on_result(await run_one(spec))
            once()  # a trial that did not hand its slot over itself

        for _ in range(max(1, concurrency)):
            if not start_next():  # fewer trials than slots
                break
