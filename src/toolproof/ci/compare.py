"""Comparing two stored runs (`toolproof compare`, the gate's regression check)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from toolproof.errors import UsageError
from toolproof.format import fmt_p, variant_suffix
from toolproof.metrics.comparison import (
    ALPHA,
    RESAMPLES,
    Comparison,
    MetricDiff,
    PairComparison,
    VariantComparison,
    compare_rows,
    listed,
    pair_models,
)
from toolproof.metrics.power import trials_needed
from toolproof.metrics.stats import exact, fisher_regression_p
from toolproof.metrics.summary import (
    InfraPolicy,
    ModelSummary,
    RunSummary,
    model_metrics,
    ungradable_tasks,
)
from toolproof.spec.metrics import CATALOGUE
from toolproof.store.journal import Store
from toolproof.summaries import stored_summary, task_metas


def _models(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    return list(dict.fromkeys(str(row.get("model", "")) for row in rows))


def _entries(summary: RunSummary) -> dict[str, ModelSummary]:
    """The summary's model entries by the model as stored (agent runs store '')."""
    return {("" if e.model == summary.agent else e.model): e for e in summary.models}


def compare_runs(
    store: Store,
    run_a: str,
    run_b: str,
    *,
    alpha: float = ALPHA,
    resamples: int = RESAMPLES,
    include_ungradable: bool = False,
) -> Comparison:
    """Run B (the candidate) against run A (the baseline), from one store; the trials of
    tasks either run cannot grade are left out unless `include_ungradable`."""
    if run_a == run_b:
        raise UsageError(f"compare {run_a} with another run, not with itself")
    if not 0 < alpha < 1:
        raise UsageError(f"significance level {alpha}: must be between 0 and 1")
    ra, rb = store.run(run_a), store.run(run_b)
    if ra.suite_name != rb.suite_name:
        raise UsageError(
            f"run {run_a} is of suite '{ra.suite_name}' and run {run_b} of suite "
            f"'{rb.suite_name}': only runs of the same suite can be compared"
        )
    infra: InfraPolicy = rb.config.infra_errors
    seed = rb.config.seed
    rows_a, rows_b = store.outcomes(run_a), store.outcomes(run_b)
    if not include_ungradable:
        left_out = ungradable_tasks([*task_metas(store, run_a), *task_metas(store, run_b)])
        rows_a = [r for r in rows_a if r["task_id"] not in left_out]
        rows_b = [r for r in rows_b if r["task_id"] not in left_out]
    hashes_a = {r["task_id"]: r["task_hash"] for r in store.run_tasks(run_a)}
    hashes_b = {r["task_id"]: r["task_hash"] for r in store.run_tasks(run_b)}
    changed = sorted(t for t in set(hashes_a) & set(hashes_b) if hashes_a[t] != hashes_b[t])
    warnings = []
    if changed:
        shown = ", ".join(changed[:5]) + (", ..." if len(changed) > 5 else "")
        warnings.append(f"{len(changed)} task(s) changed between the runs: {shown}")
    seed_a = ra.config.seed
    if seed_a != seed:
        warnings.append(
            f"the runs used different seeds ({seed_a} and {seed}): trials with the same index "
            "met different simulated users and faults, so the pairs are less alike"
        )
    for run_id, run in ((run_a, ra), (run_b, rb)):
        if not run.finished:
            warnings.append(f"run {run_id} is {run.status}, not finished")
    ks = sorted(set(ra.config.k) | set(rb.config.k))
    summary_a = _entries(stored_summary(store, run_a, include_ungradable=include_ungradable))
    summary_b = _entries(stored_summary(store, run_b, include_ungradable=include_ungradable))
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
        metrics_a = _values(summary_a.get(model_a))
        metrics_b = _values(summary_b.get(model_b))
        first = listed()
        names = [n for n in first if n in metrics_a or n in metrics_b]
        names += sorted(
            n
            for n in set(metrics_a) | set(metrics_b)
            if n not in first and CATALOGUE.read(n).definition.group != "pass"
        )
        pairs.append(
            PairComparison(
                model_a=model_a,
                model_b=model_b,
                label_a=model_a or ra.agent,
                label_b=model_b or rb.agent,
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
                    f"{pair.label}{variant_suffix(v.variant)}: {v.only_a} trial(s) of "
                    f"{run_a} and {v.only_b} of {run_b} have no match and are left out"
                )
            blind = too_few_trials(v, alpha)
            if blind:
                warnings.append(f"{pair.label}{variant_suffix(v.variant)}: {blind}")
    return Comparison(
        run_a=run_a,
        run_b=run_b,
        suite=rb.suite_name,
        infra_errors=infra,
        alpha=alpha,
        seed=seed,
        pairs=pairs,
        warnings=warnings,
    )


def _values(entry: ModelSummary | None) -> dict[str, float | None]:
    """A model's gateable metrics (none when the run has no such model)."""
    return dict(model_metrics(entry).items()) if entry is not None else {}


def too_few_trials(variant: VariantComparison, alpha: float) -> str | None:
    """Why no task of the variant can be flagged as regressed, and what would let one be;
    None when a task could be."""
    counts = [t.trials for t in variant.tasks]
    needed = trials_needed(counts, exact(alpha))
    if needed is None:
        return None
    fewest, tasks = min(counts), len(counts)
    best = min(Fraction(1), tasks * fisher_regression_p(fewest, fewest, 0, fewest))
    each = f"{fewest} trials per task" if fewest == max(counts) else f"as few as {fewest} trials"
    return (
        f"{each} are too few to flag a regressed task among {tasks}: even "
        f"a task going from {fewest}/{fewest} to 0/{fewest} has Holm-adjusted p = "
        f"{fmt_p(float(best))}, not below alpha {alpha:g}; {needed} trials per task are needed"
    )
