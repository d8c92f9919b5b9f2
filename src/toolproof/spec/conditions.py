"""Production conditions in suite.yaml: fault profiles, schema drift variants, load, score.

```yaml
faults:
  refresh_tool: refresh_token          # the tool that cures a `token_expired` fault
  profiles:
    production:
      - {kind: latency, dist: lognormal, median_ms: 120, p95_ms: 900}
      - {kind: rate_limit, tiers: [1], rate: 0.05, retry_after_s: 2}
      - {kind: token_expired, tools: [refund_payment], rate: 0.2}
drift:
  renamed-fields:
    - {op: rename_field, tool: get_order, field: status, to: state}
load:
  levels: [1, 10, 50, 200]
  capacity:
    "*": {rate_per_s: 50, burst: 20, latency_ms: 40, servers: 8}
score:
  k: 5
  faults: production
  weights: {pass^k: 0.4, recovery_rate: 0.3, completion_under_load: 0.2, drift_robustness: 0.1}
```
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, model_validator

from toolproof.spec.base import Strict
from toolproof.spec.limits import MAX_CONCURRENCY
from toolproof.spec.metrics import CATALOGUE

FaultKind = Literal[
    "latency",
    "rate_limit",
    "token_expired",
    "forbidden",
    "not_found",
    "server_error",
    "timeout",
    "malformed_json",
    "truncated",
    "partial",
    "stale",
    "ebcdic",
]

FAULT_KINDS: tuple[str, ...] = FaultKind.__args__  # type: ignore[attr-defined]


class FaultRule(Strict):
    """One kind of fault, on some tools, at some rate per call."""

    kind: FaultKind
    tools: list[str] | None = Field(None, description="Tool names; all tools when omitted.")
    tiers: list[Literal[1, 2, 3]] | None = Field(None, description="Only tools of these tiers.")
    rate: float = Field(1.0, ge=0, le=1, description="Chance that a matching call is hit.")
    max_per_trial: int | None = Field(None, ge=1, description="At most this many per trial.")
    status: int | None = Field(None, description="server_error: 500 or 503 (default 503).")
    retry_after_s: float = Field(1.0, ge=0, description="rate_limit: the Retry-After.")
    after_s: float = Field(10.0, ge=0, description="timeout: how long before giving up.")
    dist: Literal["fixed", "uniform", "lognormal"] = "fixed"
    ms: float = Field(0.0, ge=0, description="latency (fixed), or the low end (uniform).")
    max_ms: float | None = Field(None, ge=0, description="latency (uniform): the high end.")
    median_ms: float | None = Field(None, gt=0, description="latency (lognormal).")
    p95_ms: float | None = Field(None, gt=0, description="latency (lognormal).")
    page_size: int = Field(5, ge=1, description="partial: items per page.")
    message: str | None = Field(None, description="The error text the service returns.")

    @model_validator(mode="after")
    def _latency_shape(self) -> FaultRule:
        if self.kind == "latency":
            if self.dist == "uniform" and self.max_ms is None:
                raise ValueError("uniform latency needs ms (low) and max_ms (high)")
            if self.dist == "lognormal" and (self.median_ms is None or self.p95_ms is None):
                raise ValueError("lognormal latency needs median_ms and p95_ms")
            if self.dist == "lognormal" and (self.p95_ms or 0) < (self.median_ms or 0):
                raise ValueError("p95_ms must be at least median_ms")
        return self


class FaultsSpec(Strict):
    refresh_tool: str | None = Field(None, description="Cures token_expired once called.")
    profiles: dict[str, list[FaultRule]] = Field(default_factory=dict)


class RenameTool(Strict):
    op: Literal["rename_tool"]
    tool: str
    to: str


class RenameParam(Strict):
    op: Literal["rename_param"]
    tool: str
    param: str
    to: str


class RenameField(Strict):
    """Rename a field of the tool's response (at any depth), `tool: "*"` for every tool."""

    op: Literal["rename_field"]
    tool: str
    field: str
    to: str


class AddRequiredParam(Strict):
    """A new required parameter the agent must infer or ask for; `value` is the right one
    (what the retrying oracle sends). A call with another value gets a 400-style error."""

    op: Literal["add_required_param"]
    tool: str
    param: str
    schema_: dict[str, Any] = Field(alias="schema")
    value: Any
    description: str = ""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class ChangeType(Strict):
    """A string id parameter becomes an integer: the agent sends 10001 for "W10001"."""

    op: Literal["change_type"]
    tool: str
    param: str
    to: Literal["integer"] = "integer"
    prefix: str = Field("", description="The prefix the string ids carry, put back on calls.")


class RemoveOptionalParam(Strict):
    op: Literal["remove_optional_param"]
    tool: str
    param: str


class SplitTool(Strict):
    """One tool becomes several, each taking some of its parameters."""

    op: Literal["split_tool"]
    tool: str
    into: dict[str, list[str]]


class MergeTools(Strict):
    """Several tools become one with an `action` parameter naming the old tool."""

    op: Literal["merge_tools"]
    tools: list[str] = Field(min_length=2)
    into: str


class Distractor(Strict):
    name: str
    description: str
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class AddDistractors(Strict):
    """Extra tools that look relevant; calling one returns a 'deprecated' error."""

    op: Literal["add_distractors"]
    tools: list[Distractor]


DriftTransform = Annotated[
    RenameTool
    | RenameParam
    | RenameField
    | AddRequiredParam
    | ChangeType
    | RemoveOptionalParam
    | SplitTool
    | MergeTools
    | AddDistractors,
    Field(discriminator="op"),
]


class Capacity(Strict):
    """A tool's shared capacity under load."""

    rate_per_s: float | None = Field(None, gt=0, description="Token-bucket refill rate.")
    burst: int = Field(10, ge=1, description="Token-bucket size.")
    latency_ms: float = Field(0.0, ge=0, description="Service time with no queue.")
    servers: int = Field(4, ge=1, description="Calls served at once before latency grows.")
    retry_after_s: float = Field(1.0, ge=0, description="Retry-After of its 429s.")


class LoadSpec(Strict):
    levels: list[Annotated[int, Field(ge=1, le=MAX_CONCURRENCY)]] = Field(
        default_factory=lambda: [1, 10, 50, 200]
    )
    peak: int | None = Field(
        None, ge=1, le=MAX_CONCURRENCY, description="The level the score uses; max by default."
    )
    capacity: dict[str, Capacity] = Field(
        default_factory=dict, description="By tool name; '*' for every other tool."
    )


class ScoreSpec(Strict):
    """The Reliability Score: which k, fault profile, drift variants and load level."""

    k: int | None = Field(None, ge=1, description="Default: the largest k of the defaults.")
    faults: str | None = Field(None, description="Fault profile; default: the first one.")
    drift: list[str] | None = Field(None, description="Drift variants; default: all.")
    load: int | None = Field(
        None, ge=1, le=MAX_CONCURRENCY, description="Load level; default: the peak."
    )
    weights: dict[str, float] = Field(default_factory=CATALOGUE.default_weights)

    @model_validator(mode="after")
    def _known_weights(self) -> ScoreSpec:
        known = set(CATALOGUE.default_weights())
        unknown = set(self.weights) - known
        if unknown:
            raise ValueError(f"unknown score components {sorted(unknown)}; use {sorted(known)}")
        if any(w < 0 for w in self.weights.values()) or sum(self.weights.values()) <= 0:
            raise ValueError("weights must be non-negative and not all zero")
        return self
