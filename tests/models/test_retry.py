"""Retries, backoff and the adaptive limiter, against a real local HTTP server."""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from toolproof.errors import InfraError
from toolproof.models.base import ContextOverflow, Message, ModelResponse
from toolproof.models.openai import OpenAIChatClient
from toolproof.models.retry import (
    AdaptiveLimiter,
    RetryingClient,
    RetryPolicy,
    parse_retry_after,
)

FIXTURES = Path(__file__).parent / "fixtures" / "openai"
HELLO = [Message(role="user", content="Cancel W1")]


def recorded(name: str) -> tuple[int, dict[str, str], bytes]:
    data = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return data["status"], data["headers"], json.dumps(data["body"]).encode()


OK = recorded("text_usage")
RATE_LIMITED = (429, {"retry-after": "1"}, recorded("error_429_rate_limit")[2])
FAILED = recorded("error_500")
OVERLOADED = recorded("error_503_overloaded")
OVERFLOW = recorded("error_400_context")
BAD_KEY = recorded("error_401")


class Server:
    """A chat completions endpoint that answers from a schedule; then OK."""

    def __init__(self) -> None:
        self.schedule: list[tuple[int, dict[str, str], bytes]] = []
        self.requests: list[dict[str, Any]] = []
        self.delay_s = 0.0
        self.in_flight = 0
        self.peak = 0
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers["content-length"])
                body = json.loads(self.rfile.read(length))
                with server.lock:
                    server.requests.append({"path": self.path, "body": body})
                    status, headers, payload = server.schedule.pop(0) if server.schedule else OK
                    server.in_flight += 1
                    server.peak = max(server.peak, server.in_flight)
                time.sleep(server.delay_s)
                with server.lock:
                    server.in_flight -= 1
                self.send_response(status)
                for name, value in {**headers, "content-type": "application/json"}.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}/v1"


@pytest.fixture
def server() -> Iterator[Server]:
    s = Server()
    thread = threading.Thread(target=s.http.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield s
    s.http.shutdown()
    s.http.server_close()
    thread.join(5)


class Sleeps:
    """An injected sleep: records the waits and does not wait."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def retrying(server: Server, policy: RetryPolicy, sleeps: Sleeps, **kwargs: Any) -> RetryingClient:
    model = OpenAIChatClient("m", base_url=server.url, provider="local", timeout_s=10)
    return RetryingClient(model, policy=policy, sleep=sleeps, rng=random.Random(7), **kwargs)


def run(client: RetryingClient) -> ModelResponse:
    return asyncio.run(client.generate(HELLO, []))


def test_recovers_after_failures_with_growing_waits(server: Server) -> None:
    server.schedule = [RATE_LIMITED, FAILED, FAILED, OVERLOADED]
    sleeps = Sleeps()
    client = retrying(server, RetryPolicy(max_attempts=6, base_delay_s=0.5, jitter="none"), sleeps)
    response = run(client)
    assert response.message.content == "Your order W1 has been cancelled."
    assert len(server.requests) == 5
    assert all(r["path"] == "/v1/chat/completions" for r in server.requests)
    # Retry-After (1 s) is a floor under the first wait (0.5 s); then 1, 2, 4 s.
    assert sleeps.delays == [1.0, 1.0, 2.0, 4.0]
    assert client.delays == sleeps.delays
    assert (client.attempts, client.retries) == ([5], 4)


def test_waits_are_capped_and_jittered(server: Server) -> None:
    server.schedule = [FAILED] * 5
    sleeps = Sleeps()
    policy = RetryPolicy(max_attempts=6, base_delay_s=1.0, max_delay_s=3.0, jitter="none")
    run(retrying(server, policy, sleeps))
    assert sleeps.delays == [1.0, 2.0, 3.0, 3.0, 3.0]

    # Equal jitter: each wait within [cap/2, cap], so the waits still grow.
    server.schedule = [FAILED] * 4
    sleeps = Sleeps()
    policy = RetryPolicy(max_attempts=6, base_delay_s=0.5, jitter="equal")
    run(retrying(server, policy, sleeps))
    caps = [0.5, 1.0, 2.0, 4.0]
    assert all(cap / 2 <= d <= cap for d, cap in zip(sleeps.delays, caps, strict=True))
    assert sleeps.delays == sorted(sleeps.delays)

    # Full jitter: within [0, cap], honouring Retry-After, and the same for the same seed.
    runs = []
    for _ in range(2):
        server.schedule = [RATE_LIMITED, FAILED, FAILED]
        sleeps = Sleeps()
        run(retrying(server, RetryPolicy(base_delay_s=0.5, jitter="full"), sleeps))
        runs.append(sleeps.delays)
    assert runs[0] == runs[1]
    assert runs[0][0] >= 1.0
    assert 0 <= runs[0][1] <= 1.0 and 0 <= runs[0][2] <= 2.0


def test_gives_up_after_the_budget(server: Server) -> None:
    server.schedule = [OVERLOADED] * 10
    sleeps = Sleeps()
    client = retrying(server, RetryPolicy(max_attempts=3), sleeps)
    with pytest.raises(InfraError) as raised:
        run(client)
    assert str(raised.value) == (
        "local/m: HTTP 503: The engine is currently overloaded, please try again later."
        " after 3 attempts"
    )
    assert len(server.requests) == 3
    assert len(sleeps.delays) == 2
    assert client.attempts == [3]


def test_context_overflow_is_not_retried(server: Server) -> None:
    server.schedule = [OVERFLOW]
    sleeps = Sleeps()
    client = retrying(server, RetryPolicy(), sleeps)
    with pytest.raises(ContextOverflow, match="maximum context length is 128000 tokens"):
        run(client)
    assert len(server.requests) == 1
    assert sleeps.delays == []


def test_a_bad_key_fails_at_once(server: Server) -> None:
    server.schedule = [BAD_KEY]
    sleeps = Sleeps()
    client = retrying(server, RetryPolicy(), sleeps)
    with pytest.raises(InfraError, match=r"^local/m: HTTP 401: Incorrect API key provided"):
        run(client)
    assert len(server.requests) == 1
    assert sleeps.delays == []
    assert client.attempts == [1]


def test_connection_errors_are_retried() -> None:
    # A port nobody listens on: every attempt is refused.
    probe = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    port = probe.server_address[1]
    probe.server_close()
    sleeps = Sleeps()
    model = OpenAIChatClient("m", base_url=f"http://127.0.0.1:{port}/v1", provider="local")
    client = RetryingClient(model, policy=RetryPolicy(max_attempts=2), sleep=sleeps)
    with pytest.raises(InfraError, match=r"^local/m: connection error: .* after 2 attempts$"):
        run(client)
    assert len(sleeps.delays) == 1


def test_rate_limits_shrink_the_limiter(server: Server) -> None:
    server.schedule = [RATE_LIMITED, RATE_LIMITED]
    limiter = AdaptiveLimiter(8, grow_after=2)
    client = retrying(server, RetryPolicy(), Sleeps(), limiter=limiter)
    run(client)
    assert limiter.limit == 2  # halved twice (each retry started after the last halving)
    run(client)
    assert limiter.limit == 3  # two successes in a row: one more


def test_no_more_calls_in_flight_than_the_limit(server: Server) -> None:
    server.delay_s = 0.05
    limiter = AdaptiveLimiter(3)
    client = retrying(server, RetryPolicy(), Sleeps(), limiter=limiter)

    async def many() -> list[ModelResponse]:
        return await asyncio.gather(*(client.generate(HELLO, []) for _ in range(12)))

    responses = asyncio.run(many())
    assert len(responses) == 12
    assert server.peak <= 3
    assert limiter.peak_in_flight == 3
    assert limiter.in_flight == 0


def test_limiter_halves_and_grows_back() -> None:
    limiter = AdaptiveLimiter(16, grow_after=20)
    limits = []
    for _ in range(5):
        limiter.record_rate_limit()
        limits.append(limiter.limit)
    assert limits == [8, 4, 2, 1, 1]
    for _ in range(19):
        limiter.record_success()
    assert limiter.limit == 1
    limiter.record_success()
    assert limiter.limit == 2
    for _ in range(20 * 30):
        limiter.record_success()
    assert limiter.limit == 16  # never above where it started
    # A 429 resets the run of successes.
    limiter.record_rate_limit()
    for _ in range(19):
        limiter.record_success()
    limiter.record_rate_limit()
    limiter.record_success()
    assert limiter.limit == 4


def test_limiter_halves_once_per_burst() -> None:
    async def burst() -> AdaptiveLimiter:
        limiter = AdaptiveLimiter(16)
        slots = [await limiter.__aenter__() for _ in range(16)]
        for epoch in slots:  # 16 calls started together, all rate limited
            limiter.record_rate_limit(epoch)
        for _ in slots:
            await limiter.__aexit__(None, None, None)
        return limiter

    limiter = asyncio.run(burst())
    assert limiter.limit == 8


def test_limiter_waits_for_a_free_slot() -> None:
    limiter = AdaptiveLimiter(2)

    async def scenario() -> list[str]:
        events: list[str] = []

        async def call(name: str, hold: asyncio.Event) -> None:
            async with limiter:
                events.append(f"{name} in")
                await hold.wait()
            events.append(f"{name} out")

        holds = {n: asyncio.Event() for n in "abc"}
        tasks = [asyncio.create_task(call(n, holds[n])) for n in "abc"]
        await asyncio.sleep(0.01)
        assert limiter.in_flight == 2
        holds["a"].set()
        await asyncio.sleep(0.01)
        holds["b"].set()
        holds["c"].set()
        await asyncio.gather(*tasks)
        return events

    for _ in range(2):  # the same limiter in a second event loop
        events = asyncio.run(scenario())
        assert events.index("c in") > events.index("a out")
        assert limiter.in_flight == 0


def test_parse_retry_after() -> None:
    now = time.time()
    in_30s = email.utils.formatdate(now + 30, usegmt=True)
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after": "1.5"}) == 1.5
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert parse_retry_after({"retry-after": in_30s}, now=now) == pytest.approx(30, abs=1)
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({"retry-after": "-3"}) is None
    assert parse_retry_after({}) is None


def test_retry_after_floor_is_capped() -> None:
    policy = RetryPolicy(jitter="none", max_retry_after_s=60)
    rng = random.Random(1)
    assert policy.delay(1, 3600, rng) == 60
    assert policy.delay(1, None, rng) == 0.5
    assert policy.delay(40, None, rng) == 30.0
    with pytest.raises(ValueError):
        RetryPolicy(max_attempts=0)
