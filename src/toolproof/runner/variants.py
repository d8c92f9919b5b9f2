"""Variants: the production conditions a set of trials runs under.

A variant names a fault profile, a drift variant and a load level (each optional); its key is
stored with every trial: "" (clean), "faults:production", "drift:v2-api", "load:200", or a
combination joined by "+", e.g. "faults:production+load:200".
"""

from __future__ import annotations

from dataclasses import dataclass

from toolproof.errors import UsageError
from toolproof.gateway.core import Conditions
from toolproof.gateway.drift import DriftError, DriftLayer
from toolproof.gateway.faults import FaultInjector
from toolproof.gateway.load import SharedCapacity
from toolproof.spec.source import Task
from toolproof.suite.loaded import Suite


@dataclass(frozen=True)
class Variant:
    faults: str | None = None
    drift: str | None = None
    load: int | None = None

    @property
    def key(self) -> str:
        parts = []
        if self.faults:
            parts.append(f"faults:{self.faults}")
        if self.drift:
            parts.append(f"drift:{self.drift}")
        if self.load:
            parts.append(f"load:{self.load}")
        return "+".join(parts)

    @classmethod
    def parse(cls, key: str) -> Variant:
        values: dict[str, str] = {}
        for part in filter(None, key.split("+")):
            name, _, value = part.partition(":")
            values[name] = value
        load = values.get("load")
        return cls(values.get("faults"), values.get("drift"), int(load) if load else None)


class VariantSetup:
    """What the trials of one variant share: the drifted API, the load; faults per trial."""

    def __init__(self, suite: Suite, variant: Variant, time_scale: float = 1.0) -> None:
        self.suite = suite
        self.variant = variant
        self.time_scale = time_scale
        spec = suite.file
        self.rules = []
        if variant.faults is not None:
            if variant.faults not in spec.faults.profiles:
                known = ", ".join(spec.faults.profiles) or "none defined"
                raise UsageError(f"--faults {variant.faults}: no such fault profile ({known})")
            self.rules = list(spec.faults.profiles[variant.faults])
        self.drift: DriftLayer | None = None
        if variant.drift is not None:
            if variant.drift not in spec.drift:
                known = ", ".join(spec.drift) or "none defined"
                raise UsageError(f"--drift {variant.drift}: no such drift variant ({known})")
            schemas = {name: b.schema for name, b in suite.tools.items()}
            try:
                self.drift = DriftLayer(list(spec.drift[variant.drift]), schemas)
            except DriftError as exc:
                raise UsageError(f"drift variant {variant.drift}: {exc}") from None
        self.load: SharedCapacity | None = None
        if variant.load is not None:
            capacity = spec.load.capacity if spec.load else {}
            self.load = SharedCapacity(dict(capacity), time_scale)

    @property
    def concurrency(self) -> int | None:
        """Trials at once: the load level for a load variant."""
        return self.variant.load

    def conditions(self, task: Task, seed: int) -> Conditions:
        """A trial's conditions: its own fault stream, the variant's drift and load."""
        faults = None
        if self.rules:
            faults = FaultInjector(
                rules=self.rules,
                tiers={name: b.tier for name, b in self.suite.tools.items()},
                writes=frozenset(name for name, b in self.suite.tools.items() if b.write),
                refresh_tool=self.suite.file.faults.refresh_tool,
                seed=seed,
            )
        return Conditions(
            faults=faults,
            drift=self.drift,
            load=self.load,
            time_scale=self.time_scale,
            stale_state=self.suite.start_state(task),
        )
