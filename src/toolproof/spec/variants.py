"""A variant's key, as runs store it and the metrics read it back.

A key joins the conditions a trial ran under with `+`, in this order: `faults:PROFILE`,
`drift:VARIANT`, `load:LEVEL`, `persona:NAME`, `turns:N` (each absent when not applied; the
clean variant is the empty key): `faults:production+load:200`, `persona:terse`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

Kind = Literal["faults", "drift", "load", "persona", "turns"]


@dataclass(frozen=True)
class VariantKey:
    """The parts of a variant key; None where the variant does not apply that condition."""

    faults: str | None = None
    drift: str | None = None
    load: int | None = None
    persona: str | None = None
    turns: int | None = None
    """A conversation stretched to this many user turns (a checkpoint)."""

    @classmethod
    def parse(cls, key: str) -> VariantKey:
        """The parts of a stored key (a part of an unknown kind is passed over)."""
        values: dict[str, str] = {}
        for part in filter(None, key.split("+")):
            kind, _, value = part.partition(":")
            values[kind] = value
        load, turns = values.get("load"), values.get("turns")
        return cls(
            faults=values.get("faults"),
            drift=values.get("drift"),
            load=int(load) if load else None,
            persona=values.get("persona"),
            turns=int(turns) if turns else None,
        )

    @property
    def key(self) -> str:
        """The key as stored."""
        return "+".join(f"{kind}:{value}" for kind, value in self._parts())

    def kinds(self) -> set[Kind]:
        """The conditions this variant applies."""
        return {kind for kind, _ in self._parts()}

    def only(self, kind: Kind) -> bool:
        """Whether this variant applies `kind` and nothing else (a plain drift variant)."""
        return self.kinds() == {kind}

    def without(self, *kinds: Kind) -> VariantKey:
        """The same variant without these conditions."""
        return replace(self, **dict.fromkeys(kinds))

    def _parts(self) -> list[tuple[Kind, object]]:
        parts: list[tuple[Kind, object]] = [
            ("faults", self.faults),
            ("drift", self.drift),
            ("load", self.load),
            ("persona", self.persona),
            ("turns", self.turns),
        ]
        return [(kind, value) for kind, value in parts if value]
