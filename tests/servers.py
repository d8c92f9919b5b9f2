"""A small OpenAI-compatible HTTP server for tests: real sockets, scripted answers.

An answer is `(status, JSON object)`, or a `Raw` body sent as it is (HTML, broken JSON,
chunked, compressed), or `HANG`: the request is read and never answered.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Raw:
    """An answer sent byte for byte; `chunked` frames it in chunked transfer encoding."""

    body: bytes
    status: int = 200
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    chunked: bool = False


HANG = Raw(b"never sent")

Answer = Callable[[dict[str, Any]], tuple[int, dict[str, Any]] | Raw]


def completion(
    content: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    prompt_tokens: int = 100,
    completion_tokens: int = 10,
) -> dict[str, Any]:
    """A chat.completion body as OpenAI's API returns it."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
            }
            for i, c in enumerate(tool_calls)
        ]
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1767225600,
        "model": "test",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if tool_calls else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


@dataclass
class Seen:
    """What the server saw: request bodies, their headers, and the connections they came on."""

    bodies: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    connections: set[int] = field(default_factory=set)


@contextmanager
def model_server(
    answer: Answer, *, keep_alive: bool = False, close_after_answer: bool = False
) -> Iterator[tuple[str, Seen]]:
    """Serve any POST on 127.0.0.1; yields (base URL with /v1, what was seen).

    `keep_alive` speaks HTTP/1.1 and keeps connections open; `close_after_answer` then
    closes each one after its answer without saying so, as a server whose keep-alive
    timeout has passed does.
    """
    seen = Seen()
    stop = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.bodies.append(body)
            seen.headers.append(dict(self.headers.items()))
            seen.connections.add(self.client_address[1])
            reply = answer(body)
            if reply is HANG:
                stop.wait()
                self.close_connection = True
                return
            if isinstance(reply, Raw):
                status, data, kind = reply.status, reply.body, reply.content_type
            else:
                status, data, kind = reply[0], json.dumps(reply[1]).encode(), "application/json"
            extra = reply.headers if isinstance(reply, Raw) else {}
            chunked = isinstance(reply, Raw) and reply.chunked
            self.send_response(status)
            self.send_header("Content-Type", kind)
            for name, value in extra.items():
                self.send_header(name, value)
            if chunked:
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                half = len(data) // 2
                for part in (data[:half], data[half:], b""):
                    self.wfile.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
            else:
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            if close_after_answer:
                self.close_connection = True

        def log_message(self, *args: Any) -> None:
            pass

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 128  # many trials connect at once

    server = Server(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
    finally:
        stop.set()
        server.shutdown()
        server.server_close()


@contextmanager
def openai_server(answer: Answer) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Serve POST /v1/chat/completions on 127.0.0.1; yields (base URL, request bodies)."""
    with model_server(answer) as (url, seen):
        yield url, seen.bodies
