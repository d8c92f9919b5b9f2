"""The gateway: every tool call of a trial passes through here, whatever its backend.

It parses and checks the call, runs the tool against the trial's world, times it and records
it in the transcript. A malformed or unknown call goes back to the agent as a tool error and
the trial goes on. Faults, schema drift and shared load are layers of this same path.
"""

from __future__ import annotations

import itertools
import json
import time
from typing import Any

from toolproof.spec.suite import ToolBinding
from toolproof.tools.base import ToolContext, ToolResult, ToolSchema
from toolproof.transcript import ToolCallEvent, Transcript


class Gateway:
    """The tools of one trial, as an agent reaches them."""

    def __init__(
        self, bindings: dict[str, ToolBinding], context: ToolContext, transcript: Transcript
    ) -> None:
        self.bindings = bindings
        self.context = context
        self.transcript = transcript
        self._ids = itertools.count(1)

    @property
    def schemas(self) -> list[ToolSchema]:
        return [binding.schema for binding in self.bindings.values()]

    def is_write(self, name: str) -> bool:
        binding = self.bindings.get(name)
        return binding is not None and binding.write

    async def call(
        self, name: str, arguments: dict[str, Any] | str | None, call_id: str | None = None
    ) -> ToolResult:
        """Make one tool call; arguments may be a dict or the model's raw JSON text."""
        started = self.transcript.now()
        clock = time.perf_counter()
        call_id = call_id or f"call_{next(self._ids)}"
        raw = arguments if isinstance(arguments, str) else ""
        parsed, result = _parse(arguments)
        if result is None:
            result = await self._dispatch(name, parsed or {})
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
            )
        )
        return result

    async def _dispatch(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        binding = self.bindings.get(name)
        if binding is None:
            known = ", ".join(sorted(self.bindings))
            return ToolResult.error("unknown_tool", f"no tool named '{name}'; tools: {known}")
        return await binding.tool.call(arguments, self.context)


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
