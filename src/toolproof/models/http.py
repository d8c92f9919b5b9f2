"""HTTP for the model adapters: one keep-alive pool per provider endpoint, shared by every
client of a run, on a request path that costs little CPU.

A run keeps hundreds of model calls in flight from one event loop, so the client side of each
call is what bounds it. Through the SDKs and httpx a call cost ~2 ms of CPU on a 2-core
machine, and httpx's pool scans (and probes the socket of) every connection it holds on each
request. Model calls are all the same shape — a JSON POST answered by one JSON body — so
`KeepAlivePool` speaks HTTP/1.1 itself on asyncio streams: the request goes out in one write,
the answer is framed by Content-Length or chunked encoding, and idle connections wait in a
stack per origin, taken and given back in O(1). On loopback that is ~10x less CPU per call
than httpx (bench/adapter.py).

Where a call needs what only httpx does — a proxy from the environment, an SDK's own
authentication flow, or a client handed in (tests, custom transports) — `post_with_httpx`
sends it through httpx instead. Either way the answer is a `Reply`.

Pools are shared per event loop (connections belong to the loop that opened them) and per
key (a provider and its base URL), so every model and the simulated user of a run that talk
to one endpoint share its connections.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
import time
import weakref
import zlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx2

from toolproof.models.base import ProviderError

T = TypeVar("T")

KEEPALIVE_S = 5.0  # an idle connection older than this is closed, not reused
_READ_LIMIT = 2**20  # the longest response head accepted


@dataclass(frozen=True)
class Reply:
    """An HTTP answer: status, headers (names lower-case) and the decoded body."""

    status: int
    headers: dict[str, str]
    content: bytes


@dataclass(frozen=True)
class Target:
    """Where a request goes: the origin to connect to, and the request line's path."""

    scheme: str
    host: str
    port: int
    path: str

    @classmethod
    def of(cls, url: httpx2.URL) -> Target:
        port = url.port or (443 if url.scheme == "https" else 80)
        host = url.raw_host.decode("ascii")  # an international name in its IDNA form
        return cls(url.scheme, host.strip("[]"), port, url.raw_path.decode("ascii"))

    @property
    def origin(self) -> tuple[str, str, int]:
        return (self.scheme, self.host, self.port)

    @property
    def host_header(self) -> str:
        default = 443 if self.scheme == "https" else 80
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == default else f"{host}:{self.port}"


class _Connection:
    """One open HTTP/1.1 connection and when it last became idle."""

    __slots__ = ("idle_since", "reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.idle_since = 0.0

    def reusable(self, now: float) -> bool:
        """Still open, nothing unread from the server, and not idle too long."""
        return (
            not self.writer.is_closing()
            and not self.reader.at_eof()
            and now - self.idle_since < KEEPALIVE_S
        )

    def close(self) -> None:
        self.writer.close()


class _Stale(Exception):
    """A reused connection was closed by the server before it answered anything."""


class KeepAlivePool:
    """POSTs over keep-alive HTTP/1.1 connections, idle ones kept in a stack per origin."""

    def __init__(self) -> None:
        self._idle: dict[tuple[str, str, int], deque[_Connection]] = {}

    async def post(self, target: Target, head: bytes, body: bytes) -> Reply:
        """Send `head` (the request line and headers, up to the blank line) and `body`.

        A connection the server closed while it sat idle is noticed when taken, or at the
        latest when it answers nothing at all; the request then goes once more on a new one.
        """
        request = head + body
        connection = self._take(target.origin)
        if connection is not None:
            try:
                return await self._exchange(connection, target, request, reused=True)
            except _Stale:
                pass
        connection = await self._open(target)
        return await self._exchange(connection, target, request, reused=False)

    def close(self) -> None:
        """Close every idle connection."""
        for stack in self._idle.values():
            for connection in stack:
                connection.close()
        self._idle.clear()

    def _take(self, origin: tuple[str, str, int]) -> _Connection | None:
        stack = self._idle.get(origin)
        now = time.monotonic()
        while stack:
            connection = stack.pop()
            if connection.reusable(now):
                return connection
            connection.close()
        return None

    def _give_back(self, origin: tuple[str, str, int], connection: _Connection) -> None:
        connection.idle_since = time.monotonic()
        stack = self._idle.setdefault(origin, deque())
        stack.append(connection)
        # The oldest idle connection is the first to expire: one look per call keeps the
        # stack from holding closed sockets after a burst.
        if len(stack) > 1 and not stack[0].reusable(connection.idle_since):
            stack.popleft().close()

    async def _open(self, target: Target) -> _Connection:
        secure = target.scheme == "https"
        reader, writer = await asyncio.open_connection(
            target.host,
            target.port,
            ssl=ssl_context() if secure else None,
            server_hostname=target.host if secure else None,
            limit=_READ_LIMIT,
        )
        return _Connection(reader, writer)

    async def _exchange(
        self, connection: _Connection, target: Target, request: bytes, *, reused: bool
    ) -> Reply:
        try:
            connection.writer.write(request)
            try:
                status, headers, keep_alive = await _read_head(connection.reader)
            except (asyncio.IncompleteReadError, ConnectionError) as exc:
                if reused and not getattr(exc, "partial", b""):
                    raise _Stale from exc
                raise
            content = await _read_body(connection.reader, status, headers)
        except BaseException:
            connection.close()
            raise
        framed = "content-length" in headers or "chunked" in headers.get("transfer-encoding", "")
        if keep_alive and (framed or status in (204, 304)):
            self._give_back(target.origin, connection)
        else:
            connection.close()
        return Reply(status, headers, _decoded(content, headers.get("content-encoding", "")))


async def _read_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bool]:
    """The status, headers and whether the connection stays open; 1xx answers skipped."""
    while True:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head[:-4].decode("latin-1").split("\r\n")
        version, _, rest = lines[0].partition(" ")
        code = rest[:3]
        if not version.startswith("HTTP/") or not code.isdigit():
            raise ProviderError(
                f"connection error: not an HTTP answer: {lines[0][:80]!r}", retryable=True
            )
        status = int(code)
        if 100 <= status < 200:
            continue
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            key = name.strip().lower()
            value = value.strip()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        keep_alive = version == "HTTP/1.1" and "close" not in headers.get("connection", "").lower()
        return status, headers, keep_alive


async def _read_body(reader: asyncio.StreamReader, status: int, headers: dict[str, str]) -> bytes:
    """The body as framed: none, chunked, Content-Length, or up to the connection's close."""
    if status in (204, 304):
        return b""
    try:
        if "chunked" in headers.get("transfer-encoding", "").lower():
            chunks: list[bytes] = []
            while True:
                size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if size == 0:
                    while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers
                        pass
                    return b"".join(chunks)
                chunks.append(await reader.readexactly(size))
                await reader.readexactly(2)
        if "content-length" in headers:
            return await reader.readexactly(int(headers["content-length"]))
    except ValueError as exc:
        raise ProviderError(f"connection error: bad HTTP framing: {exc}", retryable=True) from exc
    return await reader.read()


def _decoded(content: bytes, encoding: str) -> bytes:
    """The body without its gzip or deflate content encoding (the ones the request offers)."""
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return content
    if encoding not in ("gzip", "deflate"):
        raise ProviderError(f"the answer came in content encoding {encoding!r}, never asked for")
    try:
        return zlib.decompress(content, 47)  # gzip or zlib, told apart by their headers
    except zlib.error:
        try:
            return zlib.decompress(content, -15)  # raw deflate, as some servers send it
        except zlib.error as exc:
            raise ProviderError(f"connection error: bad {encoding} body", retryable=True) from exc


async def post_with_httpx(
    client: httpx2.AsyncClient,
    url: str,
    headers: dict[str, str],
    body: bytes,
    auth: httpx2.Auth | None = None,
) -> Reply:
    """POST through an httpx client: for proxies, SDK authentication flows, given clients."""
    try:
        if auth is None:
            response = await client.post(url, content=body, headers=headers)
        else:
            response = await client.post(url, content=body, headers=headers, auth=auth)
    except httpx2.TimeoutException as exc:
        raise TimeoutError from exc
    except httpx2.TransportError as exc:
        raise ConnectionError(f"{type(exc).__name__}: {exc}") from exc
    names = {k.lower(): v for k, v in response.headers.items()}
    return Reply(response.status_code, names, response.content)


@functools.cache
def ssl_context() -> ssl.SSLContext:
    """httpx's certificate verification, built once per process (it takes ~0.1 s)."""
    return httpx2.create_ssl_context()


_shared: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, Any]] = (
    weakref.WeakKeyDictionary()
)


def shared(key: str, make: Callable[[], T]) -> T:
    """The running event loop's one object for `key`, made on first use."""
    loop = asyncio.get_running_loop()
    per_loop = _shared.get(loop)
    if per_loop is None:
        per_loop = _shared[loop] = {}
    found = per_loop.get(key)
    if found is None:
        found = per_loop[key] = make()
    result: T = found
    return result


async def close_shared() -> None:
    """Close the running loop's pools and clients (the end of a run)."""
    per_loop = _shared.pop(asyncio.get_running_loop(), {})
    for value in per_loop.values():
        if isinstance(value, KeepAlivePool):
            value.close()
        elif isinstance(value, httpx2.AsyncClient):
            await value.aclose()
