"""Planning a run: one PlannedTrial per (variant, task, trial), each with a derived seed."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from toolproof.spec.task import Task


def derive_seed(suite_seed: int, variant: str, task_id: str, trial: int) -> int:
    """A trial's seed: a hash of (suite seed, variant, task id, trial index), never random."""
    key = f"{suite_seed}\0{variant}\0{task_id}\0{trial}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big") >> 1


@dataclass(frozen=True)
class PlannedTrial:
    """One trial of a run as planned: which task, which of its trials, the model and the
    variant, and the seed; `runner.build.Wiring.trial` makes it a `Trial` to play."""

    task_id: str
    trial: int
    seed: int
    variant: str = ""
    model: str = ""

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.variant, self.model, self.task_id, self.trial)


def plan(
    tasks: list[Task],
    trials: int,
    suite_seed: int,
    models: list[str] | None = None,
    variant: str = "",
) -> list[PlannedTrial]:
    """Trials in round-robin order (trial 0 of every task and model first), so a partial
    run is even, with the models interleaved task by task: the trials in flight at any moment
    spread over every model, so no model's limit of calls in flight holds the run back while
    the others sit idle. The seed does not depend on the model: every model meets the same
    trial."""
    return [
        PlannedTrial(
            task_id=task.id,
            trial=index,
            seed=derive_seed(suite_seed, variant, task.id, index),
            variant=variant,
            model=model,
        )
        for index in range(trials)
        for task in tasks
        for model in models or [""]
    ]
