"""Backend kinds: how each `type:` of backend in suite.yaml turns into tools.

A kind is a function `(discovery, backend name, backend spec) -> {tool name: Tool}`,
registered in `KINDS` for its type by a factory that returns it. Adding a kind of backend is
adding one such function and its registration (and its spec model in
`toolproof.spec.backends`); nothing else branches on it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from toolproof.errors import InfraError
from toolproof.registry import Registry
from toolproof.runtime.discovery import Discovery
from toolproof.spec.backends import MCPBackend, OpenAPIBackend, PythonBackend
from toolproof.spec.placeholders import expand
from toolproof.tools.base import Tool
from toolproof.tools.mcp import MCPTool
from toolproof.tools.openapi import DocumentError, base_url_of, build_tools, parse_document
from toolproof.tools.python import tools_in

BackendKind = Callable[[Discovery, str, Any], dict[str, Tool]]

KINDS: Registry[BackendKind] = Registry("backend kind", plugins="backend")


@KINDS.register("python")
def python_kind() -> BackendKind:
    return python_tools


def python_tools(discovery: Discovery, name: str, backend: PythonBackend) -> dict[str, Tool]:
    """The `@tool` functions of the backend's Python file."""
    line = discovery.source.line("backends", name, "module")
    module = discovery.module(discovery.root / backend.module, (discovery.source.where, line))
    if module is None:
        return {}
    found: dict[str, Tool] = {
        t.name: t.bounded(backend.timeout_s, backend.isolation) for t in tools_in(vars(module))
    }
    if not found:
        discovery.problem(
            ["backends", name, "module"],
            f"backend '{name}': no @tool functions in {backend.module}",
        )
    return found


@KINDS.register("mcp")
def mcp_kind() -> BackendKind:
    return mcp_tools


def mcp_tools(discovery: Discovery, name: str, backend: MCPBackend) -> dict[str, Tool]:
    """The tools the MCP server lists (its list is part of the suite's content hash)."""
    runtime = discovery.runtime()
    if runtime is None:
        return {}
    try:
        served = runtime.discover_mcp(name)
    except InfraError as exc:
        discovery.problem(["backends", name], f"backend '{name}': {exc}")
        return {}
    blob = json.dumps([t.as_json() for t in served], sort_keys=True).encode()
    discovery.source.record(f"<backend {name}: tools/list>", blob)
    call = partial(runtime.call_mcp, name)
    found: dict[str, Tool] = {t.name: MCPTool(t, set(backend.bind), call) for t in served}
    for key in backend.bind:
        if not any(key in (t.input_schema.get("properties") or {}) for t in served):
            discovery.warn(f"backend '{name}': bind '{key}' matches no tool argument")
    if not found:
        discovery.problem(["backends", name], f"backend '{name}': the server lists no tools")
    return found


@KINDS.register("openapi")
def openapi_kind() -> BackendKind:
    return openapi_tools


def openapi_tools(discovery: Discovery, name: str, backend: OpenAPIBackend) -> dict[str, Tool]:
    """One tool per operation of the service's OpenAPI document."""
    runtime = discovery.runtime()
    if runtime is None:
        return {}
    try:
        source, data = runtime.openapi_document(name, discovery.source.read)
        document = parse_document(data)
    except DocumentError as exc:
        discovery.problem(["backends", name, "spec"], f"backend '{name}': {exc}")
        return {}
    try:
        key = Path(source).resolve().relative_to(discovery.root).as_posix()
    except ValueError:
        key = f"<backend {name}: {source}>"
    discovery.source.record(key, data)
    servers = [
        s["url"] for s in document.get("servers") or [] if isinstance(s, dict) and "url" in s
    ]
    configured = expand(backend.base_url, runtime.variables) if backend.base_url else None
    base_url = base_url_of(configured, servers, source)
    if base_url is None:
        discovery.problem(
            ["backends", name],
            f"backend '{name}': give base_url (the document names no absolute server URL)",
        )
        return {}
    tools, warnings = build_tools(document, base_url, runtime.channel(name))
    for warning in warnings:
        discovery.warn(f"backend '{name}': {warning}")
    if not tools:
        discovery.problem(
            ["backends", name, "spec"], f"backend '{name}': the document has no operations"
        )
    return {tool.name: tool for tool in tools}
