"""Comparing two runs: per metric and per task, B − A, with paired tests over matched trials.

Trials are matched by (variant, task, trial index), and by model when both runs ran the same
models. Matched trials met the same seed, so the same simulated user, faults and drift: the
pairs are as alike as the harness can make them, which is what the paired tests need.

- Pass/fail of matched trials: McNemar's exact test on the discordant pairs (trials that
  passed in one run only), a two-sided binomial test with p = 1/2.
- pass@1 and pass^k: a paired bootstrap over tasks of the per-task differences B − A, giving
  a 95% percentile interval of the difference; a difference is significant when the interval
  excludes 0.

The statistics are pure functions; `compare_runs` reads the two runs from a store.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from rich.markup import escape
from rich.table import Table

from toolproof.errors import UsageError
from toolproof.metrics.passk import TaskTrials, per_task
from toolproof.metrics.stats import bootstrap_ci
from toolproof.metrics.summary import InfraPolicy
from toolproof.store.journal import Store
from toolproof.store.queries import run_summary

ALPHA = 0.05
RESAMPLES = 2000

# ---------------------------------------------------------------- statistics


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value for the discordant counts of paired binary outcomes.

    Under the null hypothesis each of the n = a_only + b_only discordant pairs falls either
    way with probability 1/2, so p = min(1, 2 · P[X ≤ min(a_only, b_only)]) for
    X ~ Binomial(n, 1/2). With no discordant pair there is no evidence of a difference: 1.
    """
    if a_only < 0 or b_only < 0:
        raise ValueError("discordant counts must be non-negative")
    n = a_only + b_only
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(a_only, b_only) + 1))
    return float(min(Fraction(1), Fraction(2 * tail, 2**n)))


def paired_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    *,
    confidence: float = 0.95,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> tuple[float, float, float]:
    """(mean of b − a, low, high): the percentile bootstrap interval of the mean paired
    difference, resampling the pairs (tasks) with replacement, seeded."""
    if len(a) != len(b):
        raise ValueError("paired samples must have the same length")
    if not a:
        raise ValueError("no pairs")
    diffs = [y - x for x, y in zip(a, b, strict=True)]
    low, high = bootstrap_ci(diffs, confidence=confidence, resamples=resamples, seed=seed)
    return sum(diffs) / len(diffs), low, high


# ---------------------------------------------------------------- results


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
    """One task's matched trials: passes in A and in B, McNemar on its discordant pairs."""

    task_id: str
    trials: int
    passed_a: int
    passed_b: int
    a_only: int
    b_only: int
    p_value: float
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
    p_value: float
    metrics: list[MetricDiff]
    tasks: list[TaskDiff]

    @property
    def regressed(self) -> list[TaskDiff]:
        return [t for t in self.tasks if t.regressed]

    def metric(self, name: str) -> MetricDiff | None:
        return next((m for m in self.metrics if m.name == name), None)

    def as_json(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "matched_trials": self.matched,
            "unmatched_a": self.only_a,
            "unmatched_b": self.only_b,
            "trials": {"a_only": self.a_only, "b_only": self.b_only, "p_value": self.p_value},
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

    def as_json(self) -> dict[str, Any]:
        return {
            "run_a": self.run_a,
            "run_b": self.run_b,
            "suite": self.suite,
            "infra_errors": self.infra_errors,
            "alpha": self.alpha,
            "bootstrap": {"resamples": RESAMPLES, "seed": self.seed, "confidence": 1 - self.alpha},
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
    p_trials = mcnemar_exact(a_only, b_only)
    tasks = []
    for task_id, kept in pairs.items():
        t_a = sum(not b and a for a, b in kept)
        t_b = sum(b and not a for a, b in kept)
        p = mcnemar_exact(t_a, t_b)
        tasks.append(
            TaskDiff(
                task_id=task_id,
                trials=len(kept),
                passed_a=sum(a for a, _ in kept),
                passed_b=sum(b for _, b in kept),
                a_only=t_a,
                b_only=t_b,
                p_value=p,
                significant=p < alpha,
                changed=task_id in changed,
                reasons_b=tuple(sorted(reasons[task_id])),
            )
        )
    tasks.sort(key=lambda t: (t.delta, t.task_id))
    metrics: list[MetricDiff] = []
    if pairs:
        fewest = min(len(kept) for kept in pairs.values())
        a_trials = [TaskTrials(t, tuple(a for a, _ in kept)) for t, kept in pairs.items()]
        b_trials = [TaskTrials(t, tuple(b for _, b in kept)) for t, kept in pairs.items()]
        a1 = [t.c / t.n for t in a_trials]
        b1 = [t.c / t.n for t in b_trials]
        mean_a, mean_b = sum(a1) / len(a1), sum(b1) / len(b1)
        _, low, high = paired_bootstrap(
            a1, b1, confidence=1 - alpha, resamples=resamples, seed=seed
        )
        metrics.append(
            MetricDiff("pass@1", mean_a, mean_b, low, high, p_trials, "mcnemar", p_trials < alpha)
        )
        for k in sorted({k for k in ks if 1 < k <= fewest}):
            name = f"pass^{k}"
            ak = [per_task(t, k)[name] for t in a_trials]
            bk = [per_task(t, k)[name] for t in b_trials]
            _, low, high = paired_bootstrap(
                ak, bk, confidence=1 - alpha, resamples=resamples, seed=seed
            )
            metrics.append(
                MetricDiff(
                    name,
                    sum(ak) / len(ak),
                    sum(bk) / len(bk),
                    low,
                    high,
                    None,
                    "bootstrap",
                    low > 0 or high < 0,
                )
            )
    return VariantComparison(
        variant=variant,
        matched=matched,
        only_a=total_a - matched,
        only_b=total_b - matched,
        a_only=a_only,
        b_only=b_only,
        p_value=p_trials,
        metrics=metrics,
        tasks=tasks,
    )


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


# ---------------------------------------------------------------- metrics of a summary

SHOWN = (
    "reliability_score",
    "recovery_rate",
    "loop_rate",
    "drift_robustness",
    "completion_under_load",
    "cost_usd",
    "cost_per_task_usd",
    "cost_per_pass_usd",
    "latency_p95_s",
    "trial_latency_p95_s",
    "infra_error_share",
)


def model_metrics(entry: Mapping[str, Any]) -> dict[str, float | None]:
    """One model's metrics from a run summary, plus two derived for gating:
    cost_per_task_usd = cost_usd / tasks (the model's primary variant, as cost_usd) and
    infra_error_share = infra-error trials / trials over all of the model's variants."""
    metrics: dict[str, float | None] = dict(entry["metrics"])
    tasks = len(entry.get("tasks") or [])
    cost = metrics.get("cost_usd")
    metrics["cost_per_task_usd"] = cost / tasks if cost is not None and tasks else None
    variants = entry.get("variants") or {"": {"counts": entry["counts"]}}
    total = sum(v["counts"]["total"] for v in variants.values())
    infra = sum(v["counts"]["infra_error"] for v in variants.values())
    metrics["infra_error_share"] = infra / total if total else None
    return metrics


def _models(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    return list(dict.fromkeys(str(row.get("model", "")) for row in rows))


def _entries(summary: Mapping[str, Any], agent: str) -> dict[str, Mapping[str, Any]]:
    """The summary's model entries by the model as stored (agent runs store '')."""
    return {("" if e["model"] == agent else e["model"]): e for e in summary["models"]}


def compare_runs(
    store: Store,
    run_a: str,
    run_b: str,
    *,
    alpha: float = ALPHA,
    resamples: int = RESAMPLES,
) -> Comparison:
    """Run B (the candidate) against run A (the baseline), from one store."""
    if run_a == run_b:
        raise UsageError(f"compare {run_a} with another run, not with itself")
    if not 0 < alpha < 1:
        raise UsageError(f"significance level {alpha}: must be between 0 and 1")
    ra, rb = store.run(run_a), store.run(run_b)
    if ra["suite_name"] != rb["suite_name"]:
        raise UsageError(
            f"run {run_a} is of suite '{ra['suite_name']}' and run {run_b} of suite "
            f"'{rb['suite_name']}': only runs of the same suite can be compared"
        )
    infra: InfraPolicy = "exclude" if rb["config"].get("infra_errors") == "exclude" else "fail"
    seed = int(rb["config"].get("seed", 0))
    rows_a, rows_b = store.outcomes(run_a), store.outcomes(run_b)
    hashes_a = {r["task_id"]: r["task_hash"] for r in store.run_tasks(run_a)}
    hashes_b = {r["task_id"]: r["task_hash"] for r in store.run_tasks(run_b)}
    changed = sorted(t for t in set(hashes_a) & set(hashes_b) if hashes_a[t] != hashes_b[t])
    warnings = []
    if changed:
        shown = ", ".join(changed[:5]) + (", ..." if len(changed) > 5 else "")
        warnings.append(f"{len(changed)} task(s) changed between the runs: {shown}")
    seed_a = int(ra["config"].get("seed", 0))
    if seed_a != seed:
        warnings.append(
            f"the runs used different seeds ({seed_a} and {seed}): trials with the same index "
            "met different simulated users and faults, so the pairs are less alike"
        )
    for run_id, run in ((run_a, ra), (run_b, rb)):
        if run["status"] != "finished":
            warnings.append(f"run {run_id} is {run['status']}, not finished")
    ks = sorted(set(ra["config"].get("k", [1])) | set(rb["config"].get("k", [1])))
    summary_a = _entries(run_summary(store, run_a), ra["agent"])
    summary_b = _entries(run_summary(store, run_b), rb["agent"])
    pairs = []
    for model_a, model_b in pair_models(_models(rows_a), _models(rows_b)):
        variants = compare_rows(
            [r for r in rows_a if r["model"] == model_a],
            [r for r in rows_b if r["model"] == model_b],
            ks=ks,
            infra=infra,
            alpha=alpha,
            seed=seed,
            resamples=resamples,
            changed=changed,
        )
        metrics_a = model_metrics(summary_a[model_a]) if model_a in summary_a else {}
        metrics_b = model_metrics(summary_b[model_b]) if model_b in summary_b else {}
        names = [n for n in SHOWN if n in metrics_a or n in metrics_b]
        names += sorted(
            n
            for n in set(metrics_a) | set(metrics_b)
            if n not in SHOWN and not n.startswith(("pass@", "pass^", "reliability_tax@"))
        )
        pairs.append(
            PairComparison(
                model_a=model_a,
                model_b=model_b,
                label_a=model_a or ra["agent"],
                label_b=model_b or rb["agent"],
                variants=variants,
                metrics=[MetricDiff(n, metrics_a.get(n), metrics_b.get(n)) for n in names],
            )
        )
    for pair in pairs:
        if not pair.variants:
            warnings.append(f"{pair.label}: the runs have no variant in common")
        for v in pair.variants:
            if v.only_a or v.only_b:
                warnings.append(
                    f"{pair.label}{_variant_suffix(v.variant)}: {v.only_a} trial(s) of "
                    f"{run_a} and {v.only_b} of {run_b} have no match and are left out"
                )
    return Comparison(
        run_a=run_a,
        run_b=run_b,
        suite=rb["suite_name"],
        infra_errors=infra,
        alpha=alpha,
        seed=seed,
        pairs=pairs,
        warnings=warnings,
    )


def _variant_suffix(variant: str) -> str:
    return f" [{variant}]" if variant else ""


# ---------------------------------------------------------------- terminal


def fmt(value: float | None, digits: int = 3, signed: bool = False) -> str:
    """A number for tables; '-' when not measured."""
    if value is None:
        return "-"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def fmt_p(p: float | None) -> str:
    """A p-value for tables: 4 decimals, or '<0.0001'."""
    if p is None:
        return "-"
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


def comparison_tables(comparison: Comparison, limit: int = 30) -> list[Table]:
    """Rich tables: per pair and variant, the metrics and the tasks whose passes changed."""
    tables = []
    for pair in comparison.pairs:
        for v in pair.variants:
            title = (
                f"{pair.label}{_variant_suffix(v.variant)}: {comparison.run_b} − "
                f"{comparison.run_a}, {v.matched} matched trials"
            )
            table = Table(title=escape(title), title_justify="left")
            for column in ("metric", "A", "B", "B − A", f"{1 - comparison.alpha:.0%} CI", "p"):
                table.add_column(column, justify="left" if column == "metric" else "right")
            table.add_column("")
            for m in v.metrics:
                flag = _flag(m)
                table.add_row(
                    m.name,
                    fmt(m.a),
                    fmt(m.b),
                    fmt(m.delta, signed=True),
                    f"[{fmt(m.low, signed=True)}, {fmt(m.high, signed=True)}]",
                    fmt_p(m.p_value) if m.p_value is not None else "",
                    flag,
                )
            table.add_row(
                "discordant trials",
                str(v.a_only),
                str(v.b_only),
                "",
                "",
                fmt_p(v.p_value),
                "[red]significant" if v.p_value < comparison.alpha else "",
            )
            tables.append(table)
            moved = [t for t in v.tasks if t.passed_a != t.passed_b]
            if moved:
                tasks = Table(
                    title=f"tasks whose passes changed ({len(moved)})", title_justify="left"
                )
                for column in ("task", "A", "B", "Δ pass rate", "p", ""):
                    tasks.add_column(column, justify="left" if column == "task" else "right")
                for t in moved[:limit]:
                    word = "regressed" if t.regressed else "improved"
                    style = "red" if t.regressed else "green"
                    mark = f"[{style}]{word}{' (significant)' if t.significant else ''}"
                    if t.changed:
                        mark += " [yellow]task changed"
                    tasks.add_row(
                        escape(t.task_id),
                        f"{t.passed_a}/{t.trials}",
                        f"{t.passed_b}/{t.trials}",
                        fmt(t.delta, signed=True),
                        fmt_p(t.p_value),
                        mark,
                    )
                if len(moved) > limit:
                    tasks.caption = f"{len(moved) - limit} more in --json"
                tables.append(tasks)
        if pair.metrics:
            other = Table(
                title=escape(f"{pair.label}: other metrics (no test)"), title_justify="left"
            )
            for column in ("metric", "A", "B", "B − A"):
                other.add_column(column, justify="left" if column == "metric" else "right")
            for m in pair.metrics:
                if m.name in SHOWN and (m.a is not None or m.b is not None):
                    other.add_row(m.name, fmt(m.a, 4), fmt(m.b, 4), fmt(m.delta, 4, signed=True))
            tables.append(other)
    return tables


def _flag(m: MetricDiff) -> str:
    if not m.significant or m.delta is None:
        return ""
    return "[red]significant drop" if m.delta < 0 else "[green]significant gain"
