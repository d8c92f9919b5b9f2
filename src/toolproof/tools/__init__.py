"""Tools: the interface every backend implements, and the Python-function backend."""

from toolproof.tools.base import Tool, ToolContext, ToolError, ToolResult, ToolSchema
from toolproof.tools.python import PythonTool, tool

__all__ = ["PythonTool", "Tool", "ToolContext", "ToolError", "ToolResult", "ToolSchema", "tool"]
