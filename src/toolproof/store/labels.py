"""Human labels: people's pass/fail on a run's trials, kept beside the automated verdicts.

One row per (trial, criterion, labeller): the criterion is `outcome` (the trial's own
outcome) or a rubric criterion's name. Labels never change a trial's stored outcome; they are
what `toolproof agreement` measures the graders against. Labelling a trial again replaces
that labeller's earlier label.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import delete, select

from toolproof.records.trial import TrialResult
from toolproof.spec.expectations import OUTCOME_LABEL
from toolproof.store.journal import Store, now
from toolproof.store.rows import TrialKey
from toolproof.store.schema import labels


@dataclass(frozen=True)
class Label:
    """One person's pass/fail on one criterion of one trial."""

    trial: TrialKey
    criterion: str
    labeller: str
    passed: bool


def save_labels(store: Store, run_id: str, given: Iterable[Label]) -> int:
    """Record labels in one transaction (each replacing the same labeller's earlier one);
    returns how many."""
    rows = [
        {
            "run_id": run_id,
            "variant": label.trial[0],
            "model": label.trial[1],
            "task_id": label.trial[2],
            "trial": label.trial[3],
            "criterion": label.criterion,
            "labeller": label.labeller,
            "label": "pass" if label.passed else "fail",
            "labelled_at": now(),
        }
        for label in given
    ]
    if not rows:
        return 0
    store.check_sound()
    with store.engine.begin() as conn:
        for row in rows:
            conn.execute(
                delete(labels).where(
                    *(labels.c[name] == row[name] for name in _IDENTITY),
                )
            )
        conn.execute(labels.insert(), rows)
    return len(rows)


_IDENTITY = ("run_id", "variant", "model", "task_id", "trial", "criterion", "labeller")


def run_labels(store: Store, run_id: str) -> list[Label]:
    """Every label of a run, in trial order."""
    query = (
        select(labels)
        .where(labels.c.run_id == run_id)
        .order_by(
            labels.c.variant,
            labels.c.model,
            labels.c.task_id,
            labels.c.trial,
            labels.c.criterion,
            labels.c.labeller,
        )
    )
    with store.engine.connect() as conn:
        return [
            Label(
                trial=(row.variant, row.model, row.task_id, row.trial),
                criterion=row.criterion,
                labeller=row.labeller,
                passed=row.label == "pass",
            )
            for row in conn.execute(query)
        ]


def trial_items(result: TrialResult) -> list[tuple[str, bool, str]]:
    """What people label on a trial, with the automated verdict and its reason: the outcome
    (the code graders' and the judge's verdict together) and each rubric criterion. A trial
    that ended in an infra error has no verdict to check, so nothing."""
    if result.outcome == "infra_error":
        return []
    items = [(OUTCOME_LABEL, result.outcome == "passed", result.reason or "every check held")]
    if result.judge is not None:
        items += [(c.name, c.passed, c.explanation) for c in result.judge.criteria]
    return items


def trial_key(result: TrialResult) -> TrialKey:
    return (result.variant, result.model, result.task_id, result.trial)
