"""Each metric's compute function, registered against its name in the catalogue.

A compute function takes what one model's summary is made from and returns the values (and
intervals) of the metrics it is registered for; one function may compute a family
(`pass@{k}` at every k of the run) or several metrics that share their work. There are two
registries, by what a function reads:

- `computes`: a model's trials and the parts of its summary computed from them
  (`ModelFacts`); what these give is each model's `metrics` in the summary;
- `derives`: a model's finished summary (`ModelSummary`); what these give the gate and the
  reports ask for on top (`cost_per_task_usd`, `persona.NAME.pass@1`, ...).

A name that is not in the catalogue, a metric registered twice, or a function returning a
metric it is not registered for, is an error: a misspelt name is never "not measured".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from toolproof.spec.metrics import CATALOGUE, MetricDef, UnknownMetric

if TYPE_CHECKING:
    from toolproof.metrics.passk import TaskTrials
    from toolproof.metrics.sections import ConditionStats, Degradation, Policy, Reliability
    from toolproof.metrics.summary import ModelSummary

Value = float | None
"""A metric's value (an int where one was counted); None: not measured."""
Interval = list[float] | None
In = TypeVar("In")


@dataclass
class Measured:
    """What a compute function found: values by metric name, and the intervals it has."""

    values: dict[str, Value] = field(default_factory=dict)
    intervals: dict[str, Interval] = field(default_factory=dict)


@dataclass(frozen=True)
class ModelFacts:
    """What one model's metrics are computed from: its primary variant's trials (`rows`),
    per-task outcomes (`tasks`) and each task's pass@1 and k-metrics (`task_rows`, in the
    same order) at the k values computed, the parts of its summary computed from all of its
    trials, and how the run is summarised."""

    rows: Sequence[Mapping[str, Any]]
    tasks: Sequence[TaskTrials]
    task_rows: Sequence[Mapping[str, float]]
    ks: Sequence[int]
    seed: int
    intervals: bool
    imported: bool
    policy: Policy | None
    conditions: ConditionStats
    reliability: Reliability | None
    """None while the score's own parts are being measured."""
    degradation: Degradation | None


Compute = Callable[[In], Measured]


@dataclass(frozen=True)
class Computation(Generic[In]):
    """One registered compute function and the metrics it computes."""

    definitions: tuple[MetricDef, ...]
    compute: Compute[In]

    @property
    def where(self) -> str:
        return f"{self.compute.__module__}.{self.compute.__qualname__}"


class Computations(Generic[In]):
    """The compute functions of one kind of input, by the metrics they compute."""

    def __init__(self, recorded: bool) -> None:
        self.recorded = recorded
        self._by_name: dict[str, Computation[In]] = {}

    def register(self, *names: str) -> Callable[[Compute[In]], Compute[In]]:
        """Register the decorated function as the compute function of these metrics (their
        names as the catalogue defines them: `pass^{k}`)."""

        def add(compute: Compute[In]) -> Compute[In]:
            definitions = tuple(CATALOGUE[name] for name in names)
            for definition in definitions:
                if definition.recorded != self.recorded:
                    how = "recorded" if definition.recorded else "derived from a summary"
                    raise ValueError(f"metric {definition.name!r} is {how}: register it there")
                if definition.name in self._by_name:
                    raise ValueError(f"metric {definition.name!r} already has a compute function")
            computation = Computation(definitions, compute)
            self._by_name.update(dict.fromkeys(names, computation))
            return compute

        return add

    def unregister(self, *names: str) -> None:
        """Take compute functions out again (one a test added)."""
        for name in names:
            del self._by_name[name]

    def computation(self, name: str) -> Computation[In] | None:
        """The compute function of a metric, by the name it is defined as."""
        return self._by_name.get(name)

    def measure(self, facts: In) -> Measured:
        """Every registered metric's values and intervals from `facts`, the functions taken
        in the catalogue's order."""
        out = Measured()
        for computation in self._ordered():
            found = computation.compute(facts)
            for name in [*found.values, *found.intervals]:
                _check(name, computation)
            out.values.update(found.values)
            out.intervals.update(found.intervals)
        return out

    def _ordered(self) -> list[Computation[In]]:
        order = {d.name: at for at, d in enumerate(CATALOGUE)}
        unique = {id(c): c for name, c in self._by_name.items() if name in order}
        return sorted(
            unique.values(), key=lambda c: min(order.get(d.name, len(order)) for d in c.definitions)
        )


def _check(name: str, computation: Computation[Any]) -> None:
    try:
        definition = CATALOGUE.read(name).definition
    except UnknownMetric:
        raise UnknownMetric(f"{computation.where} computed '{name}', no metric's name") from None
    if definition not in computation.definitions:
        raise UnknownMetric(
            f"{computation.where} computed '{name}', which it is not registered for"
        )


RECORDED: Computations[ModelFacts] = Computations(recorded=True)
"""Metrics computed from a model's trials: each model's `metrics` in the summary."""

DERIVED: Computations[ModelSummary] = Computations(recorded=False)
"""Metrics derived from a model's summary when the gate or a report asks."""

computes = RECORDED.register
derives = DERIVED.register


def unmeasured_when_imported(values: Mapping[str, Value]) -> dict[str, Value]:
    """The values as another harness's imported results give them: a metric its results do
    not measure (tokens, latencies, recovery) is None, never 0."""
    return {
        name: value if CATALOGUE.read(name).definition.imported else None
        for name, value in values.items()
    }
