"""The gateway: every tool call of a trial passes through here, whatever its backend.

It parses and checks the call, maps it through schema drift to the suite's tool, applies the
trial's faults and the shared load, runs the tool against the trial's world, times it and
records it in the transcript. A malformed or unknown call goes back to the agent as a tool
error and the trial goes on.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from dataclasses import dataclass
from typing import Any, Literal

from toolproof.bigints import checked
from toolproof.errors import ToolCrashed
from toolproof.gateway.drift import DriftLayer
from toolproof.gateway.faults import (
    NOT_EXECUTED,
    Decision,
    FaultInjector,
    damage,
    error_result,
    paginate,
)
from toolproof.gateway.load import SharedCapacity
from toolproof.tools.base import ToolContext, ToolResult, ToolSchema
from toolproof.tools.binding import ToolBinding
from toolproof.transcript import ToolCallEvent, Transcript
from toolproof.world import FrozenDict, World

PAGE = {"type": "integer", "minimum": 1, "description": "Page of a long result (1 first)."}


@dataclass
class Conditions:
    """The production conditions of one trial (all optional; none is a clean trial)."""

    faults: FaultInjector | None = None
    drift: DriftLayer | None = None
    load: SharedCapacity | None = None
    time_scale: float = 1.0
    stale_state: FrozenDict | None = None


class Gateway:
    """The tools of one trial, as an agent (or, for the suite's user tools, the user)
    reaches them."""

    def __init__(
        self,
        bindings: dict[str, ToolBinding],
        context: ToolContext,
        transcript: Transcript,
        conditions: Conditions | None = None,
        by: Literal["agent", "user"] = "agent",
    ) -> None:
        self.bindings = bindings
        self.by = by
        """Whose tools these are: every call is recorded as theirs."""
        self.context = context
        self.transcript = transcript
        self.conditions = conditions or Conditions()
        self._ids = itertools.count(1)
        faults = self.conditions.faults
        self.paged = {
            name: rule.page_size
            for name in bindings
            if faults and (rule := faults.paginated(name)) is not None
        }
        drift = self.conditions.drift
        base = drift.schemas if drift else [b.schema for b in bindings.values()]
        self.schemas: list[ToolSchema] = [self._with_page(s) for s in base]
        self.paged_names = {
            s.name for s in self.schemas if "page" in s.parameters.get("properties", {})
        }

    def _with_page(self, schema: ToolSchema) -> ToolSchema:
        target = schema.name
        if self.conditions.drift:
            route = self.conditions.drift.route(schema.name)
            target = route.target if route and route.target else ""
        if target not in self.paged:
            return schema
        properties = {**schema.parameters.get("properties", {}), "page": PAGE}
        return ToolSchema(
            schema.name, schema.description, {**schema.parameters, "properties": properties}
        )

    @property
    def time_scale(self) -> float:
        return self.conditions.time_scale

    def is_write(self, name: str) -> bool:
        binding = self.bindings.get(name)
        return binding is not None and binding.write

    def present(self, tool: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """How an agent calls the suite's `tool` with these arguments (under drift too)."""
        if self.conditions.drift:
            return self.conditions.drift.present(tool, arguments)
        return tool, dict(arguments)

    async def call(
        self, name: str, arguments: dict[str, Any] | str | None, call_id: str | None = None
    ) -> ToolResult:
        """Make one tool call; arguments may be a dict or the model's raw JSON text."""
        started = self.transcript.now()
        clock = time.perf_counter()
        call_id = call_id or f"call_{next(self._ids)}"
        raw = arguments if isinstance(arguments, str) else ""
        parsed, result = _parse(arguments)
        tool, tool_args, fault = name, dict(parsed or {}), None
        reached = result is None
        if result is None and self.conditions.drift:
            page = tool_args.pop("page", None) if name in self.paged_names else None
            mapped = self.conditions.drift.to_suite(name, tool_args)
            if isinstance(mapped, ToolResult):
                result, reached = mapped, False
            else:
                _, tool, tool_args = mapped
                if page is not None:
                    tool_args["page"] = page
        crashed: ToolCrashed | None = None
        if result is None:
            try:
                result, fault = await self._run(tool, tool_args)
            except ToolCrashed as exc:  # recorded as a crashed call, then the trial ends
                crashed, result = exc, ToolResult.error("exception", str(exc))
        if self.conditions.drift and not result.is_error:
            result = ToolResult(self.conditions.drift.result_to_agent(tool, result.content))
        content = checked(result.content)  # an integer beyond 64 bits: as text
        if content is not result.content:
            result = ToolResult(content, result.is_error, result.error_kind)
        parsed, tool_args = checked(parsed), checked(tool_args)
        drifted = self.conditions.drift is not None and reached and tool in self.bindings
        self.transcript.add(
            ToolCallEvent(
                t=started,
                call_id=call_id,
                name=name,
                arguments=parsed,
                raw_arguments=raw,
                result=result.content,
                is_error=result.is_error,
                error_kind=result.error_kind,
                latency_s=round(time.perf_counter() - clock, 6),
                fault=fault,
                tool=tool if drifted else None,
                tool_arguments=tool_args if drifted else None,
                by=self.by,
            )
        )
        if crashed is not None:
            raise crashed
        return result

    async def _run(self, tool: str, args: dict[str, Any]) -> tuple[ToolResult, str | None]:
        """Faults, load and the tool itself: (result, the fault injected if any)."""
        binding = self.bindings.get(tool)
        if binding is None:
            known = ", ".join(s.name for s in self.schemas)
            return ToolResult.error("unknown_tool", f"no tool named '{tool}'; tools: {known}"), None
        page = args.pop("page", None) if tool in self.paged else None
        delay, rejected = self.conditions.load.admit(tool) if self.conditions.load else (0.0, None)
        faults = self.conditions.faults
        decision = faults.decide(tool) if faults and rejected is None else Decision()
        fault = decision.kind or ("latency" if decision.delay_s else None)
        try:
            wait = decision.delay_s * self.time_scale + delay
            if wait:
                await asyncio.sleep(wait)
            if rejected is not None:
                return rejected, "load_rate_limit"
            rule = decision.rule
            if rule is not None and rule.kind in NOT_EXECUTED:
                if rule.kind == "timeout":
                    await asyncio.sleep(rule.after_s * self.time_scale)
                return error_result(rule), rule.kind
            context = self.context
            if rule is not None and rule.kind == "stale" and self.conditions.stale_state:
                context = ToolContext(
                    World(self.conditions.stale_state), self.context.seed, self.context.extras
                )
            result = await binding.tool.call(args, context)
        finally:
            if rejected is None and self.conditions.load:
                self.conditions.load.release(tool)
        if faults and not result.is_error and tool == faults.refresh_tool:
            faults.refreshed()
        if rule is not None and not result.is_error and faults:
            if rule.kind in ("malformed_json", "truncated"):
                result = damage(rule, result, faults.rng)
            elif rule.kind == "partial" and page is None:
                result = ToolResult(paginate(result.content, 1, rule.page_size))
        if page is not None and not result.is_error:
            result = ToolResult(paginate(result.content, page, self.paged[tool]))
        return result, fault


def _parse(
    arguments: dict[str, Any] | str | None,
) -> tuple[dict[str, Any] | None, ToolResult | None]:
    if arguments is None:
        return {}, None
    if isinstance(arguments, dict):
        return arguments, None
    if not arguments.strip():
        return {}, None
    try:
        value = json.loads(arguments)
    except json.JSONDecodeError as exc:
        return None, ToolResult.error("malformed_call", f"arguments are not valid JSON: {exc}")
    if not isinstance(value, dict):
        return None, ToolResult.error("malformed_call", "arguments must be a JSON object")
    return value, None
