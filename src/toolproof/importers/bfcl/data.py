"""BFCL's multi-turn data, read from the installed `bfcl-eval` package: the entries, their
ground truth, the function docs, and the ground truth's calls parsed into tool calls."""

from __future__ import annotations

import ast
import inspect
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

from toolproof.errors import UsageError

CATEGORIES = ("base", "miss_func", "miss_param", "long_context")
"""The multi-turn categories `toolproof import bfcl` takes."""

VERSION = "BFCL_v4"
INSTALL_HINT = (
    "bfcl-eval is not installed: pip install 'toolproof[bfcl]' && "
    "pip install --no-deps 'bfcl-eval==2026.3.23'"
)


@dataclass(frozen=True)
class Call:
    """One call of a BFCL backend method: its name, its arguments by name, and the text
    BFCL wrote it as."""

    name: str
    args: dict[str, Any]
    text: str


@dataclass(frozen=True)
class Entry:
    """One multi-turn entry with its ground truth, one list of calls per user turn."""

    id: str
    category: str
    turns: list[str | None]
    """Each turn's user message; None where BFCL's turn has no message (miss_func: the turn
    where the held-out function is added)."""
    initial_config: dict[str, Any]
    involved_classes: list[str]
    ground_truth: list[list[Call]]
    missed_function: dict[str, list[str]]

    @property
    def long_context(self) -> bool:
        return self.category == "long_context"


def package_data() -> Any:
    """BFCL's data folder inside the installed package."""
    try:
        return resources.files("bfcl_eval") / "data"
    except ModuleNotFoundError:
        raise UsageError(INSTALL_HINT) from None


def read_lines(relative: str) -> list[dict[str, Any]]:
    """A JSON-lines file of BFCL's data folder."""
    text = (package_data() / relative).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def function_docs(class_name: str) -> list[dict[str, Any]]:
    """The function docs BFCL shows a model for one backend class."""
    from bfcl_eval.constants.executable_backend_config import MULTI_TURN_FUNC_DOC_FILE_MAPPING

    return read_lines(f"multi_turn_func_doc/{MULTI_TURN_FUNC_DOC_FILE_MAPPING[class_name]}")


def load_entries(category: str, limit: int | None = None) -> list[Entry]:
    """The category's entries in BFCL's order, each with its ground truth, the first `limit`."""
    if category not in CATEGORIES:
        raise UsageError(f"CATEGORY {category!r}: use one of {', '.join(CATEGORIES)}")
    name = f"{VERSION}_multi_turn_{category}.json"
    questions = read_lines(name)
    answers = {a["id"]: a["ground_truth"] for a in read_lines(f"possible_answer/{name}")}
    entries = []
    for raw in questions[:limit]:
        classes = list(raw["involved_classes"])
        entries.append(
            Entry(
                id=raw["id"],
                category=category,
                turns=[_user_text(turn) for turn in raw["question"]],
                initial_config=raw["initial_config"],
                involved_classes=classes,
                ground_truth=[[parse_call(c, classes) for c in t] for t in answers[raw["id"]]],
                missed_function=raw.get("missed_function", {}),
            )
        )
    return entries


def _user_text(turn: list[dict[str, Any]]) -> str | None:
    texts = [m["content"] for m in turn if m.get("role") == "user"]
    return "\n".join(texts) if texts else None


def method_owner(name: str, classes: list[str]) -> str:
    """The class whose method `name` is: the last of `classes` that has it, as BFCL binds
    method names to instances."""
    from toolproof.importers.bfcl.state import backend_class

    owners = [c for c in classes if callable(getattr(backend_class(c), name, None))]
    if not owners or name.startswith("_"):
        raise ValueError(f"{name}: no method of {', '.join(classes)}")
    return owners[-1]


def parse_call(text: str, classes: list[str]) -> Call:
    """A call as BFCL writes it (`mv(source='a.txt', destination='b')`, positional arguments
    allowed) with every argument named."""
    from toolproof.importers.bfcl.state import backend_class

    node = ast.parse(text.strip(), mode="eval").body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise ValueError(f"{text!r}: not a call of a named function")
    name = node.func.id
    method = getattr(backend_class(method_owner(name, classes)), name)
    params = [p for p in inspect.signature(method).parameters if p != "self"]
    args = {params[i]: ast.literal_eval(a) for i, a in enumerate(node.args)}
    args.update({k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg})
    return Call(name, args, text)


def call_text(name: str, args: dict[str, Any]) -> str:
    """A call written as BFCL writes it, for its checker."""
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in args.items())})"
