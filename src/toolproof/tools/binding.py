"""A tool bound into a suite's tool list: the backend tool and how the suite presents it."""

from __future__ import annotations

from dataclasses import dataclass

from toolproof.tools.base import Tool, ToolSchema


@dataclass(frozen=True)
class ToolBinding:
    """A tool of the suite (`tools:`): its backend tool, what the model sees, tier, weight, kind."""

    tool: Tool
    schema: ToolSchema
    tier: int
    weight: float | None
    write: bool
    backend: str
    simulated: bool = True
    """False for tools of real systems (MCP, OpenAPI): the world hash cannot see their effects."""
