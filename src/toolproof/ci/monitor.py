"""Production watched: sampled production conversations scored with the graders that need
no gold (policy rules, loops, recovery after tool errors, economics) and compared, dimension
by dimension, with the same measures of a stored baseline run's trials."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolproof.errors import SuiteError
from toolproof.graders.base import Evidence
from toolproof.graders.policy import check_policy, violations
from toolproof.metrics.monitor import Comparison, Dimension, Worse, compare_dimension
from toolproof.metrics.recovery import is_loop, recovered_calls
from toolproof.spec.metrics import LOOP_RATE, RECOVERY_RATE, MetricDef
from toolproof.spec.policy import PolicyRuleSpec
from toolproof.store.journal import Store
from toolproof.suite.loaded import Suite
from toolproof.telemetry import semconv as sc
from toolproof.telemetry.traces import Conversation, conversations, duration_s, transcript_of
from toolproof.transcript import Transcript


def _worse(metric: MetricDef) -> Worse:
    """Which way a catalogue metric gets worse: against the way that is better."""
    return "lower" if metric.direction == "higher" else "higher"


LOOP, RECOVERY = LOOP_RATE.name, RECOVERY_RATE.name
DIMENSIONS = [
    Dimension("policy_violation_rate", "higher", "absolute", "share breaking a policy rule"),
    Dimension(LOOP, _worse(LOOP_RATE), "absolute", "share caught in a loop of failing calls"),
    Dimension(RECOVERY, _worse(RECOVERY_RATE), "absolute", "failed tool calls recovered"),
    Dimension("tokens", "higher", "relative", "model tokens (in + out) per conversation"),
    Dimension("latency_s", "higher", "relative", "seconds per conversation"),
    Dimension("tool_calls", "higher", "relative", "tool calls per conversation"),
]
TOKEN_ATTRIBUTES = (sc.INPUT_TOKENS, sc.OUTPUT_TOKENS, sc.OI_PROMPT_TOKENS)

Measures = dict[str, float | None]


@dataclass(frozen=True)
class Policy:
    """The suite's policy rules and the tools that write, which the rules need."""

    rules: list[PolicyRuleSpec]
    write_tools: frozenset[str]
    read_tools: frozenset[str] = frozenset()
    parameters: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    descriptions: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, suite: Suite | None) -> Policy | None:
        if suite is None or not suite.file.policy_rules:
            return None
        writes = frozenset(name for name, b in suite.tools.items() if b.write)
        reads = frozenset(name for name, b in suite.tools.items() if not b.write)
        schemas = {name: b.schema.parameters for name, b in suite.tools.items()}
        said = {name: b.schema.description for name, b in suite.tools.items()}
        return cls(list(suite.file.policy_rules), writes, reads, schemas, said)

    def violated(self, transcript: Transcript) -> bool:
        evidence = Evidence(
            transcript=transcript,
            lookup=lambda _: (False, None),
            final_hash="",
            expected_hash=None,
            write_tools=self.write_tools,
            read_tools=self.read_tools,
            parameters=self.parameters,
            descriptions=self.descriptions,
            ended="",
        )
        return bool(violations(check_policy(self.rules, evidence)))


def measures(
    transcript: Transcript,
    policy: Policy | None,
    *,
    tokens_measured: bool,
    seconds: float,
) -> Measures:
    """One conversation's value on every dimension; None where it cannot be measured: no
    policy rule (or no user messages and agent replies in order to judge them by: a trace
    without content, or whose replies have no place among its calls), no failed call to
    recover from, no token counts."""
    failed = recovered_calls(transcript)
    usage = transcript.usage()
    said = transcript.messages("user") and transcript.messages("assistant")
    judged = policy is not None and bool(said)
    return {
        "policy_violation_rate": float(policy.violated(transcript)) if judged and policy else None,
        LOOP: float(is_loop(transcript)),
        RECOVERY: sum(ok for _, ok in failed) / len(failed) if failed else None,
        "tokens": float(usage.input_tokens + usage.output_tokens) if tokens_measured else None,
        "latency_s": seconds,
        "tool_calls": float(len(transcript.tool_calls())),
    }


def production_measures(paths: Iterable[Path], policy: Policy | None) -> list[Measures]:
    """Every conversation of the trace files that has an agent, model or tool span,
    measured (other traces in the files, such as plain HTTP requests, are no conversation)."""
    out: list[Measures] = []
    for path in paths:
        found = [c for c in conversations(path) if any(s.kind for s in c.spans)]
        if not found:
            raise SuiteError.at(
                path, None, "no agent, model or tool span (GenAI or OpenInference) in the file"
            )
        out.extend(conversation_measures(conversation, policy) for conversation in found)
    return out


def conversation_measures(conversation: Conversation, policy: Policy | None) -> Measures:
    tokens = any(
        name in span.attributes
        for span in conversation.spans
        if span.kind == "model"
        for name in TOKEN_ATTRIBUTES
    )
    return measures(
        transcript_of(conversation),
        policy,
        tokens_measured=tokens,
        seconds=duration_s(conversation),
    )


def baseline_suite(store: Store, run_id: str) -> Path | None:
    """The suite folder the baseline run was made from, where it still exists here; None
    for an imported run or a folder gone since (the traces are then read without a suite)."""
    stored = store.run(run_id).config.suite_path
    return Path(stored) if stored and Path(stored).exists() else None


def baseline_measures(
    store: Store, run_id: str, policy: Policy | None, include_ungradable: bool = False
) -> list[Measures]:
    """Every trial of the baseline run (one conversation each), measured the same way; an
    agent with no model calls (a baseline agent) has no tokens to compare. The trials of
    tasks marked ungradable are left out unless `include_ungradable`, as every metric
    leaves them out."""
    skipped = set() if include_ungradable else set(ungradable_tasks(store, run_id))
    out = []
    for _, result in store.results(run_id):
        if result.task_id in skipped:
            continue
        transcript = result.transcript
        out.append(
            measures(
                transcript,
                policy,
                tokens_measured=bool(transcript.model_calls()),
                seconds=result.duration_s,
            )
        )
    return out


def ungradable_tasks(store: Store, run_id: str) -> dict[str, str]:
    """The run's tasks marked ungradable, with why."""
    return {
        row["task_id"]: row["ungradable"]
        for row in store.run_tasks(run_id)
        if row.get("ungradable")
    }


@dataclass
class MonitorReport:
    """Every dimension's comparison, and what was compared."""

    baseline_run: str
    conversations: int
    baseline_trials: int
    max_regression: float
    alpha: float
    comparisons: list[Comparison]
    left_out: list[str] = field(default_factory=list)
    """Tasks whose trials the baseline leaves out: marked ungradable."""

    @property
    def regressed(self) -> list[Comparison]:
        return [c for c in self.comparisons if c.status == "regressed"]

    def as_json(self) -> dict[str, Any]:
        return {
            "baseline_run": self.baseline_run,
            "conversations": self.conversations,
            "baseline_trials": self.baseline_trials,
            "max_regression": self.max_regression,
            "alpha": self.alpha,
            "left_out_ungradable": self.left_out,
            "test": "one-sided permutation test, conversation as the unit",
            "regressed": [c.dimension for c in self.regressed],
            "dimensions": [
                {
                    "name": c.dimension,
                    "meaning": c.meaning,
                    "baseline": c.baseline,
                    "current": c.current,
                    "delta": c.delta,
                    "baseline_n": c.baseline_n,
                    "current_n": c.current_n,
                    "allowed_worsening": c.allowed,
                    "p_value": c.p_value,
                    "status": c.status,
                }
                for c in self.comparisons
            ],
        }


def monitor(
    current: list[Measures],
    baseline: list[Measures],
    *,
    baseline_run: str,
    max_regression: float,
    alpha: float,
    left_out: Sequence[str] = (),
) -> MonitorReport:
    """Compare production with the baseline on every dimension."""
    comparisons = [
        compare_dimension(
            dimension,
            [m[dimension.name] for m in baseline],
            [m[dimension.name] for m in current],
            max_regression,
            alpha,
        )
        for dimension in DIMENSIONS
    ]
    return MonitorReport(
        baseline_run,
        len(current),
        len(baseline),
        max_regression,
        alpha,
        comparisons,
        sorted(left_out),
    )
