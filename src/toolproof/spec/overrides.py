"""Model settings given for one run, over those of toolproof.yaml and the suite's `models:`.

`toolproof run` builds them from its model flags (`--base-url`, `--temperature`, `--header`,
...; checked where the flags are read), they apply to every model the run calls (its agents',
its simulated user's, its judge's), and the run stores the ones given as its config's
`model_flags`.
"""

from __future__ import annotations

from typing import Any

from pydantic import SerializerFunctionWrapHandler, model_serializer

from toolproof.spec.base import Strict


class ModelOverrides(Strict):
    """A model entry's settings (`ModelEntry`), each one optional: None is not given. Only
    the given ones are written out, so a stored run keeps the flags it was given and nothing
    else."""

    base_url: str | None = None
    timeout_s: int | float | None = None
    temperature: int | float | None = None
    max_tokens: int | None = None
    tool_choice: str | None = None
    parallel_tool_calls: bool | None = None
    n_threads: int | None = None
    prompted: bool | None = None
    headers: dict[str, str] | None = None
    extra: dict[str, Any] | None = None
    seed: int | None = None
    max_concurrency: int | None = None
    api_key_env: str | None = None
    n_ctx: int | None = None

    @model_serializer(mode="wrap")
    def _given_only(self, write: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return {key: value for key, value in write(self).items() if value is not None}

    def given(self) -> dict[str, Any]:
        """The settings given, by name, in the order above (a layer of a model's entry)."""
        return self.model_dump()
