"""How a suite reaches and calls its models, in `suite.yaml`: per-model request settings,
endpoints and prices."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from pydantic import ConfigDict, Field, field_validator

from toolproof.spec.base import Numbers, Strict
from toolproof.spec.limits import MAX_SECONDS


class ModelSettings(Numbers):
    """Per-model request settings, from the suite or the command line."""

    model_config = ConfigDict(extra="forbid")

    temperature: float | None = None
    max_tokens: int | None = None
    tool_choice: str | None = Field(None, description="auto, required or none")
    parallel_tool_calls: bool | None = None
    seed: int | None = Field(
        None,
        description="A fixed sampling seed for every call; by default each trial's calls "
        "get a seed derived from the trial's seed, where the provider accepts one.",
    )
    extra: dict[str, Any] = Field(
        default_factory=dict, description="Provider parameters passed through as they are."
    )


class Price(Strict):
    """USD per million tokens."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached: float | None = Field(None, ge=0, description="Cached input; defaults to input.")


class ModelEntry(ModelSettings):
    """How to reach and call one model: settings plus endpoint details."""

    base_url: str | None = Field(None, description="For openai-compatible servers.")
    headers: dict[str, str] = Field(default_factory=dict)
    api_key_env: str | None = Field(None, description="Environment variable holding the key.")
    prompted: bool = Field(
        False, description="Describe tools in the prompt, parse calls from text."
    )
    max_concurrency: int | None = Field(
        None,
        ge=1,
        description="Starting limit of calls in flight (default: the run's concurrency).",
    )
    timeout_s: float | None = Field(
        None,
        gt=0,
        le=MAX_SECONDS,
        description="Seconds one request may take (default 120); then it is retried as a "
        "timeout, and the trial is infra_error once the retries are spent.",
    )
    n_threads: int | None = Field(
        None, ge=1, description="CPU threads for a local model (default: 2, at most the CPUs)."
    )
    n_ctx: int | None = Field(
        None, ge=256, description="Context window in tokens of a local model (default 8192)."
    )

    @field_validator("base_url")
    @classmethod
    def _an_http_url(cls, value: str | None) -> str | None:
        problem = None if value is None else url_problem(value)
        if problem:
            raise ValueError(f"{value!r} {problem}")
        return value


def url_problem(url: str) -> str | None:
    """What keeps `url` from being a base URL a client can call, or None."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (a port that is not a number raises here)
    except ValueError as exc:
        return f"is not a URL ({exc})"
    if parts.scheme not in ("http", "https") or not parts.hostname or " " in url:
        return "is not a URL: give http:// or https:// and a host, as in http://127.0.0.1:8000/v1"
    return None
