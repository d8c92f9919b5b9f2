"""Processes toolproof starts for a suite: commands, their environment, ports, log tails."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

BASE_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
"""What a stdio MCP server or a service always gets (the MCP SDK passes the same set)."""

TAIL_LINES = 20


def tail(text: str, lines: int = TAIL_LINES) -> str:
    """The last lines of a log, for an error message."""
    kept = text.rstrip().splitlines()[-lines:]
    return "\n".join(kept)


def with_stderr(message: str, stderr: str) -> str:
    text = tail(stderr)
    return f"{message}\n--- stderr (last lines) ---\n{text}" if text else message


def program(argv: list[str]) -> list[str]:
    """A command as given, with a leading `python`/`python3` meaning toolproof's Python."""
    if argv and argv[0] in ("python", "python3"):
        return [sys.executable, *argv[1:]]
    return list(argv)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class CommandResult:
    code: int
    stdout: str
    stderr: str


def run_command(
    argv: list[str], cwd: Path, env: Mapping[str, str], timeout: float
) -> CommandResult:
    """Run a command to its end (blocking); a timeout is exit status 124, like timeout(1)."""
    try:
        done = subprocess.run(
            program(argv),
            cwd=cwd,
            env=dict(env),
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout if isinstance(exc.stdout, str) else ""
        err = exc.stderr if isinstance(exc.stderr, str) else ""
        return CommandResult(124, out, f"{err}\ntimed out after {timeout:g} s")
    except OSError as exc:
        return CommandResult(127, "", f"cannot run {argv[0]}: {exc}")
    return CommandResult(done.returncode, done.stdout, done.stderr)


def child_env(allow: list[str] | None, set_env: Mapping[str, str]) -> dict[str, str]:
    """A server's or service's environment: the base set, the allow-list, then `set_env`."""
    names = [*BASE_ENV, *(allow or [])]
    env = {name: os.environ[name] for name in names if name in os.environ}
    env.update(set_env)
    return env
