"""What every file model shares."""

from __future__ import annotations

import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, model_validator
from pydantic.fields import FieldInfo


class Numbers(BaseModel):
    """A number in the file is a finite number (no .nan, no .inf) and never a boolean
    (`trials: true` is no count, though pydantic would read it as 1)."""

    model_config = ConfigDict(allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _no_boolean_numbers(cls, data: Any) -> Any:
        """A boolean given for a number is swapped for a value no number validates, so
        that the field itself reports it (a discriminated union allows no field validator
        before it)."""
        if not isinstance(data, dict) or not any(isinstance(v, bool) for v in data.values()):
            return data
        fields = {f.alias or name: f for name, f in cls.model_fields.items()}
        fields.update(cls.model_fields)
        swapped = {
            key: NOT_A_NUMBER if isinstance(value, bool) and _numeric(fields.get(key)) else value
            for key, value in data.items()
        }
        return swapped if swapped != data else data


class _NotANumber:
    def __repr__(self) -> str:
        return "a boolean"


NOT_A_NUMBER = _NotANumber()


class Strict(Numbers):
    """Unknown fields are errors, so a typo never silently drops an expectation."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def _numeric(field: FieldInfo | None) -> bool:
    """Whether a field takes numbers and not booleans."""
    kinds = _kinds(field.annotation) if field is not None else set()
    return bool not in kinds and bool(kinds & {int, float})


def _kinds(annotation: Any) -> set[Any]:
    """The plain types a field's annotation accepts at its top level (a Literal's values by
    their types; a list or a mapping as itself)."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _kinds(get_args(annotation)[0])
    if origin is Literal:
        return {type(v) for v in get_args(annotation)}
    if origin in (Union, types.UnionType):
        return set().union(*(_kinds(arg) for arg in get_args(annotation)))
    return {origin or annotation}
