"""Fixtures for the model tests: the embedded model's file, and a llama.cpp server around it.

Both need llama-cpp-python (`pip install 'toolproof[local]'`); without it the tests that use
them are skipped. The server also needs llama-cpp-python's server extras (FastAPI, uvicorn,
sse-starlette, starlette-context, pydantic-settings); without them it fails to start and the
fixture says so with the server's output.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

SERVER_START_TIMEOUT_S = 120.0


def _need_llama_cpp() -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed (pip install 'toolproof[local]')")


@pytest.fixture(scope="session")
def local_model_path() -> str:
    """The GGUF file of the embedded model (SmolLM2-135M-Instruct)."""
    _need_llama_cpp()
    from toolproof.models.local import default_model_path

    return default_model_path()


def _die_with_parent() -> None:
    """Linux: the server is killed when the test process dies, even by SIGKILL or a timeout."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def llama_server(local_model_path: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A llama.cpp OpenAI-compatible server on the embedded model; yields its base URL."""
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    log = Path(tmp_path_factory.mktemp("llama-server")) / "server.log"
    command = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", local_model_path,
        "--chat_format", "chatml-function-calling",
        "--host", "127.0.0.1",
        "--port", str(port),
        "--n_threads", "2",
        "--n_ctx", "8192",
    ]  # fmt: skip
    with log.open("wb") as out:
        server = subprocess.Popen(
            command,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "NO_PROXY": "*"},
            preexec_fn=_die_with_parent if sys.platform == "linux" else None,
        )
        try:
            _wait_until_up(server, f"{base}/v1/models", log)
            yield base
        finally:
            server.terminate()
            try:
                server.wait(timeout=5)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def _wait_until_up(server: subprocess.Popen[bytes], url: str, log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(
                f"the llama.cpp server exited ({server.returncode}):\n{log.read_text()[-3000:]}"
            )
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.25)
    raise RuntimeError(
        f"the llama.cpp server did not answer {url} in {SERVER_START_TIMEOUT_S:.0f} s:\n"
        f"{log.read_text()[-3000:]}"
    )
