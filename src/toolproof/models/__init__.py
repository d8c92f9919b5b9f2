"""Model clients: the interface the agent loop uses, and its implementations."""

from toolproof.models.base import Message, ModelClient, ModelResponse, ToolCall, Usage
from toolproof.models.scripted import ScriptedModel, load_script

__all__ = [
    "Message",
    "ModelClient",
    "ModelResponse",
    "ScriptedModel",
    "ToolCall",
    "Usage",
    "load_script",
]
