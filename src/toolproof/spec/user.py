"""The user side of a task: its opening, scripted turns and reactive replies, each said when
its condition on the agent's last reply holds; and the personas a suite may play it in."""

from __future__ import annotations

import re
from typing import Annotated, Any, Protocol

from pydantic import BeforeValidator, Field, ValidationInfo, field_validator, model_validator

from toolproof.spec.base import Strict
from toolproof.spec.expectations import CallSpec

SHORTCUTS = ("always", "asks_confirmation", "asks_question")


class Match(Strict):
    """A condition on the agent's last reply (case-insensitive)."""

    contains: list[str] | None = None
    regex: str | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> Match:
        if (self.contains is None) == (self.regex is None):
            raise ValueError("give exactly one of 'contains' or 'regex'")
        if self.regex is not None:
            try:
                re.compile(self.regex)
            except re.error as exc:
                raise ValueError(f"bad regex: {exc}") from None
        return self


def _condition(value: Any) -> Any:
    if isinstance(value, str):
        if value not in SHORTCUTS:
            raise ValueError(
                f"unknown condition {value!r}; use one of {', '.join(SHORTCUTS)}, "
                "{contains: [...]} or {regex: ...}"
            )
        return value
    if isinstance(value, dict):
        return Match.model_validate(value)
    return value


When = Annotated[str | Match, BeforeValidator(_condition)]


DO = (
    "Calls of the suite's user tools the user makes, in order, before saying `say` (the "
    "agent asked them to restart a device, say); each goes through the gateway like the "
    "agent's."
)


class UserTurn(Strict):
    """A scripted user turn, said in order once its condition holds."""

    say: str
    when: When = "always"
    do: list[CallSpec] = Field(default_factory=list, description=DO)


class UserReply(Strict):
    """A reactive reply, said whenever its condition holds and no scripted turn is due."""

    say: str
    when: When
    times: int = Field(1, ge=1)
    do: list[CallSpec] = Field(default_factory=list, description=DO)


class UserSpec(Strict):
    """The user side of a task."""

    opening: str
    owns: list[str | int] = Field(
        default_factory=list,
        description="The user's own account: owner ids or identifiers (an email) of the "
        "records that are theirs. Default: the accounts the gold actions' identifying calls "
        "name (no_other_customer_data).",
    )
    persona: str = ""
    instructions: str = ""
    turns: list[UserTurn] = Field(default_factory=list)
    replies: list[UserReply] = Field(default_factory=list)


BUILTIN_PERSONAS = (
    "cooperative",
    "corrector",
    "ambiguous",
    "contradictory",
    "topic-switcher",
    "terse",
    "impatient",
)
"""The personas toolproof ships (registered in `toolproof.users.personas.PERSONAS`, where
others may join them)."""

PERSONA_NAMES = "persona_names"
"""The validation context's key for the `Names` of every persona a suite may `use:`."""


class Names(Protocol):
    """The names of a registry (`toolproof.registry.Registry`), as reading a file sees them."""

    def __contains__(self, name: object) -> bool: ...

    def known(self) -> str: ...


def known_personas(info: ValidationInfo) -> tuple[Names | tuple[str, ...], str]:
    """The personas a suite may use, and how they are listed: those registered when the
    loader passes them (`PERSONA_NAMES`), else the built-ins."""
    names: Names | None = (info.context or {}).get(PERSONA_NAMES)
    if names is None:
        return BUILTIN_PERSONAS, ", ".join(BUILTIN_PERSONAS)
    return names, names.known()


PERSONA_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")


class PersonaSpec(Strict):
    """A suite's own persona: built-ins applied in order, and its own words for the scripted
    user (`prefix`, `turns`) and for a simulated user (`prompt`)."""

    description: str = ""
    use: list[str] = Field(
        default_factory=list, description="Built-in personas applied in order, e.g. [terse]."
    )
    prompt: str = Field("", description="Said to a simulated user about its manner.")
    prefix: str = Field("", description="Said before the task's opening, in the same message.")
    turns: list[UserTurn] = Field(
        default_factory=list, description="Said after the opening, before the task's own turns."
    )

    @field_validator("use")
    @classmethod
    def _known(cls, value: list[str], info: ValidationInfo) -> list[str]:
        names, shown = known_personas(info)
        unknown = [name for name in value if name not in names]
        if unknown:
            raise ValueError(f"unknown built-in persona {unknown[0]!r}; built-ins: {shown}")
        return value
