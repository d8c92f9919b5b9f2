"""A run's summary: counts, metrics with confidence intervals, per-task rows, breakdowns.

Pure: `run_summary` reads a run's record, its stored trial rows and its tasks' metadata,
never an agent or a store. Its `RunSummary` is what `toolproof run` and `show` print, what
`--json` writes (`as_json()`), and what the gate and the reports read. Each model's parts
are computed here; its metric values come from the compute functions registered against
the catalogue's names (`toolproof.metrics.compute`), in the catalogue's order.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pydantic import Field

from toolproof.errors import MetricError
from toolproof.metrics.blame import blame_counts
from toolproof.metrics.breakdown import TaskMeta, by_tag, by_tier
from toolproof.metrics.checkpoints import checkpoints_summary
from toolproof.metrics.compute import (
    DERIVED,
    RECORDED,
    Measured,
    ModelFacts,
    derives,
    unmeasured_when_imported,
)
from toolproof.metrics.conditions import (
    conditions_summary,
    mean_rate,
    merge_counts,
    recovery_rates,
    task_recovery_counts,
)
from toolproof.metrics.economics import economics
from toolproof.metrics.intervals import condition_intervals
from toolproof.metrics.load import load_level_stats
from toolproof.metrics.passk import TaskTrials, check_k, per_task, task_row
from toolproof.metrics.personas import personas_summary
from toolproof.metrics.policy import policy_summary
from toolproof.metrics.score import measured_parts, reliability_score, score_notes
from toolproof.metrics.sections import (
    Breakdown,
    CheckpointRates,
    ConditionStats,
    Counts,
    Degradation,
    Judge,
    MetricIntervals,
    MetricValues,
    PersonaRates,
    Policy,
    Reliability,
    Section,
    TaskRow,
    Ungradable,
    VariantSummary,
)
from toolproof.records.run import InfraPolicy, RunRecord
from toolproof.spec.metrics import (
    CATALOGUE,
    CHECKPOINT_DEGRADATION,
    INFRA_ERROR_SHARE,
    PASS_AT,
    PASS_HAT,
    POLICY_ADHERENCE,
    RECOVERY_RATE,
    RELIABILITY_SCORE,
)
from toolproof.spec.variants import VariantKey

__all__ = [
    "Counts",
    "InfraPolicy",
    "ModelSummary",
    "RunSummary",
    "SuiteRef",
    "measured",
    "model_metrics",
    "run_summary",
    "summarize_run",
]


class ModelSummary(Section):
    """One model (or agent) of a run: its primary variant in full, every variant's pass
    rates, the condition metrics and the Reliability Score (docs/metrics.md)."""

    model: str
    counts: Counts
    skipped_k: list[int] | None = None
    """k values some task had too few trials for (a run stopped early)."""
    metrics: MetricValues
    ci: MetricIntervals
    tiers: dict[str, Breakdown]
    tags: dict[str, Breakdown]
    tasks: list[TaskRow]
    variant: str
    variants: dict[str, VariantSummary]
    conditions: ConditionStats
    reliability: Reliability
    blame: dict[str, int] = Field(default_factory=dict)
    """Failed trials by the party they are to blame on; they sum to `counts.failed`. Empty
    in a summary written before blame existed."""
    blame_rules: dict[str, dict[str, int]] = Field(default_factory=dict)
    """Failed trials by party and the blame rule that decided."""
    policy: Policy | None = None
    """Trials whose policy was checked, those that broke a rule, the trials that broke each
    rule, and policy_adherence with its interval; None when no rule was checked."""
    personas: dict[str, PersonaRates] | None = None
    checkpoints: dict[str, CheckpointRates] | None = None
    checkpoint_degradation: Degradation | None = None


class SuiteRef(Section):
    name: str
    version: str
    hash: str


class RunSummary(Section):
    """A run's summary. With a single model, that model's metrics, intervals, breakdowns
    and task rows are also at the top level (as `toolproof run --json` has always written
    them)."""

    run_id: str
    suite: SuiteRef
    agent: str
    status: str
    stopped: str | None = None
    judge: Judge | None = None
    """The judge model of a rubric and what it cost, apart from the agents' cost."""
    notes: list[str] | None = None
    """The suite's notes (`notes:` in suite.yaml): what a reader of these numbers must know."""
    ungradable: Ungradable | None = None
    """The tasks nothing of which can fail, left out of the numbers unless included; None
    when the run has none."""
    counts: Counts
    infra_errors: InfraPolicy
    k: list[int]
    models: list[ModelSummary]
    metrics: MetricValues | None = None
    ci: MetricIntervals | None = None
    tiers: dict[str, Breakdown] | None = None
    tags: dict[str, Breakdown] | None = None
    tasks: list[TaskRow] | None = None
    skipped_k: list[int] | None = None
    personas: dict[str, PersonaRates] | None = None
    checkpoints: dict[str, CheckpointRates] | None = None
    checkpoint_degradation: Degradation | None = None

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
    include_ungradable: bool = False,
) -> RunSummary:
    """The summary of a run from its trial rows; k and the infra policy default to the
    run's own. Without `intervals` the bootstraps are left out and every interval is null:
    for a reader of point values alone (the gate's conditions), never for one that shows
    intervals. The trials of ungradable tasks are left out of every number, the tasks listed
    apart, unless `include_ungradable`."""
    config = run.config
    chosen_k = list(ks) if ks else list(config.k)
    why = ungradable_tasks(metas)
    counted = rows if include_ungradable else [r for r in rows if r["task_id"] not in why]
    body = summarize_run(
        counted,
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
    if config.notes:
        head["notes"] = config.notes
    if why:
        head["ungradable"] = ungradable_section(why, rows, include_ungradable)
    return RunSummary.model_validate({**head, **body})


def ungradable_tasks(metas: Sequence[TaskMeta]) -> dict[str, str]:
    """Each task that cannot be graded, with why, in task order."""
    return {m.task_id: m.ungradable for m in sorted(metas, key=lambda m: m.task_id) if m.ungradable}


def ungradable_section(
    why: Mapping[str, str], rows: Sequence[Mapping[str, Any]], included: bool
) -> dict[str, Any]:
    """The summary's `ungradable` section: the tasks, their trials by outcome, and whether
    they were counted."""
    theirs = [row for row in rows if row["task_id"] in why]
    counts = _counts(Counter(row["outcome"] for row in theirs), len(theirs))
    return Ungradable(tasks=dict(why), counts=Counts(**counts), included=included).model_dump()


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
    return Judge(
        model=model,
        cost_usd=known,
        undecided_criteria=sum(len(names) for names in failed.values()),
        failed_controls={task: sorted(failed[task]) for task in sorted(failed)},
    ).model_dump()


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


SINGLE_MODEL_PARTS = ("metrics", "ci", "tiers", "tags", "tasks")
"""A single model's parts that are also at the top of the summary."""

CONVERSATION_SECTIONS = ("personas", "checkpoints", CHECKPOINT_DEGRADATION.name)
"""A model's sections of personas and turn checkpoints (present when they were run)."""


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
    results) leaves what those do not measure unmeasured: tokens, latencies and recovery.
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
        summary.update({key: models[0][key] for key in SINGLE_MODEL_PARTS})
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
    the intervals of all of these; its metrics as their compute functions give them."""
    by_variant: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        by_variant[row.get("variant", "")].append(row)
    primary = "" if "" in by_variant else next(iter(by_variant))
    # each variant's per-task outcomes, once: the pass rates, the primary variant's metrics
    # and the score's pass^k all read them
    outcomes = {key: task_trials(group, how.infra) for key, group in by_variant.items()}
    out, tasks, ks, task_rows = summarize_group(by_variant[primary], metas, how, outcomes[primary])
    out["variant"] = primary
    rates = {key: _task_rates(found[0]) for key, found in outcomes.items()}
    # recovery counted once per variant and task: a fault profile's own, and the model's
    recovered = {key: task_recovery_counts(group) for key, group in by_variant.items()}
    out["variants"] = {
        key: _variant(group, mean_rate(rates[key]), how.infra, recovered[key])
        for key, group in by_variant.items()
    }
    # an import's transcripts carry no reliable error marks: recovery is not measured
    measured_here = RECOVERY_RATE.imported or not how.imported
    counts = _by_task(recovered.values()) if measured_here else {}
    conditions = conditions_summary(counts, rates, metas)
    out["conditions"] = conditions
    out.update(conversation_sections(by_variant, primary, how))
    facts = ModelFacts(
        rows=by_variant[primary],
        tasks=tasks,
        task_rows=task_rows,
        ks=ks,
        seed=how.seed,
        intervals=how.intervals,
        imported=how.imported,
        policy=Policy.model_validate(out["policy"]) if out["policy"] else None,
        conditions=ConditionStats.model_validate(conditions),
        reliability=None,
        degradation=_degradation(out),
    )
    pass_k, why_not = _score_pass_k(outcomes[""][0] if "" in outcomes else None, how)
    out["reliability"] = _reliability(facts, pass_k, why_not, list(by_variant), how)
    _attach_intervals(counts, rates, conditions, pass_k, out["reliability"], how)
    facts = _with_sections(facts, conditions, out["reliability"])
    measured = RECORDED.measure(facts)
    values = unmeasured_when_imported(measured.values) if how.imported else measured.values
    out["metrics"], out["ci"] = values, measured.intervals
    return out


def _degradation(out: Mapping[str, Any]) -> Degradation | None:
    found = out.get(CHECKPOINT_DEGRADATION.name)
    return Degradation.model_validate(found) if found is not None else None


def _with_sections(
    facts: ModelFacts, conditions: Mapping[str, Any], reliability: Mapping[str, Any]
) -> ModelFacts:
    """The facts with the intervals now attached to the conditions and the score."""
    return replace(
        facts,
        conditions=ConditionStats.model_validate(conditions),
        reliability=Reliability.model_validate(reliability),
    )


def _reliability(
    facts: ModelFacts,
    pass_k: dict[str, float] | None,
    why_not: str,
    variants: list[str],
    how: Summarizing,
) -> dict[str, Any]:
    """The Reliability Score from its parts as measured, with the notes on what is missing."""
    parts = measured_parts(facts, None if pass_k is None else mean_rate(pass_k))
    reliability: dict[str, Any] = {"k": _score_k(how), **reliability_score(parts, _weights(how))}
    declared = (how.score or {}).get("conditions")
    reliability["notes"] = score_notes(reliability, why_not, variants, declared)
    return reliability


def _score_k(how: Summarizing) -> int:
    return int((how.score or {}).get("k") or max(how.ks))


def _weights(how: Summarizing) -> dict[str, float]:
    """The score's weights: the suite's, else the catalogue's defaults."""
    return dict((how.score or {}).get("weights") or CATALOGUE.default_weights())


def _attach_intervals(
    counts: Mapping[str, Mapping[str, Any]],
    rates: Mapping[str, Mapping[str, float]],
    conditions: dict[str, Any],
    pass_k: dict[str, float] | None,
    reliability: dict[str, Any],
    how: Summarizing,
) -> None:
    """Bootstrap the condition metrics and the score over tasks, and put each interval next
    to its metric: a `ci` entry keyed by the metric's name."""
    weights = _weights(how)
    measured = reliability["weights_used"]
    intervals = condition_intervals(
        counts,
        rates,
        conditions,
        pass_k or {},
        {name: weights[name] for name in measured},
        how.seed,
        bootstrap=how.intervals,
    )
    conditions["recovery"]["ci"] = intervals["recovery"]
    for kind, entry in conditions["recovery"]["by_fault"].items():
        entry["ci"] = {"rate": intervals["by_fault"][kind]}
    for name in ("drift", "load"):
        if name in conditions:
            conditions[name]["ci"] = intervals[name]
    reliability["ci"] = {RELIABILITY_SCORE.name: intervals[RELIABILITY_SCORE.name]}


def conversation_sections(
    by_variant: Mapping[str, Sequence[Mapping[str, Any]]], primary: str, how: Summarizing
) -> dict[str, Any]:
    """The persona and checkpoint sections of a model's summary, for those run on its
    primary variant's conditions, that variant taken without any persona or length of its
    own (docs/metrics.md, "Personas and long conversations")."""

    def outcomes(rows: Sequence[Mapping[str, Any]]) -> list[TaskTrials]:
        return task_trials(rows, how.infra)[0]

    out: dict[str, Any] = {}
    base = VariantKey.parse(primary).without("persona", "turns").key
    personas = personas_summary(by_variant, base, how.ks, outcomes, how.seed)
    if personas is not None:
        out["personas"] = personas
    checkpoints = checkpoints_summary(by_variant, base, how.ks, outcomes, how.seed)
    if checkpoints is not None:
        out["checkpoints"], out[CHECKPOINT_DEGRADATION.name] = checkpoints
    return out


def _score_pass_k(
    clean: Sequence[TaskTrials] | None, how: Summarizing
) -> tuple[dict[str, float] | None, str]:
    """The score's pass^k per task, on the clean trials' outcomes, at the score's k whether
    or not the run asked for that k; or None and why not (no clean trials, too few)."""
    k = _score_k(how)
    if clean is None:
        return None, "pass^k is taken on clean trials, and the run has none"
    tasks = clean
    fewest = min((t.n for t in tasks), default=0)
    if fewest < k:
        return None, f"pass^{k} needs {k} trials of every task; the fewest here is {fewest}"
    hat = PASS_HAT.at(k=k)
    return {t.task_id: per_task(t, k)[hat] for t in tasks}, ""


def _task_rates(tasks: Sequence[TaskTrials]) -> dict[str, float]:
    """Each task's pass@1, for the tasks with a trial counted."""
    return {t.task_id: t.c / t.n for t in tasks if t.n}


def _by_task(variants: Iterable[Mapping[str, Mapping[str, Any]]]) -> dict[str, dict[str, Any]]:
    """Each task's recovery counts over every variant, the tasks sorted."""
    found = list(variants)
    tasks = sorted({task for counts in found for task in counts})
    return {task: merge_counts(c[task] for c in found if task in c) for task in tasks}


def _variant(
    rows: Sequence[Mapping[str, Any]],
    rate: float | None,
    infra: InfraPolicy,
    recovered: Mapping[str, Mapping[str, Any]],
) -> dict[str, Any]:
    """One variant's counts, pass rate and blame; with a fault profile, its recovery (from
    its tasks' recovery counts); at a load level, that level's statistics."""
    out: dict[str, Any] = {
        "counts": _counts(Counter(row["outcome"] for row in rows), len(rows)),
        PASS_AT.at(k=1): rate,
        "blame": blame_counts(rows)[0],
    }
    key = VariantKey.parse(rows[0].get("variant", "") if rows else "")
    if key.faults is not None:
        out["recovery"] = recovery_rates(merge_counts(recovered.values()))
    if key.load is not None:
        out["load"] = load_level_stats(rows, infra)
    return out


def summarize_group(
    rows: Sequence[Mapping[str, Any]],
    metas: Sequence[TaskMeta],
    how: Summarizing,
    outcomes: tuple[list[TaskTrials], dict[str, Counter[str]]],
) -> tuple[dict[str, Any], list[TaskTrials], list[int], list[dict[str, float]]]:
    """Counts, the policy section, blame, breakdowns and task rows of one model's trials of
    one variant (`outcomes`: their per-task outcomes and counts); with those outcomes, the
    k values they allow (a run stopped early leaves out those some task has too few trials
    for) and each task's k-metrics."""
    tasks, per_counts = outcomes
    empty = [t.task_id for t in tasks if t.n == 0]
    if empty:
        raise MetricError(
            f"task '{empty[0]}' has no trial left once infra errors are excluded; "
            "resume the run or use --infra-errors fail"
        )
    ks = how.ks
    out: dict[str, Any] = {"counts": _counts(Counter(row["outcome"] for row in rows), len(rows))}
    if how.partial:
        fewest = min((t.n for t in tasks), default=0)
        skipped = [k for k in ks if k > fewest]
        ks = [k for k in ks if k <= fewest]
        if skipped:
            out["skipped_k"] = skipped
    check_k(tasks, ks)
    per = {task.task_id: task_row(task, ks) for task in tasks}
    policy = policy_summary(rows, how.seed)
    adherence = policy.pop("tasks") if policy else {}
    out["policy"] = policy
    out["blame"], out["blame_rules"] = blame_counts(rows)
    out["tiers"] = {str(t): v for t, v in by_tier(per, metas).items()}
    out["tags"] = by_tag(per, metas)
    grouped: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for trial in rows:
        grouped[trial["task_id"]].append(trial)
    checked = policy is not None
    out["tasks"] = [
        {
            "id": task.task_id,
            "trials": task.n,
            "passed": task.c,
            "infra_error": per_counts[task.task_id]["infra_error"],
            "metrics": {
                **per[task.task_id],
                **economics(grouped[task.task_id], how.imported),
                **({POLICY_ADHERENCE.name: adherence.get(task.task_id)} if checked else {}),
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
    return out, tasks, ks, [per[task.task_id] for task in tasks]


@derives(INFRA_ERROR_SHARE.name)
def infra_error_share(entry: ModelSummary) -> Measured:
    """Infra-error trials / trials over all of the model's variants."""
    variants = [v.counts for v in entry.variants.values()] or [entry.counts]
    total = sum(c.total for c in variants)
    infra = sum(c.infra_error for c in variants)
    return Measured({INFRA_ERROR_SHARE.name: infra / total if total else None})


def measured(entry: ModelSummary) -> Measured:
    """Every metric of one model with the intervals it has: its own (`metrics`, `ci`), then
    those derived from its summary (cost_per_task_usd, infra_error_share, the persona and
    checkpoint metrics, the ratios under drift and load)."""
    derived = DERIVED.measure(entry)
    return Measured(
        {**entry.metrics.root, **derived.values}, {**entry.ci.root, **derived.intervals}
    )


def model_metrics(entry: ModelSummary) -> MetricValues:
    """Every metric of one model a gate may hold it to."""
    values = measured(entry).values
    return MetricValues(
        {name: v for name, v in values.items() if CATALOGUE.read(name).definition.gateable}
    )
