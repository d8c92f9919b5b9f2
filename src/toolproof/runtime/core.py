"""The runtime: everything live that a loaded suite needs beyond Python tools.

Python tools need nothing here: their state is the trial's copy of the world. Real systems
(MCP servers, HTTP services) live outside the process, so a suite that uses them gets a
`Runtime` when it is loaded, per run (from loading until `Suite.close()` or the end of the
process): the suite's `services` (started on 127.0.0.1 before anything else), MCP servers
without `per_trial`, and the HTTP clients of OpenAPI backends. Each trial gets its own
`TrialEnvironment` (`toolproof.runtime.trial`).

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
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from toolproof.errors import InfraError
from toolproof.runtime.host import Host
from toolproof.runtime.http import HTTPChannel, fetch_document
from toolproof.runtime.mcp import MCPConnection, MCPLaunch
from toolproof.runtime.processes import child_env, program
from toolproof.runtime.services import Service
from toolproof.runtime.trial import TrialEnvironment, trial_of
from toolproof.spec.backends import MCPBackend, OpenAPIBackend
from toolproof.spec.placeholders import (
    RUN_NAMES,
    TRIAL_NAMES,
    PlaceholderError,
    expand,
    expand_value,
    placeholders,
)
from toolproof.spec.suite import SuiteFile
from toolproof.tools.base import ToolContext, ToolResult
from toolproof.tools.mcp import DiscoveredTool

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

    def openapi_document(self, backend: str, read: Callable[[Path], bytes]) -> tuple[str, bytes]:
        """(where the OpenAPI document was read, its bytes), a suite file (read with `read`)
        or a URL."""
        spec = self.file.backends[backend]
        assert isinstance(spec, OpenAPIBackend)
        source = expand(spec.spec, self.variables)
        if source.startswith(("http://", "https://")):
            self.ensure_services()
        return fetch_document(source, self.root, read)

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
