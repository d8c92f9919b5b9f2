"""OpenAPI tools: every operation of an OpenAPI 3 document becomes a tool called over HTTP.

- The name is the operation's `operationId` (made safe for tool names), else a slug of the
  method and the path (`get_orders_order_id`).
- The arguments are the path, query and header parameters, and the JSON request body: an
  object body's properties become arguments of their own when no name clashes with a
  parameter, any other body is the argument `body`.
- A call goes to the service as the document describes it, and the answer reaches the agent
  as the service sent it: a 2xx body as its JSON (or text), a 4xx/5xx as an error result
  `{"error": {"status", "body"}}` (429 also with `retry_after_s` from Retry-After).
- The backend's own headers (auth, a tenant) go with every call and are not arguments; one
  that names the trial's values (`{trial_id}`) is filled in for each call.
- A service that cannot be reached (refused, reset mid-answer) raises `InfraError` (from
  the runtime's HTTP channel, `toolproof.runtime.http`, which sends every call).

Incomplete documents load with warnings and fallbacks: a missing operationId gets a slug, a
parameter without a schema or type is a string, a body without a schema takes any JSON,
operations without documented error responses are listed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import quote, urljoin

import httpx2
import yaml

from toolproof.tools.base import ToolContext, ToolResult, ToolSchema
from toolproof.tools.schema import SchemaTool

METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
READ_METHODS = ("get", "head", "options")
TYPED = ("type", "$ref", "anyOf", "oneOf", "allOf", "enum", "const", "not", "items", "properties")
ERROR_KINDS = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    409: "conflict",
    422: "invalid_request",
    429: "rate_limit",
    504: "timeout",
}


class DocumentError(ValueError):
    """The document cannot be read or is not OpenAPI 3."""


def parse_document(data: bytes) -> dict[str, Any]:
    try:
        document = yaml.safe_load(data.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise DocumentError(f"not JSON or YAML: {exc}") from None
    if not isinstance(document, dict):
        raise DocumentError("not an OpenAPI document (a mapping is expected)")
    version = str(document.get("openapi", ""))
    if not version.startswith("3."):
        found = f"openapi: {version}" if version else "no 'openapi' field"
        raise DocumentError(f"not an OpenAPI 3 document ({found})")
    if not isinstance(document.get("paths"), dict):
        raise DocumentError("the document has no paths")
    return document


def slug(method: str, path: str) -> str:
    words = re.sub(r"[^A-Za-z0-9]+", "_", path).strip("_").lower()
    return f"{method}_{words}".strip("_")[:64] if words else method


def safe_name(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_")[:64]
    return cleaned or "operation"


class _Resolver:
    """Local `$ref`s inlined, with a guard against cycles."""

    def __init__(self, document: dict[str, Any], warn: Callable[[str], None]) -> None:
        self.document = document
        self.warn = warn

    def target(self, ref: str) -> Any:
        if not ref.startswith("#/"):
            self.warn(f"external $ref {ref} is not followed (any value is accepted there)")
            return {}
        node: Any = self.document
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or part not in node:
                self.warn(f"$ref {ref} points nowhere (any value is accepted there)")
                return {}
            node = node[part]
        return node

    def resolve(self, node: Any, seen: tuple[str, ...] = ()) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                if ref in seen:
                    return {"type": "object", "description": f"(recursive: {ref.split('/')[-1]})"}
                return self.resolve(self.target(ref), (*seen, ref))
            return {k: self.resolve(v, seen) for k, v in node.items()}
        if isinstance(node, list):
            return [self.resolve(v, seen) for v in node]
        return node


def json_schema(schema: Any) -> Any:
    """An OpenAPI 3.0 schema as JSON Schema 2020-12 (`nullable`, `example`, x- keys)."""
    if isinstance(schema, list):
        return [json_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {
        k: json_schema(v)
        for k, v in schema.items()
        if k not in ("nullable", "example", "xml", "externalDocs", "discriminator")
        and not k.startswith("x-")
    }
    if schema.get("nullable") is True and "type" in out:
        kind = out["type"]
        out["type"] = [*kind, "null"] if isinstance(kind, list) else [kind, "null"]
    return out


@dataclass(frozen=True)
class Parameter:
    name: str
    location: str  # path, query or header
    required: bool


@dataclass(frozen=True)
class Body:
    media_type: str
    required: bool
    fields: tuple[str, ...] = ()
    """Properties flattened into the arguments; empty when the body is the `body` argument."""


@dataclass
class Operation:
    name: str
    method: str
    path: str
    description: str
    parameters: list[Parameter]
    body: Body | None
    schema: dict[str, Any]
    documented_errors: bool


@dataclass
class Loaded:
    operations: list[Operation] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    servers: list[str] = field(default_factory=list)


def read_operations(document: dict[str, Any], sent_headers: set[str] | None = None) -> Loaded:
    """Every operation of a document, with warnings for the gaps. Header parameters that
    the backend sends itself (`sent_headers`, lower case: auth) are not arguments."""
    loaded = Loaded()
    current = [""]

    def warn(message: str) -> None:
        where = f"{current[0]}: " if current[0] else ""
        loaded.warnings.append(f"{where}{message}")

    resolver = _Resolver(document, warn)
    for server in document.get("servers") or []:
        if isinstance(server, dict) and isinstance(server.get("url"), str):
            loaded.servers.append(server["url"])
    names: dict[str, int] = {}
    undocumented: list[str] = []
    for path, item in document["paths"].items():
        if not isinstance(item, dict):
            continue
        current[0] = path
        common = resolver.resolve(item.get("parameters") or [])
        for method in METHODS:
            if not isinstance(item.get(method), dict):
                continue
            current[0] = f"{method.upper()} {path}"
            op = resolver.resolve(item[method])
            operation_id = op.get("operationId")
            if isinstance(operation_id, str) and operation_id:
                name = safe_name(operation_id)
                if name != operation_id:
                    warn(f"operationId '{operation_id}' is not a valid tool name; using '{name}'")
            else:
                name = slug(method, path)
                warn(f"no operationId; the tool is named '{name}'")
            if name in names:
                names[name] += 1
                renamed = f"{name}_{names[name]}"
                warn(f"tool name '{name}' is taken; using '{renamed}'")
                name = renamed
            else:
                names[name] = 1
            operation = _operation(name, method, path, op, common, warn, sent_headers or set())
            if not operation.documented_errors:
                undocumented.append(name)
            loaded.operations.append(operation)
    current[0] = ""
    if undocumented:
        warn(
            f"{len(undocumented)} operation(s) document no error responses "
            f"({', '.join(undocumented[:8])}{', ...' if len(undocumented) > 8 else ''}); "
            "their errors reach the agent as the service sends them"
        )
    return loaded


def _operation(
    name: str,
    method: str,
    path: str,
    op: dict[str, Any],
    common: list[Any],
    warn: Callable[[str], None],
    sent_headers: set[str],
) -> Operation:
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for param in [*common, *(op.get("parameters") or [])]:
        if isinstance(param, dict) and isinstance(param.get("name"), str):
            merged[(param["name"], str(param.get("in", "query")))] = param
    properties: dict[str, Any] = {}
    required: list[str] = []
    parameters: list[Parameter] = []
    for (pname, location), param in merged.items():
        if location == "cookie":
            warn(f"cookie parameter '{pname}' is not supported; it is left out")
            continue
        if location == "header" and pname.lower() in sent_headers:
            continue
        if location not in ("path", "query", "header"):
            warn(f"parameter '{pname}' is in '{location}', which is unknown; it is left out")
            continue
        if pname in properties:
            warn(f"parameter '{pname}' appears in several places; only the first is used")
            continue
        schema = param.get("schema")
        if schema is None and isinstance(param.get("content"), dict):
            media: Any = next(iter(param["content"].values()), {})
            schema = media.get("schema") if isinstance(media, dict) else None
        if not isinstance(schema, dict) or not schema:
            warn(f"parameter '{pname}' has no schema; it is taken as a string")
            schema = {"type": "string"}
        elif not any(key in schema for key in TYPED):
            warn(f"parameter '{pname}' has no type; it is taken as a string")
            schema = {**schema, "type": "string"}
        schema = json_schema(schema)
        if param.get("description") and "description" not in schema:
            schema = {**schema, "description": param["description"]}
        is_required = location == "path" or bool(param.get("required"))
        properties[pname] = schema
        if is_required:
            required.append(pname)
        parameters.append(Parameter(pname, location, is_required))
    body = _body(op.get("requestBody"), properties, required, warn)
    responses = op.get("responses") or {}
    documented_errors = any(
        str(code).startswith(("4", "5")) or str(code) == "default" for code in responses
    )
    description = "\n\n".join(
        part.strip()
        for part in (op.get("summary"), op.get("description"))
        if isinstance(part, str) and part.strip()
    )
    schema = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return Operation(
        name=name,
        method=method,
        path=path,
        description=description or f"{method.upper()} {path}",
        parameters=parameters,
        body=body,
        schema=schema,
        documented_errors=documented_errors,
    )


def _body(
    spec: Any, properties: dict[str, Any], required: list[str], warn: Callable[[str], None]
) -> Body | None:
    if not isinstance(spec, dict):
        return None
    content = spec.get("content") or {}
    body_required = bool(spec.get("required"))
    media = next((m for m in content if m == "application/json" or m.endswith("+json")), None)
    media = media or next((m for m in content if m == "application/x-www-form-urlencoded"), None)
    if media is None:
        if content:
            media = next(iter(content))
            warn(f"request body type {media} is sent as text from the argument 'body'")
            properties["body"] = {"type": "string"}
        else:
            media = "application/json"
            warn("request body has no content type; 'body' is sent as JSON")
            properties["body"] = {}
        if body_required:
            required.append("body")
        return Body(media, body_required)
    schema = (content.get(media) or {}).get("schema")
    if not isinstance(schema, dict) or not schema:
        warn("request body has no schema; the argument 'body' takes any JSON")
        properties["body"] = {}
        if body_required:
            required.append("body")
        return Body(media, body_required)
    schema = json_schema(schema)
    fields = schema.get("properties") if schema.get("type") == "object" else None
    if isinstance(fields, dict) and fields and not set(fields) & set(properties):
        properties.update(fields)
        if body_required:
            required.extend(f for f in schema.get("required") or [] if f in fields)
        return Body(media, body_required, tuple(fields))
    if isinstance(fields, dict) and set(fields) & set(properties):
        clash = ", ".join(sorted(set(fields) & set(properties)))
        warn(f"body fields clash with parameters ({clash}); the body is the argument 'body'")
    properties["body"] = schema
    if body_required:
        required.append("body")
    return Body(media, body_required)


@dataclass(frozen=True)
class Request:
    """One HTTP request of a tool call, as the document describes the operation."""

    method: str
    url: str
    params: list[tuple[str, str | int | float | bool | None]]
    headers: dict[str, str]
    content: bytes | None = None
    media_type: str | None = None


class Sender(Protocol):
    """How an OpenAPI tool reaches its service (the runtime's HTTP channel)."""

    @property
    def timeout_s(self) -> float: ...

    @property
    def sent_headers(self) -> set[str]:
        """The headers the backend sends itself (lower case): not arguments of its tools."""
        ...

    async def send(self, request: Request, context: ToolContext) -> httpx2.Response:
        """Send the request with the backend's headers (and the calling trial's); a timeout
        raises httpx2.TimeoutException, an unreachable service InfraError."""
        ...


class OpenAPITool(SchemaTool):
    """One operation of an OpenAPI document, called over HTTP."""

    def __init__(self, operation: Operation, base_url: str, sender: Sender) -> None:
        self.operation = operation
        self.base_url = base_url.rstrip("/")
        self.sender = sender
        schema = ToolSchema(operation.name, operation.description, operation.schema)
        super().__init__(schema, write=operation.method not in READ_METHODS)

    def request(self, arguments: dict[str, Any]) -> Request | ToolResult:
        """The HTTP request for these arguments, or an error when it cannot be built.

        Only what is needed to build a request is checked here; types and values are the
        service's to judge, and its answer reaches the agent as it is."""
        op = self.operation
        known = set(op.schema["properties"])
        unknown = sorted(set(arguments) - known)
        if unknown:
            return ToolResult.error(
                "invalid_arguments", f"{', '.join(unknown)}: unexpected argument"
            )
        path = op.path
        params: list[tuple[str, str | int | float | bool | None]] = []
        headers: dict[str, str] = {}
        for param in op.parameters:
            if param.name not in arguments:
                if param.location == "path":
                    return ToolResult.error(
                        "invalid_arguments", f"{param.name}: missing required argument"
                    )
                continue
            value = arguments[param.name]
            if param.location == "path":
                path = path.replace(f"{{{param.name}}}", quote(_text(value), safe=""))
            elif param.location == "query":
                values = value if isinstance(value, list) else [value]
                params.extend((param.name, _text(v)) for v in values)
            else:
                headers[param.name] = _text(value)
        content, media_type = self._body(arguments)
        return Request(op.method, self.base_url + path, params, headers, content, media_type)

    def _body(self, arguments: dict[str, Any]) -> tuple[bytes | None, str | None]:
        body = self.operation.body
        if body is None:
            return None, None
        if body.fields:
            payload: Any = {k: arguments[k] for k in body.fields if k in arguments}
            present = bool(payload) or body.required
        else:
            payload = arguments.get("body")
            present = "body" in arguments
        if not present:
            return None, None
        media_type = body.media_type
        if media_type == "application/x-www-form-urlencoded" and isinstance(payload, dict):
            form = "&".join(f"{quote(str(k))}={quote(_text(v))}" for k, v in payload.items())
            return form.encode(), media_type
        if media_type.endswith("json"):
            return json.dumps(payload).encode(), media_type
        return _text(payload).encode(), media_type

    async def call(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        request = self.request(arguments)
        if isinstance(request, ToolResult):
            return request
        try:
            response = await self.sender.send(request, context)
        except httpx2.TimeoutException:
            return ToolResult(
                content={
                    "error": {
                        "status": 504,
                        "message": f"no answer within {self.sender.timeout_s:g} s",
                    }
                },
                is_error=True,
                error_kind="timeout",
            )
        return response_result(response)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value)
    return str(value)


def response_body(response: httpx2.Response) -> Any:
    text = response.text
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def response_result(response: httpx2.Response) -> ToolResult:
    """The service's answer as the agent sees it."""
    status = response.status_code
    body = response_body(response)
    if status < 400:
        return ToolResult(content=body if body is not None else {"status": status})
    error: dict[str, Any] = {"status": status, "body": body}
    retry_after = response.headers.get("retry-after")
    if retry_after is not None:
        try:
            error["retry_after_s"] = float(retry_after)
        except ValueError:
            error["retry_after"] = retry_after
    kind = ERROR_KINDS.get(status) or ("server_error" if status >= 500 else "http_error")
    return ToolResult(content={"error": error}, is_error=True, error_kind=kind)


def base_url_of(configured: str | None, servers: list[str], source: str) -> str | None:
    """The URL calls go to: the configured one, else the document's first server (relative
    server URLs are taken relative to where the document was fetched)."""
    if configured:
        return configured
    if not servers:
        return None
    first = servers[0]
    if first.startswith(("http://", "https://")):
        return first
    if source.startswith(("http://", "https://")):
        return urljoin(source, first)
    return None


def build_tools(
    document: dict[str, Any], base_url: str, sender: Sender
) -> tuple[list[OpenAPITool], list[str]]:
    """The tools of a document (and the warnings about its gaps)."""
    loaded = read_operations(document, sender.sent_headers)
    tools = [OpenAPITool(op, base_url, sender) for op in loaded.operations]
    return tools, loaded.warnings
