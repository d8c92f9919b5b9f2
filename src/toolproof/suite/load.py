"""Loading a suite folder into a Suite, reporting every problem as `path:line: message`.

Three steps, each in its own place: read the files (`toolproof.spec.read`, runs nothing),
discover the tools and start what is live (`toolproof.runtime.discover`, one call), then bind
the tools and check every task and condition against what was found
(`toolproof.suite.checks`). All problems of the three steps are raised together, by file and
line.
"""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from toolproof.errors import Problem, SuiteError, UsageError
from toolproof.graders.rules import rule_model
from toolproof.runtime import discover
from toolproof.spec.backends import Backend, PythonBackend
from toolproof.spec.policy import PolicyRuleSpec
from toolproof.spec.read import read_suite
from toolproof.spec.source import SuiteSource, shown
from toolproof.spec.suite import SuiteFile, ToolEntry, UserToolEntry
from toolproof.suite.checks import check_conditions, check_task
from toolproof.suite.loaded import Suite
from toolproof.tools.base import Tool, ToolSchema
from toolproof.tools.binding import ToolBinding
from toolproof.users.personas import PERSONAS
from toolproof.world import freeze


def load_suite(path: str | Path) -> Suite:
    """Load and check a suite folder (or its suite.yaml); raises SuiteError with every problem."""
    source = read_suite(path, _rule_model, PERSONAS)
    file = source.file
    if file is None:
        raise SuiteError(located(source))
    found = discover(source)
    try:
        tools = bind_tools(source, file, found.tools)
        user_tools = bind_user_tools(source, file, found.tools, tools)
        try:
            world = freeze(found.world)
        except TypeError as exc:
            source.suite_problem(["world"], f"world: {exc}")
            world = freeze({})
        task_ids: dict[str, str] = {}
        for task in source.tasks:
            check_task(source, task, tools, world, task_ids, user_tools)
        check_conditions(source, file, tools)
        if source.problems:
            raise SuiteError(located(source))
    except BaseException:
        if found.runtime is not None:
            found.runtime.close()
        raise
    return Suite(
        root=source.root,
        file=file,
        policy=source.policy,
        tools=tools,
        user_tools=user_tools,
        tasks=source.tasks,
        world=world,
        content_hash=content_hash(source),
        warnings=source.warnings,
        runtime=found.runtime,
    )


def _rule_model(name: str) -> type[PolicyRuleSpec]:
    """A policy rule's settings model; a plug-in's rule that fails to import is a problem at
    the line that names it, like an unknown rule."""
    try:
        return rule_model(name)
    except UsageError as exc:
        raise ValueError(str(exc)) from None


def located(source: SuiteSource) -> list[Problem]:
    """The problems found, by file and line (a file's problems without a line first)."""
    return sorted(source.problems, key=lambda p: (p.path, p.line or 0))


def content_hash(source: SuiteSource) -> str:
    """sha256 over every file (and live tool list) the suite was loaded from, by name."""
    digest = hashlib.sha256()
    for name in sorted(source.files):
        digest.update(name.encode() + b"\0" + hashlib.sha256(source.files[name]).digest())
    return digest.hexdigest()


def undecorated(source: SuiteSource, backend: Backend, name: str) -> str | None:
    """Where a Python backend's module defines `name` as a plain function (no `@tool`), as
    `file.py:LINE`; None when it does not."""
    if not isinstance(backend, PythonBackend):
        return None
    path = source.root / backend.module
    text = source.files.get(source.key(path))
    try:
        tree = ast.parse(text) if text is not None else None
    except (SyntaxError, ValueError):
        tree = None
    if tree is None:
        return None  # the module could not be read or imported: reported there
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            if any(_names_tool(d) for d in node.decorator_list):
                return None
            return f"{shown(path)}:{node.lineno}"
    return None


def _names_tool(decorator: ast.expr) -> bool:
    """`@tool`, `@toolproof.tool`, `@tool(...)`."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (isinstance(target, ast.Name) and target.id == "tool") or (
        isinstance(target, ast.Attribute) and target.attr == "tool"
    )


def bind_tools(
    source: SuiteSource, file: SuiteFile, backends: dict[str, dict[str, Tool]]
) -> dict[str, ToolBinding]:
    """The suite's tools: each tool of `tools:` bound to its backend's tool, tier and weight, with
    the overrides of suite.yaml (description, parameters, write)."""
    listed = set(file.tools) | set(file.user.tools)
    for backend_name, backend_tools in backends.items():
        for tool_name in backend_tools:
            if tool_name not in listed:
                source.warnings.append(
                    f"backend '{backend_name}': tool '{tool_name}' is not listed under "
                    "tools:, so no agent sees it"
                )
    bindings: dict[str, ToolBinding] = {}
    for name, entry in file.tools.items():
        binding = _bind(source, file, backends, ["tools", name], entry)
        if binding is not None:
            bindings[name] = binding
    return bindings


def bind_user_tools(
    source: SuiteSource,
    file: SuiteFile,
    backends: dict[str, dict[str, Tool]],
    agent_tools: dict[str, ToolBinding],
) -> dict[str, ToolBinding]:
    """The simulated user's tools (`user: tools:`), bound like the agent's; a name the agent's
    tools also use is a problem, as a call must say whose tool it reaches."""
    bindings: dict[str, ToolBinding] = {}
    for name, entry in file.user.tools.items():
        if name in file.tools:
            source.suite_problem(
                ["user", "tools", name],
                f"user tool '{name}' is also an agent tool under tools:; give it another name",
            )
            continue
        binding = _bind(source, file, backends, ["user", "tools", name], entry)
        if binding is not None:
            bindings[name] = binding
    return bindings


def _bind(
    source: SuiteSource,
    file: SuiteFile,
    backends: dict[str, dict[str, Tool]],
    where: list[str | int],
    entry: ToolEntry | UserToolEntry,
) -> ToolBinding | None:
    """One entry of `tools:` (or `user: tools:`) bound to its backend's tool, or None with
    its problem reported at `where`."""
    name = str(where[-1])
    backend = entry.backend
    if backend is None:
        if len(file.backends) != 1:
            source.suite_problem(where, f"tool '{name}': say which backend (there are several)")
            return None
        backend = next(iter(file.backends))
    if backend not in backends:
        source.suite_problem(where, f"tool '{name}': unknown backend '{backend}'")
        return None
    tool = backends[backend].get(name)
    if tool is None:
        plain = undecorated(source, file.backends[backend], name)
        if plain:
            source.suite_problem(where, f"tool '{name}': the function {plain} lacks @tool")
        elif backends[backend]:
            known = ", ".join(sorted(backends[backend]))
            source.suite_problem(
                where, f"tool '{name}' not found in backend '{backend}' (it has: {known})"
            )
        return None
    if entry.parameters is not None:
        try:
            Draft202012Validator.check_schema(entry.parameters)
        except SchemaError as exc:
            source.suite_problem([*where, "parameters"], f"bad JSON Schema: {exc.message}")
    schema = ToolSchema(
        name=name,
        description=entry.description or tool.schema.description,
        parameters=entry.parameters or tool.schema.parameters,
    )
    return ToolBinding(
        tool=tool,
        schema=schema,
        tier=entry.tier if isinstance(entry, ToolEntry) else 1,
        weight=entry.weight if isinstance(entry, ToolEntry) else None,
        write=tool.write if entry.write is None else entry.write,
        backend=backend,
        simulated=tool.simulated,
    )
