"""toolproof: predict how reliably a tool-using LLM agent behaves in production.

The public API. Everything else lives behind these names.
"""

__version__ = "0.1.0"

from toolproof.agents import Agent, LoopAgent, NullAgent, OracleAgent, TrialContext
from toolproof.errors import SuiteError, ToolproofError, UsageError
from toolproof.gateway import Gateway
from toolproof.models import Message, ModelClient, ModelResponse, ToolCall, Usage
from toolproof.results import TrialResult
from toolproof.runner import RunReport, RunRequest, run_suite
from toolproof.runner.validate import validate_suite
from toolproof.store import Store
from toolproof.suite import Suite, Task, load_suite
from toolproof.tools import Tool, ToolContext, ToolError, ToolResult, ToolSchema, tool
from toolproof.world import World

__all__ = [
    "Agent",
    "Gateway",
    "LoopAgent",
    "Message",
    "ModelClient",
    "ModelResponse",
    "NullAgent",
    "OracleAgent",
    "RunReport",
    "RunRequest",
    "Store",
    "Suite",
    "SuiteError",
    "Task",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "ToolSchema",
    "ToolproofError",
    "TrialContext",
    "TrialResult",
    "Usage",
    "UsageError",
    "World",
    "__version__",
    "load_suite",
    "run_suite",
    "tool",
    "validate_suite",
]
