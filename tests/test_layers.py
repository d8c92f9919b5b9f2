"""The layers of the source point one way. One table says, for every package under
src/toolproof and every top-level module, which of the others it may import; the imports of
the code are exactly the table's (at any depth of a file: at the top, inside a function,
for type checking only), and the table has no cycle. The file formats import nothing above
them, tools never reach into the live runtime, metrics and graders stay pure functions of
data, and only the store touches the database."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import get_args

from toolproof.runtime.kinds import KINDS
from toolproof.spec.backends import BUILT_IN_KINDS, Backend, PluginBackend

SRC = Path(__file__).parent.parent / "src" / "toolproof"

MAX_LINES = 700
"""The most lines a source file of toolproof may have."""
SOURCE_SUFFIXES = (".py", ".js", ".css", ".html")
VENDORED = ".min.js"
"""Libraries shipped as they are (Chart.js): not toolproof's source."""

ROOT = "toolproof"
"""The package's own `__init__.py`: the public API, which re-exports from the layers below."""


def uses(names: str) -> set[str]:
    return set(names.split())


ALLOWED: dict[str, set[str]] = {
    # leaves: what everything may use
    "errors": set(),
    "version": set(),
    "redact": set(),
    "registry": uses("errors"),  # one mechanism for every plug-in: named lazy factories
    "seeds": set(),
    "format": set(),
    "world": uses("bigints"),
    "bigints": set(),  # integers JSON cannot carry everywhere, written as text
    "perf": set(),  # the interpreter's defaults set aside: the collector, Ctrl-C, teardown
    "files": uses("errors"),  # outputs written whole or not at all
    # the file formats, and what is read straight from them
    "spec": uses("errors"),
    "config": uses("errors spec"),
    "meaning": uses("spec"),
    # tools and the providers' interface; a transcript is made of the providers' calls
    "tools": uses("bigints errors format world"),
    "models": uses("config errors registry spec tools"),
    "transcript": uses("models"),
    # the live runtime, the gateway every tool call passes through, the loaded suite
    "runtime": uses("errors redact registry spec tools transcript world"),
    "gateway": uses("bigints errors seeds spec tools transcript world"),
    "suite": uses("meaning errors files gateway graders runtime spec tools users world"),
    # pure: grading and metrics are functions of data
    "graders": uses("meaning registry spec transcript world"),
    "records": uses("graders models redact spec transcript world"),  # what the store keeps
    "metrics": uses("errors records spec transcript"),
    # the store owns every byte on disk; a stored run is summarised through the metrics
    "store": uses("bigints errors perf records redact spec"),
    "summaries": uses("metrics store"),
    "labelling": uses("errors files metrics records store"),  # human labels and agreement
    # users and agents, and the runner that plays a trial and a run
    "users": uses("meaning errors models registry seeds spec tools transcript"),
    "agents": uses(
        "config meaning errors gateway graders models redact registry seeds spec suite tools"
        " transcript users"
    ),
    "runner": uses(
        "agents config errors format gateway graders metrics models perf records redact runtime"
        " seeds spec store suite summaries tools transcript users version world"
    ),
    # after a run: traces, the gate, compare and monitor, the reports, the dashboard
    "telemetry": uses("errors models records runner spec transcript version"),
    "ci": uses(
        "errors format graders metrics perf records spec store suite summaries telemetry transcript"
    ),
    "report": uses(
        "ci errors files format metrics perf records spec store summaries transcript version"
    ),
    "view": uses("errors format metrics report spec store summaries"),
    "importers": uses(
        "meaning errors files graders metrics models records runner spec store suite telemetry"
        " tools transcript version world"
    ),
    # the library's calls (run, validate, regrade, gate), then the command line on them
    "api": uses(
        "ci errors metrics models records report runner runtime spec store suite summaries"
    ),
    "pytest_plugin": uses("api"),  # a team's own tests: fixtures, failing runs shown
    "cli": uses(
        "api ci errors format graders importers labelling metrics perf records redact report"
        " runner runtime spec store suite summaries telemetry version view"
    ),
    "__main__": uses("cli"),
    ROOT: uses("agents api errors gateway models records runner store suite tools version world"),
}
"""Which toolproof packages and top-level modules each may import, bottom to top."""


def node_of(path: Path) -> str:
    """The package or top-level module a source file belongs to."""
    parts = path.relative_to(SRC).parts
    if len(parts) > 1:
        return parts[0]
    return ROOT if parts[0] == "__init__.py" else parts[0].removesuffix(".py")


def node_of_module(name: str) -> str:
    """`toolproof.store.journal` -> `store`; `toolproof` itself -> the root."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else ROOT


def imported_names(tree: ast.AST) -> Iterator[tuple[str, int]]:
    """Every toolproof module a file imports, at any depth, with its line."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"line {node.lineno}: a relative import"
            names = [node.module or ""]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            if name == ROOT or name.startswith(f"{ROOT}."):
                yield name, node.lineno


def sources() -> Iterator[tuple[Path, ast.AST]]:
    for path in sorted(SRC.rglob("*.py")):
        yield path, ast.parse(path.read_text(encoding="utf-8"))


def imports() -> dict[str, dict[str, list[str]]]:
    """For every package and module: the others it imports, and where."""
    found: dict[str, dict[str, list[str]]] = {}
    for path, tree in sources():
        importer = node_of(path)
        edges = found.setdefault(importer, {})
        for name, line in imported_names(tree):
            target = node_of_module(name)
            if target != importer:
                edges.setdefault(target, []).append(f"{path.relative_to(SRC)}:{line}")
    return found


def cycle(graph: Mapping[str, set[str]]) -> list[str]:
    """A cycle of the graph as the path around it, or [] when it has none."""
    state: dict[str, str] = {}
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = "open"
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == "open":
                return [*path[path.index(target) :], target]
            if target not in state and (found := visit(target)):
                return found
        state[node] = "done"
        path.pop()
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_every_package_and_module_is_in_the_table() -> None:
    assert set(imports()) == set(ALLOWED)


def test_a_package_imports_only_what_the_table_allows() -> None:
    crossings = {}
    for importer, edges in imports().items():
        allowed = ALLOWED.get(importer, set())
        outside = {target: where for target, where in edges.items() if target not in allowed}
        if outside:
            crossings[importer] = outside
    assert crossings == {}


def test_the_table_allows_only_what_the_code_imports() -> None:
    """The table tells the code's story: an import dropped is dropped from the table too."""
    found = imports()
    unused = {node: sorted(allowed - set(found.get(node, {}))) for node, allowed in ALLOWED.items()}
    assert {node: names for node, names in unused.items() if names} == {}


def test_the_packages_form_no_cycle() -> None:
    assert cycle({node: set(edges) for node, edges in imports().items()}) == []
    assert cycle(ALLOWED) == []
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]


def test_the_table_keeps_the_rules_of_the_architecture() -> None:
    """spec/ is a leaf above errors; tools never import the live runtime; metrics and graders
    are pure (no store, no runtime, no model calls); the store computes no summary; the gate
    and the rest of ci/ render nothing (report/ renders the gate's typed results)."""
    assert ALLOWED["spec"] == {"errors"}
    assert "runtime" not in ALLOWED["tools"]
    assert ALLOWED["metrics"] <= {"errors", "records", "spec", "transcript"}
    assert ALLOWED["graders"] <= {"meaning", "registry", "spec", "transcript", "world"}
    assert not ALLOWED["store"] & {"metrics", "summaries", "ci", "report", "runner"}
    assert not ALLOWED["ci"] & {"report", "runner", "cli", "view"}


def test_only_the_store_reaches_the_database() -> None:
    """No SQL outside store/: elsewhere sqlalchemy is imported only for its exceptions (to
    say the database failed), and nothing reaches for a store's engine."""
    reaching = []
    for path, tree in sources():
        if node_of(path) == "store":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sqlalchemy"):
                if node.module != "sqlalchemy.exc":
                    reaching.append(f"{path.relative_to(SRC)}:{node.lineno}: {node.module}")
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names if a.name.startswith("sqlalchemy")]
                reaching += [f"{path.relative_to(SRC)}:{node.lineno}: {n}" for n in names]
            elif isinstance(node, ast.Attribute) and node.attr == "engine":
                reaching.append(f"{path.relative_to(SRC)}:{node.lineno}: .engine")
    assert reaching == []


def test_every_backend_type_of_the_file_format_has_a_registered_kind() -> None:
    """The built-in kinds; any other `type:` is read as a plug-in's (`PluginBackend`)."""
    members = [get_args(member)[0] for member in get_args(get_args(Backend)[0])]
    built_in = [member for member in members if member is not PluginBackend]
    types = {get_args(member.model_fields["type"].annotation)[0] for member in built_in}
    assert types == set(BUILT_IN_KINDS) == set(KINDS) == {"python", "mcp", "openapi"}
    assert PluginBackend in members


def test_no_source_file_is_over_700_lines() -> None:
    """A file past 700 lines holds more than one thing: split it by what its parts describe."""
    long = {
        str(path.relative_to(SRC)): lines
        for path in sorted(SRC.rglob("*"))
        if path.name.endswith(SOURCE_SUFFIXES) and not path.name.endswith(VENDORED)
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}, f"over {MAX_LINES} lines: {long}"
