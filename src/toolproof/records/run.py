"""A run as the store keeps it: its settings (`RunConfig`) and its row (`RunRecord`).

The store writes `RunConfig.model_dump(mode="json", exclude_unset=True)`: only the keys a run
set, in the order below, so a stored config reads the same as it always has. Runs made by
`toolproof run` set the run settings; served runs (`serve-tools`) add `served`; imported runs
(`import tau-bench`) set `source`, `imported` and the few settings they have. Later steps
annotate a run: `stopped` (its --max-cost was reached), `regraded_at` and
`regraded_with_suite` (`toolproof regrade`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from toolproof.redact import REDACTED, redacted
from toolproof.spec.overrides import ModelOverrides

InfraPolicy = Literal["fail", "exclude"]
"""How infra errors enter pass^k: as failures, or left out (and always counted)."""


class RunConfig(BaseModel):
    """A run's effective settings: what `toolproof run` resolved from the suite and flags."""

    model_config = ConfigDict(extra="forbid")

    source: str | None = Field(None, description="Imported runs: the file they came from.")
    agent: str | None = None
    served: str | None = Field(None, description="Served runs: how the agent connected.")
    models: list[str] = Field(default_factory=list)
    model_flags: ModelOverrides = Field(
        default_factory=ModelOverrides,
        description="Model settings given as flags (header values redacted).",
    )
    max_cost: int | float | None = None
    user_model: str | None = None
    judge_model: str | None = Field(None, description="The model grading rubric criteria.")
    variants: list[str] = Field(default_factory=lambda: [""])
    score: dict[str, Any] = Field(default_factory=dict)
    time_scale: int | float = 1.0
    trials: int = 1
    k: list[int] = Field(default_factory=lambda: [1])
    seed: int = 0
    max_steps: int = 30
    agent_timeout_s: int | float = 300.0
    """Seconds one turn of a Python agent may take."""
    concurrency: int = 1
    infra_errors: InfraPolicy = "fail"
    tasks: list[str] = Field(default_factory=list)
    notes: list[str] = Field(
        default_factory=list, description="The suite's notes for a reader of the run's numbers."
    )
    suite_path: str | None = None
    imported: bool | None = None
    stopped: str | None = Field(None, description="Why the run stopped early, if it did.")
    regraded_at: str | None = None
    regraded_with_suite: str | None = None

    def stored(self) -> dict[str, Any]:
        """The config as the store keeps it: the keys this run set, in order."""
        return self.model_dump(mode="json", exclude_unset=True)

    def with_(self, **changes: Any) -> RunConfig:
        """A copy with some settings changed (and marked as set)."""
        return RunConfig.model_validate({**self.stored(), **changes})

    def redacted(self) -> RunConfig:
        """The config with its secrets replaced, as the store and a manifest keep it: HTTP
        header values and the user name and password in a base URL or an agent's URL
        (credentials, often)."""
        given = self.model_flags
        hidden: dict[str, Any] = {}
        if given.headers is not None:
            hidden["headers"] = dict.fromkeys(given.headers, REDACTED)
        if given.base_url is not None:
            hidden["base_url"] = redacted(given.base_url)
        flags = given.model_copy(update=hidden)
        agent = redacted(self.agent) if self.agent else self.agent
        if flags == self.model_flags and agent == self.agent:
            return self
        return self.with_(model_flags=flags, **({"agent": agent} if agent else {}))


class RunRecord(BaseModel):
    """One row of the `runs` table."""

    model_config = ConfigDict(extra="forbid")

    id: str
    created_at: str
    finished_at: str | None = None
    status: str
    suite_name: str
    suite_version: str
    suite_hash: str
    fingerprint: str
    agent: str
    config: RunConfig
    toolproof_version: str
    host: str

    @property
    def finished(self) -> bool:
        return self.status == "finished"
