"""Fault injection: errors as real services return them, seeded per trial.

Each call draws, for every rule of the profile that matches its tool, whether the rule fires,
from the trial's `faults` stream (`toolproof.seeds`), so a run's faults are
reproducible (adding a rule to a profile changes the draws of the rules after it).
Latency rules add delay; the first firing error rule decides what the agent sees:

- not executed, an error comes back: rate_limit (429 with Retry-After), token_expired (401,
  and every later call of the rule's tools too until the agent calls the refresh tool),
  forbidden (403), not_found (404), server_error (500/503), timeout (504 after a wait),
  ebcdic (a legacy mainframe's error text in EBCDIC);
- executed, but the answer is damaged (read tools only, so a retry is always safe):
  malformed_json (broken body), truncated (cut short), partial (page 1 of N, later pages
  with a `page` argument), stale (data as it was when the trial started).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any

import orjson

from toolproof.seeds import stream_rng
from toolproof.spec.conditions import FAULT_KINDS, FaultRule
from toolproof.tools.base import ToolResult

DAMAGED = frozenset({"malformed_json", "truncated", "partial", "stale"})
"""Executed, but the answer is damaged."""
NOT_EXECUTED = frozenset(FAULT_KINDS) - DAMAGED - {"latency"}
"""Not executed: an error comes back instead."""
EBCDIC_TEXT = "IMS0105E TRANSACTION ABENDED - RECORD LOCKED BY ANOTHER TASK, RETRY"


def lognormal_params(median_ms: float, p95_ms: float) -> tuple[float, float]:
    """(mu, sigma) of a lognormal with this median and 95th percentile."""
    sigma = (math.log(p95_ms) - math.log(median_ms)) / 1.6448536269514722
    return math.log(median_ms), sigma


@dataclass
class Decision:
    """What the faults do to one call: extra delay, and at most one fault."""

    delay_s: float = 0.0
    rule: FaultRule | None = None

    @property
    def kind(self) -> str | None:
        return self.rule.kind if self.rule else None


@dataclass
class FaultInjector:
    """One trial's faults: its rules, its random stream, and what has fired so far."""

    rules: list[FaultRule]
    tiers: dict[str, int]
    writes: frozenset[str]
    refresh_tool: str | None
    seed: int
    rng: random.Random = field(init=False)
    fired: dict[int, int] = field(default_factory=dict)
    expired: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.rng = stream_rng(self.seed, "faults")

    def matches(self, rule: FaultRule, tool: str) -> bool:
        if rule.tools is not None and tool not in rule.tools:
            return False
        if rule.tiers is not None and self.tiers.get(tool) not in rule.tiers:
            return False
        if rule.kind in DAMAGED and tool in self.writes:
            return False
        return not (rule.kind == "token_expired" and tool == self.refresh_tool)

    def paginated(self, tool: str) -> FaultRule | None:
        """The partial rule covering a tool, if any: its schema gains a `page` argument."""
        return next((r for r in self.rules if r.kind == "partial" and self.matches(r, tool)), None)

    def decide(self, tool: str) -> Decision:
        decision = Decision()
        for index, rule in enumerate(self.rules):
            if not self.matches(rule, tool):
                continue
            draw = self.rng.random()
            if rule.kind == "token_expired" and index in self.expired:
                decision.rule = decision.rule or rule
                continue
            if draw >= rule.rate:
                continue
            if rule.max_per_trial and self.fired.get(index, 0) >= rule.max_per_trial:
                continue
            if rule.kind == "latency":
                decision.delay_s += self.latency_s(rule)
                self.fired[index] = self.fired.get(index, 0) + 1
            elif decision.rule is None:
                decision.rule = rule
                self.fired[index] = self.fired.get(index, 0) + 1
                if rule.kind == "token_expired":
                    self.expired.add(index)
        return decision

    def latency_s(self, rule: FaultRule) -> float:
        if rule.dist == "uniform":
            return self.rng.uniform(rule.ms, rule.max_ms or rule.ms) / 1000
        if rule.dist == "lognormal":
            assert rule.median_ms is not None and rule.p95_ms is not None
            mu, sigma = lognormal_params(rule.median_ms, rule.p95_ms)
            return self.rng.lognormvariate(mu, sigma) / 1000
        return rule.ms / 1000

    def refreshed(self) -> None:
        """The refresh tool succeeded: expired tokens are valid again."""
        self.expired.clear()


def error_result(rule: FaultRule) -> ToolResult:
    """The error a real service returns for a fault that stops the call."""
    kind = rule.kind
    if kind == "rate_limit":
        body: dict[str, Any] = {
            "status": 429,
            "message": rule.message or "Too Many Requests",
            "retry_after_s": rule.retry_after_s,
        }
    elif kind == "token_expired":
        body = {"status": 401, "message": rule.message or "Unauthorized: access token expired"}
    elif kind == "forbidden":
        body = {"status": 403, "message": rule.message or "Forbidden"}
    elif kind == "not_found":
        body = {"status": 404, "message": rule.message or "Not Found"}
    elif kind == "server_error":
        status = rule.status or 503
        default = "Service Unavailable" if status == 503 else "Internal Server Error"
        body = {"status": status, "message": rule.message or default}
    elif kind == "timeout":
        body = {"status": 504, "message": f"Gateway Timeout after {rule.after_s:g} s"}
    else:
        text = (rule.message or EBCDIC_TEXT).encode("cp037").decode("latin-1")
        return ToolResult(content={"error": text}, is_error=True, error_kind="ebcdic")
    return ToolResult(content={"error": body}, is_error=True, error_kind=kind)


def damage(rule: FaultRule, result: ToolResult, rng: random.Random) -> ToolResult:
    """A successful result as a flaky service delivers it."""
    text = orjson.dumps(result.content).decode()
    if rule.kind == "malformed_json":
        cut = max(1, len(text) // 2)
        return ToolResult(
            content=text[:cut] + '\x00{"', is_error=True, error_kind="malformed_response"
        )
    if rule.kind == "truncated":
        cut = max(1, int(len(text) * rng.uniform(0.3, 0.8)))
        return ToolResult(content=text[:cut], is_error=True, error_kind="truncated_response")
    return result


def page_of(content: Any, page: int, size: int) -> tuple[Any, int]:
    """(page `page` of the longest list in a result, number of pages); 1-based pages."""
    if isinstance(content, list):
        pages = max(1, math.ceil(len(content) / size))
        return content[(page - 1) * size : page * size], pages
    if isinstance(content, dict):
        lists = [k for k, v in content.items() if isinstance(v, list)]
        if lists:
            key = max(lists, key=lambda k: len(content[k]))
            items, pages = page_of(content[key], page, size)
            return {**content, key: items}, pages
    return content, 1


def paginate(content: Any, page: int, size: int) -> Any:
    """A page of a result, with where it stands."""
    items, pages = page_of(content, page, size)
    note: dict[str, Any] = {"page": page, "pages": pages}
    if page < pages:
        note["next"] = f"call again with page={page + 1}"
    if isinstance(items, dict):
        return {**items, "pagination": note}
    return {"items": items, "pagination": note}
