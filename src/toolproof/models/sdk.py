"""What the adapters over the official SDKs (OpenAI, Anthropic) share.

The SDK client stays the owner of where and how a provider is called: it resolves the API key
and auth headers, the base URL (arguments, then the provider's environment variables), its
default headers, and it turns an error status into its own error class, which each adapter
reads into `ProviderError` or `ContextOverflow`. toolproof sends the call itself
(`models/http.py`: one shared keep-alive pool per endpoint) and each adapter reads the JSON
answer straight into toolproof's types: the SDKs' request and response layers cost more CPU
than a whole call to a local server (bench/adapter.py). An answer that does not read — not
JSON, a missing field, a wrong type — is a retryable `ProviderError` ("malformed response"),
which the retry layer retries and then ends as the trial's `infra_error` with that reason.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import ssl
import time
import urllib.request
from collections.abc import Callable
from typing import Any, TypedDict

import httpx2
import orjson

from toolproof.errors import UsageError
from toolproof.models.base import ProviderError
from toolproof.models.http import (
    KeepAlivePool,
    Reply,
    Target,
    post_with_httpx,
    shared,
    ssl_context,
)
from toolproof.models.read import malformed, snippet

DEFAULT_TIMEOUT_S = 120.0


class Endpoint(TypedDict, total=False):
    """Where and how an adapter reaches its provider (every key optional)."""

    api_key: str | None
    base_url: str | None
    headers: dict[str, str] | None
    http_client: httpx2.AsyncClient | None
    timeout_s: float | None


def sdk_options(endpoint: Endpoint) -> dict[str, Any]:
    """The SDK client's arguments for an endpoint: no retries of its own (toolproof's retry
    layer retries, under its adaptive limit)."""
    return {
        "api_key": endpoint.get("api_key"),
        "base_url": endpoint.get("base_url"),
        "default_headers": endpoint.get("headers"),
        "http_client": endpoint.get("http_client") or _idle_sdk_client(),
        "max_retries": 0,
        "timeout": endpoint.get("timeout_s") or DEFAULT_TIMEOUT_S,
    }


@functools.cache
def _idle_sdk_client() -> httpx2.AsyncClient:
    """The httpx client every SDK client is given: no call is sent through it, and sharing
    one spares each SDK client building its own TLS context (~0.1 s a model)."""
    return httpx2.AsyncClient(verify=ssl_context())


class Channel:
    """One adapter's way to its provider: the URL and headers its SDK client resolved, sent
    through the run's shared pool for that endpoint, each request within `timeout_s`."""

    def __init__(
        self,
        sdk: Any,
        path: str,
        endpoint: Endpoint,
        *,
        name: str,
        on_status: Callable[[Any], Exception],
    ) -> None:
        self.sdk = sdk
        self.on_status = on_status
        self.timeout_s = endpoint.get("timeout_s") or DEFAULT_TIMEOUT_S
        base: httpx2.URL = sdk.base_url
        url = base.copy_with(raw_path=base.raw_path + path.lstrip("/").encode())
        headers = _merged(sdk.auth_headers, sdk.default_headers)
        if url.username or url.password:  # credentials in the URL: HTTP basic auth, as httpx
            pair = f"{url.username}:{url.password}".encode()
            headers["Authorization"] = f"Basic {base64.b64encode(pair).decode()}"
            url = url.copy_with(username=None, password=None)
        for header, value in headers.items():
            if "\r" in value or "\n" in value or "\r" in header or "\n" in header:
                raise UsageError(f"{name}: header {header!r} has a line break in it")
            if not _latin1(header + value):
                raise UsageError(f"{name}: header {header!r} has characters HTTP cannot carry")
        self.url = str(url)
        self.headers = headers
        self._key = f"{type(sdk).__name__} {self.url}"
        self._given = endpoint.get("http_client")
        self._auth: httpx2.Auth | None = sdk.custom_auth
        self._via_httpx = self._given is not None or self._auth is not None or _proxied(url)
        self._target = Target.of(url)
        lines = [f"POST {self._target.path} HTTP/1.1", f"Host: {self._target.host_header}"]
        lines += [f"{k}: {v}" for k, v in headers.items() if k.lower() != "host"]
        lines += ["Accept-Encoding: gzip, deflate", "Content-Length: "]
        self._head = "\r\n".join(lines).encode("latin-1")

    async def post(self, body: dict[str, Any]) -> tuple[dict[str, Any], float]:
        """POST `body` as JSON; (the answer's JSON object, seconds it took).

        Raises ProviderError: retryable for timeouts, lost connections and malformed answers;
        an error status as the adapter's `on_status` reads the SDK's error for it.
        """
        content = orjson.dumps(body)
        started = time.perf_counter()
        try:
            async with asyncio.timeout(self.timeout_s):
                reply = await self._send(content)
        except TimeoutError:
            raise ProviderError(
                f"request timed out: no answer in {self.timeout_s:g} s", retryable=True
            ) from None
        except ssl.SSLCertVerificationError as exc:
            raise ProviderError(f"connection error: {exc}") from exc
        except (OSError, EOFError, asyncio.LimitOverrunError) as exc:
            raise ProviderError(f"connection error: {_describe(exc)}", retryable=True) from exc
        latency = time.perf_counter() - started
        if reply.status >= 300:
            raise self.on_status(self._status_error(reply))
        return _json_object(reply), latency

    async def _send(self, content: bytes) -> Reply:
        if self._via_httpx:
            client = self._given or shared(f"httpx {self._key}", _fallback_client)
            return await post_with_httpx(client, self.url, self.headers, content, self._auth)
        pool = shared(self._key, KeepAlivePool)
        head = self._head + str(len(content)).encode() + b"\r\n\r\n"
        return await pool.post(self._target, head, content)

    def _status_error(self, reply: Reply) -> Any:
        """The SDK's own exception for an error status (its classes, its reading of the body)."""
        response = httpx2.Response(
            reply.status,
            headers=reply.headers,
            content=reply.content,
            request=httpx2.Request("POST", self.url),
        )
        return self.sdk._make_status_error_from_response(response)


def _merged(auth: dict[str, str], defaults: dict[str, object]) -> dict[str, str]:
    """Auth headers under the SDK's defaults (the user's headers among them), names compared
    without case; a default that is not a string is the SDK's marker for 'leave it out'."""
    merged: dict[str, tuple[str, str]] = {k.lower(): (k, v) for k, v in auth.items()}
    for name, value in defaults.items():
        if isinstance(value, str):
            merged[name.lower()] = (name, value)
        else:
            merged.pop(name.lower(), None)
    return dict(merged.values())


def _latin1(text: str) -> bool:
    try:
        text.encode("latin-1")
    except UnicodeEncodeError:
        return False
    return True


def _proxied(url: httpx2.URL) -> bool:
    """Whether the environment sends this URL through a proxy (then httpx carries it)."""
    proxies = urllib.request.getproxies()
    proxy = proxies.get(url.scheme) or proxies.get("all")
    return bool(proxy) and not urllib.request.proxy_bypass(url.host)


def _fallback_client() -> httpx2.AsyncClient:
    """An httpx client for one endpoint's calls that need httpx; Channel bounds each call."""
    limits = httpx2.Limits(max_connections=None, max_keepalive_connections=None)
    return httpx2.AsyncClient(timeout=None, limits=limits)


def _describe(exc: BaseException) -> str:
    """A lost connection in one line: what happened, and what lay under it."""
    if isinstance(exc, asyncio.IncompleteReadError):
        return f"the server closed the connection after {len(exc.partial)} bytes of its answer"
    under = exc.__cause__
    text = str(exc) or type(exc).__name__
    return f"{text} ({type(under).__name__}: {under})" if under else text


def _json_object(reply: Reply) -> dict[str, Any]:
    try:
        data = orjson.loads(reply.content)
    except orjson.JSONDecodeError:
        kind = reply.headers.get("content-type", "no content type")
        raise malformed(f"not JSON ({kind}): {snippet(reply.content)}") from None
    if not isinstance(data, dict):
        raise malformed(f"not a JSON object: {snippet(reply.content)}")
    return data


def body_text(body: object, message: str) -> str:
    """An error response's text: its body when that is text (cut at 500), else the SDK's
    message."""
    if isinstance(body, str) and body:
        return body[:500]
    return message
