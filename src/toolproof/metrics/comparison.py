"""Comparing two runs' trials: per metric and per task, B − A, with paired tests.

Pure: rows of matched trials in, a comparison out (`toolproof.ci.compare` reads the two runs
from a store; `toolproof.report.compare` draws the tables).

Trials are matched by (variant, task, trial index), and by model when both runs ran the same
models. Matched trials met the same seed, so the same simulated user, faults and drift: the
pairs are as alike as the harness can make them, which is what the paired tests need.

- pass@1 and pass^k: the unit is the task (its trials are not independent of each other).
  For each task, d = B − A of the metric on its matched trials; a difference is significant
  when a paired sign-flip permutation test over the tasks gives p < alpha; a paired
  bootstrap over the tasks gives its 1 − alpha interval.
- Per task: did B pass this task less often than A? Fisher's exact test, one-sided, on the
  task's passes in each run, with Holm's correction over the variant's tasks. The gate
  counts the tasks it flags (`max_regressed_tasks`), so `compare` and the gate always agree
  on which tasks regressed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolproof.errors import UsageError
from toolproof.metrics.passk import TaskTrials, pass_hat_k
from toolproof.metrics.stats import (
    exact,
    fisher_regression_p,
    holm_adjusted,
    paired_bootstrap,
    paired_permutation,
)
from toolproof.metrics.summary import InfraPolicy
from toolproof.spec.metrics import CATALOGUE, PASS_AT, PASS_HAT, Group

ALPHA = 0.05
RESAMPLES = 2000


@dataclass(frozen=True)
class MetricDiff:
    """One metric in both runs and B − A; `low`/`high` bound the paired difference."""

    name: str
    a: float | None
    b: float | None
    low: float | None = None
    high: float | None = None
    p_value: float | None = None
    test: str = ""
    significant: bool = False

    @property
    def delta(self) -> float | None:
        return None if self.a is None or self.b is None else self.b - self.a

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "a": self.a,
            "b": self.b,
            "delta": self.delta,
            "ci": None if self.low is None else [self.low, self.high],
            "p_value": self.p_value,
            "test": self.test or None,
            "significant": self.significant,
        }


@dataclass(frozen=True)
class TaskDiff:
    """One task's matched trials: passes in A and in B, and the test that B passes it less
    often: `p_value` is Fisher's one-sided p, `p_adjusted` Holm's over the variant's tasks,
    `significant` (a significant regression) that p_adjusted < alpha."""

    task_id: str
    trials: int
    passed_a: int
    passed_b: int
    a_only: int
    b_only: int
    p_value: float
    p_adjusted: float
    significant: bool
    changed: bool = False
    reasons_b: tuple[str, ...] = ()

    @property
    def delta(self) -> float:
        return (self.passed_b - self.passed_a) / self.trials

    @property
    def regressed(self) -> bool:
        return self.passed_a > self.passed_b

    @property
    def improved(self) -> bool:
        return self.passed_b > self.passed_a

    def as_json(self) -> dict[str, Any]:
        return {
            "task": self.task_id,
            "trials": self.trials,
            "passed_a": self.passed_a,
            "passed_b": self.passed_b,
            "delta": self.delta,
            "a_only": self.a_only,
            "b_only": self.b_only,
            "p_value": self.p_value,
            "p_adjusted": self.p_adjusted,
            "significant": self.significant,
            "regressed": self.regressed,
            "improved": self.improved,
            "task_changed": self.changed,
            "failures_b": list(self.reasons_b),
        }


@dataclass(frozen=True)
class VariantComparison:
    """One variant (clean, a fault profile, a drift variant, a load level) of one model pair."""

    variant: str
    matched: int
    only_a: int
    only_b: int
    a_only: int
    b_only: int
    """Matched trials that passed in A only and in B only (counts, no test: trials of one
    task are not independent, so the tests are over tasks)."""
    metrics: list[MetricDiff]
    tasks: list[TaskDiff]

    @property
    def task_count(self) -> int:
        """The matched tasks: the unit of the tests."""
        return len(self.tasks)

    @property
    def regressed(self) -> list[TaskDiff]:
        return [t for t in self.tasks if t.regressed]

    @property
    def significantly_regressed(self) -> list[TaskDiff]:
        """The tasks the per-task test flags: what the gate's `max_regressed_tasks` counts."""
        return [t for t in self.tasks if t.significant]

    def metric(self, name: str) -> MetricDiff | None:
        return next((m for m in self.metrics if m.name == name), None)

    def as_json(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "matched_trials": self.matched,
            "unmatched_a": self.only_a,
            "unmatched_b": self.only_b,
            "trials": {"a_only": self.a_only, "b_only": self.b_only},
            "metrics": [m.as_json() for m in self.metrics],
            "tasks": [t.as_json() for t in self.tasks],
            "regressed": [t.task_id for t in self.regressed],
        }


@dataclass(frozen=True)
class PairComparison:
    """Model `model_a` of run A against model `model_b` of run B."""

    model_a: str
    model_b: str
    label_a: str
    label_b: str
    variants: list[VariantComparison]
    metrics: list[MetricDiff] = field(default_factory=list)

    @property
    def label(self) -> str:
        return self.label_b if self.label_a == self.label_b else f"{self.label_a} → {self.label_b}"

    def as_json(self) -> dict[str, Any]:
        return {
            "model_a": self.label_a,
            "model_b": self.label_b,
            "variants": [v.as_json() for v in self.variants],
            "metrics": [m.as_json() for m in self.metrics],
        }


@dataclass(frozen=True)
class Comparison:
    """Run B against run A."""

    run_a: str
    run_b: str
    suite: str
    infra_errors: InfraPolicy
    alpha: float
    seed: int
    pairs: list[PairComparison]
    warnings: list[str] = field(default_factory=list)

    @property
    def regressed_tasks(self) -> list[str]:
        """The tasks that passed fewer matched trials in run B, in any pair and variant."""
        return sorted({t.task_id for p in self.pairs for v in p.variants for t in v.regressed})

    @property
    def significantly_regressed_tasks(self) -> list[str]:
        """The tasks the per-task test flags in any pair and variant (what the gate counts)."""
        return sorted(
            {t.task_id for p in self.pairs for v in p.variants for t in v.significantly_regressed}
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "run_a": self.run_a,
            "run_b": self.run_b,
            "suite": self.suite,
            "infra_errors": self.infra_errors,
            "alpha": self.alpha,
            "bootstrap": {"resamples": RESAMPLES, "seed": self.seed, "confidence": 1 - self.alpha},
            "task_test": {"test": "fisher_exact_one_sided", "correction": "holm"},
            "warnings": self.warnings,
            "pairs": [p.as_json() for p in self.pairs],
        }


# ---------------------------------------------------------------- pure comparison


def _passed(outcome: str, infra: InfraPolicy) -> bool | None:
    """A trial's verdict under the infra policy; None when it is left out."""
    if outcome == "infra_error" and infra == "exclude":
        return None
    return outcome == "passed"


def compare_rows(
    rows_a: Sequence[Mapping[str, Any]],
    rows_b: Sequence[Mapping[str, Any]],
    *,
    ks: Sequence[int] = (),
    infra: InfraPolicy = "fail",
    alpha: float = ALPHA,
    seed: int = 0,
    resamples: int = RESAMPLES,
    changed: Iterable[str] = (),
) -> list[VariantComparison]:
    """Compare one model's trials in run A with one model's trials in run B, per variant
    present in both (the clean variant first). `ks` are the pass^k values wanted; a k above
    some matched task's number of pairs is left out. `changed` names tasks whose content
    differs between the runs (flagged, still compared)."""
    by_a = _index(rows_a)
    by_b = _index(rows_b)
    changed_tasks = set(changed)
    variants = sorted(set(by_a) & set(by_b), key=lambda v: (v != "", v))
    out = []
    for variant in variants:
        out.append(
            _compare_variant(
                variant,
                by_a[variant],
                by_b[variant],
                ks,
                infra,
                alpha,
                seed,
                resamples,
                changed_tasks,
            )
        )
    return out


def _index(
    rows: Sequence[Mapping[str, Any]],
) -> dict[str, dict[str, dict[int, Mapping[str, Any]]]]:
    """variant -> task -> trial index -> row."""
    out: dict[str, dict[str, dict[int, Mapping[str, Any]]]] = defaultdict(lambda: defaultdict(dict))
    for row in rows:
        out[row.get("variant", "")][row["task_id"]][int(row["trial"])] = row
    return out


def _compare_variant(
    variant: str,
    tasks_a: Mapping[str, Mapping[int, Mapping[str, Any]]],
    tasks_b: Mapping[str, Mapping[int, Mapping[str, Any]]],
    ks: Sequence[int],
    infra: InfraPolicy,
    alpha: float,
    seed: int,
    resamples: int,
    changed: set[str],
) -> VariantComparison:
    total_a = sum(len(t) for t in tasks_a.values())
    total_b = sum(len(t) for t in tasks_b.values())
    pairs: dict[str, list[tuple[bool, bool]]] = {}
    reasons: dict[str, set[str]] = defaultdict(set)
    matched = 0
    for task_id in sorted(set(tasks_a) & set(tasks_b)):
        trials_a, trials_b = tasks_a[task_id], tasks_b[task_id]
        kept = []
        for index in sorted(set(trials_a) & set(trials_b)):
            matched += 1
            a = _passed(trials_a[index]["outcome"], infra)
            b = _passed(trials_b[index]["outcome"], infra)
            if a is None or b is None:
                continue
            kept.append((a, b))
            if not b and trials_b[index].get("reason"):
                reasons[task_id].add(str(trials_b[index]["reason"]))
        if kept:
            pairs[task_id] = kept
    a_only = sum(a and not b for task in pairs.values() for a, b in task)
    b_only = sum(b and not a for task in pairs.values() for a, b in task)
    tasks = _task_tests(pairs, alpha, changed, reasons)
    metrics: list[MetricDiff] = []
    if pairs:
        fewest = min(len(kept) for kept in pairs.values())
        a_trials = [TaskTrials(t, tuple(a for a, _ in kept)) for t, kept in pairs.items()]
        b_trials = [TaskTrials(t, tuple(b for _, b in kept)) for t, kept in pairs.items()]
        a1 = [t.c / t.n for t in a_trials]
        b1 = [t.c / t.n for t in b_trials]
        metrics.append(_over_tasks(PASS_AT.at(k=1), a1, b1, alpha, seed, resamples))
        for k in sorted({k for k in ks if 1 < k <= fewest}):
            name = PASS_HAT.at(k=k)
            ak = [pass_hat_k(t.n, t.c, k) for t in a_trials]
            bk = [pass_hat_k(t.n, t.c, k) for t in b_trials]
            metrics.append(_over_tasks(name, ak, bk, alpha, seed, resamples))
    return VariantComparison(
        variant=variant,
        matched=matched,
        only_a=total_a - matched,
        only_b=total_b - matched,
        a_only=a_only,
        b_only=b_only,
        metrics=metrics,
        tasks=tasks,
    )


def _task_tests(
    pairs: Mapping[str, Sequence[tuple[bool, bool]]],
    alpha: float,
    changed: set[str],
    reasons: Mapping[str, set[str]],
) -> list[TaskDiff]:
    """Each task's passes in A against B (Fisher, one-sided), Holm-adjusted over the tasks;
    the worst change first."""
    passes = [(sum(a for a, _ in kept), sum(b for _, b in kept)) for kept in pairs.values()]
    p_values = [
        fisher_regression_p(a, len(kept), b, len(kept))
        for (a, b), kept in zip(passes, pairs.values(), strict=True)
    ]
    level = exact(alpha)
    tasks = [
        TaskDiff(
            task_id=task_id,
            trials=len(kept),
            passed_a=passed_a,
            passed_b=passed_b,
            a_only=sum(a and not b for a, b in kept),
            b_only=sum(b and not a for a, b in kept),
            p_value=float(p),
            p_adjusted=float(p_adj),
            significant=p_adj < level,
            changed=task_id in changed,
            reasons_b=tuple(sorted(reasons.get(task_id, ()))),
        )
        for (task_id, kept), (passed_a, passed_b), p, p_adj in zip(
            pairs.items(), passes, p_values, holm_adjusted(p_values), strict=True
        )
    ]
    tasks.sort(key=lambda t: (t.delta, t.task_id))
    return tasks


def _over_tasks(
    name: str, a: list[float], b: list[float], alpha: float, seed: int, resamples: int
) -> MetricDiff:
    """A per-task metric in both runs, tested with the task as the unit: the paired
    permutation test's p decides significance, the paired bootstrap gives the interval."""
    _, low, high = paired_bootstrap(a, b, confidence=1 - alpha, resamples=resamples, seed=seed)
    p = paired_permutation(a, b, seed=seed)
    mean_a, mean_b = sum(a) / len(a), sum(b) / len(b)
    return MetricDiff(name, mean_a, mean_b, low, high, p, "permutation", p < alpha)


def pair_models(models_a: Sequence[str], models_b: Sequence[str]) -> list[tuple[str, str]]:
    """Which model of A each model of B is compared with: the same model when both runs ran
    the same ones (or share some), else the single model of one run against each of the
    other's."""
    if set(models_a) == set(models_b):
        return [(m, m) for m in models_b]
    if len(models_a) == 1:
        return [(models_a[0], m) for m in models_b]
    if len(models_b) == 1:
        return [(m, models_b[0]) for m in models_a]
    shared = [m for m in models_b if m in models_a]
    if shared:
        return [(m, m) for m in shared]
    raise UsageError(
        f"cannot pair the models of the two runs ({', '.join(models_a)} against "
        f"{', '.join(models_b)}): compare runs of the same models, or a run of one model"
    )


def listed() -> list[str]:
    """The metrics `toolproof compare` lists next to its tests, in order: the score, the
    conditions, what a run spent and its infra errors."""
    groups: tuple[Group, ...] = ("score", "conditions", "economics", "outcomes")
    return [d.name for d in CATALOGUE.where("compare", groups)]
