"""YAML loading that remembers the line of every mapping key and sequence item.

pydantic reports errors by location tuples (`("tasks", 3, "expect", "calls")`); `line_of`
turns such a tuple back into the line of the YAML file it came from.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from toolproof.errors import Problem, SuiteError


class LineDict(dict[str, Any]):
    """A mapping loaded from YAML, with `line` (its own) and `key_lines` (one per key)."""

    line: int = 0
    key_lines: dict[Any, int]


class LineList(list[Any]):
    """A sequence loaded from YAML, with `line` (its own) and `item_lines`."""

    line: int = 0
    item_lines: list[int]


class _Loader(yaml.SafeLoader):
    pass


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> LineDict:
    loader.flatten_mapping(node)
    out = LineDict()
    out.line = node.start_mark.line + 1
    out.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in out:
            raise yaml.MarkedYAMLError(
                problem=f"duplicate key {key!r}", problem_mark=key_node.start_mark
            )
        out[key] = loader.construct_object(value_node, deep=True)
        out.key_lines[key] = key_node.start_mark.line + 1
    return out


def _construct_sequence(loader: _Loader, node: yaml.SequenceNode) -> LineList:
    out = LineList(loader.construct_object(child, deep=True) for child in node.value)
    out.line = node.start_mark.line + 1
    out.item_lines = [child.start_mark.line + 1 for child in node.value]
    return out


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)


def load_yaml(path: Path, display: str | None = None) -> Any:
    """Parse one YAML (or JSON) file; a syntax error becomes a located SuiteError."""
    shown = display or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SuiteError.at(shown, None, "file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteError.at(shown, None, f"cannot read file: {exc}") from None
    try:
        return yaml.load(text, Loader=_Loader)
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
