"""Services: local processes serving on 127.0.0.1, started before a run, stopped after."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from toolproof.errors import InfraError
from toolproof.runtime.processes import child_env, free_port, program, with_stderr
from toolproof.spec.backends import ServiceSpec
from toolproof.spec.placeholders import expand


@dataclass
class Service:
    """A local process serving on 127.0.0.1, started before the run and stopped after it."""

    name: str
    spec: ServiceSpec
    root: Path
    port: int = 0
    process: subprocess.Popen[bytes] | None = None
    log_path: str = ""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log(self) -> str:
        try:
            return Path(self.log_path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def reserve(self) -> None:
        """Choose its port (so its address is known before it starts)."""
        self.port = self.port or self.spec.port or free_port()

    def start(self) -> None:
        """Start the process and wait until it answers; raises InfraError with its log."""
        self.reserve()
        names = {"suite_dir": str(self.root), "python": sys.executable, "port": str(self.port)}
        argv = [expand(a, names) for a in self.spec.command]
        cwd = self.root / expand(self.spec.cwd, names) if self.spec.cwd else self.root
        env = child_env(self.spec.env, {k: expand(v, names) for k, v in self.spec.set_env.items()})
        fd, self.log_path = tempfile.mkstemp(
            prefix=f"toolproof-service-{self.name}-", suffix=".log"
        )
        os.close(fd)
        with open(self.log_path, "ab") as log:
            try:
                self.process = subprocess.Popen(
                    program(argv),
                    cwd=cwd,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=log,
                    start_new_session=True,
                )
            except OSError as exc:
                raise InfraError(f"service '{self.name}' cannot start: {exc}") from None
        ready = expand(self.spec.ready, names) if self.spec.ready else None
        if ready and ready.startswith("/"):
            ready = self.url + ready
        deadline = time.monotonic() + self.spec.start_timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.stop()
                message = f"service '{self.name}' exited with status {self.process.returncode}"
                raise InfraError(with_stderr(message, self.log()))
            if self._answers(ready):
                return
            time.sleep(0.1)
        self.stop()
        message = f"service '{self.name}' did not answer within {self.spec.start_timeout_s:g} s"
        raise InfraError(with_stderr(message, self.log()))

    def _answers(self, ready: str | None) -> bool:
        if ready is None:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
            except OSError:
                return False
            return True
        import httpx2

        try:
            return httpx2.get(ready, timeout=2.0).status_code < 500
        except httpx2.HTTPError:
            return False

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def failure(self) -> str | None:
        """Why the service is not usable any more, with its log, if it has died."""
        if self.process is None or self.alive():
            return None
        message = f"service '{self.name}' died (exit status {self.process.returncode})"
        return with_stderr(message, self.log())

    def stop(self) -> None:
        process = self.process
        if process is not None and process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except OSError:
                process.terminate()
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except OSError:
                    process.kill()
                process.wait(5)

    def remove_log(self) -> None:
        if self.log_path:
            Path(self.log_path).unlink(missing_ok=True)
