"""The life of real backends: local services, MCP servers, HTTP clients, hooks and checks.

Python tools need nothing here: their state is the trial's copy of the world. Real systems
(MCP servers, HTTP services) live outside the process, so a suite that uses them gets a
`Runtime` when it is loaded:

- **per run** (from loading until `Suite.close()` or the end of the process): the suite's
  `services` (started on 127.0.0.1 before anything else), MCP servers without `per_trial`,
  and the HTTP clients of OpenAPI backends;
- **per trial** (`TrialEnvironment`): a fresh temporary `trial_dir`, the `setup` hook, MCP
  servers with `per_trial` (started on the trial's first call of one of their tools), the
  task's `check`s after the conversation, then the servers stop, the `teardown` hook runs
  and `trial_dir` is removed.

Live connections are bound to the event loop that opened them, while trials may run in
several loops (each `asyncio.run`), so connections live on one background loop (`Host`)
and calls hop to it. A failure of the environment (a server that does not start or dies,
a hook that fails, a service that is unreachable) raises `InfraError`, which makes the
trial `infra_error`, never the agent's failure; its message carries the stderr tail.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import contextvars
import inspect
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Coroutine, Iterator, Mapping
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from toolproof.errors import InfraError
from toolproof.spec.models import (
    CheckSpec,
    HookSpec,
    MCPBackend,
    OpenAPIBackend,
    ServiceSpec,
    SuiteFile,
)
from toolproof.tools.base import ToolContext, ToolResult
from toolproof.transcript import CheckEvent

if TYPE_CHECKING:
    from toolproof.tools.mcp import DiscoveredTool, MCPConnection, MCPLaunch
    from toolproof.tools.openapi import HTTPChannel

T = TypeVar("T")

TRIAL_KEY = "toolproof.trial"
"""Where a trial's environment is found in `ToolContext.extras`."""

INJECTABLE = ("trial_dir", "trial_id", "seed", "task", "suite_dir", "services")
"""Parameters a hook or check function may declare to receive them (`trial_id`: a name
unique to the trial among those running, for a tenant of a shared service; `services`: the
base URL of each of the suite's services, by name)."""

BASE_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
"""What a stdio MCP server or a service always gets (the MCP SDK passes the same set)."""

TAIL_LINES = 20

_current: contextvars.ContextVar[TrialEnvironment | None] = contextvars.ContextVar(
    "toolproof_trial", default=None
)
_on_demand: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "toolproof_services_on_demand", default=False
)


@contextlib.contextmanager
def services_on_demand() -> Iterator[None]:
    """Suites loaded inside start their services when something first needs them (a trial,
    a call, a document or a tool list that a service serves) rather than at load: for
    commands that read stored results, like `regrade`, which then start none. A service
    that does not come up is then an infrastructure error where it is needed, not a
    located suite error."""
    token = _on_demand.set(True)
    try:
        yield
    finally:
        _on_demand.reset(token)


# ---------------------------------------------------------------- placeholders

_PLACEHOLDER = re.compile(r"(?<!\$)\{([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_-]+)*)\}")
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")

RUN_NAMES = frozenset({"suite_dir", "python"})
TRIAL_NAMES = RUN_NAMES | {"trial_dir", "trial_id", "seed", "task"}
TRIAL_PREFIX = "toolproof-trial-"


class PlaceholderError(ValueError):
    """A `{name}` that is unknown where it is used, or a `${VAR}` that is not set."""


def expand(
    text: str, variables: Mapping[str, str], environ: Mapping[str, str] | None = None
) -> str:
    """`{name}` from `variables`, then `${VAR}` (or `${VAR:-default}`) from the environment."""
    env = os.environ if environ is None else environ

    def variable(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in variables:
            raise PlaceholderError(f"unknown placeholder '{{{name}}}'")
        return variables[name]

    def from_env(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        raise PlaceholderError(f"environment variable {name} is not set")

    return _ENV_REF.sub(from_env, _PLACEHOLDER.sub(variable, text))


def expand_value(value: Any, variables: Mapping[str, str]) -> Any:
    """`expand` over every string of a JSON-like value."""
    if isinstance(value, str):
        return expand(value, variables)
    if isinstance(value, list):
        return [expand_value(v, variables) for v in value]
    if isinstance(value, dict):
        return {k: expand_value(v, variables) for k, v in value.items()}
    return value


def placeholders(text: str) -> set[str]:
    """The `{name}`s a configured string uses."""
    return {match.group(1) for match in _PLACEHOLDER.finditer(text)}


def template_problem(value: Any, allowed: frozenset[str] | set[str]) -> str | None:
    """Why a configured string (or any string inside a value) cannot be expanded, if so."""
    if isinstance(value, list):
        return next((p for v in value if (p := template_problem(v, allowed))), None)
    if isinstance(value, dict):
        return next((p for v in value.values() if (p := template_problem(v, allowed))), None)
    if not isinstance(value, str):
        return None
    for match in _PLACEHOLDER.finditer(value):
        if match.group(1) not in allowed:
            known = ", ".join(f"{{{n}}}" for n in sorted(allowed))
            return f"unknown placeholder '{{{match.group(1)}}}' here (known: {known})"
    for match in _ENV_REF.finditer(value):
        if match.group(1) not in os.environ and match.group(2) is None:
            return f"environment variable {match.group(1)} is not set"
    return None


def service_names(file: SuiteFile) -> set[str]:
    names: set[str] = set()
    for service in file.services:
        names |= {f"services.{service}.port", f"services.{service}.url"}
    return names


def template_problems(file: SuiteFile) -> list[tuple[list[str | int], str]]:
    """Every placeholder problem of the suite's services, backends and hooks, located."""
    run = set(RUN_NAMES) | service_names(file)
    trial = run | TRIAL_NAMES
    found: list[tuple[list[str | int], str]] = []

    def check(loc: list[str | int], value: Any, allowed: set[str]) -> None:
        problem = template_problem(value, allowed)
        if problem:
            found.append((loc, problem))

    for name, service in file.services.items():
        own = set(RUN_NAMES) | {"port"}
        for key in ("command", "cwd", "ready", "set_env"):
            check(["services", name, key], getattr(service, key), own)
    for name, backend in file.backends.items():
        if isinstance(backend, MCPBackend):
            where = trial if backend.per_trial else run
            for key in ("command", "cwd", "set_env"):
                check(["backends", name, key], getattr(backend, key), where)
            for key in ("url", "headers"):
                check(["backends", name, key], getattr(backend, key), run)
            check(["backends", name, "bind"], backend.bind, trial)
        elif isinstance(backend, OpenAPIBackend):
            for key in ("spec", "base_url"):
                check(["backends", name, key], getattr(backend, key), run)
            check(["backends", name, "headers"], backend.headers, trial)
    for hook_name in ("setup", "teardown"):
        hook = getattr(file.hooks, hook_name)
        if hook is not None and hook.command:
            check(["hooks", hook_name, "command"], hook.command, trial)
    return found


def trial_names(file: SuiteFile) -> set[str]:
    """The placeholders a task's checks may use."""
    return set(TRIAL_NAMES) | service_names(file)


# ---------------------------------------------------------------- small helpers


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


def signature_problem(func: Callable[..., Any], args: set[str]) -> str | None:
    """Why a hook or check function cannot be called with these `args` (and the injected
    values it asks for), if so."""
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return None
    clash = sorted(args & set(INJECTABLE))
    if clash:
        return f"args {', '.join(clash)}: these names are filled in by toolproof"
    open_kwargs = any(p.kind is p.VAR_KEYWORD for p in params.values())
    unknown = sorted(a for a in args if a not in params)
    if unknown and not open_kwargs:
        return f"{func.__name__}() takes no argument {', '.join(map(repr, unknown))}"
    for name, param in params.items():
        if param.kind in (param.VAR_KEYWORD, param.VAR_POSITIONAL):
            continue
        if name not in args and name not in INJECTABLE and param.default is param.empty:
            return (
                f"{func.__name__}() needs '{name}': give it in args, or name a parameter "
                f"{', '.join(INJECTABLE)} to receive that value"
            )
    return None


async def call_function(
    func: Callable[..., Any], values: Mapping[str, Any], args: Mapping[str, Any], timeout: float
) -> Any:
    """Call a hook or check function with the values it declares and `args`, in a thread
    when it is synchronous, bounded by `timeout` seconds."""
    params = inspect.signature(func).parameters
    open_kwargs = any(p.kind is p.VAR_KEYWORD for p in params.values())
    kwargs = {k: v for k, v in values.items() if k in params or open_kwargs}
    kwargs.update(args)
    if inspect.iscoroutinefunction(func):
        return await asyncio.wait_for(func(**kwargs), timeout)
    return await asyncio.wait_for(asyncio.to_thread(func, **kwargs), timeout)


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


# ---------------------------------------------------------------- the host loop


class Host:
    """A background event loop owning every live backend connection of one suite."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._main, name="toolproof-backends", daemon=True)
        self._thread.start()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await `coro` on the host loop from any loop (cancelling it if the caller is)."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            return await coro
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))

    def run_sync(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run `coro` on the host loop and wait for it (from code that is not on it)."""
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except FutureTimeout:
            future.cancel()
            raise InfraError(f"backend operation did not finish within {timeout:g} s") from None

    def stop(self) -> None:
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
        if not self._thread.is_alive():
            self.loop.close()


# ---------------------------------------------------------------- services


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


# ---------------------------------------------------------------- the runtime

_LIVE: set[Runtime] = set()
"""Runtimes not closed yet: closed at interpreter exit, so no server or service outlives it."""


def _close_all() -> None:
    for runtime in list(_LIVE):
        runtime.close()


atexit.register(_close_all)


class Runtime:
    """Everything live that a loaded suite needs beyond Python tools (see the module doc)."""

    def __init__(self, root: Path, file: SuiteFile, seed: int = 0) -> None:
        self.root = root
        self.file = file
        self.seed = seed
        self.functions: dict[str, Callable[..., Any]] = {}
        """Python hooks and checks by their 'file.py:function' reference."""
        self.services: dict[str, Service] = {}
        self.variables: dict[str, str] = {"suite_dir": str(root), "python": sys.executable}
        self._host: Host | None = None
        self._shared: dict[str, MCPConnection] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._channels: dict[str, HTTPChannel] = {}
        self.on_demand = _on_demand.get()
        """Services start when first needed, not at load (`services_on_demand`)."""
        self._starting = threading.Lock()
        self.closed = False
        _LIVE.add(self)

    @property
    def host(self) -> Host:
        if self.closed:
            raise InfraError("the suite's backends are closed (Suite.close was called)")
        if self._host is None:
            self._host = Host()
        return self._host

    # -------------------------------------------------------- run level

    def start_services(self) -> None:
        """Start every service of the suite, in order (only choose their ports when they
        start on demand); raises InfraError on the first that does not come up (those
        already started keep running until `close`)."""
        for name, spec in self.file.services.items():
            if name in self.services:
                continue
            service = Service(name, spec, self.root)
            self.services[name] = service
            service.reserve()
            self.variables[f"services.{name}.port"] = str(service.port)
            self.variables[f"services.{name}.url"] = service.url
            if not self.on_demand:
                service.start()

    def ensure_services(self) -> None:
        """Start the services that have not started yet (blocking; from any thread)."""
        with self._starting:
            for service in self.services.values():
                if service.process is None:
                    service.start()

    def service_failure(self) -> str | None:
        """The log of a service that has died since it started, if one has."""
        return next((f for s in self.services.values() if (f := s.failure())), None)

    def mcp_spec(self, backend: str) -> MCPBackend:
        spec = self.file.backends[backend]
        assert isinstance(spec, MCPBackend)
        return spec

    def launch(self, backend: str, variables: Mapping[str, str]) -> MCPLaunch:
        """How to reach an MCP backend, its placeholders filled in."""
        from toolproof.tools.mcp import MCPLaunch

        spec = self.mcp_spec(backend)
        if spec.command is not None:
            set_env = {k: expand(v, variables) for k, v in spec.set_env.items()}
            if "trial_dir" in variables:
                set_env.setdefault("TOOLPROOF_TRIAL_DIR", variables["trial_dir"])
            env = child_env(spec.env, set_env)
            if spec.cwd:
                cwd = self.root / expand(spec.cwd, variables)
            elif spec.per_trial:
                cwd = Path(variables["trial_dir"])
            else:
                cwd = self.root
            return MCPLaunch(
                label=backend,
                command=program([expand(a, variables) for a in spec.command]),
                env=env,
                cwd=str(cwd),
                start_timeout_s=spec.start_timeout_s,
                call_timeout_s=spec.call_timeout_s,
            )
        assert spec.url is not None
        return MCPLaunch(
            label=backend,
            url=expand(spec.url, variables),
            headers={k: expand(v, variables) for k, v in spec.headers.items()},
            start_timeout_s=spec.start_timeout_s,
            call_timeout_s=spec.call_timeout_s,
        )

    def discover_mcp(self, backend: str) -> list[DiscoveredTool]:
        """The tools an MCP backend serves. A per-trial server is started once in a scratch
        trial (after the setup hook); a per-run server is started and kept for the run."""
        spec = self.mcp_spec(backend)
        limit = spec.start_timeout_s + 120
        if spec.per_trial:
            return self.host.run_sync(self._discover_in_scratch_trial(backend), limit)
        return self.host.run_sync(self._discover_shared(backend), limit)

    async def _discover_shared(self, backend: str) -> list[DiscoveredTool]:
        connection = await self._shared_connection(backend)
        return await connection.list_tools()

    async def _discover_in_scratch_trial(self, backend: str) -> list[DiscoveredTool]:
        trial = TrialEnvironment(self, "", self.seed)
        await trial.open()
        try:
            connection = await trial._connection(backend)
            return await connection.list_tools()
        finally:
            problem = await trial.close()
            if problem:
                raise InfraError(problem)

    async def _shared_connection(self, backend: str) -> MCPConnection:
        """The run's server of a backend, (re)started when it is not running (on the host)."""
        from toolproof.tools.mcp import MCPConnection

        lock = self._locks.setdefault(backend, asyncio.Lock())
        async with lock:
            connection = self._shared.get(backend)
            if connection is not None and connection.alive:
                return connection
            if connection is not None:
                await connection.stop()
            await asyncio.to_thread(self.ensure_services)
            connection = MCPConnection(self.launch(backend, self.variables))
            self._shared[backend] = connection
            await connection.start()
            return connection

    async def call_mcp(
        self,
        backend: str,
        tool: str,
        arguments: dict[str, Any],
        inject: tuple[str, ...],
        context: ToolContext,
    ) -> ToolResult:
        """One call of an MCP tool, with the backend's bound arguments filled in."""
        spec = self.mcp_spec(backend)
        trial = trial_of(context)
        if spec.per_trial and trial is None:
            raise InfraError(
                f"backend '{backend}' has a server per trial: call its tools inside a trial"
            )
        bound = {k: self.for_call(backend, "bind", spec.bind[k], context) for k in inject}
        payload = {**arguments, **bound}
        if trial is not None and spec.per_trial:
            return await self.host.run(trial._call(backend, tool, payload))
        return await self.host.run(self._call_shared(backend, tool, payload))

    async def _call_shared(self, backend: str, tool: str, payload: dict[str, Any]) -> ToolResult:
        connection = await self._shared_connection(backend)
        return await connection.call(tool, payload)

    def for_call(self, backend: str, what: str, value: Any, context: ToolContext | None) -> Any:
        """A configured value expanded for one call: with the calling trial's placeholders
        (`{trial_id}`, `{trial_dir}`, ...) when it runs in a trial."""
        trial = trial_of(context)
        variables = trial.variables if trial is not None else self.variables
        try:
            return expand_value(value, variables)
        except PlaceholderError as exc:
            raise InfraError(f"backend '{backend}': {what}: {exc} (outside a trial)") from None

    def channel(self, backend: str) -> HTTPChannel:
        """The HTTP client of an OpenAPI backend (one per run, on the host loop). Headers
        that name the trial's values (a tenant: `{trial_id}`) are expanded for each call."""
        from toolproof.tools.openapi import HTTPChannel

        channel = self._channels.get(backend)
        if channel is None:
            spec = self.file.backends[backend]
            assert isinstance(spec, OpenAPIBackend)
            per_trial = TRIAL_NAMES - RUN_NAMES
            headers = {
                k: expand(v, self.variables)
                for k, v in spec.headers.items()
                if not placeholders(v) & per_trial
            }
            bound = {k: v for k, v in spec.headers.items() if k not in headers}

            def trial_headers(context: ToolContext) -> dict[str, str]:
                return {k: self.for_call(backend, "headers", v, context) for k, v in bound.items()}

            channel = HTTPChannel(
                backend,
                self.host,
                headers,
                spec.timeout_s,
                self.service_failure,
                trial_headers if bound else None,
                set(bound),
                self.ensure_services,
            )
            self._channels[backend] = channel
        return channel

    def openapi_document(self, backend: str) -> tuple[str, bytes]:
        """(where the OpenAPI document was read, its bytes), a suite file or a URL."""
        from toolproof.tools.openapi import fetch_document

        spec = self.file.backends[backend]
        assert isinstance(spec, OpenAPIBackend)
        source = expand(spec.spec, self.variables)
        if source.startswith(("http://", "https://")):
            self.ensure_services()
        return fetch_document(source, self.root)

    # -------------------------------------------------------- trials

    def trial(self, task: str, seed: int) -> TrialEnvironment:
        return TrialEnvironment(self, task, seed)

    # -------------------------------------------------------- closing

    async def _aclose(self) -> None:
        for connection in list(self._shared.values()):
            await connection.stop()
        self._shared.clear()
        for channel in list(self._channels.values()):
            await channel.aclose()
        self._channels.clear()

    def close(self) -> None:
        """Stop the run's servers, HTTP clients and services (idempotent)."""
        if self.closed:
            return
        self.closed = True
        _LIVE.discard(self)
        if self._host is not None:
            # Closing goes on whatever a server did.
            with contextlib.suppress(Exception):
                self._host.run_sync(self._aclose(), timeout=30)
            self._host.stop()
        for service in reversed(list(self.services.values())):
            service.stop()
            service.remove_log()


def trial_of(context: ToolContext | None) -> TrialEnvironment | None:
    """The trial environment a tool call belongs to: from its context, else the current one
    (a context rebuilt by the gateway, for `stale` faults, keeps no extras)."""
    if context is not None:
        found = context.extras.get(TRIAL_KEY)
        if isinstance(found, TrialEnvironment):
            return found
    return _current.get()


# ---------------------------------------------------------------- trials


@dataclass
class TrialEnvironment:
    """One trial's real-system state: its trial_dir, hooks, per-trial servers and checks."""

    runtime: Runtime
    task: str
    seed: int
    dir: Path | None = None
    variables: dict[str, str] = field(default_factory=dict)
    _connections: dict[str, MCPConnection] = field(default_factory=dict)
    _lock: asyncio.Lock | None = None
    _token: contextvars.Token[TrialEnvironment | None] | None = None
    _setup_done: bool = False

    @property
    def extras(self) -> dict[str, Any]:
        return {TRIAL_KEY: self}

    @property
    def id(self) -> str:
        """Unique among the trials on this machine while it runs (its trial_dir's name)."""
        return self.dir.name.removeprefix(TRIAL_PREFIX) if self.dir is not None else ""

    def values(self) -> dict[str, Any]:
        """What hook and check functions may ask for by parameter name."""
        return {
            "trial_dir": self.dir,
            "trial_id": self.id,
            "seed": self.seed,
            "task": self.task,
            "suite_dir": self.runtime.root,
            "services": {name: s.url for name, s in self.runtime.services.items()},
        }

    def command_env(self) -> dict[str, str]:
        """Hook and check commands get toolproof's environment plus the trial's values."""
        env = dict(os.environ)
        env.update(
            {
                "TOOLPROOF_TRIAL_DIR": str(self.dir),
                "TOOLPROOF_TRIAL_ID": self.id,
                "TOOLPROOF_SEED": str(self.seed),
                "TOOLPROOF_TASK": self.task,
                "TOOLPROOF_SUITE_DIR": str(self.runtime.root),
            }
        )
        return env

    async def open(self) -> None:
        """Make trial_dir and run the setup hook; raises InfraError when the environment
        cannot be prepared (a dead service, a failing hook)."""
        self._token = _current.set(self)
        if self.runtime.on_demand:
            await asyncio.to_thread(self.runtime.ensure_services)
        failure = self.runtime.service_failure()
        if failure:
            raise InfraError(failure)
        self.dir = Path(tempfile.mkdtemp(prefix=TRIAL_PREFIX))
        self.variables = {
            **self.runtime.variables,
            "trial_dir": str(self.dir),
            "trial_id": self.id,
            "seed": str(self.seed),
            "task": self.task,
        }
        setup = self.runtime.file.hooks.setup
        if setup is not None:
            await self._hook("setup", setup)
        self._setup_done = True

    async def _hook(self, what: str, hook: HookSpec) -> None:
        assert self.dir is not None
        if hook.python is not None:
            func = self.runtime.functions[hook.python]
            try:
                await call_function(func, self.values(), {}, hook.timeout_s)
            except TimeoutError:
                raise InfraError(
                    f"{what} hook {hook.python} did not finish within {hook.timeout_s:g} s"
                ) from None
            except Exception as exc:
                raise InfraError(
                    f"{what} hook {hook.python} failed: {type(exc).__name__}: {exc}"
                ) from None
            return
        assert hook.command is not None
        try:
            argv = [expand(a, self.variables) for a in hook.command]
        except PlaceholderError as exc:
            raise InfraError(f"{what} hook: {exc}") from None
        done = await asyncio.to_thread(
            run_command, argv, self.dir, self.command_env(), hook.timeout_s
        )
        if done.code != 0:
            message = f"{what} hook {' '.join(argv)} failed with exit status {done.code}"
            raise InfraError(with_stderr(message, done.stderr or done.stdout))

    async def _connection(self, backend: str) -> MCPConnection:
        """This trial's server of a per-trial backend, started on first use (on the host)."""
        from toolproof.tools.mcp import MCPConnection

        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            connection = self._connections.get(backend)
            if connection is None:
                connection = MCPConnection(self.runtime.launch(backend, self.variables))
                self._connections[backend] = connection
                await connection.start()
            return connection

    async def _call(self, backend: str, tool: str, payload: dict[str, Any]) -> ToolResult:
        connection = await self._connection(backend)
        return await connection.call(tool, payload)

    async def _stop_connections(self) -> None:
        for connection in list(self._connections.values()):
            await connection.stop()
        self._connections.clear()

    async def run_checks(
        self, checks: list[CheckSpec], now: Callable[[], float]
    ) -> list[CheckEvent]:
        """Run a task's checks against the real systems, each recorded with its result."""
        events = []
        for index, check in enumerate(checks):
            started, clock = now(), time.perf_counter()
            passed, message = await self._check(check)
            events.append(
                CheckEvent(
                    t=started,
                    index=index,
                    name=check.label,
                    passed=passed,
                    message=message,
                    duration_s=round(time.perf_counter() - clock, 6),
                )
            )
        return events

    async def _check(self, check: CheckSpec) -> tuple[bool, str]:
        assert self.dir is not None
        if check.python is not None:
            func = self.runtime.functions[check.python]
            try:
                value = await call_function(func, self.values(), check.args, check.timeout_s)
            except TimeoutError:
                return False, f"did not finish within {check.timeout_s:g} s"
            except AssertionError as exc:
                return False, str(exc) or "assertion failed"
            except Exception as exc:
                return False, f"{type(exc).__name__}: {exc}"
            if value is False:
                return False, "returned False"
            return True, "holds"
        assert check.command is not None
        try:
            argv = [expand(a, self.variables) for a in check.command]
            cwd = Path(expand(check.cwd, self.variables)) if check.cwd else self.dir
        except PlaceholderError as exc:
            return False, str(exc)
        if not cwd.is_absolute():
            cwd = self.dir / cwd
        if not cwd.is_dir():
            return False, f"working folder {cwd} does not exist"
        done = await asyncio.to_thread(run_command, argv, cwd, self.command_env(), check.timeout_s)
        output = done.stdout.strip()
        if done.code != check.expect_exit:
            detail = tail(done.stderr or done.stdout, 5)
            message = f"exit status {done.code}, expected {check.expect_exit}"
            return False, f"{message}: {detail}" if detail else message
        if check.stdout is not None and output != check.stdout.strip():
            return False, f"output {output!r}, expected {check.stdout.strip()!r}"
        if check.stdout_contains is not None and check.stdout_contains not in done.stdout:
            return False, f"output {tail(output, 3)!r} does not contain {check.stdout_contains!r}"
        return True, "holds"

    async def close(self) -> str:
        """Stop this trial's servers, run the teardown hook (when setup ran) and remove
        trial_dir. Returns what failed ('' when all went well); never raises."""
        problems: list[str] = []
        if self._connections:
            try:
                await self.runtime.host.run(self._stop_connections())
            except Exception as exc:  # stopping goes on
                problems.append(f"stopping servers: {exc}")
        teardown = self.runtime.file.hooks.teardown
        if teardown is not None and self._setup_done and self.dir is not None:
            try:
                await self._hook("teardown", teardown)
            except InfraError as exc:
                problems.append(str(exc))
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
        if self._token is not None:
            try:
                _current.reset(self._token)
            except ValueError:
                _current.set(None)
            self._token = None
        return "\n".join(problems)
