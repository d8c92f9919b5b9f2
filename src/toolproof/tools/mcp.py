"""MCP tools: the tools a Model Context Protocol server lists, as a suite's tools.

The connection to the server is live and belongs to the runtime (`toolproof.runtime.mcp`);
an MCPTool is given the function that makes a call through it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from toolproof.tools.base import ToolContext, ToolResult, ToolSchema
from toolproof.tools.schema import SchemaTool

MCPCall = Callable[[str, dict[str, Any], tuple[str, ...], ToolContext], Awaitable[ToolResult]]
"""(the server's tool name, the arguments, the bound argument names to fill in, the call's
context) -> the result: how an MCPTool reaches its server."""


@dataclass(frozen=True)
class DiscoveredTool:
    """A tool as the server lists it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
            "read_only": self.read_only,
        }


class MCPTool(SchemaTool):
    """One tool of an MCP backend.

    Arguments named in the backend's `bind` are filled in by toolproof on every call and are
    not shown to the agent.
    """

    def __init__(self, found: DiscoveredTool, bind: set[str], call: MCPCall) -> None:
        self.remote_name = found.name
        self._call = call
        parameters = dict(found.input_schema)
        properties = dict(parameters.get("properties") or {})
        self.inject = tuple(sorted(k for k in bind if k in properties))
        for key in self.inject:
            properties.pop(key)
        parameters["properties"] = properties
        if "required" in parameters:
            parameters["required"] = [r for r in parameters["required"] if r not in self.inject]
        parameters.setdefault("type", "object")
        schema = ToolSchema(name=found.name, description=found.description, parameters=parameters)
        super().__init__(schema, write=not found.read_only)

    async def call(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        return await self._call(self.remote_name, dict(arguments), self.inject, context)
