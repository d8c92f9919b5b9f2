"""MCP connections: live clients of Model Context Protocol servers, over stdio or streamable
HTTP.

Every import of the `mcp` SDK's client lives in this module. A connection runs on the suite's
host loop (`toolproof.runtime.host`): a task there owns the SDK client for the connection's
whole life, so its transport is entered and left in one task, as the SDK requires.

What the agent sees of a call:

- a result: its structured content when the server gives one, else its content blocks (one
  text block is the text itself; images and audio are described, not inlined);
- a tool error (`isError`): `{"error": "<the server's text>"}`, kind `tool_error`;
- a protocol error (a JSON-RPC error response): `{"error": {"code", "message", "data"}}`,
  kind `jsonrpc_error`;
- no answer within `call_timeout_s`: kind `timeout`.

A server that does not start, or whose connection breaks (a crash), raises `InfraError` with
the tail of its stderr: the trial becomes `infra_error`, never the agent's failure.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import httpx2

from toolproof.errors import InfraError
from toolproof.redact import redacted
from toolproof.runtime.processes import with_stderr
from toolproof.tools.base import ToolResult
from toolproof.tools.mcp import DiscoveredTool

if TYPE_CHECKING:  # the SDK is imported when a connection is made: most commands never need it
    from mcp import Client
    from mcp_types import CallToolResult, ContentBlock

STDERR_KEEP = 64_000


@dataclass(frozen=True)
class MCPLaunch:
    """How to reach one MCP server, every placeholder already filled in."""

    label: str
    command: list[str] | None = None
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    start_timeout_s: float = 60.0
    call_timeout_s: float = 120.0

    @property
    def where(self) -> str:
        return redacted(self.url) if self.url else " ".join(self.command or [])


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def describe(exc: BaseException) -> str:
    """An exception (or the leaves of an exception group) in one line."""
    from mcp.shared.exceptions import MCPError

    parts = []
    for leaf in _leaves(exc):
        text = str(leaf).strip() or type(leaf).__name__
        parts.append(text if isinstance(leaf, MCPError) else f"{type(leaf).__name__}: {text}")
    return "; ".join(dict.fromkeys(parts))


class MCPConnection:
    """One live client connection to an MCP server. Every method runs on the host loop."""

    def __init__(self, launch: MCPLaunch) -> None:
        self.launch = launch
        self.client: Client | None = None
        self.failure: str | None = None
        self._owner: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._stderr_path: str | None = None
        self._stderr: TextIO | None = None

    @property
    def alive(self) -> bool:
        return (
            self.failure is None
            and self.client is not None
            and self._owner is not None
            and not self._owner.done()
        )

    def stderr(self) -> str:
        if self._stderr_path is None:
            return ""
        try:
            text = Path(self._stderr_path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return text[-STDERR_KEEP:]

    def _infra(self, what: str) -> InfraError:
        message = f"MCP server '{self.launch.label}' ({self.launch.where}) {what}"
        return InfraError(with_stderr(message, self.stderr()))

    async def start(self) -> None:
        """Start the server (stdio) or connect to it (HTTP) and complete the handshake."""
        if self.launch.command is not None:
            fd, self._stderr_path = tempfile.mkstemp(prefix="toolproof-mcp-", suffix=".log")
            os.close(fd)
            self._stderr = open(self._stderr_path, "a", encoding="utf-8")  # noqa: SIM115
        self._owner = asyncio.create_task(self._own(), name=f"mcp:{self.launch.label}")
        ready = asyncio.create_task(self._ready.wait())
        done, _ = await asyncio.wait(
            {ready, self._owner},
            timeout=self.launch.start_timeout_s,
            return_when=asyncio.FIRST_COMPLETED,
        )
        if ready not in done:
            ready.cancel()
        if self.client is not None and ready in done:
            return
        if not done:
            self.failure = f"did not start within {self.launch.start_timeout_s:g} s"
        error = self._infra(f"failed to start: {self.failure or 'it closed the connection'}")
        await self.stop()
        raise error

    async def _own(self) -> None:
        """Enter the transport and the client, hold them until stopped, then leave them."""
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client
        from mcp.client.streamable_http import streamable_http_client

        try:
            async with AsyncExitStack() as stack:
                if self.launch.command is not None:
                    assert self._stderr is not None
                    params = StdioServerParameters(
                        command=self.launch.command[0],
                        args=self.launch.command[1:],
                        env=self.launch.env,
                        cwd=self.launch.cwd,
                    )
                    transport = stdio_client(params, errlog=self._stderr)
                else:
                    assert self.launch.url is not None
                    http = await stack.enter_async_context(
                        httpx2.AsyncClient(
                            headers=self.launch.headers,
                            timeout=httpx2.Timeout(30.0, read=300.0),
                        )
                    )
                    transport = streamable_http_client(self.launch.url, http_client=http)
                client = await stack.enter_async_context(Client(transport, cache=None))
                self.client = client
                self._ready.set()
                await self._stop.wait()
        except asyncio.CancelledError:
            self.failure = self.failure or "connection cancelled"
            raise
        except BaseException as exc:  # the SDK raises exception groups
            if not self._stop.is_set():
                self.failure = describe(exc)
        finally:
            self.client = None

    async def list_tools(self) -> list[DiscoveredTool]:
        """Every tool the server serves (all pages)."""
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED

        client = self._client()
        found: list[DiscoveredTool] = []
        cursor: str | None = None
        try:
            while True:
                page = await asyncio.wait_for(
                    client.list_tools(cursor=cursor), self.launch.call_timeout_s
                )
                for tool in page.tools:
                    annotations = tool.annotations
                    read_only = bool(annotations and annotations.read_only_hint)
                    found.append(
                        DiscoveredTool(
                            name=tool.name,
                            description=tool.description or tool.title or "",
                            input_schema=dict(tool.input_schema),
                            read_only=read_only,
                        )
                    )
                cursor = page.next_cursor
                if not cursor:
                    return found
        except TimeoutError:
            raise self._infra("did not list its tools in time") from None
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                raise self._lost() from None
            raise self._infra(f"cannot list its tools: {exc.code} {exc.message}") from None

    def _client(self) -> Client:
        if self.client is None or not self.alive:
            raise self._infra(f"is not running ({self.failure or 'stopped'})")
        return self.client

    def _lost(self) -> InfraError:
        self.failure = self.failure or "connection closed"
        return self._infra("closed the connection (crashed or exited)")

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """Call one tool; tool and protocol errors come back as error results."""
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED

        client = self._client()
        assert self._owner is not None
        call = asyncio.create_task(client.call_tool(name, arguments))
        done, _ = await asyncio.wait(
            {call, self._owner},
            timeout=self.launch.call_timeout_s,
            return_when=asyncio.FIRST_COMPLETED,
        )
        if call not in done:
            call.cancel()
            if self._owner in done:
                raise self._infra(f"failed during a call of {name}: {self.failure}")
            return ToolResult.error(
                "timeout",
                f"no answer from {name} within {self.launch.call_timeout_s:g} s",
            )
        try:
            result = call.result()
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                raise self._lost() from None
            error: dict[str, Any] = {"code": exc.code, "message": exc.message}
            if exc.data is not None:
                error["data"] = exc.data
            return ToolResult(content={"error": error}, is_error=True, error_kind="jsonrpc_error")
        except Exception as exc:
            # A result the SDK cannot read (it breaks the protocol): the agent sees it.
            return ToolResult.error("invalid_response", describe(exc))
        return to_result(result)

    async def stop(self) -> None:
        """Leave the client and the transport (a stdio server is asked to exit, then
        killed); never raises."""
        self._stop.set()
        owner = self._owner
        if owner is not None and not owner.done():
            try:
                await asyncio.wait_for(asyncio.shield(owner), 15)
            except (TimeoutError, asyncio.CancelledError, Exception):
                owner.cancel()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        if self._stderr_path is not None:
            Path(self._stderr_path).unlink(missing_ok=True)
            self._stderr_path = None


def to_result(result: CallToolResult) -> ToolResult:
    """What the agent sees of a tool result."""
    if result.is_error:
        text = "\n".join(b.text for b in result.content if b.type == "text").strip()
        return ToolResult.error("tool_error", text or "the tool reported an error")
    if result.structured_content is not None:
        return ToolResult(content=result.structured_content)
    parts = [_block(b) for b in result.content]
    return ToolResult(content=parts[0] if len(parts) == 1 else parts)


def _block(block: ContentBlock) -> Any:
    if block.type == "text":
        return block.text
    if block.type in ("image", "audio"):
        data = getattr(block, "data", "")
        return {
            "type": block.type,
            "mime_type": getattr(block, "mime_type", None),
            "bytes": len(data) * 3 // 4,
        }
    if block.type == "resource":
        resource = getattr(block, "resource", None)
        text = getattr(resource, "text", None)
        item: dict[str, Any] = {"type": "resource", "uri": str(getattr(resource, "uri", ""))}
        if text is not None:
            item["text"] = text
        else:
            item["bytes"] = len(getattr(resource, "blob", "")) * 3 // 4
        return item
    return block.model_dump(mode="json", by_alias=True, exclude_none=True)
