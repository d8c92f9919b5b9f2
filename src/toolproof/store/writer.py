"""A run's finished trials, recorded by a thread of their own in batches.

At hundreds of trials in flight, trials end in bursts; writing each in its own transaction on
the event loop (serialising the result, compressing and hashing it, one commit) held back
every other trial's next model call for 1-1.5 ms per finished trial. Here the loop only
queues the result; a thread turns it into a row and writes whatever is queued in one
transaction, at once, so a killed run loses only the trials of the batch being written.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from types import TracebackType

from toolproof.records.trial import TrialResult
from toolproof.store.journal import Store

MAX_BATCH = 256
"""The most trials one transaction holds."""


class TrialWriter:
    """Records a run's finished trials on a thread; `close` waits until all are written.

    A write that fails stops the writer: `failure` holds the error (a StoreError, or a bug),
    which `put` and `close` raise; later results are not written."""

    def __init__(
        self,
        store: Store,
        run_id: str,
        on_written: Callable[[list[TrialResult]], None] = lambda _: None,
    ) -> None:
        """`on_written` is called on the writer's thread with each batch once it is committed."""
        self.store = store
        self.run_id = run_id
        self._on_written = on_written
        self.failure: Exception | None = None
        self._queue: queue.SimpleQueue[TrialResult | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._write_until_closed, daemon=True)
        self._thread.start()

    def put(self, result: TrialResult) -> None:
        """Queue a finished trial for writing; raises the writer's failure, if any."""
        if self.failure is not None:
            raise self.failure
        self._queue.put(result)

    def close(self) -> None:
        """Write everything queued, stop the thread, and raise its failure, if any."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()
        if self.failure is not None:
            raise self.failure

    def _write_until_closed(self) -> None:
        closing = False
        while not closing:
            batch: list[TrialResult] = []
            item = self._queue.get()
            while item is not None:
                batch.append(item)
                if len(batch) >= MAX_BATCH or self._queue.empty():
                    break
                item = self._queue.get()
            closing = item is None
            if batch and self.failure is None:
                try:
                    self.store.write_many(self.run_id, batch)
                    self._on_written(batch)
                except Exception as exc:  # raised on the loop by the next put, or close
                    self.failure = exc

    def __enter__(self) -> TrialWriter:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        """Flush on the way out; a failure of the run itself wins over the writer's."""
        try:
            self.close()
        except Exception:
            if error is None:
                raise
