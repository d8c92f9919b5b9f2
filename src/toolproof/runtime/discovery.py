"""Discovery: the live half of loading a suite, in one call (`discover`).

Reading a suite's files (`toolproof.spec.read`) runs nothing. Discovery then does what needs
the suite's code or its live systems: it imports the suite's Python files (tools, hooks,
checks, the world factory), asks each backend for its tools through the kind registered for
its `type` (`toolproof.runtime.kinds`), starts the run's services, and makes the suite's
`Runtime` when it has real backends or final-state checks. Every problem is added to the
source, located, so a suite's problems are still reported all at once.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from toolproof.errors import InfraError, UsageError
from toolproof.runtime.core import Runtime
from toolproof.runtime.functions import signature_problem
from toolproof.spec.files import FileProblem
from toolproof.spec.placeholders import template_problems
from toolproof.spec.source import SuiteSource, shown
from toolproof.spec.suite import SuiteFile
from toolproof.tools.base import Tool
from toolproof.tools.guard import ProcessExit, exits_refused, interrupts_marked, raised_inside


@dataclass
class Discovered:
    """What discovery found: each backend's tools, the world, the live runtime (if any)."""

    tools: dict[str, dict[str, Tool]] = field(default_factory=dict)
    world: dict[str, Any] = field(default_factory=dict)
    runtime: Runtime | None = None


class Discovery:
    """One discovery's state: the source it reports into, imported modules, the runtime."""

    def __init__(self, source: SuiteSource, file: SuiteFile) -> None:
        self.source = source
        self.file = file
        self.root = source.root
        self.modules: dict[Path, ModuleType] = {}
        self.functions: dict[str, Callable[..., Any]] = {}
        self._runtime: Runtime | None = None
        self._runtime_failed = False

    def problem(self, loc: list[str | int], message: str) -> None:
        """A problem at a place in suite.yaml."""
        self.source.suite_problem(loc, message)

    def warn(self, message: str) -> None:
        self.source.warnings.append(message)

    def module(self, path: Path, at: tuple[str, int | None]) -> ModuleType | None:
        """Import a Python file of the suite once; its problems are located in it (or at
        `at`, where the file is named, when it is missing)."""
        if path in self.modules:
            return self.modules[path]
        try:
            self.source.read(path)
        except FileProblem as exc:
            missing = str(exc) == "file not found"
            message = f"file not found: {shown(path)}" if missing else f"{shown(path)}: {exc}"
            self.source.problem(at[0], at[1], message)
            return None
        name = f"toolproof_suite_{hashlib.sha1(str(path).encode()).hexdigest()[:10]}"
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.path.insert(0, str(path.parent))
        try:
            sys.modules[name] = module
            with exits_refused(), interrupts_marked():
                spec.loader.exec_module(module)
        except SyntaxError as exc:
            self.source.problem(path, exc.lineno, f"cannot import: SyntaxError: {exc.msg}")
            return None
        except KeyboardInterrupt as exc:
            if not raised_inside(exc, path.parent):
                raise  # Ctrl-C
            self._unimportable(path, exc, "it raises KeyboardInterrupt")
            return None
        except (Exception, SystemExit, ProcessExit) as exc:  # none of them ends the command
            self._unimportable(path, exc, _why(exc))
            return None
        finally:
            sys.path.remove(str(path.parent))
        self.modules[path] = module
        return module

    def _unimportable(self, path: Path, exc: BaseException, what: str) -> None:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == str(path)]
        line = frames[-1].lineno if frames else None
        self.source.problem(path, line, f"cannot import: {what}")

    def function(self, ref: str, args: set[str], at: tuple[str, int | None]) -> None:
        """Resolve a 'file.py:function' hook or check into `functions`, checking that it can
        be called with `args` and what toolproof injects."""
        if ref in self.functions:
            problem = signature_problem(self.functions[ref], args)
            if problem:
                self.source.problem(at[0], at[1], problem)
            return
        func = self.callable(ref, at)
        if func is None:
            return
        problem = signature_problem(func, args)
        if problem:
            self.source.problem(at[0], at[1], problem)
            return
        self.functions[ref] = func

    def callable(self, ref: str, at: tuple[str, int | None]) -> Callable[..., Any] | None:
        """The function a 'file.py:function' reference names, or None (reported)."""
        file_part, _, func_name = ref.partition(":")
        if not func_name:
            self.source.problem(at[0], at[1], f"give 'file.py:function', got '{ref}'")
            return None
        module = self.module(self.root / file_part, at)
        if module is None:
            return None
        func = getattr(module, func_name, None)
        if not callable(func):
            self.source.problem(at[0], at[1], f"no function '{func_name}' in {file_part}")
            return None
        return func  # type: ignore[no-any-return]

    def runtime(self) -> Runtime | None:
        """The suite's live runtime, made once: placeholders checked, hooks resolved,
        services started. None when their configuration has problems (reported)."""
        if self._runtime is not None or self._runtime_failed:
            return self._runtime
        before = len(self.source.problems)
        for loc, message in template_problems(self.file):
            self.problem(loc, message)
        for hook_name in ("setup", "teardown"):
            hook = getattr(self.file.hooks, hook_name)
            if hook is not None and hook.python is not None:
                line = self.source.line("hooks", hook_name, "python")
                self.function(hook.python, set(), (self.source.where, line))
        runtime = Runtime(self.root, self.file, self.file.defaults.seed)
        runtime.functions = self.functions
        if len(self.source.problems) > before:
            self._runtime_failed = True
            runtime.close()
            return None
        self._runtime = runtime
        try:
            runtime.start_services()
        except InfraError as exc:
            failed = list(runtime.services)[-1]
            self.problem(["services", failed], str(exc))
            self._runtime_failed = True
            self._runtime = None
            runtime.close()
            return None
        return runtime

    @property
    def made(self) -> Runtime | None:
        """The runtime, if something needed one."""
        return self._runtime

    def close(self) -> None:
        """Stop what discovery started (on a failed load)."""
        if self._runtime is not None:
            self._runtime.close()


def discover(source: SuiteSource) -> Discovered:
    """The live half of loading: each backend's tools, the world (data files, then the
    factory), the hook and check functions, and the runtime when the suite needs one.
    Problems are added to `source`; what was started is stopped again if there are any."""
    from toolproof.runtime.kinds import KINDS

    assert source.file is not None, "discover a suite whose suite.yaml validated"
    file = source.file
    discovery = Discovery(source, file)
    found = Discovered()
    try:
        for name, backend in file.backends.items():
            try:
                kind = KINDS.get(backend.type, where=f"backend '{name}'")
            except UsageError as exc:  # a kind no installed package adds, or one that fails
                discovery.problem(["backends", name, "type"], str(exc))
                found.tools[name] = {}
                continue
            found.tools[name] = kind(discovery, name, backend)
        found.world = {**source.data, **_factory(discovery, file)}
        checks = [(t, i, c) for t in source.tasks for i, c in enumerate(t.spec.expect.check)]
        if checks:
            discovery.runtime()
        for task, i, check in checks:
            if check.python is not None:
                at = (task.source, task.at("expect", "check", i))
                discovery.function(check.python, set(check.args), at)
        found.runtime = discovery.made
    except BaseException:
        discovery.close()
        raise
    if source.problems:
        discovery.close()
        found.runtime = None
    return found


def _why(exc: BaseException) -> str:
    """What a module did instead of being imported."""
    if isinstance(exc, SystemExit):
        return f"it calls sys.exit({exc.code!r})"
    if isinstance(exc, ProcessExit):
        return f"it calls os._exit({exc.code!r})"
    return f"{type(exc).__name__}: {exc}"


def _factory(discovery: Discovery, file: SuiteFile) -> dict[str, Any]:
    """What the world factory makes, merged over the data files (empty without one)."""
    ref = file.world.factory
    if not ref:
        return {}
    at = (discovery.source.where, discovery.source.line("world", "factory"))
    if ":" not in ref:
        discovery.source.problem(at[0], at[1], f"factory must be 'file.py:function', got '{ref}'")
        return {}
    factory = discovery.callable(ref, at)
    if factory is None:
        return {}
    try:
        made = factory(discovery.source.data) if factory.__code__.co_argcount else factory()
    except Exception as exc:
        discovery.source.problem(at[0], at[1], f"world factory failed: {type(exc).__name__}: {exc}")
        return {}
    if not isinstance(made, dict):
        discovery.source.problem(at[0], at[1], "world factory must return a dict")
        return {}
    return made
