"""A metric's name is spelled in two places only: its definition in the catalogue
(spec/metrics.py) and the module of its compute function. Everywhere else in the source, code
names a metric through its definition or iterates the catalogue, so that renaming or adding a
metric is one definition and one compute function.

The check reads every string in the source (f-strings with their holes as `{}`) and finds
those that are a metric's name as a whole: `"recovery_rate"`, `"pass@1"`, `f"pass^{k}"`, or a
family's name in words (`"pass^k"`). Prose that mentions a metric in a longer sentence is
not a name, and docs and tests are free to spell names."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import toolproof.metrics.summary  # noqa: F401  (every compute function registered)
from toolproof.metrics.compute import DERIVED, RECORDED, Computation
from toolproof.spec.metrics import CATALOGUE, PARAMETERS, MetricDef
from toolproof.store.schema import trials

SRC = Path(__file__).parent.parent / "src" / "toolproof"
CATALOGUE_FILE = SRC / "spec" / "metrics.py"
HOLE = "{}"

RECORD_FIELDS = {column.name for column in trials.columns}
"""A trial's stored fields. Some are named as the metric that totals them over a run
(`cost_usd` is one trial's cost, and the run's); the modules that make and store a trial's
record spell those fields as the record's own, not the metric."""

RECORD_MODULES = {
    "store/schema.py",  # the trials table
    "store/rows.py",  # a trial as a row
    "runner/grading.py",  # the record's derived values
    "models/pricing.py",  # a model response's cost
    "agents/external.py",  # the cost an external agent reports for its turn
    "agents/bridge/core.py",  # the cost of a model call a bridged agent made
}


def spelling(definition: MetricDef) -> re.Pattern[str]:
    """What spells the metric: its name with each parameter a value, a hole of an f-string,
    or the parameter in words (`k`, `K`, `NAME`, `N`)."""
    pieces = re.split(r"\{(\w+)\}", definition.name)
    parts = []
    for i, piece in enumerate(pieces):
        if i % 2 == 0:
            parts.append(re.escape(piece))
        else:
            value, word = PARAMETERS[piece]
            forms = (value, re.escape(HOLE), re.escape(f"{{{piece}}}"), piece, word)
            parts.append(f"(?:{'|'.join(forms)})")
    return re.compile("".join(parts))


def strings(tree: ast.AST) -> Iterator[tuple[str, int]]:
    """Every string of a module, with its line; an f-string with `{}` for each hole."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = "".join(
                part.value if isinstance(part, ast.Constant) else HOLE for part in node.values
            )
            inside.update(id(part) for part in node.values)
            yield text, node.lineno
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in inside
        ):
            yield node.value, node.lineno


def spelt() -> dict[str, list[str]]:
    """Every catalogue name -> the places in the source that spell it as a whole."""
    patterns = {d.name: spelling(d) for d in CATALOGUE}
    found: dict[str, list[str]] = {name: [] for name in patterns}
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for text, line in strings(tree):
            for name, pattern in patterns.items():
                if pattern.fullmatch(text):
                    found[name].append(f"{path.relative_to(SRC)}:{line}")
    return found


def computation_of(definition: MetricDef) -> Computation[object] | None:
    """The compute function registered for a definition, in the registry it says."""
    registry = RECORDED if definition.recorded else DERIVED
    return registry.computation(definition.name)


def allowed(definition: MetricDef) -> set[str]:
    """The definition's file and its compute function's module (and, for a name a trial's
    record shares, the modules that make and store the record)."""
    computation = computation_of(definition)
    files = {str(CATALOGUE_FILE.relative_to(SRC))}
    if definition.name in RECORD_FIELDS:
        files |= RECORD_MODULES
    if computation is not None:
        module = computation.compute.__module__.removeprefix("toolproof.")
        files.add(module.replace(".", "/") + ".py")
    return files


def test_a_metric_name_is_spelled_only_in_its_definition_and_its_compute_function() -> None:
    found = spelt()
    strays = {}
    for definition in CATALOGUE:
        places = found[definition.name]
        outside = [p for p in places if p.rsplit(":", 1)[0] not in allowed(definition)]
        if outside:
            strays[definition.name] = outside
    assert strays == {}


def test_every_metric_is_defined_in_the_catalogue_file_itself() -> None:
    found = spelt()
    missing = [
        name for name, places in found.items() if not any("spec/metrics.py" in p for p in places)
    ]
    assert missing == []


def test_the_check_finds_a_name_spelled_outside_its_places(tmp_path: Path) -> None:
    source = 'a = {"recovery_rate": 1}\nb = f"pass^{k}"\nc = "pass^k"\nd = "about pass@1 here"\n'
    texts = [text for text, _ in strings(ast.parse(source))]
    hits = {d.name for d in CATALOGUE for text in texts if spelling(d).fullmatch(text) is not None}
    assert hits == {"recovery_rate", "pass^{k}"}
