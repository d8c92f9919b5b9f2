"""Python-function tools: plain functions over the trial's world, registered with `@tool`.

The schema the model sees comes from the type hints and the docstring: the text before
`Args:` is the description, and each `name: text` line under `Args:` describes a parameter.
A parameter named `world` receives the trial's World; one named `context` its ToolContext.

Arguments arrive as JSON, so a parameter's type is one a JSON value can carry: str, int,
float, bool, None, Any, `datetime.date`, `datetime.datetime`, `datetime.time`,
`decimal.Decimal`, `uuid.UUID` (each written as a string), an Enum or a Literal of JSON
values, a pydantic model, and lists, tuples, dicts with string keys, unions and Optional of
these. Any other hint is refused where the tool is defined. A tool's return value is turned
into JSON the same way (a date becomes its ISO string).
"""

from __future__ import annotations

import asyncio
import copy
import datetime
import decimal
import enum
import inspect
import json
import re
import traceback
import types
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import (
    Annotated,
    Any,
    Literal,
    TypeVar,
    Union,
    get_args,
    get_origin,
    get_type_hints,
    overload,
)

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic_core import PydanticSerializationError, to_jsonable_python

from toolproof.errors import ToolCrashed
from toolproof.tools.base import Tool, ToolContext, ToolError, ToolResult, ToolSchema
from toolproof.tools.guard import (
    Overran,
    ProcessExit,
    Refused,
    TurnOverran,
    call_with_deadline,
    can_interrupt,
    exits_refused,
    in_thread,
    pressed,
    raised_inside,
)
from toolproof.tools.isolated import call_isolated
from toolproof.world import thaw

Isolation = Literal["in_process", "process"]
"""Where a Python tool's calls run: in the harness's process, or a worker process each."""

F = TypeVar("F", bound=Callable[..., Any])
INJECTED = ("world", "context")
_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Returns|Raises|Yields|Examples?):\s*$")
_ARG_LINE = re.compile(r"^\s*(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")
JSON_SCALARS: tuple[Any, ...] = (str, int, float, bool, type(None), Any)
STRING_SCALARS: tuple[type, ...] = (
    datetime.date,
    datetime.datetime,
    datetime.time,
    decimal.Decimal,
    uuid.UUID,
)
CONTAINERS: tuple[Any, ...] = (list, tuple, dict, Sequence, Mapping)
COMBINATIONS: tuple[Any, ...] = (Union, types.UnionType, Annotated)
DEFAULT_TIMEOUT_S = 30.0
"""Seconds a Python tool's call may take when neither the tool nor its backend says."""
MAX_TIMEOUT_S = 86_400.0


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


def unsupported_hint(hint: Any) -> str | None:
    """The part of a type hint that a JSON argument cannot carry, or None when all can."""
    origin = get_origin(hint)
    if origin is None:
        if hint in JSON_SCALARS or hint in STRING_SCALARS or hint in CONTAINERS:
            return None
        if isinstance(hint, type) and issubclass(hint, (enum.Enum, BaseModel)):
            return None
        return getattr(hint, "__name__", None) or repr(hint)
    if origin is Literal:
        json_like = (str, int, float, bool, type(None), enum.Enum)
        bad = [v for v in get_args(hint) if not isinstance(v, json_like)]
        return f"Literal[{bad[0]!r}]" if bad else None
    if origin not in CONTAINERS + COMBINATIONS:
        return repr(hint)
    args = get_args(hint)
    if origin in (dict, Mapping) and args and args[0] is not str:
        return f"dict keys of {getattr(args[0], '__name__', args[0])} (JSON keys are strings)"
    if origin is Annotated:
        args = args[:1]
    found = (unsupported_hint(a) for a in args if a is not Ellipsis)
    return next((part for part in found if part is not None), None)


def raised_at(exc: BaseException, func: Callable[..., Any]) -> str:
    """Where a tool raised: the deepest line in its own file's folder (a helper module of
    the suite counts), else the tool's own frame, as `file.py:LINE`."""
    folder = Path(func.__code__.co_filename).parent
    frames = traceback.extract_tb(exc.__traceback__)
    inside = [
        f for f in frames if Path(f.filename).parent == folder or folder in Path(f.filename).parents
    ]
    frame = inside[-1] if inside else frames[-1]
    return f"{Path(frame.filename).name}:{frame.lineno}"


class PythonTool(Tool):
    """A tool backed by a Python function, bounded by a timeout (`timeout_s`: its own, else
    its backend's, else DEFAULT_TIMEOUT_S)."""

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: str | None,
        description: str | None,
        write: bool,
        timeout_s: float | None = None,
    ) -> None:
        self.func = func
        self.isolation: Isolation = "in_process"
        self.write = write
        self.is_async = inspect.iscoroutinefunction(func)
        self.own_timeout_s = timeout_s
        self.timeout_s = timeout_s or DEFAULT_TIMEOUT_S
        self.folder = Path(func.__code__.co_filename).parent
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
            bad = unsupported_hint(annotation)
            if bad is not None:
                raise TypeError(
                    f"tool {func.__name__}: parameter '{pname}' has the type {bad}, which a "
                    "JSON argument cannot carry; use str, int, float, bool, date, datetime, "
                    "time, Decimal, UUID, an Enum, a Literal, a pydantic model, or lists and "
                    "dicts of them"
                )
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

    def bounded(self, timeout_s: float, isolation: Isolation = "in_process") -> PythonTool:
        """This tool with its backend's timeout, unless it sets its own, and its backend's
        isolation (a copy: two backends of one module may differ)."""
        timeout = self.timeout_s if self.own_timeout_s is not None else timeout_s
        if timeout == self.timeout_s and isolation == self.isolation:
            return self
        bound = copy.copy(self)
        bound.timeout_s, bound.isolation = timeout, isolation
        return bound

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

    def _parsed(self, arguments: dict[str, Any]) -> BaseModel:
        """The arguments checked as the JSON they are: strictly, but a date, a Decimal or an
        enum member may come as the string (or number) JSON writes it as."""
        try:
            text = json.dumps(self._integral(arguments))
        except (TypeError, ValueError) as exc:
            raise _NotJson(f"arguments: not JSON data ({exc})") from None
        return self.arguments_model.model_validate_json(text)

    def check_arguments(self, arguments: dict[str, Any]) -> list[str]:
        try:
            self._parsed(arguments)
        except _NotJson as exc:
            return [str(exc)]
        except ValidationError as exc:
            return [_describe(error) for error in exc.errors()]
        return []

    async def call(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        try:
            parsed = self._parsed(arguments)
        except _NotJson as exc:
            return ToolResult.error("invalid_arguments", str(exc))
        except ValidationError as exc:
            problems = "; ".join(_describe(error) for error in exc.errors())
            return ToolResult.error("invalid_arguments", problems)
        kwargs = {field: getattr(parsed, field) for field in type(parsed).model_fields}
        if "world" in self.injected:
            kwargs["world"] = context.world
        if "context" in self.injected:
            kwargs["context"] = context
        if self.isolation == "process":
            return await call_isolated(
                self.name,
                lambda given: self.func(**given),
                kwargs,
                context,
                is_async=self.is_async,
                timeout_s=self.timeout_s,
            )
        try:
            if self.is_async or not can_interrupt():
                value = await self._elsewhere(kwargs)
            else:  # the common case, kept to plain calls
                value = call_with_deadline(self.func, kwargs, self.timeout_s)
        except ToolError as exc:
            return ToolResult.error(exc.kind, str(exc))
        except Exception as exc:
            where = raised_at(exc, self.func)
            return ToolResult.error("exception", f"{type(exc).__name__}: {exc} (at {where})")
        except BaseException as exc:
            crash = self._crash(exc)
            if crash is None:
                raise
            raise crash from None
        try:
            return ToolResult(content=to_jsonable_python(thaw(value)))
        except PydanticSerializationError:
            return ToolResult.error(
                "exception",
                f"{self.name} returned {type(value).__name__} data that is not JSON "
                f"(tool defined at {_defined_at(self.func)})",
            )

    def _crash(self, exc: BaseException) -> ToolCrashed | None:
        """The crash a call that ended this way is: it ran past its timeout, tried to end,
        signal or interrupt the process (sys.exit, os._exit, a KeyboardInterrupt of its own),
        or raised any other BaseException (GeneratorExit, a CancelledError of its own, a
        class of its own). None for what must go on up: Ctrl-C, a cancelled trial, an agent's
        turn past its deadline."""
        if isinstance(exc, TurnOverran) or pressed(exc):
            return None
        if isinstance(exc, Overran):
            return ToolCrashed(
                f"{self.name} did not return within {self.timeout_s:g} s (its timeout_s)"
            )
        where = raised_at(exc, self.func) if exc.__traceback__ is not None else "?"
        if isinstance(exc, SystemExit | ProcessExit):
            how = "sys.exit" if isinstance(exc, SystemExit) else "os._exit"
            return ToolCrashed(f"{self.name} called {how}({exc.code!r}) (at {where})")
        if isinstance(exc, Refused):
            return ToolCrashed(f"{self.name} called {exc.what}, refused (at {where})")
        if isinstance(exc, KeyboardInterrupt) and not raised_inside(exc, self.folder):
            return None
        text = " ".join(f"{type(exc).__name__}: {exc}".split()).rstrip(":")
        return ToolCrashed(f"{self.name} raised {text} (at {where})")

    async def _elsewhere(self, kwargs: dict[str, Any]) -> Any:
        """A call that cannot be interrupted by a timer signal, within its timeout: a
        coroutine under asyncio's timeout, a plain function off the main thread on a thread
        of its own."""
        with exits_refused():
            if not self.is_async:
                return await in_thread(self.func, kwargs, self.timeout_s)
            limit = asyncio.timeout(self.timeout_s)
            try:
                async with limit:
                    return await self.func(**kwargs)
            except TimeoutError:
                if limit.expired():
                    raise Overran from None
                raise


class _NotJson(ValueError):
    """Arguments that JSON cannot write (only a caller in Python can pass them)."""


def _defined_at(func: Callable[..., Any]) -> str:
    code = func.__code__
    return f"{Path(code.co_filename).name}:{code.co_firstlineno}"


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
    *,
    name: str | None = None,
    description: str | None = None,
    write: bool = False,
    timeout_s: float | None = None,
) -> Callable[[F], F]: ...


def tool(
    func: Any = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    write: bool = False,
    timeout_s: float | None = None,
) -> Any:
    """Register a Python function as a tool; the function itself stays callable as before.

    Args:
        func: The function (when used as a bare `@tool`).
        name: The name the model sees; defaults to the function's name.
        description: Overrides the docstring's description.
        write: True when the tool changes the world (policy checks and the oracle use it).
        timeout_s: Seconds one call may take (default: its backend's `timeout_s`); a call
            still running then ends its trial as failed.
    """
    if timeout_s is not None and not 0 < timeout_s <= MAX_TIMEOUT_S:
        raise ValueError(f"timeout_s={timeout_s!r}: give seconds above 0, at most 86400")

    def register(f: F) -> F:
        f.__toolproof_tool__ = PythonTool(  # type: ignore[attr-defined]
            f, name=name, description=description, write=write, timeout_s=timeout_s
        )
        return f

    return register(func) if func is not None else register


def tools_in(namespace: dict[str, Any]) -> list[PythonTool]:
    """The tools registered with `@tool` among a module's globals, in definition order."""
    found = [getattr(v, "__toolproof_tool__", None) for v in namespace.values()]
    return [t for t in found if isinstance(t, PythonTool)]
