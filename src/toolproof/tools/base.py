"""The Tool interface: what every backend (Python, MCP, OpenAPI) provides to the gateway."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from toolproof.world import World


@dataclass(frozen=True)
class ToolSchema:
    """What a model sees of a tool: name, description and the JSON Schema of its arguments."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class ToolResult:
    """What a tool call returned: JSON content, or an error with a kind and a message."""

    content: Any
    is_error: bool = False
    error_kind: str | None = None

    @classmethod
    def error(cls, kind: str, message: str) -> ToolResult:
        return cls(content={"error": message}, is_error=True, error_kind=kind)


@dataclass
class ToolContext:
    """What a tool call may use besides its arguments: the trial's world, and a seed of
    the trial's `tools` stream (`toolproof.seeds`) for tools that draw random values."""

    world: World
    seed: int
    extras: dict[str, Any] = field(default_factory=dict)


class ToolError(Exception):
    """Raise from a tool to return an error to the agent, as a real service would."""

    def __init__(self, message: str, kind: str = "tool_error") -> None:
        super().__init__(message)
        self.kind = kind


class Tool(ABC):
    """One callable tool, whatever its backend."""

    schema: ToolSchema
    write: bool = False
    simulated: bool = True
    """True when the tool's effects live in the trial's world (Python tools); False for
    tools of real systems (MCP, OpenAPI), whose effects the world hash cannot see."""

    @property
    def name(self) -> str:
        return self.schema.name

    @abstractmethod
    def check_arguments(self, arguments: dict[str, Any]) -> list[str]:
        """Problems with these arguments (unknown, missing, wrong type); empty when valid."""

    @abstractmethod
    async def call(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        """Run the tool. Expected failures come back as error results, never as exceptions."""
