"""Variants: the production conditions a set of trials runs under.

A variant names a fault profile, a drift variant, a load level, a persona and a conversation
length (each optional); its key is stored with every trial: "" (clean), "faults:production",
"drift:v2-api", "load:200", "persona:corrector", "turns:8", or a combination joined by "+",
e.g. "faults:production+load:200".
"""

from __future__ import annotations

from toolproof.errors import UsageError
from toolproof.gateway.core import Conditions
from toolproof.gateway.drift import DriftError, DriftLayer
from toolproof.gateway.faults import FaultInjector
from toolproof.gateway.load import SharedCapacity
from toolproof.spec.task import Task
from toolproof.spec.variants import VariantKey
from toolproof.suite.loaded import Suite
from toolproof.users.personas import Persona, leaked, resolve_persona
from toolproof.users.scripted import UserFactory
from toolproof.users.variant import variant_user

Variant = VariantKey
"""A variant as the runner plans it: the conditions of its key (`toolproof.spec.variants`)."""


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
        self.persona: Persona | None = None
        if variant.persona is not None:
            self.persona = resolve_persona(variant.persona, spec.personas)
            for task in suite.tasks:
                fact = leaked(self.persona, task)
                if fact is not None:
                    raise UsageError(
                        f"persona {variant.persona} says {fact!r}, which task {task.id} "
                        "requires the agent to look up (or never to say): reword the persona"
                    )

    def user(self, base: UserFactory) -> UserFactory:
        """The user side of this variant's trials: the run's own, as the persona plays it and
        stretched to the variant's length."""
        return variant_user(base, self.persona, self.variant.turns)

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
