"""Which trial a model call serves, for the clients that answer per task.

A run's model clients are shared by all of its trials, and `ModelClient.generate` is told
only the conversation. A client whose answers depend on the task (the scripted provider plays
each task its own turns) reads the trial from here: the runner opens a `trial_scope` around
each trial, and a context variable carries it to every call made inside, however many trials
run at once on one event loop.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any


@dataclass
class TrialScope:
    """One trial as a model client sees it: its task and a place for per-trial state."""

    task_id: str
    seed: int
    state: dict[object, Any] = field(default_factory=dict)
    """Kept by clients for this trial alone (keyed by the client), dropped with the trial."""


_CURRENT: ContextVar[TrialScope | None] = ContextVar("toolproof_trial", default=None)


def current_trial() -> TrialScope | None:
    """The trial the running code serves, or None outside any trial."""
    return _CURRENT.get()


@contextmanager
def trial_scope(task_id: str, seed: int) -> Iterator[TrialScope]:
    """Mark the code inside as serving this trial."""
    scope = TrialScope(task_id, seed)
    token = _CURRENT.set(scope)
    try:
        yield scope
    finally:
        _CURRENT.reset(token)
