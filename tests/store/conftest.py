"""A real PostgreSQL server for the store tests, started once per test session.

It needs Debian's `postgresql` package (initdb and pg_ctl under /usr/lib/postgresql/*/bin)
and psycopg. Without them the PostgreSQL tests are skipped, with the reason, on a developer's
machine; in CI (the environment variable CI is true) they fail instead, so a pipeline cannot
pass without having run them.

The cluster lives in a temporary folder, listens on 127.0.0.1 on a free port with trust
authentication, runs without fsync, and is stopped and deleted at the end. PostgreSQL refuses
to run as root: as root the server runs as the `postgres` user the package creates.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import pytest

USER = "toolproof"


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def unavailable(reason: str) -> NoReturn:
    """Skip on a developer's machine; fail loudly in CI."""
    if in_ci():
        pytest.fail(f"PostgreSQL tests cannot run in CI: {reason}", pytrace=False)
    pytest.skip(reason)


def _version(path: Path) -> tuple[int, ...]:
    digits = path.parent.parent.name.split(".")
    return tuple(int(d) for d in digits if d.isdigit())


def find_bin() -> Path | None:
    """The folder holding initdb and pg_ctl: Debian's newest, or the ones on PATH."""
    debian = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=_version)
    if debian:
        return debian[-1].parent
    found = shutil.which("initdb")
    if found and (Path(found).resolve().parent / "pg_ctl").exists():
        return Path(found).resolve().parent
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Server:
    bin: Path
    data: Path
    run_as: str | None
    port: int = 0

    def command(self, *args: str | Path) -> list[str]:
        argv = [str(a) for a in args]
        if self.run_as is None:
            return argv
        if shutil.which("runuser"):
            return ["runuser", "-u", self.run_as, "--", *argv]
        return ["su", self.run_as, "-s", "/bin/sh", "-c", " ".join(argv)]

    def run(self, *args: str | Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command(*args), capture_output=True, text=True, timeout=timeout, check=False
        )

    @property
    def log(self) -> Path:
        return self.data.parent / "server.log"

    def url(self, database: str) -> str:
        return f"postgresql+psycopg://{USER}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(
            host="127.0.0.1", port=self.port, user=USER, dbname="postgres", autocommit=True
        ) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


def _start(server: Server) -> None:
    """Start the server on a free port (a few tries, in case another process takes it)."""
    failures = []
    for _ in range(3):
        server.port = free_port()
        options = f"-p {server.port} -h 127.0.0.1 -k {server.data} -F"
        started = server.run(
            server.bin / "pg_ctl",
            "-D",
            server.data,
            "-l",
            server.log,
            "-w",
            "-t",
            "60",
            "-o",
            options,
            "start",
        )
        if started.returncode == 0:
            return
        log = server.log.read_text(errors="replace") if server.log.exists() else ""
        failures.append(f"{started.stdout}{started.stderr}{log[-2000:]}")
        time.sleep(0.5)
    pytest.fail("PostgreSQL did not start:\n" + "\n---\n".join(failures), pytrace=False)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Server]:
    """A running PostgreSQL server of its own, stopped and deleted after the session."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        unavailable("psycopg is not installed (pip install 'toolproof[postgres]')")
    bin_dir = find_bin()
    if bin_dir is None:
        unavailable("PostgreSQL is not installed (apt-get install -y postgresql)")
    run_as = None
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            unavailable("running as root and there is no 'postgres' user to run the server as")
        run_as = "postgres"
    # In the system's temporary folder, not pytest's (private to root), so the server's user
    # can reach it.
    root = Path(tempfile.mkdtemp(prefix="toolproof-pg-"))
    data = root / "data"
    if run_as is not None:
        entry = pwd.getpwnam(run_as)
        os.chown(root, entry.pw_uid, entry.pw_gid)
    server = Server(bin=bin_dir, data=data, run_as=run_as)
    try:
        init = server.run(
            bin_dir / "initdb",
            "-D",
            data,
            "-U",
            USER,
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-locale",
            "--no-sync",
        )
        if init.returncode != 0:
            pytest.fail(f"initdb failed:\n{init.stdout}{init.stderr}", pytrace=False)
        _start(server)
        yield server
    finally:
        if (data / "postmaster.pid").exists():
            server.run(bin_dir / "pg_ctl", "-D", data, "-m", "immediate", "-w", "stop")
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_url(postgres_server: Server) -> str:
    """A `postgresql+psycopg://` URL of a database on the session's server."""
    return postgres_server.create_database("toolproof")


@pytest.fixture
def fresh_postgres_url(postgres_server: Server) -> str:
    """A URL of a new, empty database, for a test that needs a store of its own."""
    return postgres_server.create_database(f"t_{uuid.uuid4().hex[:12]}")
