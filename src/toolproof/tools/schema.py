"""Tools of real systems, described by a JSON Schema: one argument check for all of them."""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from toolproof.tools.base import Tool, ToolSchema


class SchemaTool(Tool):
    """A tool whose arguments are checked against its JSON Schema (MCP and OpenAPI tools).

    A schema that is not valid JSON Schema checks nothing: the system behind it judges the
    call, and its answer reaches the agent as it is.
    """

    simulated = False

    def __init__(self, schema: ToolSchema, write: bool) -> None:
        self.schema = schema
        self.write = write
        try:
            self._validator: Draft202012Validator | None = Draft202012Validator(schema.parameters)
        except SchemaError:
            self._validator = None

    def check_arguments(self, arguments: dict[str, Any]) -> list[str]:
        if self._validator is None:
            return []
        problems = []
        for error in self._validator.iter_errors(arguments):
            where = ".".join(str(p) for p in error.absolute_path) or "arguments"
            problems.append(f"{where}: {error.message}")
        return problems
