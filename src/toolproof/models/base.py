"""The model interface the agent loop is written against.

It is shaped so both OpenAI-style (tool calls on the assistant message, tool results as
`tool` messages) and Anthropic-style (tool_use / tool_result content blocks) map onto it:
an assistant Message carries text plus ToolCalls with ids; a `tool` Message answers one call.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from toolproof.spec.model_settings import ModelSettings
from toolproof.tools.base import ToolSchema

__all__ = [
    "ContextOverflow",
    "Message",
    "ModelClient",
    "ModelResponse",
    "ModelSettings",
    "ProviderError",
    "ToolCall",
    "Usage",
]


class ToolCall(BaseModel):
    """A tool call as the model made it. `arguments` is None when its JSON did not parse."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    arguments: dict[str, Any] | None = None
    raw_arguments: str = ""


class Message(BaseModel):
    """One message of the conversation the model sees."""

    model_config = ConfigDict(frozen=True)

    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    is_error: bool = False


class Usage(BaseModel):
    """Tokens of one model call (or a sum of them)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
        )


class ModelResponse(BaseModel):
    """One model turn: the assistant message, its token usage, latency and cost."""

    message: Message
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    cost_usd: float | None = None
    stop_reason: str = ""


class ModelClient(ABC):
    """A model behind a provider. Implementations map their provider's format both ways."""

    name: str

    @abstractmethod
    async def generate(
        self, messages: list[Message], tools: list[ToolSchema], *, seed: int | None = None
    ) -> ModelResponse:
        """One model turn for this conversation and these tools.

        `seed` is the turn's sampling seed, drawn from the trial's `model` stream
        (`toolproof.seeds`): a provider that accepts a seed uses it unless the model's
        settings fix one. Provider failures that persist after retries raise `InfraError`.
        """


class ProviderError(Exception):
    """A provider answered with an error (or not at all).

    `retryable` errors (429, 5xx, 529/overloaded, timeouts, connection errors) are retried by
    the retry layer; after its budget they become `InfraError`. Others are raised at once.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after


class ContextOverflow(Exception):
    """The conversation no longer fits the model's context window: the agent's failure."""
