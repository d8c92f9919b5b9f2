"""Reading a suite folder: suite.yaml, the policy, world data files and tasks, every problem
located as `path:line: message`. Nothing here runs the suite's code or reaches a live system;
that is the runtime's part of loading (`toolproof.runtime.discover`)."""

from __future__ import annotations

import gzip
import hashlib
import json
import zlib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from toolproof.errors import SuiteError
from toolproof.spec.models import SuiteFile, TaskSpec
from toolproof.spec.source import (
    SUITE_FILE,
    SuiteSource,
    Task,
    shown,
    validate,
    validation_problems,
)
from toolproof.spec.yamlload import MAX_DEPTH, LineDict, LineList, line_of, load_yaml, too_deep

DATA_SUFFIXES = (".json", ".yaml", ".yml", ".json.gz")


def read_suite(path: str | Path) -> SuiteSource:
    """A suite folder (or its suite.yaml) as its files say, with every problem found.

    Raises SuiteError only when there is nothing to read on from: no suite.yaml, or one that
    is not YAML or not a mapping."""
    given = Path(path)
    suite_path = given / SUITE_FILE if given.is_dir() else given
    root = suite_path.parent.resolve()
    suite_path = root / suite_path.name
    if not suite_path.is_file():
        raise SuiteError.at(shown(suite_path), None, "no suite here: suite.yaml not found")
    where = shown(suite_path)
    raw = load_yaml(suite_path, where)
    source = SuiteSource(
        root=root, path=suite_path, raw=raw if isinstance(raw, LineDict) else LineDict()
    )
    source.read(suite_path)
    if not isinstance(raw, LineDict):
        raise SuiteError.at(where, 1, "suite.yaml must be a mapping of fields")
    entries = raw.get("tasks")
    source.file = _suite_file(source, _without_tasks(raw))
    if "tasks" in raw and not isinstance(entries, list):
        source.suite_problem(["tasks"], "tasks must be a list")
    if source.file is not None:
        source.policy = _policy(source, source.file)
        source.data = _world_data(source, source.file)
    source.tasks = _tasks(source, entries if isinstance(entries, list) else [])
    return source


# Sections that no other part of a suite is checked against but the score: when only such
# sections (or unknown ones) do not validate, the rest of the suite is still loaded and
# checked, so its problems come in the same pass. Unsound faults or drift take the score
# (which names them) along, so that it is not reported against what was left out.
DETACHABLE = frozenset(
    {"description", "version", "defaults", "models", "prices", "gate", "load", "policy_rules"}
    | {"faults", "drift", "score"}
)


def _suite_file(source: SuiteSource, raw: LineDict) -> SuiteFile | None:
    """suite.yaml as a SuiteFile. When only detachable sections are unsound, their problems
    are reported and the file is read without them (so `source.problems` is not empty and
    the suite never runs); otherwise None."""
    try:
        return SuiteFile.model_validate(raw)
    except ValidationError as exc:
        source.problems.extend(validation_problems(exc, raw, source.where))
        errors = [(error["loc"], error["type"]) for error in exc.errors()]
    unknown = {str(loc[0]) for loc, kind in errors if len(loc) == 1 and kind == "extra_forbidden"}
    broken = {str(loc[0]) if loc else "" for loc, _ in errors} - unknown
    if not broken <= DETACHABLE:
        return None
    dropped = broken | unknown | ({"score"} if broken & {"faults", "drift"} else set())
    rest = LineDict({key: value for key, value in raw.items() if key not in dropped})
    rest.line, rest.key_lines = raw.line, raw.key_lines
    partial: SuiteFile | None = validate(SuiteFile, rest, source.where, [])
    return partial


def _without_tasks(raw: LineDict) -> LineDict:
    """The suite mapping with tasks emptied (tasks are checked one by one, in their files)."""
    out = LineDict(raw)
    out.line, out.key_lines = raw.line, raw.key_lines
    if "tasks" in out:
        out["tasks"] = []
    return out


def _policy(source: SuiteSource, file: SuiteFile) -> str:
    if file.policy is None:
        return ""
    try:
        return source.read(source.root / file.policy).decode("utf-8")
    except FileNotFoundError:
        source.suite_problem(["policy"], f"policy file not found: {file.policy}")
    except (OSError, UnicodeDecodeError) as exc:
        source.suite_problem(["policy"], f"cannot read policy: {exc}")
    return ""


def _world_data(source: SuiteSource, file: SuiteFile) -> dict[str, Any]:
    """The world's data files, each a top-level key (its stem); the factory runs later."""
    data: dict[str, Any] = {}
    for i, item in enumerate(file.world.data):
        path = source.root / item
        if not path.exists():
            source.suite_problem(["world", "data", i], f"world data not found: {item}")
            continue
        files = (
            sorted(p for p in path.iterdir() if p.name.endswith(DATA_SUFFIXES))
            if path.is_dir()
            else [path]
        )
        for data_file in files:
            content = _data_file(source, data_file)
            if content is not None:
                data[data_file.name.split(".")[0]] = content
    return data


def _data_file(source: SuiteSource, path: Path) -> Any:
    """A world data file's content (a mapping or a list, as JSON or YAML), or None with its
    problem reported. JSON nested deeper than `MAX_DEPTH` levels is refused, as YAML is."""
    content = _data_content(source, path)
    if too_deep(content):
        source.problem(path, None, f"nesting deeper than {MAX_DEPTH} levels")
        return None
    return content


def _data_content(source: SuiteSource, path: Path) -> Any:
    if path.name.endswith(".json.gz"):
        try:
            return json.loads(gzip.decompress(source.read(path)))
        except RecursionError:
            source.problem(path, None, f"nesting deeper than {MAX_DEPTH} levels")
            return None
        except (OSError, EOFError, ValueError, zlib.error) as exc:  # a damaged .gz too
            source.problem(path, None, f"cannot read: {exc}")
            return None
    if path.suffix == ".json":
        try:
            return json.loads(source.read(path))
        except RecursionError:
            source.problem(path, None, f"nesting deeper than {MAX_DEPTH} levels")
            return None
        except json.JSONDecodeError as exc:
            source.problem(path, exc.lineno, f"JSON syntax error: {exc.msg}")
            return None
    if path.suffix in (".yaml", ".yml"):
        try:
            source.read(path)
            return load_yaml(path, shown(path))
        except SuiteError as exc:
            source.problems.extend(exc.problems)
            return None
    source.problem(path, None, "world data files are .json, .json.gz, .yaml or .yml")
    return None


def _tasks(source: SuiteSource, entries: list[Any]) -> list[Task]:
    tasks: list[Task] = []
    included: set[Path] = set()
    for i, entry in enumerate(entries):
        if isinstance(entry, str):
            matches = sorted(source.root.glob(entry))
            if not matches:
                source.suite_problem(["tasks", i], f"no task files match '{entry}'")
            for path in matches:
                if path in included:
                    source.suite_problem(
                        ["tasks", i], f"{shown(path)} is already included by an earlier entry"
                    )
                    continue
                included.add(path)
                tasks.extend(_task_file(source, path))
        elif isinstance(entry, dict):
            task = _task(source, entry, source.where, ["tasks", i], source.raw)
            if task is not None:
                tasks.append(task)
        else:
            source.suite_problem(["tasks", i], "a task entry is a file glob or a task mapping")
    return tasks


def _task_file(source: SuiteSource, path: Path) -> list[Task]:
    where = shown(path)
    try:
        data = load_yaml(path, where)
    except SuiteError as exc:
        source.problems.extend(exc.problems)
        return []
    source.read(path)
    if isinstance(data, LineDict):
        found = _task(source, data, where, [], data)
        return [found] if found else []
    if isinstance(data, LineList):
        out = []
        for i, item in enumerate(data):
            if not isinstance(item, dict):
                source.problem(where, data.item_lines[i], "each task is a mapping")
                continue
            found = _task(source, item, where, [i], data)
            if found:
                out.append(found)
        return out
    source.problem(where, 1, "a task file holds one task (a mapping) or a list of tasks")
    return []


def _task(source: SuiteSource, data: Any, where: str, loc: list[Any], doc: Any) -> Task | None:
    try:
        spec = TaskSpec.model_validate(data)
    except ValidationError as exc:
        source.problems.extend(validation_problems(exc, data, where))
        return None
    blob = json.dumps(spec.model_dump(mode="json"), sort_keys=True).encode()
    return Task(
        spec=spec,
        source=where,
        line=line_of(doc, loc),
        lines=data if isinstance(data, LineDict) else LineDict(),
        content_hash=hashlib.sha256(blob).hexdigest()[:16],
    )
