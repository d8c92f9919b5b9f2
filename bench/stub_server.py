"""A stub model server for the benches: keep-alive HTTP/1.1 in a process of its own, so its
CPU is not the harness's. Each POST is answered, after `delay` seconds, with the JSON bytes
`answer(path, body)` returns.

On a busy machine the server itself answers late (its own process waits for a CPU too):
GET /stats returns how many answers it sent and by how much, in all, they came later than
`delay` after their request arrived, so a bench can tell that time from the harness's.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable

Answer = Callable[[bytes, bytes], bytes]


async def serve(answer: Answer, delay: float) -> None:
    """Serve on a free port of 127.0.0.1 until killed; print the port first."""
    stats = {"answers": 0, "late_s": 0.0, "max_late_s": 0.0}

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.split(b"\r\n")
                length = 0
                for line in lines[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                body = await reader.readexactly(length)
                arrived = time.perf_counter()
                if lines[0].startswith(b"GET /stats"):
                    data = json.dumps(stats).encode()
                else:
                    if delay:
                        await asyncio.sleep(delay)
                    data = answer(lines[0].split(b" ")[1], body)
                    late = time.perf_counter() - arrived - delay
                    stats["answers"] += 1
                    stats["late_s"] += late
                    stats["max_late_s"] = max(stats["max_late_s"], late)
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                    + f"content-length: {len(data)}\r\n\r\n".encode()
                    + data
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(connection, "127.0.0.1", 0, backlog=4096)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


def start(script: str, *args: str) -> tuple[subprocess.Popen[str], str]:
    """Run `script --serve ARGS` in a subprocess; (the process, its root URL)."""
    process = subprocess.Popen(
        [sys.executable, script, "--serve", *args], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    return process, f"http://127.0.0.1:{process.stdout.readline().strip()}"


def server_stats(root: str) -> dict[str, float]:
    """The server's answers so far and their lateness (see the module's docstring)."""
    with urllib.request.urlopen(f"{root}/stats", timeout=10) as reply:
        found: dict[str, float] = json.load(reply)
    return found
