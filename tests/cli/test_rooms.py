"""cli/ only parses and renders: what a command decides or computes lives in the package it
belongs to. Held here by what cli/ may use: no data types of its own (a type is a domain's
word), and of the modules outside toolproof only those that reading arguments, printing,
writing a file and running a coroutine need."""

from __future__ import annotations

import ast
from pathlib import Path

CLI = Path(__file__).parent.parent.parent / "src" / "toolproof" / "cli"

OUTSIDE = {
    "__future__",
    "asyncio",  # a command runs the API's coroutine
    "collections.abc",
    "json",  # `schema` prints a JSON Schema
    "os",
    "pathlib",
    "re",
    "rich.console",
    "rich.markup",
    "rich.table",
    "sqlalchemy.exc",  # a store that fails is one line, exit 2
    "sys",
    "tempfile",  # a file that could not be written is refused before the work
    "typer",
    "typing",
}
"""The modules outside toolproof that cli/ may import."""

DATA_TYPES = {"dataclass", "BaseModel", "NamedTuple", "TypedDict", "Enum"}


def modules() -> dict[str, ast.Module]:
    return {p.name: ast.parse(p.read_text(encoding="utf-8")) for p in sorted(CLI.glob("*.py"))}


def outside_imports(tree: ast.AST) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return {name for name in found if name.split(".")[0] != "toolproof"}


def data_types(tree: ast.AST) -> list[str]:
    """The classes a module defines as data: a dataclass, a pydantic model, a named tuple,
    a typed dict, an enum."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        marks = {ast.unparse(d).split("(")[0] for d in node.decorator_list}
        marks |= {ast.unparse(b).split(".")[-1] for b in node.bases}
        if marks & DATA_TYPES:
            found.append(node.name)
    return found


def test_cli_imports_nothing_outside_toolproof_that_computes() -> None:
    found = {name: sorted(outside_imports(tree) - OUTSIDE) for name, tree in modules().items()}
    assert {name: extra for name, extra in found.items() if extra} == {}


def test_cli_defines_no_data_types() -> None:
    found = {name: data_types(tree) for name, tree in modules().items()}
    assert {name: types for name, types in found.items() if types} == {}


def test_the_check_sees_a_data_type_and_an_import_that_computes() -> None:
    tree = ast.parse(
        "import csv\nfrom dataclasses import dataclass\n@dataclass\nclass Row:\n    n: int\n"
        "class Kind(enum.Enum):\n    A = 1\n"
    )
    assert data_types(tree) == ["Row", "Kind"]
    assert outside_imports(tree) - OUTSIDE == {"csv", "dataclasses"}
