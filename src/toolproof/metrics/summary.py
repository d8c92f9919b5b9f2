"""A run's summary: counts, metrics with confidence intervals, per-task rows, breakdowns.

Pure: `run_summary` reads a run's record, its stored trial rows and its tasks' metadata,
never an agent or a store. Its `RunSummary` is what `toolproof run` and `show` print, what
`--json` writes (`as_json()`), and what the gate and the reports read.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from toolproof.errors import MetricError
from toolproof.metrics.blame import blame_counts
from toolproof.metrics.breakdown import TaskMeta, by_tag, by_tier
from toolproof.metrics.checkpoints import checkpoints_summary
from toolproof.metrics.conditions import (
    conditions_summary,
    mean_rate,
    pool,
    recovery_pairs,
    task_recovery_counts,
)
from toolproof.metrics.economics import economics
from toolproof.metrics.intervals import condition_intervals
from toolproof.metrics.load import load_level_stats
from toolproof.metrics.passk import TaskTrials, check_k, per_task, summarize
from toolproof.metrics.personas import personas_summary, variant_part
from toolproof.metrics.policy import policy_summary
from toolproof.metrics.score import reliability_score, score_notes
from toolproof.metrics.stats import bootstrap_means
from toolproof.records import InfraPolicy, RunRecord

__all__ = [
    "Counts",
    "InfraPolicy",
    "ModelSummary",
    "RunSummary",
    "SuiteRef",
    "model_metrics",
    "run_summary",
    "summarize_run",
]


class _Record(BaseModel):
    """A part of the summary: known fields only; only those given are written out."""

    model_config = ConfigDict(extra="forbid")


class Counts(_Record):
    """Trials by outcome."""

    passed: int
    failed: int
    infra_error: int
    total: int


class ModelSummary(_Record):
    """One model (or agent) of a run: its primary variant in full, every variant's pass
    rates, the condition metrics and the Reliability Score (docs/metrics.md)."""

    model: str
    counts: Counts
    skipped_k: list[int] | None = None
    """k values some task had too few trials for (a run stopped early)."""
    metrics: dict[str, int | float | None]
    ci: dict[str, list[float] | None]
    tiers: dict[str, dict[str, Any]]
    tags: dict[str, dict[str, Any]]
    tasks: list[dict[str, Any]]
    variant: str
    variants: dict[str, dict[str, Any]]
    conditions: dict[str, Any]
    reliability: dict[str, Any]
    blame: dict[str, int] = {}
    """Failed trials by the party they are to blame on; they sum to `counts.failed`. Empty
    in a summary written before blame existed."""
    blame_rules: dict[str, dict[str, int]] = {}
    """Failed trials by party and the blame rule that decided."""
    policy: dict[str, Any] | None = None
    """Trials whose policy was checked, those that broke a rule, the trials that broke each
    rule, and policy_adherence with its interval; None when no rule was checked."""
    personas: dict[str, Any] | None = None
    checkpoints: dict[str, Any] | None = None
    checkpoint_degradation: dict[str, Any] | None = None


class SuiteRef(_Record):
    name: str
    version: str
    hash: str


class RunSummary(_Record):
    """A run's summary. With a single model, that model's metrics, intervals, breakdowns
    and task rows are also at the top level (as `toolproof run --json` has always written
    them)."""

    run_id: str
    suite: SuiteRef
    agent: str
    status: str
    stopped: str | None = None
    judge: dict[str, Any] | None = None
    """The judge model of a rubric and what it cost, apart from the agents' cost."""
    counts: Counts
    infra_errors: InfraPolicy
    k: list[int]
    models: list[ModelSummary]
    metrics: dict[str, int | float | None] | None = None
    ci: dict[str, list[float] | None] | None = None
    tiers: dict[str, dict[str, Any]] | None = None
    tags: dict[str, dict[str, Any]] | None = None
    tasks: list[dict[str, Any]] | None = None
    skipped_k: list[int] | None = None
    personas: dict[str, Any] | None = None
    checkpoints: dict[str, Any] | None = None
    checkpoint_degradation: dict[str, Any] | None = None

    def as_json(self) -> dict[str, Any]:
        """The summary as JSON data: the fields this run has, in order."""
        return self.model_dump(mode="json", exclude_unset=True)

    @property
    def shown_ks(self) -> list[int]:
        """The k values computed (the run's, minus those too few trials allowed)."""
        return [k for k in self.k if k not in (self.skipped_k or [])] or [1]


def run_summary(
    run: RunRecord,
    rows: Sequence[Mapping[str, Any]],
    metas: Sequence[TaskMeta],
    ks: Sequence[int] | None = None,
    infra: InfraPolicy | None = None,
    intervals: bool = True,
) -> RunSummary:
    """The summary of a run from its trial rows; k and the infra policy default to the
    run's own. Without `intervals` the bootstraps are left out and every interval is null:
    for a reader of point values alone (the gate's conditions), never for one that shows
    intervals."""
    config = run.config
    chosen_k = list(ks) if ks else list(config.k)
    body = summarize_run(
        rows,
        metas,
        chosen_k,
        infra or config.infra_errors,
        seed=config.seed,
        labels={"": run.agent},
        partial=not run.finished,
        score=config.score or None,
        imported=bool(config.imported),
        intervals=intervals,
    )
    head: dict[str, Any] = {
        "run_id": run.id,
        "suite": {"name": run.suite_name, "version": run.suite_version, "hash": run.suite_hash},
        "agent": run.agent,
        "status": run.status,
    }
    if config.stopped is not None:
        head["stopped"] = config.stopped
    if config.judge_model is not None:
        head["judge"] = judge_cost(config.judge_model, rows)
    return RunSummary.model_validate({**head, **body})


def judge_cost(model: str, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The judge's model, its cost over the run's trials (unknown, None, when its model has
    no price, as an agent's cost is) and the rubric criteria it left undecided because it
    failed their controls: how many, and which, by task."""
    costs = [row.get("judge_cost_usd") for row in rows]
    known = None if any(c is None for c in costs) else float(sum(c or 0.0 for c in costs))
    failed: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        for name in (row.get("conditions") or {}).get("rubric_undecided", ()):
            failed[row["task_id"]].add(name)
    return {
        "model": model,
        "cost_usd": known,
        "undecided_criteria": sum(len(names) for names in failed.values()),
        "failed_controls": {task: sorted(failed[task]) for task in sorted(failed)},
    }


def task_trials(
    rows: Sequence[Mapping[str, Any]], infra: InfraPolicy
) -> tuple[list[TaskTrials], dict[str, Counter[str]]]:
    """Per-task outcomes in trial order under the infra-error policy, and raw counts."""
    grouped: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for row in rows:
        grouped[row["task_id"]].append((row["trial"], row["outcome"]))
    tasks = []
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for task_id, items in grouped.items():
        ordered = [outcome for _, outcome in sorted(items)]
        counts[task_id] = Counter(ordered)
        if infra == "exclude":
            ordered = [o for o in ordered if o != "infra_error"]
        tasks.append(TaskTrials(task_id, tuple(o == "passed" for o in ordered)))
    return tasks, counts


def summarize_run(
    rows: Sequence[Mapping[str, Any]],
    metas: Sequence[TaskMeta],
    ks: Sequence[int],
    infra: InfraPolicy = "fail",
    seed: int = 0,
    labels: Mapping[str, str] | None = None,
    partial: bool = False,
    score: Mapping[str, Any] | None = None,
    imported: bool = False,
    intervals: bool = True,
) -> dict[str, Any]:
    """The summary printed, written as JSON and gated on: overall counts and one entry per
    model under `models`; with a single model its entry's fields are also at the top level.

    `partial` (a run stopped early) drops the k values some task has too few trials for,
    listing them under `skipped_k`, instead of failing. `imported` (another harness's
    results) leaves tokens, latencies and recovery unmeasured.
    """
    counts = Counter(row["outcome"] for row in rows)
    by_model: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        by_model[row.get("model", "")].append(row)
    how = Summarizing(list(ks), infra, seed, partial, score, imported, intervals)
    models = [
        {"model": (labels or {}).get(model, model), **summarize_model(group, metas, how)}
        for model, group in by_model.items()
    ]
    summary: dict[str, Any] = {
        "counts": _counts(counts, len(rows)),
        "infra_errors": infra,
        "k": list(ks),
        "models": models,
    }
    if len(models) == 1:
        summary.update({key: models[0][key] for key in ("metrics", "ci", "tiers", "tags", "tasks")})
        for key in ("skipped_k", *CONVERSATION_SECTIONS):
            if key in models[0]:
                summary[key] = models[0][key]
    return summary


def _counts(counts: Mapping[str, int], total: int) -> dict[str, int]:
    return {
        "passed": counts.get("passed", 0),
        "failed": counts.get("failed", 0),
        "infra_error": counts.get("infra_error", 0),
        "total": total,
    }


@dataclass(frozen=True)
class Summarizing:
    """How a run is summarized: at which k, with which infra-error policy and bootstrap
    seed, whether the run stopped early (`partial`), and the suite's score settings."""

    ks: list[int]
    infra: InfraPolicy
    seed: int
    partial: bool
    score: Mapping[str, Any] | None
    imported: bool = False
    """Results of another harness: no tokens, latencies or error marks were measured."""
    intervals: bool = True
    """Bootstrap the intervals of the pass rates and the condition metrics (else null)."""


def summarize_model(
    rows: Sequence[Mapping[str, Any]], metas: Sequence[TaskMeta], how: Summarizing
) -> dict[str, Any]:
    """One model's summary: its primary variant (clean when run) in full, every variant's
    pass rates, recovery over all its trials, drift robustness, completion under load (each
    also per task and per tier), the Reliability Score with any missing component shown, and
    the intervals of all of these."""
    by_variant: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        by_variant[row.get("variant", "")].append(row)
    primary = "" if "" in by_variant else next(iter(by_variant))
    out = summarize_group(by_variant[primary], metas, how)
    infra, ks, seed = how.infra, how.ks, how.seed
    out["variant"] = primary
    rates = {key: _task_rates(group, infra) for key, group in by_variant.items()}
    out["variants"] = {
        key: _variant(group, mean_rate(rates[key]), infra) for key, group in by_variant.items()
    }
    # an import's transcripts carry no reliable error marks: recovery is not measured
    counts = {} if how.imported else task_recovery_counts(rows)
    conditions = conditions_summary(counts, rates, metas)
    out["conditions"] = conditions
    config = dict(how.score or {})
    k = config.get("k") or max(ks)
    pass_k, why_not = _score_pass_k(by_variant.get(""), k, infra)
    components = {
        "pass^k": None if pass_k is None else mean_rate(pass_k),
        "recovery_rate": conditions["recovery"]["recovery_rate"],
        "completion_under_load": conditions.get("load", {}).get("completion_under_load"),
        "drift_robustness": conditions.get("drift", {}).get("drift_robustness"),
    }
    weights = config.get("weights") or DEFAULT_WEIGHTS
    out["reliability"] = {"k": k, **reliability_score(components, weights)}
    out["reliability"]["notes"] = score_notes(
        out["reliability"], why_not, list(by_variant), config.get("conditions")
    )
    measured = out["reliability"]["weights_used"]
    intervals = condition_intervals(
        counts,
        rates,
        conditions,
        pass_k or {},
        {name: weights[name] for name in measured},
        seed,
        bootstrap=how.intervals,
    )
    _attach(conditions, out["reliability"], intervals)
    recovery = conditions["recovery"]
    out["metrics"].update(
        {
            "recovery_rate": recovery["recovery_rate"],
            "loop_rate": recovery["loop_rate"],
            "corrective_action": recovery["corrective_action"],
            "drift_robustness": components["drift_robustness"],
            "completion_under_load": components["completion_under_load"],
            "reliability_score": out["reliability"]["reliability_score"],
        }
    )
    out["ci"].update(
        {
            **intervals["recovery"],
            "drift_robustness": intervals["drift"]["drift_robustness"],
            "completion_under_load": intervals["load"]["completion_under_load"],
            "reliability_score": intervals["reliability_score"],
        }
    )
    out.update(conversation_sections(by_variant, primary, how))
    if "checkpoint_degradation" in out:
        out["metrics"]["checkpoint_degradation"] = out["checkpoint_degradation"]["value"]
        out["ci"]["checkpoint_degradation"] = out["checkpoint_degradation"]["ci"]
    return out


CONVERSATION_SECTIONS = ("personas", "checkpoints", "checkpoint_degradation")


def conversation_sections(
    by_variant: Mapping[str, Sequence[Mapping[str, Any]]], primary: str, how: Summarizing
) -> dict[str, Any]:
    """The persona and checkpoint sections of a model's summary, for those run on its
    primary variant's conditions, that variant taken without any persona or length of its
    own (docs/metrics.md, "Personas and long conversations")."""

    def outcomes(rows: Sequence[Mapping[str, Any]]) -> list[TaskTrials]:
        return task_trials(rows, how.infra)[0]

    out: dict[str, Any] = {}
    base = variant_part(variant_part(primary, "persona")[0], "turns")[0]
    personas = personas_summary(by_variant, base, how.ks, outcomes, how.seed)
    if personas is not None:
        out["personas"] = personas
    checkpoints = checkpoints_summary(by_variant, base, how.ks, outcomes, how.seed)
    if checkpoints is not None:
        out["checkpoints"], out["checkpoint_degradation"] = checkpoints
    return out


def _score_pass_k(
    clean: Sequence[Mapping[str, Any]] | None, k: int, infra: InfraPolicy
) -> tuple[dict[str, float] | None, str]:
    """The score's pass^k per task, on the clean trials, at the score's k whether or not the
    run asked for that k; or None and why not (no clean trials, too few trials)."""
    if not clean:
        return None, "pass^k is taken on clean trials, and the run has none"
    tasks, _ = task_trials(clean, infra)
    fewest = min((t.n for t in tasks), default=0)
    if fewest < k:
        return None, f"pass^{k} needs {k} trials of every task; the fewest here is {fewest}"
    return {t.task_id: per_task(t, k)[f"pass^{k}"] for t in tasks}, ""


DEFAULT_WEIGHTS = {
    "pass^k": 0.4,
    "recovery_rate": 0.3,
    "completion_under_load": 0.2,
    "drift_robustness": 0.1,
}


def _attach(
    conditions: dict[str, Any], reliability: dict[str, Any], intervals: Mapping[str, Any]
) -> None:
    """Put each interval next to its metric: a `ci` entry keyed by the metric's name."""
    conditions["recovery"]["ci"] = intervals["recovery"]
    for kind, entry in conditions["recovery"]["by_fault"].items():
        entry["ci"] = {"rate": intervals["by_fault"][kind]}
    for name in ("drift", "load"):
        if name in conditions:
            conditions[name]["ci"] = intervals[name]
    reliability["ci"] = {"reliability_score": intervals["reliability_score"]}


def _task_rates(rows: Sequence[Mapping[str, Any]], infra: InfraPolicy) -> dict[str, float]:
    """Each task's pass@1 in these rows, for the tasks with a trial counted."""
    tasks, _ = task_trials(rows, infra)
    return {t.task_id: t.c / t.n for t in tasks if t.n}


def _variant(
    rows: Sequence[Mapping[str, Any]], rate: float | None, infra: InfraPolicy
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "counts": _counts(Counter(row["outcome"] for row in rows), len(rows)),
        "pass@1": rate,
        "blame": blame_counts(rows)[0],
    }
    key = rows[0].get("variant", "") if rows else ""
    if "faults:" in key:
        out["recovery"] = pool(recovery_pairs(rows))
    if "load:" in key:
        out["load"] = load_level_stats(rows, infra)
    return out


def summarize_group(
    rows: Sequence[Mapping[str, Any]], metas: Sequence[TaskMeta], how: Summarizing
) -> dict[str, Any]:
    """Counts, metrics (pass^k family and economics), intervals, breakdowns and task rows
    of one model's trials."""
    infra, ks, seed = how.infra, how.ks, how.seed
    tasks, per_counts = task_trials(rows, infra)
    empty = [t.task_id for t in tasks if t.n == 0]
    if empty:
        raise MetricError(
            f"task '{empty[0]}' has no trial left once infra errors are excluded; "
            "resume the run or use --infra-errors fail"
        )
    out: dict[str, Any] = {"counts": _counts(Counter(row["outcome"] for row in rows), len(rows))}
    if how.partial:
        fewest = min((t.n for t in tasks), default=0)
        skipped = [k for k in ks if k > fewest]
        ks = [k for k in ks if k <= fewest]
        if skipped:
            out["skipped_k"] = skipped
    check_k(tasks, ks)
    per: dict[str, dict[str, float]] = {}
    for task in tasks:
        row = {"pass@1": task.c / task.n}
        for k in ks:
            row.update(per_task(task, k))
        per[task.task_id] = row
    policy = policy_summary(rows, seed)
    adherence = policy.pop("tasks") if policy else {}
    out["metrics"] = {
        **(summarize(tasks, ks) if tasks else {}),
        **economics(rows, how.imported),
        "policy_adherence": policy["policy_adherence"] if policy else None,
    }
    names = ["pass@1", *(f"pass^{k}" for k in ks)]
    table = [[per[t.task_id][name] for name in names] for t in tasks]
    # An interval over tasks needs two tasks at least: over one it would be a point, and
    # show a certainty the run does not have. Then it is null, as for the condition metrics.
    intervals = bootstrap_means(table, seed=seed) if len(tasks) >= 2 and how.intervals else []
    out["ci"] = dict.fromkeys(names) | {
        name: list(interval) for name, interval in zip(names, intervals, strict=False)
    }
    out["ci"]["policy_adherence"] = policy["ci"]["policy_adherence"] if policy else None
    out["policy"] = policy
    out["blame"], out["blame_rules"] = blame_counts(rows)
    out["tiers"] = {str(t): v for t, v in by_tier(per, metas).items()}
    out["tags"] = by_tag(per, metas)
    grouped: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for trial in rows:
        grouped[trial["task_id"]].append(trial)
    out["tasks"] = [
        {
            "id": task.task_id,
            "trials": task.n,
            "passed": task.c,
            "infra_error": per_counts[task.task_id]["infra_error"],
            "metrics": {
                **per[task.task_id],
                **economics(grouped[task.task_id], how.imported),
                **({"policy_adherence": adherence.get(task.task_id)} if policy is not None else {}),
            },
            "failures": sorted(
                {
                    t["reason"]
                    for t in grouped[task.task_id]
                    if t["outcome"] != "passed" and t["reason"]
                }
            ),
        }
        for task in sorted(tasks, key=lambda t: t.task_id)
    ]
    return out


def model_metrics(entry: ModelSummary) -> dict[str, float | None]:
    """One model's metrics from a run summary, plus two derived for gating:
    cost_per_task_usd = cost_usd / tasks (the model's primary variant, as cost_usd) and
    infra_error_share = infra-error trials / trials over all of the model's variants."""
    metrics: dict[str, float | None] = dict(entry.metrics)
    tasks = len(entry.tasks)
    cost = metrics.get("cost_usd")
    metrics["cost_per_task_usd"] = cost / tasks if cost is not None and tasks else None
    variants = entry.variants or {"": {"counts": entry.counts.model_dump()}}
    total = sum(v["counts"]["total"] for v in variants.values())
    infra = sum(v["counts"]["infra_error"] for v in variants.values())
    metrics["infra_error_share"] = infra / total if total else None
    metrics.update(conversation_metrics(entry))
    return metrics


def conversation_metrics(entry: ModelSummary) -> dict[str, float | None]:
    """The gate's names for persona and checkpoint metrics: persona.NAME.pass@1,
    persona.NAME.pass^K, persona.NAME.recovery_turns, checkpoint.N.pass@1,
    checkpoint.N.pass^K (checkpoint_degradation is among the metrics already)."""
    out: dict[str, float | None] = {}
    for prefix, section in (("persona", entry.personas), ("checkpoint", entry.checkpoints)):
        for name, row in (section or {}).items():
            out[f"{prefix}.{name}.pass@1"] = row["pass@1"]
            out.update({f"{prefix}.{name}.pass^{k}": v for k, v in row["pass^k"].items()})
            if "recovery" in row:
                out[f"{prefix}.{name}.recovery_turns"] = row["recovery"]["recovery_turns"]
    return out
