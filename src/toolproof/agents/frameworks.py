"""The trial's tools in each agent framework's own form: OpenAI Agents SDK, LangChain (and
LangGraph), Pydantic AI.

Each form is built from the tools as the trial shows them (drifted under `--drift`: the
framework sees the renamed tools and parameters) and calls through the gateway, so faults,
drift and load apply and every call is recorded. A tool answers with its result as JSON
text; a failed call answers `{"error": ...}` as a model would see it, never raising. The
frameworks are optional (`pip install 'toolproof[agents]'`) and imported only when asked for.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agents import FunctionTool
    from langchain_core.tools import StructuredTool
    from pydantic_ai import Tool

Call = Callable[[str, dict[str, Any] | str | None], Awaitable[Any]]
"""`ToolHandle.call`: a tool's name and arguments to its result JSON."""

EXTRA = "pip install 'toolproof[agents]'"


def _text(result: Any) -> str:
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


def _needs(package: str, form: str) -> ModuleNotFoundError:
    return ModuleNotFoundError(f"tools.{form}() needs the {package} package: {EXTRA}")


def openai_agents_tools(schemas: list[dict[str, Any]], call: Call) -> list[FunctionTool]:
    """`agents.FunctionTool`s, for `Agent(tools=...)` of the OpenAI Agents SDK. Not strict:
    a suite's schemas need not meet strict mode's rules."""
    try:
        from agents import FunctionTool, RunContextWrapper
    except ImportError:
        raise _needs("openai-agents", "openai_agents") from None

    def tool(schema: dict[str, Any]) -> FunctionTool:
        name = schema["name"]

        async def invoke(context: RunContextWrapper[Any], arguments: str) -> str:
            return _text(await call(name, arguments))

        return FunctionTool(
            name=name,
            description=schema["description"],
            params_json_schema=schema["parameters"],
            on_invoke_tool=invoke,
            strict_json_schema=False,
        )

    return [tool(s) for s in schemas]


def langchain_tools(schemas: list[dict[str, Any]], call: Call) -> list[StructuredTool]:
    """LangChain `StructuredTool`s (async), for LangGraph's `ToolNode` or any LangChain agent;
    their `args_schema` is the tool's JSON Schema."""
    try:
        from langchain_core.tools import StructuredTool
    except ImportError:
        raise _needs("langchain-core", "langchain") from None

    def tool(schema: dict[str, Any]) -> StructuredTool:
        name = schema["name"]

        async def run(**arguments: Any) -> str:
            return _text(await call(name, arguments))

        return StructuredTool.from_function(
            coroutine=run,
            name=name,
            description=schema["description"],
            args_schema=schema["parameters"],
        )

    return [tool(s) for s in schemas]


def pydantic_ai_tools(schemas: list[dict[str, Any]], call: Call) -> list[Tool[Any]]:
    """Pydantic AI `Tool`s, for `Agent(tools=...)`, each with the tool's JSON Schema."""
    try:
        from pydantic_ai import Tool
    except ImportError:
        raise _needs("pydantic-ai", "pydantic_ai") from None

    def tool(schema: dict[str, Any]) -> Tool[Any]:
        name = schema["name"]

        async def run(**arguments: Any) -> str:
            return _text(await call(name, arguments))

        return Tool.from_schema(
            run, name=name, description=schema["description"], json_schema=schema["parameters"]
        )

    return [tool(s) for s in schemas]
