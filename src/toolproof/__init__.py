"""toolproof: predict how reliably a tool-using LLM agent behaves in production.

The public API. Everything else lives behind these names. Each is imported when first used,
so `import toolproof` is quick and the command line is catching Ctrl-C before the heavy
imports begin.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from toolproof.version import __version__

if TYPE_CHECKING:
    from toolproof.agents import Agent, LoopAgent, NullAgent, OracleAgent, TrialContext
    from toolproof.api import (
        GateVerdict,
        Measure,
        RegradeResult,
        RunResult,
        ValidationResult,
        agate,
        aregrade,
        arun,
        avalidate,
        gate,
        regrade,
        run,
        validate,
    )
    from toolproof.errors import SuiteError, ToolproofError, UsageError
    from toolproof.gateway import Gateway
    from toolproof.models import Message, ModelClient, ModelResponse, ToolCall, Usage
    from toolproof.records.trial import TrialResult
    from toolproof.runner import ModelOverrides, RunReport, RunRequest, run_suite
    from toolproof.runner.validate import validate_suite
    from toolproof.store import Store
    from toolproof.suite import Suite, Task, load_suite
    from toolproof.tools import Tool, ToolContext, ToolError, ToolResult, ToolSchema, tool
    from toolproof.world import World

_HOMES = {
    **dict.fromkeys(
        [
            *("GateVerdict", "Measure", "RegradeResult", "RunResult", "ValidationResult"),
            *("agate", "aregrade", "arun", "avalidate", "gate", "regrade", "run", "validate"),
        ],
        "toolproof.api",
    ),
    "Agent": "toolproof.agents",
    "LoopAgent": "toolproof.agents",
    "NullAgent": "toolproof.agents",
    "OracleAgent": "toolproof.agents",
    "TrialContext": "toolproof.agents",
    "SuiteError": "toolproof.errors",
    "ToolproofError": "toolproof.errors",
    "UsageError": "toolproof.errors",
    "Gateway": "toolproof.gateway",
    "Message": "toolproof.models",
    "ModelClient": "toolproof.models",
    "ModelResponse": "toolproof.models",
    "ToolCall": "toolproof.models",
    "Usage": "toolproof.models",
    "TrialResult": "toolproof.records.trial",
    "ModelOverrides": "toolproof.runner",
    "RunReport": "toolproof.runner",
    "RunRequest": "toolproof.runner",
    "run_suite": "toolproof.runner",
    "validate_suite": "toolproof.runner.validate",
    "Store": "toolproof.store",
    "Suite": "toolproof.suite",
    "Task": "toolproof.suite",
    "load_suite": "toolproof.suite",
    "Tool": "toolproof.tools",
    "ToolContext": "toolproof.tools",
    "ToolError": "toolproof.tools",
    "ToolResult": "toolproof.tools",
    "ToolSchema": "toolproof.tools",
    "tool": "toolproof.tools",
    "World": "toolproof.world",
}
"""Where each public name is defined."""


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'toolproof' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


__all__ = [
    "Agent",
    "GateVerdict",
    "Gateway",
    "LoopAgent",
    "Measure",
    "Message",
    "ModelClient",
    "ModelOverrides",
    "ModelResponse",
    "NullAgent",
    "OracleAgent",
    "RegradeResult",
    "RunReport",
    "RunRequest",
    "RunResult",
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
    "ValidationResult",
    "World",
    "__version__",
    "agate",
    "aregrade",
    "arun",
    "avalidate",
    "gate",
    "load_suite",
    "regrade",
    "run",
    "run_suite",
    "tool",
    "validate",
    "validate_suite",
]
