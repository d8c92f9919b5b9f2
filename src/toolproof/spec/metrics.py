"""The metric catalogue: one definition per metric, as data.

Every metric toolproof computes, gates on or shows is defined here once: its name (a
template for a family: `pass^{k}` names pass^1, pass^2, ...), which way is better, its unit
and how many decimals it is shown with, its group, whether a gate may hold a run to it,
whether another harness's imported results measure it, and where it is shown. The gate's
grammar, the terminal, Markdown, the HTML report and the dashboard iterate these
definitions instead of lists of names; each metric's value comes from the one function
registered against its name in `toolproof.metrics.compute`.

A leaf, like the rest of spec/: it imports nothing above it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Literal

Direction = Literal["higher", "lower"]
"""Which way is better."""

Unit = Literal["share", "ratio", "usd", "tokens", "seconds", "calls", "turns"]
"""What a value counts: a share lies between 0 and 1, a ratio may exceed 1."""

Group = Literal["pass", "economics", "policy", "conditions", "score", "conversation", "outcomes"]
"""Metrics computed, and mostly shown, together."""

Surface = Literal["terminal", "markdown", "html", "dashboard", "compare"]
"""Where a metric is shown beyond the JSON summary and the gate: `terminal` is the table of
models a run ends with, `markdown` the gate's report, `html` the report's spend table,
`dashboard` a trend chart, `compare` the metrics `toolproof compare` lists untested."""

Condition = Literal["faults", "drift", "load"]
"""The kind of variant (a suite.yaml section) a metric is measured under."""

DECLARED: Mapping[Condition, str] = {
    "faults": "fault profile",
    "drift": "drift variant",
    "load": "load levels",
}
"""What a suite declares in each condition's section, in words."""

PARAMETERS: Mapping[str, tuple[str, str]] = {
    "k": ("[1-9][0-9]*", "K"),
    "persona": ("[a-z][a-z0-9_-]*", "NAME"),
    "turns": ("[1-9][0-9]*", "N"),
}
"""A template's parameters: the text a value may be, and the word the grammar shows for it."""

_PLACEHOLDER = re.compile(r"\{(\w+)\}")


class UnknownMetric(ValueError):
    """A name the catalogue does not define: a misspelt metric is an error, never a metric
    that was not measured."""


@dataclass(frozen=True)
class MetricDef:
    """One metric, or one family of metrics parametrised by k, a persona or a length."""

    name: str
    """The name, or its template: `recovery_rate`, `pass^{k}`, `persona.{persona}.pass@1`."""
    label: str
    """The metric in words, for titles and legends."""
    direction: Direction
    unit: Unit
    group: Group
    digits: int = 3
    """Decimals a table shows it with."""
    column: str = ""
    """Its header in the terminal's table of models (a template, as the name)."""
    shown: frozenset[Surface] = frozenset()
    gateable: bool = True
    """A gate may hold a run to it (`--min`, `--max`, `gate:` in suite.yaml)."""
    imported: bool = True
    """Measured on results imported from another harness, whose transcripts carry no
    tokens, latencies or error marks; False: null there, never 0."""
    recorded: bool = True
    """In each model's `metrics` in the summary; False: derived from the summary when the
    gate or a report asks (`cost_per_task_usd`)."""
    fixed_k: tuple[int, ...] = ()
    """The k values it is computed at whatever the run's k (pass@1)."""
    under: Condition | None = None
    """The variant kind it is measured under; None: any trial measures it."""
    score_weight: float | None = None
    """Its default weight as a part of the Reliability Score; None: not a part."""
    pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        unknown = [p for p in self.params if p not in PARAMETERS]
        if unknown:
            raise ValueError(f"metric {self.name!r}: unknown parameter {unknown[0]!r}")
        pieces = _PLACEHOLDER.split(self.name)
        regex = "".join(
            re.escape(piece) if i % 2 == 0 else f"(?P<{piece}>{PARAMETERS[piece][0]})"
            for i, piece in enumerate(pieces)
        )
        object.__setattr__(self, "pattern", re.compile(regex))

    @property
    def params(self) -> tuple[str, ...]:
        """The template's parameters, in order: () for a single metric."""
        return tuple(_PLACEHOLDER.findall(self.name))

    @property
    def per_k(self) -> bool:
        return "k" in self.params

    def at(self, **values: object) -> str:
        """The name of one member of the family: `PASS_HAT.at(k=5)` is `pass^5`."""
        return self.name.format(**values)

    @property
    def generic(self) -> str:
        """The family's name with its parameters as words: `pass^k`, a score part's key."""
        return _PLACEHOLDER.sub(lambda m: m.group(1), self.name)

    @property
    def grammar(self) -> str:
        """The name as the gate's grammar shows it: `pass^K`, `persona.NAME.pass@1`."""
        return _PLACEHOLDER.sub(lambda m: PARAMETERS[m.group(1)][1], self.name)

    def header(self, **values: object) -> str:
        """Its column header in the terminal's table of models."""
        return self.column.format(**values)


@dataclass(frozen=True)
class Named:
    """A concrete metric name read against the catalogue: its definition and parameters."""

    definition: MetricDef
    params: Mapping[str, str]

    @property
    def k(self) -> int | None:
        value = self.params.get("k")
        return int(value) if value is not None else None


class Catalogue:
    """The metric definitions, in the order a model's metrics are computed and written."""

    def __init__(self, definitions: Iterable[MetricDef]) -> None:
        self._definitions: dict[str, MetricDef] = {}
        self._read: dict[str, Named] = {}
        for definition in definitions:
            self.define(definition)

    def define(self, definition: MetricDef) -> MetricDef:
        """Add a metric after those defined before it. A name is defined once, and never
        as one an existing definition already reads."""
        if definition.name in self._definitions or any(
            d.pattern.fullmatch(definition.name) for d in self
        ):
            raise ValueError(f"metric {definition.name!r} is already defined")
        self._definitions[definition.name] = definition
        self._read.clear()
        return definition

    def undefine(self, name: str) -> None:
        """Take a definition out again (one a test added)."""
        del self._definitions[name]
        self._read.clear()

    def __iter__(self) -> Iterator[MetricDef]:
        return iter(list(self._definitions.values()))

    def __getitem__(self, name: str) -> MetricDef:
        """A definition by the name it is defined as (a family's template)."""
        found = self._definitions.get(name)
        if found is None:
            raise UnknownMetric(f"no metric is defined as '{name}'")
        return found

    def read(self, name: str) -> Named:
        """A concrete name (`pass^5`, `persona.terse.pass@1`) with its definition and
        parameters; a name the catalogue does not define is UnknownMetric."""
        known = self._read.get(name)
        if known is not None:
            return known
        for definition in self._definitions.values():
            match = definition.pattern.fullmatch(name)
            if match:
                self._read[name] = Named(definition, match.groupdict())
                return self._read[name]
        raise UnknownMetric(f"unknown metric '{name}'")

    def where(self, surface: Surface, groups: Iterable[Group]) -> list[MetricDef]:
        """The metrics shown on a surface, group by group in the order given."""
        return [d for group in groups for d in self if d.group == group and surface in d.shown]

    def score_parts(self) -> list[MetricDef]:
        """The Reliability Score's parts, the heaviest default weight first."""
        parts = [d for d in self if d.score_weight is not None]
        return sorted(parts, key=lambda d: -(d.score_weight or 0.0))

    def default_weights(self) -> dict[str, float]:
        """The score's default weights, keyed as suite.yaml's `score.weights` names them."""
        return {d.generic: d.score_weight or 0.0 for d in self.score_parts()}

    def grammar(self) -> str:
        """The names a gate may use, in words: `pass@K, ... or cost_usd, ...`."""
        families: dict[str, list[str]] = {}
        for d in self:
            if d.gateable and d.params:
                head, _, tail = d.grammar.rpartition(".")
                families.setdefault(head, []).append(tail)
        shown = [
            f"{head}.({'|'.join(tails)})" if head else ", ".join(tails)
            for head, tails in families.items()
        ]
        plain = sorted(d.name for d in self if d.gateable and not d.params)
        return f"{', '.join(shown)} or {', '.join(plain)}"


def _on(*surfaces: Surface) -> frozenset[Surface]:
    return frozenset(surfaces)


PASS_AT = MetricDef(
    "pass@{k}",
    "pass@k",
    "higher",
    "share",
    "pass",
    column="pass@{k}",
    shown=_on("terminal", "markdown", "dashboard"),
    fixed_k=(1,),
)
PASS_HAT = MetricDef(
    "pass^{k}",
    "pass^k",
    "higher",
    "share",
    "pass",
    column="pass^{k}",
    shown=_on("terminal", "markdown", "dashboard"),
    score_weight=0.4,
)
PASS_HAT_STRICT = MetricDef("pass^{k}_strict", "strict pass^k", "higher", "share", "pass")
RELIABILITY_TAX = MetricDef(
    "reliability_tax@{k}",
    "reliability tax",
    "lower",
    "share",
    "pass",
    column="tax@{k}",
    shown=_on("terminal"),
)
COST_USD = MetricDef(
    "cost_usd",
    "cost",
    "lower",
    "usd",
    "economics",
    digits=4,
    column="cost",
    shown=_on("terminal", "markdown", "html", "compare"),
)
COST_PER_TASK_USD = MetricDef(
    "cost_per_task_usd",
    "cost per task",
    "lower",
    "usd",
    "economics",
    digits=4,
    shown=_on("markdown", "compare"),
    recorded=False,
)
COST_PER_PASS_USD = MetricDef(
    "cost_per_pass_usd",
    "cost per passed task",
    "lower",
    "usd",
    "economics",
    digits=4,
    column="cost/pass",
    shown=_on("terminal", "html", "dashboard", "compare"),
)
USER_COST_USD = MetricDef(
    "user_cost_usd",
    "simulated user",
    "lower",
    "usd",
    "economics",
    digits=4,
    shown=_on("html"),
)
TOKENS_INPUT = MetricDef(
    "tokens_input",
    "tokens in",
    "lower",
    "tokens",
    "economics",
    digits=0,
    column="tokens in/out",
    shown=_on("terminal", "html"),
    imported=False,
)
TOKENS_OUTPUT = MetricDef(
    "tokens_output",
    "tokens out",
    "lower",
    "tokens",
    "economics",
    digits=0,
    column="tokens in/out",
    shown=_on("terminal", "html"),
    imported=False,
)
LATENCY_P50 = MetricDef(
    "latency_p50_s",
    "model-call latency p50",
    "lower",
    "seconds",
    "economics",
    digits=2,
    shown=_on("html"),
    imported=False,
)
LATENCY_P95 = MetricDef(
    "latency_p95_s",
    "model-call latency p95",
    "lower",
    "seconds",
    "economics",
    digits=2,
    column="model p95",
    shown=_on("terminal", "markdown", "html", "dashboard", "compare"),
    imported=False,
)
TRIAL_LATENCY_P50 = MetricDef(
    "trial_latency_p50_s",
    "trial duration p50",
    "lower",
    "seconds",
    "economics",
    digits=2,
    shown=_on("html"),
    imported=False,
)
TRIAL_LATENCY_P95 = MetricDef(
    "trial_latency_p95_s",
    "trial duration p95",
    "lower",
    "seconds",
    "economics",
    digits=2,
    column="trial p95",
    shown=_on("terminal", "html", "dashboard", "compare"),
    imported=False,
)
TOOL_CALLS_PER_TRIAL = MetricDef(
    "tool_calls_per_trial",
    "tool calls/trial",
    "lower",
    "calls",
    "economics",
    digits=2,
    shown=_on("html"),
)
TURNS_PER_TRIAL = MetricDef(
    "turns_per_trial",
    "turns/trial",
    "lower",
    "turns",
    "economics",
    digits=2,
    shown=_on("html"),
)
POLICY_ADHERENCE = MetricDef(
    "policy_adherence",
    "policy adherence",
    "higher",
    "share",
    "policy",
    shown=_on("markdown"),
)
RECOVERY_RATE = MetricDef(
    "recovery_rate",
    "recovery rate",
    "higher",
    "share",
    "conditions",
    shown=_on("markdown", "compare"),
    imported=False,
    under="faults",
    score_weight=0.3,
)
LOOP_RATE = MetricDef(
    "loop_rate",
    "loop rate",
    "lower",
    "share",
    "conditions",
    shown=_on("markdown", "compare"),
    imported=False,
)
CORRECTIVE_ACTION = MetricDef(
    "corrective_action",
    "corrective action",
    "higher",
    "share",
    "conditions",
    shown=_on("markdown"),
    imported=False,
    under="faults",
)
DRIFT_ROBUSTNESS = MetricDef(
    "drift_robustness",
    "drift robustness",
    "higher",
    "share",
    "conditions",
    shown=_on("markdown", "compare"),
    under="drift",
    score_weight=0.1,
)
RATIO_TO_CLEAN = MetricDef(
    "ratio_to_clean",
    "pass rate under drift against the clean pass rate",
    "higher",
    "ratio",
    "conditions",
    gateable=False,
    recorded=False,
    under="drift",
)
COMPLETION_UNDER_LOAD = MetricDef(
    "completion_under_load",
    "completion under load",
    "higher",
    "share",
    "conditions",
    shown=_on("markdown", "compare"),
    under="load",
    score_weight=0.2,
)
RATIO_TO_BASELINE = MetricDef(
    "ratio_to_baseline",
    "pass rate at the peak load against the baseline level",
    "higher",
    "ratio",
    "conditions",
    gateable=False,
    recorded=False,
    under="load",
)
RELIABILITY_SCORE = MetricDef(
    "reliability_score",
    "Reliability Score",
    "higher",
    "share",
    "score",
    column="score",
    shown=_on("terminal", "markdown", "dashboard", "compare"),
)
CHECKPOINT_DEGRADATION = MetricDef(
    "checkpoint_degradation",
    "pass@1 lost per 10 more user turns",
    "lower",
    "share",
    "conversation",
    shown=_on("markdown"),
)
INFRA_ERROR_SHARE = MetricDef(
    "infra_error_share",
    "infra-error share of trials",
    "lower",
    "share",
    "outcomes",
    shown=_on("markdown", "dashboard", "compare"),
    recorded=False,
)
PERSONA_PASS_AT_1 = MetricDef(
    "persona.{persona}.pass@1",
    "pass@1 as the persona plays the user",
    "higher",
    "share",
    "conversation",
    shown=_on("markdown"),
    recorded=False,
)
PERSONA_PASS_HAT = MetricDef(
    "persona.{persona}.pass^{k}",
    "pass^k as the persona plays the user",
    "higher",
    "share",
    "conversation",
    shown=_on("markdown"),
    recorded=False,
)
PERSONA_RECOVERY_TURNS = MetricDef(
    "persona.{persona}.recovery_turns",
    "turns to recover from the persona's confusing message",
    "lower",
    "turns",
    "conversation",
    shown=_on("markdown"),
    recorded=False,
)
CHECKPOINT_PASS_AT_1 = MetricDef(
    "checkpoint.{turns}.pass@1",
    "pass@1 with every conversation stretched to N user turns",
    "higher",
    "share",
    "conversation",
    shown=_on("markdown"),
    recorded=False,
)
CHECKPOINT_PASS_HAT = MetricDef(
    "checkpoint.{turns}.pass^{k}",
    "pass^k with every conversation stretched to N user turns",
    "higher",
    "share",
    "conversation",
    shown=_on("markdown"),
    recorded=False,
)

CATALOGUE = Catalogue(
    [
        PASS_AT,
        PASS_HAT,
        PASS_HAT_STRICT,
        RELIABILITY_TAX,
        COST_USD,
        COST_PER_TASK_USD,
        COST_PER_PASS_USD,
        USER_COST_USD,
        TOKENS_INPUT,
        TOKENS_OUTPUT,
        LATENCY_P50,
        LATENCY_P95,
        TRIAL_LATENCY_P50,
        TRIAL_LATENCY_P95,
        TOOL_CALLS_PER_TRIAL,
        TURNS_PER_TRIAL,
        POLICY_ADHERENCE,
        RECOVERY_RATE,
        LOOP_RATE,
        CORRECTIVE_ACTION,
        DRIFT_ROBUSTNESS,
        RATIO_TO_CLEAN,
        COMPLETION_UNDER_LOAD,
        RATIO_TO_BASELINE,
        RELIABILITY_SCORE,
        INFRA_ERROR_SHARE,
        PERSONA_PASS_AT_1,
        PERSONA_PASS_HAT,
        PERSONA_RECOVERY_TURNS,
        CHECKPOINT_PASS_AT_1,
        CHECKPOINT_PASS_HAT,
        CHECKPOINT_DEGRADATION,
    ]
)
"""Every metric, in the order a model's metrics are computed and written."""
