"""Python-function tools: plain functions over the trial's world, registered with `@tool`.

The schema the model sees comes from the type hints and the docstring: the text before
`Args:` is the description, and each `name: text` line under `Args:` describes a parameter.
A parameter named `world` receives the trial's World; one named `context` its ToolContext.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any, TypeVar, get_type_hints, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from toolproof.tools.base import Tool, ToolContext, ToolError, ToolResult, ToolSchema
from toolproof.world import thaw

F = TypeVar("F", bound=Callable[..., Any])
INJECTED = ("world", "context")
_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Returns|Raises|Yields|Examples?):\s*$")
_ARG_LINE = re.compile(r"^\s*(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """(description, {parameter: description}) from a Google-style docstring."""
    lines = inspect.cleandoc(doc or "").splitlines()
    description: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    for line in lines:
        header = _SECTION.match(line)
        if header:
            section, current = header.group(1), None
            continue
        if section is None:
            description.append(line)
        elif section in ("Args", "Arguments", "Parameters"):
            match = _ARG_LINE.match(line)
            indent = len(line) - len(line.lstrip())
            if match and indent <= 4:
                current = match.group(1).lstrip("*")
                params[current] = match.group(3).strip()
            elif current and line.strip():
                params[current] = f"{params[current]} {line.strip()}".strip()
    return "\n".join(description).strip(), params


def _strip_titles(schema: Any) -> Any:
    """pydantic's generated `title` keys, removed; a parameter named `title` stays."""
    if isinstance(schema, dict):
        out = {}
        for key, value in schema.items():
            if key == "title" and isinstance(value, str):
                continue
            if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
                out[key] = {name: _strip_titles(sub) for name, sub in value.items()}
            else:
                out[key] = _strip_titles(value)
        return out
    if isinstance(schema, list):
        return [_strip_titles(v) for v in schema]
    return schema


class PythonTool(Tool):
    """A tool backed by a Python function."""

    def __init__(
        self, func: Callable[..., Any], *, name: str | None, description: str | None, write: bool
    ) -> None:
        self.func = func
        self.write = write
        self.is_async = inspect.iscoroutinefunction(func)
        doc_description, doc_params = parse_docstring(func.__doc__)
        hints = get_type_hints(func)
        signature = inspect.signature(func)
        self.injected = [p for p in signature.parameters if p in INJECTED]
        fields: dict[str, Any] = {}
        for pname, param in signature.parameters.items():
            if pname in INJECTED:
                continue
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise TypeError(f"tool {func.__name__}: *args and **kwargs are not supported")
            annotation = hints.get(pname, Any)
            default = ... if param.default is param.empty else param.default
            fields[pname] = (annotation, Field(default, description=doc_params.get(pname)))
        self.arguments_model: type[BaseModel] = create_model(
            f"{func.__name__}_arguments",
            __config__=ConfigDict(extra="forbid", strict=True),
            **fields,
        )
        parameters = _strip_titles(self.arguments_model.model_json_schema())
        parameters.setdefault("properties", {})
        parameters["additionalProperties"] = False
        self.schema = ToolSchema(
            name=name or func.__name__,
            description=description or doc_description,
            parameters=parameters,
        )

    def _integral(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """JSON has one number type: 1.0 is a valid `integer` under the schema the model sees."""
        properties = self.schema.parameters.get("properties", {})
        return {
            key: int(value)
            if isinstance(value, float)
            and value.is_integer()
            and properties.get(key, {}).get("type") == "integer"
            else value
            for key, value in arguments.items()
        }

    def check_arguments(self, arguments: dict[str, Any]) -> list[str]:
        try:
            self.arguments_model.model_validate(self._integral(arguments))
        except ValidationError as exc:
            return [_describe(error) for error in exc.errors()]
        return []

    async def call(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        try:
            parsed = self.arguments_model.model_validate(self._integral(arguments))
        except ValidationError as exc:
            problems = "; ".join(_describe(error) for error in exc.errors())
            return ToolResult.error("invalid_arguments", problems)
        kwargs = {field: getattr(parsed, field) for field in type(parsed).model_fields}
        if "world" in self.injected:
            kwargs["world"] = context.world
        if "context" in self.injected:
            kwargs["context"] = context
        try:
            value = await self.func(**kwargs) if self.is_async else self.func(**kwargs)
        except ToolError as exc:
            return ToolResult.error(exc.kind, str(exc))
        except Exception as exc:
            return ToolResult.error("exception", f"{type(exc).__name__}: {exc}")
        return ToolResult(content=thaw(value))


def _describe(error: Any) -> str:
    where = ".".join(str(part) for part in error["loc"]) or "arguments"
    if error["type"] == "extra_forbidden":
        return f"{where}: unexpected argument"
    if error["type"] == "missing":
        return f"{where}: missing required argument"
    return f"{where}: {error['msg']}"


@overload
def tool(func: F, /) -> F: ...


@overload
def tool(
    *, name: str | None = None, description: str | None = None, write: bool = False
) -> Callable[[F], F]: ...


def tool(
    func: Any = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    write: bool = False,
) -> Any:
    """Register a Python function as a tool; the function itself stays callable as before.

    Args:
        func: The function (when used as a bare `@tool`).
        name: The name the model sees; defaults to the function's name.
        description: Overrides the docstring's description.
        write: True when the tool changes the world (policy checks and the oracle use it).
    """

    def register(f: F) -> F:
        f.__toolproof_tool__ = PythonTool(  # type: ignore[attr-defined]
            f, name=name, description=description, write=write
        )
        return f

    return register(func) if func is not None else register


def tools_in(namespace: dict[str, Any]) -> list[PythonTool]:
    """The tools registered with `@tool` among a module's globals, in definition order."""
    found = [getattr(v, "__toolproof_tool__", None) for v in namespace.values()]
    return [t for t in found if isinstance(t, PythonTool)]
