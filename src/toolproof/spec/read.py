"""Reading a suite folder: suite.yaml, the policy, world data files and tasks, every problem
located as `path:line: message`. Nothing here runs the suite's code or reaches a live system;
that is the runtime's part of loading (`toolproof.runtime.discover`)."""

from __future__ import annotations

import hashlib
import json
import os
import zlib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from toolproof.errors import SuiteError
from toolproof.spec.files import FileProblem, gunzip, read_file
from toolproof.spec.policy import RULE_MODELS, RuleModels
from toolproof.spec.source import SUITE_FILE, SuiteSource, shown, validate, validation_problems
from toolproof.spec.suite import SuiteFile
from toolproof.spec.task import Task, TaskSpec
from toolproof.spec.user import PERSONA_NAMES, Names
from toolproof.spec.yamlload import MAX_DEPTH, LineDict, LineList, line_of, load_yaml, too_deep

DATA_SUFFIXES = (".json", ".yaml", ".yml", ".json.gz")


def read_suite(
    path: str | Path, rules: RuleModels | None = None, personas: Names | None = None
) -> SuiteSource:
    """A suite folder (or its suite.yaml) as its files say, with every problem found.
    `rules` reads each entry of `policy_rules:` by its rule's own model (without it they are
    kept as given: `UnresolvedRule`); `personas` are those a suite's own may `use:` (without
    it, the built-ins).

    Raises SuiteError only when there is nothing to read on from: no suite.yaml, or one that
    is not YAML or not a mapping."""
    given = Path(path)
    suite_path = given / SUITE_FILE if given.is_dir() else given
    root = suite_path.parent.resolve()
    suite_path = root / suite_path.name
    if not os.path.lexists(suite_path):
        raise SuiteError.at(shown(suite_path), None, "no suite here: suite.yaml not found")
    where = shown(suite_path)
    try:
        text = read_file(suite_path)
    except FileProblem as exc:
        raise SuiteError.at(where, None, str(exc)) from None
    raw = load_yaml(suite_path, where, text)
    source = SuiteSource(
        root=root, path=suite_path, raw=raw if isinstance(raw, LineDict) else LineDict()
    )
    source.record(suite_path, text)
    if not isinstance(raw, LineDict):
        raise SuiteError.at(where, 1, "suite.yaml must be a mapping of fields")
    _old_names(source, raw)
    entries = raw.get("tasks")
    source.file = _suite_file(source, _without_tasks(raw), _registered(rules, personas))
    if "tasks" in raw and not isinstance(entries, list):
        source.suite_problem(["tasks"], "tasks must be a list")
    if source.file is not None:
        source.policy = _policy(source, source.file)
        source.data = _world_data(source, source.file)
    source.tasks = _tasks(source, entries if isinstance(entries, list) else [])
    return source


OLD_NAMES = {"spectra": "tools"}
"""Keys suite.yaml once spelt otherwise: the old name, still read, and the name it is now."""


def _old_names(source: SuiteSource, raw: LineDict) -> None:
    """Read each old key as its new name, in place and with its line (so everything later
    locates it as written). A suite giving both is a located error."""
    for old, new in OLD_NAMES.items():
        if old not in raw:
            continue
        if new in raw:
            source.suite_problem(
                [old], f"'{old}:' is the old name of '{new}:'; give the list once, under '{new}:'"
            )
            del raw[old]
            continue
        raw[new] = raw.pop(old)
        raw.key_lines[new] = raw.key_lines.pop(old)
        source.warnings.append(
            f"{source.where}:{raw.key_lines[new]}: '{old}:' is the old name of '{new}:'; "
            f"it is read as '{new}:', rename it"
        )


# Sections that no other part of a suite is checked against but the score: when only such
# sections (or unknown ones) do not validate, the rest of the suite is still loaded and
# checked, so its problems come in the same pass. Unsound faults or drift take the score
# (which names them) along, so that it is not reported against what was left out.
DETACHABLE = frozenset(
    {"description", "version", "defaults", "models", "prices", "gate", "load", "policy_rules"}
    | {"faults", "drift", "score"}
)


def _registered(rules: RuleModels | None, personas: Names | None) -> dict[str, Any]:
    """The validation context that reads a suite's policy rules and personas by what is
    registered."""
    given = {RULE_MODELS: rules, PERSONA_NAMES: personas}
    return {key: value for key, value in given.items() if value is not None}


def _suite_file(source: SuiteSource, raw: LineDict, context: dict[str, Any]) -> SuiteFile | None:
    """suite.yaml as a SuiteFile. When only detachable sections are unsound, their problems
    are reported and the file is read without them (so `source.problems` is not empty and
    the suite never runs); otherwise None."""
    try:
        return SuiteFile.model_validate(raw, context=context)
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
    except FileProblem as exc:
        if str(exc) == "file not found":
            source.suite_problem(["policy"], f"policy file not found: {file.policy}")
        else:
            source.suite_problem(["policy"], f"policy {file.policy}: {exc}")
    except UnicodeDecodeError as exc:
        source.suite_problem(["policy"], f"cannot read policy: {exc}")
    return ""


def _world_data(source: SuiteSource, file: SuiteFile) -> dict[str, Any]:
    """The world's data files, each a top-level key (its stem); the factory runs later."""
    data: dict[str, Any] = {}
    for i, item in enumerate(file.world.data):
        path = source.root / item
        if not os.path.lexists(path):
            source.suite_problem(["world", "data", i], f"world data not found: {item}")
            continue
        outside = source.outside(path)
        if outside is not None:
            source.suite_problem(["world", "data", i], f"world data {item}: {outside}")
            continue
        files = (
            sorted(p for p in path.iterdir() if p.name.endswith(DATA_SUFFIXES))
            if path.is_dir()
            else [path]
        )
        for data_file in files:
            try:
                content = _data_file(source, data_file)
            except FileProblem as exc:
                source.suite_problem(["world", "data", i], f"{shown(data_file)}: {exc}")
                continue
            if content is not None:
                data[data_file.name.split(".")[0]] = content
    return data


def _data_file(source: SuiteSource, path: Path) -> Any:
    """A world data file's content (a mapping or a list, as JSON or YAML), or None with its
    problem reported; FileProblem when it cannot be read. JSON nested deeper than
    `MAX_DEPTH` levels is refused, as YAML is."""
    if not path.name.endswith(DATA_SUFFIXES):
        source.problem(path, None, "world data files are .json, .json.gz, .yaml or .yml")
        return None
    raw = source.read(path)
    content = _data_content(source, path, raw)
    if too_deep(content):
        source.problem(path, None, f"nesting deeper than {MAX_DEPTH} levels")
        return None
    return content


def _data_content(source: SuiteSource, path: Path, raw: bytes) -> Any:
    if path.name.endswith(".json.gz"):
        try:
            return json.loads(gunzip(raw))
        except RecursionError:
            source.problem(path, None, f"nesting deeper than {MAX_DEPTH} levels")
            return None
        except (EOFError, ValueError, zlib.error) as exc:  # a damaged .gz too
            source.problem(path, None, f"cannot read: {exc}")
            return None
    if path.suffix == ".json":
        try:
            return json.loads(raw)
        except RecursionError:
            source.problem(path, None, f"nesting deeper than {MAX_DEPTH} levels")
            return None
        except json.JSONDecodeError as exc:
            source.problem(path, exc.lineno, f"JSON syntax error: {exc.msg}")
            return None
        except UnicodeDecodeError as exc:
            source.problem(path, None, f"cannot read: {exc}")
            return None
    try:
        return load_yaml(path, shown(path), raw)
    except SuiteError as exc:
        source.problems.extend(exc.problems)
        return None


def _tasks(source: SuiteSource, entries: list[Any]) -> list[Task]:
    tasks: list[Task] = []
    included: set[Path] = set()
    for i, entry in enumerate(entries):
        if isinstance(entry, str):
            outside = source.outside(_glob_base(source, entry))
            if outside is not None:
                source.suite_problem(["tasks", i], f"tasks '{entry}': {outside}")
                continue
            matches = _task_paths(source, entry)
            if not matches:
                source.suite_problem(["tasks", i], f"no task files match '{entry}'")
            for path in matches:
                if path in included:
                    source.suite_problem(
                        ["tasks", i], f"{shown(path)} is already included by an earlier entry"
                    )
                    continue
                included.add(path)
                try:
                    tasks.extend(_task_file(source, path))
                except FileProblem as exc:
                    source.suite_problem(["tasks", i], f"{shown(path)}: {exc}")
        elif isinstance(entry, dict):
            task = _task(source, entry, source.where, ["tasks", i], source.raw)
            if task is not None:
                tasks.append(task)
        else:
            source.suite_problem(["tasks", i], "a task entry is a file glob or a task mapping")
    return tasks


GLOB_CHARS = frozenset("*?[")


def _glob_base(source: SuiteSource, pattern: str) -> Path:
    """The folder a task glob searches: its parts before the first wildcard (a plain file
    name's folder)."""
    parts = Path(pattern).parts
    wild = next((i for i, part in enumerate(parts) if GLOB_CHARS & set(part)), len(parts) - 1)
    return source.root.joinpath(*parts[:wild])


def _task_paths(source: SuiteSource, pattern: str) -> list[Path]:
    """The files a task entry names, in order: a glob's matches (an absolute one searched
    from its root), or the one file it names when it has no wildcard."""
    path = source.root / pattern
    if not GLOB_CHARS & set(pattern):
        return [path] if os.path.lexists(path) else []
    anchor = Path(pattern).anchor
    try:
        if anchor:
            return sorted(Path(anchor).glob(pattern[len(anchor) :]))
        return sorted(source.root.glob(pattern))
    except (ValueError, OSError):  # a malformed pattern, an unreadable folder
        return []


def _task_file(source: SuiteSource, path: Path) -> list[Task]:
    """A task file's tasks (problems in it are reported at it); FileProblem when it cannot
    be read."""
    where = shown(path)
    raw = source.read(path)
    try:
        data = load_yaml(path, where, raw)
    except SuiteError as exc:
        source.problems.extend(exc.problems)
        return []
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
    dumped = spec.model_dump(mode="json")
    if not dumped.get("notes"):
        dumped.pop("notes", None)  # a task without notes hashes as it did before they existed
    blob = json.dumps(dumped, sort_keys=True).encode()
    return Task(
        spec=spec,
        source=where,
        line=line_of(doc, loc),
        lines=data if isinstance(data, LineDict) else LineDict(),
        content_hash=hashlib.sha256(blob).hexdigest()[:16],
    )
