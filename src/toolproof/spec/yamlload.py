"""YAML loading that remembers the line of every mapping key and sequence item.

pydantic reports errors by location tuples (`("tasks", 3, "expect", "calls")`); `line_of`
turns such a tuple back into the line of the YAML file it came from.

A suite's files are JSON data written as YAML, so the loader keeps to what JSON can hold:
dates stay strings, nesting is at most `MAX_DEPTH` levels deep and aliases may repeat at most
`MAX_ALIAS_NODES` nodes in all. A kilobyte of nested aliases otherwise expands to billions of
nodes once the data is copied or hashed, and deep nesting overflows Python's stack; both are
refused where they are written.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from toolproof.errors import Problem, SuiteError
from toolproof.spec.files import FileProblem, read_file


class LineDict(dict[str, Any]):
    """A mapping loaded from YAML, with `line` (its own) and `key_lines` (one per key)."""

    line: int = 0
    key_lines: dict[Any, int]


class LineList(list[Any]):
    """A sequence loaded from YAML, with `line` (its own) and `item_lines`."""

    line: int = 0
    item_lines: list[int]


MAX_DEPTH = 100
"""Levels of nesting a YAML or JSON file may have (aliases expanded)."""
MAX_ALIAS_NODES = 100_000
"""Nodes that the aliases of one YAML file may repeat, all aliases together."""

_TIMESTAMP = "tag:yaml.org,2002:timestamp"


class _Loader(yaml.SafeLoader):
    """SafeLoader with JSON's types (a date stays a string) and bounded depth and aliases."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._sizes: dict[int, tuple[int, int]] = {}
        self._repeated = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        """A node, refused when it nests too deep or its alias repeats too much."""
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if self._depth >= MAX_DEPTH:
            raise _refused(event, f"nesting deeper than {MAX_DEPTH} levels")
        if not isinstance(event, yaml.AliasEvent):
            self._depth += 1
            try:
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1
        node = super().compose_node(parent, index)
        if node is None:
            return None
        if node.end_mark is None:  # still being composed: the alias is inside its anchor
            raise _refused(event, f"alias *{event.anchor} refers to a node that contains it")
        nodes, depth = self._size(node)
        if self._depth + depth > MAX_DEPTH:
            raise _refused(
                event, f"alias *{event.anchor} nests the data deeper than {MAX_DEPTH} levels"
            )
        self._repeated += nodes
        if self._repeated > MAX_ALIAS_NODES:
            raise _refused(
                event,
                f"aliases repeat more than {MAX_ALIAS_NODES:,} nodes (at *{event.anchor}); "
                "write the data out, or nest fewer aliases",
            )
        return node

    def _size(self, node: yaml.Node) -> tuple[int, int]:
        """(nodes, levels) of a finished node with its aliases expanded, counted once."""
        known = self._sizes.get(id(node))
        if known is not None:
            return known
        children: list[yaml.Node] = []
        if isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        elif isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        sizes = [self._size(child) for child in children]
        size = (1 + sum(n for n, _ in sizes), 1 + max((d for _, d in sizes), default=0))
        self._sizes[id(node)] = size
        return size


class _Refused(yaml.MarkedYAMLError):
    """Well-formed YAML that the loader will not expand (too deep, too many aliased nodes)."""


def _refused(event: yaml.Event, problem: str) -> _Refused:
    return _Refused(problem=problem, problem_mark=event.start_mark)  # type: ignore[arg-type]


def too_deep(data: Any) -> bool:
    """Whether JSON-like data nests deeper than `MAX_DEPTH` levels (walked without recursion)."""
    level: list[tuple[Any, int]] = [(data, 1)]
    while level:
        node, depth = level.pop()
        if depth > MAX_DEPTH:
            return True
        if isinstance(node, dict):
            level.extend((child, depth + 1) for child in node.values())
        elif isinstance(node, list):
            level.extend((child, depth + 1) for child in node)
    return False


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> LineDict:
    """A mapping with its lines. A key written twice is an error; a key that a merge
    (`<<: *base`) brings in is overridden by the mapping's own."""
    written = sum(1 for key, _ in node.value if key.tag != "tag:yaml.org,2002:merge")
    loader.flatten_mapping(node)
    merged = len(node.value) - written
    out = LineDict()
    out.line = node.start_mark.line + 1
    out.key_lines = {}
    own: set[Any] = set()
    for i, (key_node, value_node) in enumerate(node.value):
        key = loader.construct_object(key_node, deep=True)
        if i >= merged:
            if key in own:
                raise yaml.MarkedYAMLError(
                    problem=f"duplicate key {key!r}", problem_mark=key_node.start_mark
                )
            own.add(key)
        out[key] = loader.construct_object(value_node, deep=True)
        out.key_lines[key] = key_node.start_mark.line + 1
    return out


def _construct_sequence(loader: _Loader, node: yaml.SequenceNode) -> LineList:
    out = LineList(loader.construct_object(child, deep=True) for child in node.value)
    out.line = node.start_mark.line + 1
    out.item_lines = [child.start_mark.line + 1 for child in node.value]
    return out


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_DECIMAL = re.compile(r"[-+]?(0|[1-9][0-9_]*)")


def _construct_int(loader: _Loader, node: yaml.ScalarNode) -> int:
    """A whole number written in decimal. YAML 1.1 also reads `0x10` as 16, `010` as 8 and
    `1:30` as 90, which a count or a seed written so never means: they are refused where
    they are written (quoted, they stay strings)."""
    text = str(loader.construct_scalar(node))
    if not _DECIMAL.fullmatch(text):
        raise _Refused(
            problem=f"{text!r} is not a decimal number: write it in decimal, or quote it "
            "to keep it as text",
            problem_mark=node.start_mark,
        )
    digits = text.replace("_", "")
    if len(digits.lstrip("+-")) > MAX_DIGITS:
        raise _Refused(
            problem=f"a number of {len(digits.lstrip('+-')):,} digits: write at most "
            f"{MAX_DIGITS:,}, or quote it to keep it as text",
            problem_mark=node.start_mark,
        )
    return int(digits)


MAX_DIGITS = 1_000
"""The most digits a YAML whole number may have (Python refuses over 4,300 in decimal; no
count, seed or argument needs a thousand)."""


_Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)


def load_yaml(path: Path, display: str | None = None, data: bytes | None = None) -> Any:
    """Parse one YAML (or JSON) file, or its bytes `data` already read; a file that cannot
    be read (`read_file`) or a syntax error becomes a located SuiteError."""
    shown = display or str(path)
    try:
        text = (read_file(path) if data is None else data).decode("utf-8")
    except FileProblem as exc:
        raise SuiteError.at(shown, None, str(exc)) from None
    except UnicodeDecodeError as exc:
        raise SuiteError.at(shown, None, f"cannot read file: {exc}") from None
    try:
        return yaml.load(text, Loader=_Loader)
    except _Refused as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else None
        raise SuiteError([Problem(shown, line, f"YAML refused: {exc.problem}")]) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        what = " ".join(p for p in (exc.context, exc.problem) if p)
        raise SuiteError([Problem(shown, line, f"YAML syntax error: {what}")]) from None
    except yaml.YAMLError as exc:
        raise SuiteError([Problem(shown, None, f"YAML error: {exc}")]) from None


def line_of(data: Any, loc: Sequence[int | str]) -> int | None:
    """The line of the deepest node along `loc` that the YAML data knows about."""
    line = getattr(data, "line", None) or None
    node = data
    for part in loc:
        if isinstance(node, LineDict) and isinstance(part, str) and part in node:
            line = node.key_lines.get(part, line)
            node = node[part]
        elif isinstance(node, LineList) and isinstance(part, int) and 0 <= part < len(node):
            line = node.item_lines[part]
            node = node[part]
        else:
            break
    return line
