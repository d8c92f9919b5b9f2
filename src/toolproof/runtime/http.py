"""HTTP channels: the client each OpenAPI backend's calls go through, on the host loop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import httpx2

from toolproof.errors import InfraError
from toolproof.redact import redacted
from toolproof.runtime.host import Host
from toolproof.spec.files import FileProblem
from toolproof.tools.base import ToolContext
from toolproof.tools.openapi import DocumentError, Request


class HTTPChannel:
    """One backend's HTTP client, living on the suite's host loop (an OpenAPI tool's
    `Sender`).

    `headers` go with every call; `trial_headers` (named in `bound`) are computed for each
    call from its context, for values that belong to the calling trial (a tenant). `ready`
    runs (in a thread) before the first request: it starts services that start on demand."""

    def __init__(
        self,
        backend: str,
        host: Host,
        headers: dict[str, str],
        timeout_s: float,
        failure: Callable[[], str | None] = lambda: None,
        trial_headers: Callable[[ToolContext], dict[str, str]] | None = None,
        bound: set[str] | None = None,
        ready: Callable[[], None] = lambda: None,
    ) -> None:
        self.backend = backend
        self.host = host
        self.headers = headers
        self.timeout_s = timeout_s
        self.failure = failure
        self.trial_headers = trial_headers or (lambda context: {})
        self.bound = bound or set()
        self.ready = ready
        self._client: httpx2.AsyncClient | None = None

    @property
    def sent_headers(self) -> set[str]:
        """The headers the backend sends itself (lower case): not arguments of its tools."""
        return {h.lower() for h in (*self.headers, *self.bound)}

    async def send(self, request: Request, context: ToolContext) -> httpx2.Response:
        headers = {**request.headers, **self.trial_headers(context)}
        return await self.host.run(self._send(request, headers))

    async def _send(self, request: Request, headers: dict[str, str]) -> httpx2.Response:
        if self._client is None:
            await asyncio.to_thread(self.ready)
            if self._client is None:
                self._client = httpx2.AsyncClient(headers=self.headers, timeout=self.timeout_s)
        if request.media_type is not None:
            headers["content-type"] = request.media_type
        try:
            return await self._client.request(
                request.method.upper(),
                request.url,
                params=request.params,
                headers=headers,
                content=request.content,
            )
        except httpx2.TimeoutException:
            raise
        except httpx2.HTTPError as exc:
            message = redacted(
                f"service of backend '{self.backend}' is unreachable at {request.url}: {exc}"
            )
            failure = self.failure()
            raise InfraError(f"{message}\n{failure}" if failure else message) from None

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def fetch_document(source: str, root: Path, read: Callable[[Path], bytes]) -> tuple[str, bytes]:
    """(where, bytes) of an OpenAPI document: an http(s) URL, or a file of the suite (read
    with `read`, which refuses a file outside the suite's folders, or no regular file)."""
    if source.startswith(("http://", "https://")):
        try:
            response = httpx2.get(source, timeout=30.0)
        except httpx2.HTTPError as exc:
            raise DocumentError(f"cannot fetch {source}: {exc}") from None
        if response.status_code >= 400:
            raise DocumentError(f"cannot fetch {source}: HTTP {response.status_code}")
        return source, response.content
    path = root / source
    try:
        return str(path), read(path)
    except FileProblem as exc:
        raise DocumentError(f"cannot read {source}: {exc}") from None
