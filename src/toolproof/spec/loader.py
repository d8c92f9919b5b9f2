"""Loading a suite folder into a Suite, reporting every problem as `path:line: message`."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from pydantic import BaseModel, ValidationError

from toolproof.errors import InfraError, Problem, SuiteError
from toolproof.spec.models import MCPBackend, OpenAPIBackend, PythonBackend, SuiteFile, TaskSpec
from toolproof.spec.suite import Suite, Task, ToolBinding
from toolproof.spec.yamlload import LineDict, LineList, line_of, load_yaml
from toolproof.tools.base import Tool, ToolSchema
from toolproof.tools.python import tools_in
from toolproof.world import freeze

if TYPE_CHECKING:
    from toolproof.backends import Runtime

SUITE_FILE = "suite.yaml"
DATA_SUFFIXES = (".json", ".yaml", ".yml", ".json.gz")


def shown(path: Path) -> str:
    """A path as users typed it: relative to the working directory when possible."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def validation_problems(exc: ValidationError, data: Any, where: str) -> list[Problem]:
    """pydantic errors as located problems, one per place in the file."""
    problems: list[Problem] = []
    seen: set[tuple[int | None, str]] = set()
    for error in exc.errors():
        loc = _data_loc(data, error["loc"])
        line = line_of(data, loc)
        field = ".".join(str(p) for p in loc)
        kind = error["type"]
        if kind == "extra_forbidden":
            message = f"unknown field '{loc[-1]}'" + (
                f" in {'.'.join(map(str, loc[:-1]))}" if loc[:-1] else ""
            )
        elif kind == "missing":
            message = f"missing required field '{field}'"
        else:
            message = f"{field}: {error['msg']}" if field else error["msg"]
        key = (line, field)
        if key not in seen:
            seen.add(key)
            problems.append(Problem(where, line, message))
    return problems


def _data_loc(data: Any, loc: tuple[int | str, ...]) -> list[int | str]:
    """The parts of a pydantic location that name places in the data.

    pydantic adds the names of union members ('str', 'TaskSpec', 'list[str]') to locations;
    those are dropped. A last part absent from the data (a missing field) is kept.
    """
    kept: list[int | str] = []
    node = data
    for i, part in enumerate(loc):
        in_dict = isinstance(node, dict) and part in node
        in_list = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if in_dict or in_list:
            node = node[part]
        elif i < len(loc) - 1 or _is_union_tag(part):
            continue
        elif isinstance(node, dict) and node.get("type") == part:
            continue  # the tag of a discriminated union (a backend's type)
        kept.append(part)
    return kept


def _is_union_tag(part: int | str) -> bool:
    return isinstance(part, str) and (
        part in ("str", "int", "float", "bool", "dict", "list") or "[" in part or part[:1].isupper()
    )


def _validate(model: type[BaseModel], data: Any, where: str, problems: list[Problem]) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems.extend(validation_problems(exc, data, where))
        return None


class _Loading:
    """State of one load: the folder, the problems found so far, the files read."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.problems: list[Problem] = []
        self.warnings: list[str] = []
        self.files: dict[str, bytes] = {}
        self.modules: dict[Path, ModuleType] = {}
        self.task_ids: dict[str, str] = {}
        self.task_files: set[Path] = set()
        self.runtime: Runtime | None = None
        self.runtime_failed = False
        self.check_names: set[str] = set()
        self.functions: dict[str, Callable[..., Any]] = {}

    def problem(self, path: Path | str, line: int | None, message: str) -> None:
        where = shown(path) if isinstance(path, Path) else path
        self.problems.append(Problem(where, line, message))

    def read(self, path: Path) -> bytes:
        data = path.read_bytes()
        self.files[path.relative_to(self.root).as_posix()] = data
        return data

    def module(self, path: Path, at: tuple[Path, int | None]) -> ModuleType | None:
        if path in self.modules:
            return self.modules[path]
        if not path.is_file():
            self.problem(at[0], at[1], f"file not found: {shown(path)}")
            return None
        self.read(path)
        name = f"toolproof_suite_{hashlib.sha1(str(path).encode()).hexdigest()[:10]}"
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.path.insert(0, str(path.parent))
        try:
            sys.modules[name] = module
            spec.loader.exec_module(module)
        except SyntaxError as exc:
            self.problem(path, exc.lineno, f"cannot import: SyntaxError: {exc.msg}")
            return None
        except Exception as exc:
            frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == str(path)]
            line = frames[-1].lineno if frames else None
            self.problem(path, line, f"cannot import: {type(exc).__name__}: {exc}")
            return None
        finally:
            sys.path.remove(str(path.parent))
        self.modules[path] = module
        return module


def load_suite(path: str | Path) -> Suite:
    """Load and check a suite folder (or its suite.yaml); raises SuiteError with every problem."""
    given = Path(path)
    suite_path = given / SUITE_FILE if given.is_dir() else given
    root = suite_path.parent.resolve()
    suite_path = root / suite_path.name
    if not suite_path.is_file():
        raise SuiteError.at(shown(suite_path), None, "no suite here: suite.yaml not found")
    loading = _Loading(root)
    where = shown(suite_path)
    raw = load_yaml(suite_path, where)
    loading.read(suite_path)
    if not isinstance(raw, LineDict):
        raise SuiteError.at(where, 1, "suite.yaml must be a mapping of fields")
    task_entries = raw.get("tasks")
    head = _validate(SuiteFile, _without_tasks(raw), where, loading.problems)
    if "tasks" in raw and not isinstance(task_entries, list):
        loading.problem(suite_path, line_of(raw, ["tasks"]), "tasks must be a list")
    if head is None:
        _load_tasks(loading, task_entries if isinstance(task_entries, list) else [], raw)
        raise SuiteError(loading.problems)
    file: SuiteFile = head
    try:
        policy = _load_policy(loading, file, raw, suite_path)
        tools = _load_tools(loading, file, raw, suite_path)
        world = _load_world(loading, file, raw, suite_path)
        tasks = _load_tasks(loading, task_entries if isinstance(task_entries, list) else [], raw)
        if any(task.spec.expect.check for task in tasks):
            _runtime(loading, file, raw, suite_path)
        for task in tasks:
            _check_task(loading, task, tools, set(file.tools), world)
        if not loading.problems:
            _check_conditions(loading, file, raw, suite_path, tools)
        if loading.problems:
            raise SuiteError(loading.problems)
    except BaseException:
        if loading.runtime is not None:
            loading.runtime.close()
        raise
    digest = hashlib.sha256()
    for name in sorted(loading.files):
        digest.update(name.encode() + b"\0" + hashlib.sha256(loading.files[name]).digest())
    return Suite(
        root=root,
        file=file,
        policy=policy,
        tools=tools,
        tasks=tasks,
        world=world,
        content_hash=digest.hexdigest(),
        warnings=loading.warnings,
        runtime=loading.runtime,
    )


def _without_tasks(raw: LineDict) -> LineDict:
    """The suite mapping with tasks emptied (tasks are checked one by one, in their files)."""
    out = LineDict(raw)
    out.line, out.key_lines = raw.line, raw.key_lines
    if "tasks" in out:
        out["tasks"] = []
    return out


def _load_policy(loading: _Loading, file: SuiteFile, raw: LineDict, at: Path) -> str:
    if file.policy is None:
        return ""
    path = loading.root / file.policy
    try:
        return loading.read(path).decode("utf-8")
    except FileNotFoundError:
        loading.problem(at, line_of(raw, ["policy"]), f"policy file not found: {file.policy}")
    except (OSError, UnicodeDecodeError) as exc:
        loading.problem(at, line_of(raw, ["policy"]), f"cannot read policy: {exc}")
    return ""


def _backend_tools(
    loading: _Loading, file: SuiteFile, raw: LineDict, at: Path
) -> dict[str, dict[str, Tool]]:
    out: dict[str, dict[str, Tool]] = {}
    for name, backend in file.backends.items():
        if not isinstance(backend, PythonBackend):
            out[name] = _real_backend_tools(loading, file, raw, at, name)
            continue
        line = line_of(raw, ["backends", name, "module"])
        module = loading.module(loading.root / backend.module, (at, line))
        found: dict[str, Tool] = {}
        if module is not None:
            for python_tool in tools_in(vars(module)):
                found[python_tool.name] = python_tool
            if not found:
                loading.problem(
                    at, line, f"backend '{name}': no @tool functions in {backend.module}"
                )
        out[name] = found
    return out


def _runtime(loading: _Loading, file: SuiteFile, raw: LineDict, at: Path) -> Runtime | None:
    """The suite's live backends, made once: hooks resolved, services started. None when
    their configuration has problems (reported)."""
    if loading.runtime is not None or loading.runtime_failed:
        return loading.runtime
    from toolproof.backends import Runtime, template_problems, trial_names

    loading.check_names = trial_names(file)
    before = len(loading.problems)
    for loc, message in template_problems(file):
        loading.problem(at, line_of(raw, loc), message)
    for hook_name in ("setup", "teardown"):
        hook = getattr(file.hooks, hook_name)
        if hook is not None and hook.python is not None:
            line = line_of(raw, ["hooks", hook_name, "python"])
            _function(loading, hook.python, set(), (at, line))
    runtime = Runtime(loading.root, file, file.defaults.seed)
    runtime.functions = loading.functions
    if len(loading.problems) > before:
        loading.runtime_failed = True
        runtime.close()
        return None
    loading.runtime = runtime
    try:
        runtime.start_services()
    except InfraError as exc:
        failed = list(runtime.services)[-1]
        loading.problem(at, line_of(raw, ["services", failed]), str(exc))
        loading.runtime_failed = True
        loading.runtime = None
        runtime.close()
        return None
    return runtime


def _function(
    loading: _Loading,
    ref: str,
    args: set[str],
    at: tuple[Path | str, int | None],
) -> None:
    """Resolve a 'file.py:function' hook or check (for the runtime's `functions`)."""
    from toolproof.backends import signature_problem

    if ref in loading.functions:
        problem = signature_problem(loading.functions[ref], args)
        if problem:
            loading.problem(at[0], at[1], problem)
        return
    file_part, _, func_name = ref.partition(":")
    if not func_name:
        loading.problem(at[0], at[1], f"give 'file.py:function', got '{ref}'")
        return
    module = loading.module(loading.root / file_part, (Path(at[0]), at[1]))
    if module is None:
        return
    func = getattr(module, func_name, None)
    if not callable(func):
        loading.problem(at[0], at[1], f"no function '{func_name}' in {file_part}")
        return
    problem = signature_problem(func, args)
    if problem:
        loading.problem(at[0], at[1], problem)
        return
    loading.functions[ref] = func


def _real_backend_tools(
    loading: _Loading, file: SuiteFile, raw: LineDict, at: Path, name: str
) -> dict[str, Tool]:
    """The tools of an MCP or OpenAPI backend, discovered from the live system."""
    backend = file.backends[name]
    runtime = _runtime(loading, file, raw, at)
    if runtime is None:
        return {}
    line = line_of(raw, ["backends", name])
    if isinstance(backend, MCPBackend):
        from toolproof.tools.mcp import MCPTool

        try:
            served = runtime.discover_mcp(name)
        except InfraError as exc:
            loading.problem(at, line, f"backend '{name}': {exc}")
            return {}
        blob = json.dumps([t.as_json() for t in served], sort_keys=True).encode()
        loading.files[f"<backend {name}: tools/list>"] = blob
        found: dict[str, Tool] = {
            t.name: MCPTool(t, name, set(backend.bind), runtime) for t in served
        }
        for key in backend.bind:
            if not any(key in (t.input_schema.get("properties") or {}) for t in served):
                loading.warnings.append(f"backend '{name}': bind '{key}' matches no tool argument")
        if not found:
            loading.problem(at, line, f"backend '{name}': the server lists no tools")
        return found
    assert isinstance(backend, OpenAPIBackend)
    from toolproof.backends import expand
    from toolproof.tools.openapi import DocumentError, base_url_of, build_tools, parse_document

    spec_line = line_of(raw, ["backends", name, "spec"])
    try:
        source, data = runtime.openapi_document(name)
        document = parse_document(data)
    except DocumentError as exc:
        loading.problem(at, spec_line, f"backend '{name}': {exc}")
        return {}
    try:
        loading.files[Path(source).resolve().relative_to(loading.root).as_posix()] = data
    except ValueError:
        loading.files[f"<backend {name}: {source}>"] = data
    servers = [
        s["url"] for s in document.get("servers") or [] if isinstance(s, dict) and "url" in s
    ]
    configured = expand(backend.base_url, runtime.variables) if backend.base_url else None
    base_url = base_url_of(configured, servers, source)
    if base_url is None:
        loading.problem(
            at, line, f"backend '{name}': give base_url (the document names no absolute server URL)"
        )
        return {}
    tools, warnings = build_tools(document, base_url, runtime.channel(name))
    loading.warnings.extend(f"backend '{name}': {w}" for w in warnings)
    if not tools:
        loading.problem(at, spec_line, f"backend '{name}': the document has no operations")
    return {tool.name: tool for tool in tools}


def _check_task_checks(
    loading: _Loading, task: Task, tools: dict[str, ToolBinding], at: Callable[..., int | None]
) -> None:
    """A task's `check`s must be runnable, and gold actions on real systems need them."""
    from toolproof.backends import template_problem

    expect = task.spec.expect
    for i, check in enumerate(expect.check):
        line = at("expect", "check", i)
        if check.python is not None:
            _function(loading, check.python, set(check.args), (task.source, line))
            continue
        problem = template_problem(check.command, loading.check_names) or template_problem(
            check.cwd, loading.check_names
        )
        if problem:
            loading.problem(task.source, line, problem)
    real = sorted(
        {a.tool for a in expect.actions or [] if a.tool in tools and not tools[a.tool].simulated}
    )
    if real and not expect.check:
        loading.problem(
            task.source,
            at("expect", "actions"),
            f"task '{task.id}': its gold actions call tools of real systems "
            f"({', '.join(real)}), whose effects the world hash cannot see; give `check` "
            "expectations that verify the final state (a task that cannot fail proves nothing)",
        )


def _load_tools(
    loading: _Loading, file: SuiteFile, raw: LineDict, at: Path
) -> dict[str, ToolBinding]:
    backends = _backend_tools(loading, file, raw, at)
    for backend_name, backend_tools in backends.items():
        for tool_name in backend_tools:
            if tool_name not in file.tools:
                loading.warnings.append(
                    f"backend '{backend_name}': tool '{tool_name}' is not in the spectra, "
                    "so no agent sees it"
                )
    bindings: dict[str, ToolBinding] = {}
    for name, entry in file.tools.items():
        line = line_of(raw, ["tools", name])
        backend = entry.backend
        if backend is None:
            if len(file.backends) != 1:
                loading.problem(at, line, f"tool '{name}': say which backend (there are several)")
                continue
            backend = next(iter(file.backends))
        if backend not in backends:
            loading.problem(at, line, f"tool '{name}': unknown backend '{backend}'")
            continue
        tool = backends[backend].get(name)
        if tool is None:
            if backends[backend]:
                known = ", ".join(sorted(backends[backend]))
                loading.problem(
                    at, line, f"tool '{name}' not found in backend '{backend}' (it has: {known})"
                )
            continue
        parameters = entry.parameters or tool.schema.parameters
        if entry.parameters is not None:
            try:
                Draft202012Validator.check_schema(entry.parameters)
            except SchemaError as exc:
                loading.problem(
                    at,
                    line_of(raw, ["tools", name, "parameters"]),
                    f"bad JSON Schema: {exc.message}",
                )
        schema = ToolSchema(
            name=name,
            description=entry.description or tool.schema.description,
            parameters=parameters,
        )
        bindings[name] = ToolBinding(
            tool=tool,
            schema=schema,
            tier=entry.tier,
            weight=entry.weight,
            write=tool.write if entry.write is None else entry.write,
            backend=backend,
            simulated=getattr(tool, "simulated", True),
        )
    return bindings


def _load_world(loading: _Loading, file: SuiteFile, raw: LineDict, at: Path) -> Any:
    data: dict[str, Any] = {}
    for i, item in enumerate(file.world.data):
        line = line_of(raw, ["world", "data", i])
        path = loading.root / item
        files = (
            sorted(p for p in path.iterdir() if p.name.endswith(DATA_SUFFIXES))
            if path.is_dir()
            else [path]
        )
        if not path.exists():
            loading.problem(at, line, f"world data not found: {item}")
            continue
        for data_file in files:
            content = _load_data_file(loading, data_file)
            if content is not None:
                data[data_file.name.split(".")[0]] = content
    if file.world.factory:
        line = line_of(raw, ["world", "factory"])
        made = _call_factory(loading, file.world.factory, data, (at, line))
        if made is not None:
            data.update(made)
    try:
        return freeze(data)
    except TypeError as exc:
        loading.problem(at, line_of(raw, ["world"]), f"world: {exc}")
        return freeze({})


def _load_data_file(loading: _Loading, path: Path) -> Any:
    if path.name.endswith(".json.gz"):
        import gzip

        try:
            return json.loads(gzip.decompress(loading.read(path)))
        except (OSError, ValueError) as exc:
            loading.problem(path, None, f"cannot read: {exc}")
            return None
    if path.suffix == ".json":
        try:
            return json.loads(loading.read(path))
        except json.JSONDecodeError as exc:
            loading.problem(path, exc.lineno, f"JSON syntax error: {exc.msg}")
            return None
    if path.suffix in (".yaml", ".yml"):
        try:
            loading.read(path)
            return load_yaml(path, shown(path))
        except SuiteError as exc:
            loading.problems.extend(exc.problems)
            return None
    loading.problem(path, None, "world data files are .json, .json.gz, .yaml or .yml")
    return None


def _call_factory(
    loading: _Loading, ref: str, data: dict[str, Any], at: tuple[Path, int | None]
) -> dict[str, Any] | None:
    file_part, _, func_name = ref.partition(":")
    if not func_name:
        loading.problem(at[0], at[1], f"factory must be 'file.py:function', got '{ref}'")
        return None
    module = loading.module(loading.root / file_part, at)
    if module is None:
        return None
    factory: Callable[..., Any] | None = getattr(module, func_name, None)
    if not callable(factory):
        loading.problem(at[0], at[1], f"no function '{func_name}' in {file_part}")
        return None
    try:
        made = factory(data) if factory.__code__.co_argcount else factory()
    except Exception as exc:
        loading.problem(at[0], at[1], f"world factory failed: {type(exc).__name__}: {exc}")
        return None
    if not isinstance(made, dict):
        loading.problem(at[0], at[1], "world factory must return a dict")
        return None
    return made


def _load_tasks(loading: _Loading, entries: list[Any], raw: LineDict) -> list[Task]:
    tasks: list[Task] = []
    suite_where = shown(loading.root / SUITE_FILE)
    for i, entry in enumerate(entries):
        line = line_of(raw, ["tasks", i])
        if isinstance(entry, str):
            matches = sorted(loading.root.glob(entry))
            if not matches:
                loading.problem(suite_where, line, f"no task files match '{entry}'")
            for path in matches:
                if path in loading.task_files:
                    loading.problem(
                        suite_where, line, f"{shown(path)} is already included by an earlier entry"
                    )
                    continue
                loading.task_files.add(path)
                tasks.extend(_load_task_file(loading, path))
        elif isinstance(entry, dict):
            task = _parse_task(loading, entry, suite_where, ["tasks", i], raw)
            if task is not None:
                tasks.append(task)
        else:
            loading.problem(suite_where, line, "a task entry is a file glob or a task mapping")
    return tasks


def _load_task_file(loading: _Loading, path: Path) -> list[Task]:
    where = shown(path)
    try:
        data = load_yaml(path, where)
    except SuiteError as exc:
        loading.problems.extend(exc.problems)
        return []
    loading.read(path)
    if isinstance(data, LineDict):
        found = _parse_task(loading, data, where, [], data)
        return [found] if found else []
    if isinstance(data, LineList):
        out = []
        for i, item in enumerate(data):
            if not isinstance(item, dict):
                loading.problem(where, data.item_lines[i], "each task is a mapping")
                continue
            found = _parse_task(loading, item, where, [i], data)
            if found:
                out.append(found)
        return out
    loading.problem(where, 1, "a task file holds one task (a mapping) or a list of tasks")
    return []


def _parse_task(loading: _Loading, data: Any, where: str, loc: list[Any], doc: Any) -> Task | None:
    try:
        spec = TaskSpec.model_validate(data)
    except ValidationError as exc:
        for problem in validation_problems(exc, data, where):
            loading.problems.append(problem)
        return None
    blob = json.dumps(spec.model_dump(mode="json"), sort_keys=True).encode()
    return Task(
        spec=spec,
        source=where,
        line=line_of(doc, loc),
        lines=data if isinstance(data, LineDict) else LineDict(),
        content_hash=hashlib.sha256(blob).hexdigest()[:16],
    )


def _check_task(
    loading: _Loading, task: Task, tools: dict[str, ToolBinding], declared: set[str], world: Any
) -> None:
    """Semantic checks of one task. A tool declared in the spectra that did not load (its
    problem is already reported) is not reported again as unknown."""
    spec = task.spec
    if spec.id in loading.task_ids:
        first = loading.task_ids[spec.id]
        loading.problem(task.source, task.line, f"duplicate task id '{spec.id}' (first at {first})")
    else:
        loading.task_ids[spec.id] = f"{task.source}:{task.line}"

    def at(*loc: Any) -> int | None:
        return line_of(task.lines, list(loc)) or task.line

    expect = spec.expect
    if expect.is_empty():
        loading.problem(
            task.source,
            at("expect"),
            f"task '{spec.id}' has no expectations; a task that cannot fail proves nothing "
            "(give actions, state, calls, forbidden_calls, must_say or must_not_say)",
        )
    groups: list[tuple[str, list[Any]]] = [
        ("actions", list(expect.actions or [])),
        ("calls", list(expect.calls)),
        ("forbidden_calls", list(expect.forbidden_calls)),
    ]
    for group, calls in groups:
        for i, call in enumerate(calls):
            binding = tools.get(call.tool)
            line = at("expect", group, i, "tool")
            if binding is None:
                if call.tool not in declared:
                    loading.problem(task.source, line, f"unknown tool '{call.tool}' in {group}")
                continue
            if group == "actions":
                for issue in binding.tool.check_arguments(dict(call.args)):
                    loading.problem(
                        task.source, at("expect", group, i, "args"), f"{call.tool}: {issue}"
                    )
            else:
                known = set(binding.schema.parameters.get("properties", {}))
                for arg in call.args:
                    if arg not in known:
                        loading.problem(
                            task.source,
                            at("expect", group, i, "args", arg),
                            f"{call.tool} has no argument '{arg}'",
                        )
    _check_task_checks(loading, task, tools, at)
    for key in spec.initial_state:
        if key not in world:
            loading.problem(
                task.source,
                at("initial_state", key),
                f"initial_state names '{key}', which the world does not have",
            )


def _check_conditions(
    loading: _Loading, file: SuiteFile, raw: LineDict, at: Path, tools: dict[str, ToolBinding]
) -> None:
    """Fault profiles, drift variants, load and score must name what the suite has."""
    from toolproof.gateway.drift import DriftError, DriftLayer

    faults = file.faults
    if faults.refresh_tool and faults.refresh_tool not in tools:
        line = line_of(raw, ["faults", "refresh_tool"])
        loading.problem(at, line, f"refresh_tool '{faults.refresh_tool}' is not in the spectra")
    for name, rules in faults.profiles.items():
        for i, rule in enumerate(rules):
            for tool in rule.tools or []:
                if tool not in tools:
                    line = line_of(raw, ["faults", "profiles", name, i, "tools"])
                    loading.problem(at, line, f"fault profile '{name}': unknown tool '{tool}'")
            if rule.kind == "token_expired" and not faults.refresh_tool:
                line = line_of(raw, ["faults", "profiles", name, i])
                loading.problem(
                    at, line, f"fault profile '{name}': token_expired needs faults.refresh_tool"
                )
    schemas = {name: b.schema for name, b in tools.items()}
    for name, transforms in file.drift.items():
        try:
            DriftLayer(list(transforms), schemas)
        except DriftError as exc:
            loading.problem(at, line_of(raw, ["drift", name]), f"drift variant '{name}': {exc}")
    if file.load:
        for tool in file.load.capacity:
            if tool != "*" and tool not in tools:
                line = line_of(raw, ["load", "capacity", tool])
                loading.problem(at, line, f"load capacity for unknown tool '{tool}'")
    score = file.score
    if score.faults and score.faults not in faults.profiles:
        line = line_of(raw, ["score", "faults"])
        loading.problem(at, line, f"score.faults: no fault profile '{score.faults}'")
    for variant in score.drift or []:
        if variant not in file.drift:
            line = line_of(raw, ["score", "drift"])
            loading.problem(at, line, f"score.drift: no drift variant '{variant}'")
