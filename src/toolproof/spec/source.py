"""What reading a suite folder gives: its files, parsed and located, before anything runs."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from toolproof.errors import Problem
from toolproof.spec.files import FileProblem, read_file, resolved
from toolproof.spec.suite import SuiteFile
from toolproof.spec.task import Task
from toolproof.spec.yamlload import LineDict, line_of

SUITE_FILE = "suite.yaml"


def shown(path: Path) -> str:
    """A path as users typed it: relative to the working directory when possible."""
    here = Path.cwd().resolve()
    for whole in (Path(os.path.abspath(path)), resolved(path)):  # a link's own name first
        if whole is not None and whole.is_relative_to(here):
            return str(whole.relative_to(here))
    return str(path)


@dataclass
class SuiteSource:
    """A suite folder as its files say: suite.yaml, policy, world data and tasks, with every
    problem found so far (located) and every file read (for the suite's content hash).

    `file` is None when suite.yaml itself does not validate; the tasks are still read, so
    their problems are reported in the same pass."""

    root: Path
    path: Path
    raw: LineDict
    file: SuiteFile | None = None
    policy: str = ""
    tasks: list[Task] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    """World data files by their stem, before the factory."""
    problems: list[Problem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    files: dict[str, bytes] = field(default_factory=dict)

    @property
    def where(self) -> str:
        return shown(self.path)

    def line(self, *loc: str | int) -> int | None:
        """The line of a place in suite.yaml, like `line("backends", "shop", "module")`."""
        return line_of(self.raw, list(loc))

    def problem(self, path: Path | str, line: int | None, message: str) -> None:
        where = shown(path) if isinstance(path, Path) else path
        self.problems.append(Problem(where, line, message))

    def suite_problem(self, loc: list[str | int], message: str) -> None:
        """A problem at a place in suite.yaml."""
        self.problems.append(Problem(self.where, line_of(self.raw, loc), message))

    def read(self, path: Path) -> bytes:
        """A file of the suite, remembered for the content hash. FileProblem when it lies
        outside the suite folder (and the folders `allow_outside` names), is no regular
        file, or is too large."""
        outside = self.outside(path)
        if outside is not None:
            raise FileProblem(outside)
        data = read_file(path)
        self.record(path, data)
        return data

    def outside(self, path: Path) -> str | None:
        """Why the suite may not read `path` (symlinks followed): it is outside the suite
        folder and the folders `allow_outside` names, or a symlink loop; None when it may."""
        real = resolved(path)
        if real is None:
            return "a symlink loop"
        if any(real.is_relative_to(folder) for folder in self.folders()):
            return None
        return (
            f"outside the suite folder ({real}); to read it from there, name its folder "
            "under allow_outside: in suite.yaml"
        )

    def folders(self) -> list[Path]:
        """Where the suite's files may lie: its folder, and those `allow_outside` names."""
        allowed = self.file.allow_outside if self.file is not None else []
        outside = (resolved(self.root / folder) for folder in allowed)
        return [self.root, *(folder for folder in outside if folder is not None)]

    def record(self, path: Path | str, data: bytes) -> None:
        """Something the suite's content depends on: a file (by its path relative to the
        folder, `../shared/x.yaml` for one outside it), or a named blob like a server's
        tool list."""
        self.files[self.key(path) if isinstance(path, Path) else path] = data

    def key(self, path: Path) -> str:
        """A file's name in `files`: its path relative to the suite folder."""
        return os.path.relpath(path, self.root).replace(os.sep, "/")


def validation_problems(exc: ValidationError, data: Any, where: str) -> list[Problem]:
    """pydantic errors as located problems, one per place in the file."""
    problems: list[Problem] = []
    seen: set[tuple[int | None, str]] = set()
    for error in exc.errors():
        loc = _data_loc(data, error["loc"])
        line = line_of(data, loc)
        name = ".".join(str(p) for p in loc)
        kind = error["type"]
        if kind == "extra_forbidden":
            message = f"unknown field '{loc[-1]}'" + (
                f" in {'.'.join(map(str, loc[:-1]))}" if loc[:-1] else ""
            )
        elif kind == "missing":
            message = f"missing required field '{name}'"
        else:
            message = f"{name}: {error['msg']}" if name else error["msg"]
        key = (line, name)
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


def validate(model: type[BaseModel], data: Any, where: str, problems: list[Problem]) -> Any:
    """`model` from `data`, or None with the located problems added."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems.extend(validation_problems(exc, data, where))
        return None
