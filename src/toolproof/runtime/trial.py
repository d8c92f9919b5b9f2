"""One trial's real-system environment: its trial_dir, hooks, per-trial servers and checks.

Per trial (`TrialEnvironment`): a fresh temporary `trial_dir`, the `setup` hook, MCP servers
with `per_trial` (started on the trial's first call of one of their tools), the task's
`check`s after the conversation, then the servers stop, the `teardown` hook runs and
`trial_dir` is removed. A failure of the environment (a dead service, a failing hook) raises
`InfraError`: the trial is `infra_error`, never the agent's failure.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolproof.errors import InfraError
from toolproof.runtime.functions import call_function
from toolproof.runtime.mcp import MCPConnection
from toolproof.runtime.processes import run_command, tail, with_stderr
from toolproof.spec.backends import HookSpec
from toolproof.spec.expectations import CheckSpec
from toolproof.spec.placeholders import PlaceholderError, expand
from toolproof.tools.base import ToolContext, ToolResult
from toolproof.transcript import CheckEvent
from toolproof.world import World

if TYPE_CHECKING:
    from toolproof.runtime.core import Runtime

TRIAL_KEY = "toolproof.trial"
"""Where a trial's environment is found in `ToolContext.extras`."""

TRIAL_PREFIX = "toolproof-trial-"

_current: contextvars.ContextVar[TrialEnvironment | None] = contextvars.ContextVar(
    "toolproof_trial", default=None
)


def trial_of(context: ToolContext | None) -> TrialEnvironment | None:
    """The trial environment a tool call belongs to: from its context, else the current one
    (a context rebuilt by the gateway, for `stale` faults, keeps no extras)."""
    if context is not None:
        found = context.extras.get(TRIAL_KEY)
        if isinstance(found, TrialEnvironment):
            return found
    return _current.get()


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
    world: World | None = None
    """The trial's world, of which hooks and checks that ask for `world` get a copy."""

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
            "world": self.world.fork() if self.world is not None else None,
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
            passed, message, errored = await self._check(check)
            events.append(
                CheckEvent(
                    t=started,
                    index=index,
                    name=check.label,
                    passed=passed,
                    message=message,
                    errored=errored,
                    duration_s=round(time.perf_counter() - clock, 6),
                )
            )
        return events

    async def _check(self, check: CheckSpec) -> tuple[bool, str, bool]:
        """(passed, message, errored): errored when the check could not decide (it raised,
        timed out or could not start), as opposed to finding the state wrong."""
        assert self.dir is not None
        if check.python is not None:
            func = self.runtime.functions[check.python]
            try:
                value = await call_function(func, self.values(), check.args, check.timeout_s)
            except TimeoutError:
                return False, f"did not finish within {check.timeout_s:g} s", True
            except AssertionError as exc:
                return False, str(exc) or "assertion failed", False
            except Exception as exc:
                return False, f"{type(exc).__name__}: {exc}", True
            if value is False:
                return False, "returned False", False
            return True, "holds", False
        assert check.command is not None
        try:
            argv = [expand(a, self.variables) for a in check.command]
            cwd = Path(expand(check.cwd, self.variables)) if check.cwd else self.dir
        except PlaceholderError as exc:
            return False, str(exc), True
        if not cwd.is_absolute():
            cwd = self.dir / cwd
        if not cwd.is_dir():
            return False, f"working folder {cwd} does not exist", True
        done = await asyncio.to_thread(run_command, argv, cwd, self.command_env(), check.timeout_s)
        output = done.stdout.strip()
        if done.code != check.expect_exit:
            detail = tail(done.stderr or done.stdout, 5)
            message = f"exit status {done.code}, expected {check.expect_exit}"
            # 124: timed out; 127: could not be started (`run_command`)
            errored = done.code in (124, 127)
            return False, f"{message}: {detail}" if detail else message, errored
        if check.stdout is not None and output != check.stdout.strip():
            return False, f"output {output!r}, expected {check.stdout.strip()!r}", False
        if check.stdout_contains is not None and check.stdout_contains not in done.stdout:
            found = tail(output, 3)
            return False, f"output {found!r} does not contain {check.stdout_contains!r}", False
        return True, "holds", False

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
