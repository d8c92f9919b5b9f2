"""The layers of the source point one way: the file formats import nothing above them, tools
never reach into the live runtime, and metrics and graders stay pure functions of data."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import get_args

import pytest

from toolproof.runtime.kinds import KINDS
from toolproof.spec.models import Backend

SRC = Path(__file__).parent.parent / "src" / "toolproof"


def imported(package: str) -> dict[str, set[str]]:
    """Every toolproof module each file of a package imports (at any depth in the file)."""
    found: dict[str, set[str]] = {}
    for path in sorted((SRC / package).rglob("*.py")):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                names.add(node.module)
            elif isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
        found[str(path.relative_to(SRC))] = {n for n in names if n.startswith("toolproof")}
    return found


@pytest.mark.parametrize(
    ("package", "allowed"),
    [
        ("spec", ("toolproof.spec", "toolproof.errors")),
        ("tools", ("toolproof.tools", "toolproof.errors", "toolproof.world")),
        (
            "metrics",
            ("toolproof.metrics", "toolproof.errors", "toolproof.records", "toolproof.transcript"),
        ),
        (
            "graders",
            (
                "toolproof.graders",
                "toolproof.spec",
                "toolproof.transcript",
                "toolproof.conversation",
                "toolproof.world",  # world diffs are data: a differing state names its paths
                "toolproof.registry",  # graders register by name, like every plug-in
            ),
        ),
    ],
)
def test_a_package_imports_only_what_is_below_it(package: str, allowed: tuple[str, ...]) -> None:
    crossings = {
        file: sorted(n for n in names if not n.startswith(allowed))
        for file, names in imported(package).items()
    }
    assert {file: names for file, names in crossings.items() if names} == {}


def test_every_backend_type_of_the_file_format_has_a_registered_kind() -> None:
    members = get_args(get_args(Backend)[0])
    types = {get_args(member.model_fields["type"].annotation)[0] for member in members}
    assert types == set(KINDS) == {"python", "mcp", "openapi"}
