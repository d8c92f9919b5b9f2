"""Leases: which process is running a run now, so a second one never runs it at the same time.

The process that starts or resumes a run takes its lease (`take`, inside the store's write
lock) and a background thread renews it while the run goes (`Lease`). Another process may take
the run over once the lease lapsed (its holder stopped renewing it: killed, even with SIGKILL,
or cut off), or at once when the holder was a process of this host that no longer exists, so
re-running the command of a killed run resumes it straight away.
"""

from __future__ import annotations

import os
import platform
import threading
import time
import uuid
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, Engine, delete, select, update
from sqlalchemy.exc import DBAPIError

from toolproof.errors import StoreError
from toolproof.store.schema import run_leases

LEASE_SECONDS = 120.0
"""How long a lease lasts without renewal: long enough for a process stalled by its own work,
short enough that a run cut off on another host can be taken over soon."""

RENEW_SECONDS = 15.0


@dataclass(frozen=True)
class Holder:
    """The process holding a run's lease, as the store says."""

    host: str
    pid: int
    renewed_at: str
    expires: float

    def live(self) -> bool:
        """Still running the run: its lease has not lapsed and, on this host, its process
        exists."""
        if self.expires <= time.time():
            return False
        return self.host != platform.node() or _process_exists(self.pid)

    def busy(self, run_id: str) -> StoreError:
        until = datetime.fromtimestamp(self.expires, UTC).strftime("%H:%M:%S UTC")
        return StoreError(
            f"run {run_id} is being run right now by process {self.pid} on {self.host} "
            f"(it renewed its lease at {self.renewed_at}): wait for it to finish, or give "
            f"--fresh to start a separate run; if that process is gone, the run can be resumed "
            f"after {until}"
        )


def _process_exists(pid: int) -> bool:
    if os.name != "posix":  # no cheap check: the lease's expiry decides
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def holder(conn: Connection, run_id: str) -> Holder | None:
    row = conn.execute(select(run_leases).where(run_leases.c.run_id == run_id)).mappings().first()
    if row is None:
        return None
    return Holder(row["host"], int(row["pid"]), row["renewed_at"], float(row["expires"]))


def take(conn: Connection, run_id: str) -> str:
    """Take the run's lease (call it inside the store's write lock); returns the owner token.
    A live holder is a StoreError saying who holds it and until when."""
    current = holder(conn, run_id)
    if current is not None and current.live():
        raise current.busy(run_id)
    owner = uuid.uuid4().hex
    values = _values(owner)
    if current is None:
        conn.execute(run_leases.insert().values(run_id=run_id, **values))
    else:
        conn.execute(update(run_leases).where(run_leases.c.run_id == run_id).values(**values))
    return owner


def _values(owner: str) -> dict[str, Any]:
    return {
        "owner": owner,
        "host": platform.node(),
        "pid": os.getpid(),
        "renewed_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "expires": time.time() + LEASE_SECONDS,
    }


class Lease:
    """This process's hold on a run, renewed every RENEW_SECONDS by a daemon thread until it
    is released. `lost` is set when another process took the run over meanwhile (this one
    stalled past the lease): the runner then stops starting trials."""

    def __init__(self, engine: Engine, run_id: str, owner: str, resumed: bool) -> None:
        self.engine = engine
        self.run_id = run_id
        self.owner = owner
        self.resumed = resumed
        self.lost = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._renew_until_stopped, daemon=True)
        self._thread.start()

    def _renew_until_stopped(self) -> None:
        while not self._stop.wait(RENEW_SECONDS):
            try:
                if not self.renew():
                    self.lost.set()
                    return
            except Exception:  # a busy or unreachable store: the next beat tries again
                continue

    def renew(self) -> bool:
        """Extend the lease; False when this process no longer holds it."""
        query = (
            update(run_leases)
            .where(run_leases.c.run_id == self.run_id, run_leases.c.owner == self.owner)
            .values(**_values(self.owner))
        )
        with self.engine.begin() as conn:
            return conn.execute(query).rowcount == 1

    def release(self) -> None:
        """Stop renewing and give the run up (idempotent). A store that cannot be written
        (a full disk) keeps the lease row: it names this process, which is gone by the time
        anyone resumes the run here, and lapses for other hosts; the error that stopped the
        run is the one to report."""
        if self._stop.is_set():
            return
        self._stop.set()
        self._thread.join()
        query = delete(run_leases).where(
            run_leases.c.run_id == self.run_id, run_leases.c.owner == self.owner
        )
        with suppress(DBAPIError), self.engine.begin() as conn:
            conn.execute(query)

    def __enter__(self) -> Lease:
        return self

    def __exit__(self, *_: object) -> None:
        self.release()
