"""What every file model shares."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    """Unknown fields are errors, so a typo never silently drops an expectation."""

    model_config = ConfigDict(extra="forbid", frozen=True)
