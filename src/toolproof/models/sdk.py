"""What the adapters over the official SDKs (OpenAI, Anthropic) share: both SDKs raise the
same family of errors, mapped here once onto `ProviderError` (retried by the retry layer)
or left to the adapter's own reading of an HTTP error status."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypedDict, TypeVar

import httpx2
import orjson

from toolproof.models.base import ProviderError

T = TypeVar("T")


class Endpoint(TypedDict, total=False):
    """Where and how an adapter reaches its provider (every key optional)."""

    api_key: str | None
    base_url: str | None
    headers: dict[str, str] | None
    http_client: httpx2.AsyncClient | None
    timeout_s: float


def sdk_options(endpoint: Endpoint) -> dict[str, Any]:
    """The SDK client's arguments for an endpoint: no retries of its own (toolproof's retry
    layer retries, under its adaptive limit)."""
    return {
        "api_key": endpoint.get("api_key"),
        "base_url": endpoint.get("base_url"),
        "default_headers": endpoint.get("headers"),
        "http_client": endpoint.get("http_client"),
        "max_retries": 0,
        "timeout": endpoint.get("timeout_s", 120.0),
    }


@dataclass(frozen=True)
class SDKErrors:
    """An SDK's error classes: an HTTP error status, a timeout, no connection, any other."""

    status: type[Exception]
    timeout: type[Exception]
    connection: type[Exception]
    other: type[Exception]


@contextmanager
def provider_errors(errors: SDKErrors, on_status: Callable[[Any], Exception]) -> Iterator[None]:
    """Raise a call's SDK errors as toolproof's: an error status as `on_status` reads it,
    timeouts and lost connections as retryable ProviderErrors, anything else as a final one."""
    try:
        yield
    except errors.status as exc:
        raise on_status(exc) from exc
    except errors.timeout as exc:
        raise ProviderError("request timed out", retryable=True) from exc
    except errors.connection as exc:
        raise ProviderError(f"connection error: {cause(exc)}", retryable=True) from exc
    except errors.other as exc:
        raise ProviderError(f"{type(exc).__name__}: {exc}") from exc


async def post(
    client: Any,
    errors: SDKErrors,
    on_status: Callable[[Any], Exception],
    path: str,
    body: dict[str, Any],
    cast_to: type[T],
    headers: dict[str, Any],
) -> tuple[T, float]:
    """POST our own JSON bytes through the SDK client (skipping its typed per-call walk of
    every argument); (the parsed answer, seconds it took)."""
    started = time.perf_counter()
    with provider_errors(errors, on_status):
        answer: T = await client.post(
            path, content=orjson.dumps(body), cast_to=cast_to, options=headers
        )
    return answer, time.perf_counter() - started


def body_text(body: object, message: str) -> str:
    """An error response's text: its body when that is text (cut at 500), else the SDK's
    message."""
    if isinstance(body, str) and body:
        return body[:500]
    return message


def cause(exc: BaseException) -> str:
    """What lay under an SDK's connection error, in one line."""
    under = exc.__cause__ or exc.__context__
    return f"{type(under).__name__}: {under}" if under else str(exc)
