"""Writing a BFCL multi-turn category as a toolproof suite folder.

Each entry becomes a task: its user turns are the scripted user's opening and turns, its
backends' loaded state is the initial world, its ground-truth calls (all turns, in order)
are the gold actions, and the ground-truth calls that change nothing are its decisive
reads (BFCL's response check: what those calls return must have been fetched). Every tool
is one method of a BFCL backend, shown with BFCL's own function doc.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml

from toolproof.errors import UsageError
from toolproof.files import refuse_filled_folder, staged_folder
from toolproof.importers.bfcl.data import Call, Entry, function_docs, load_entries, method_owner
from toolproof.importers.bfcl.state import encode, load_instance
from toolproof.importers.generated import tool_function

JSON_TYPES = {"dict": "object", "float": "number", "tuple": "array", "any": None}
"""BFCL's doc types that JSON Schema spells otherwise (`any`: no type at all)."""

POLICY = """\
You are an assistant that completes the user's requests by calling the tools you are given.
The tools act on the user's systems (a file system, a trading account, a vehicle, ...).
Make the calls a request needs, in order; when a request lacks a detail a call needs, or no
tool can do it, say so and ask rather than guess.
"""


@dataclass
class Imported:
    """What `import_bfcl` wrote."""

    out: Path
    tasks: int
    tools: int
    version: str


def json_schema(doc_parameters: dict[str, Any]) -> dict[str, Any]:
    """A BFCL parameter doc as the JSON Schema the model is shown."""

    def convert(node: Any) -> Any:
        if isinstance(node, list):
            return [convert(n) for n in node]
        if not isinstance(node, dict):
            return node
        out = {k: convert(v) for k, v in node.items() if k != "type"}
        if "type" in node:
            kind = JSON_TYPES.get(node["type"], node["type"])
            if kind is not None:
                out["type"] = kind
        return out

    schema: dict[str, Any] = convert(doc_parameters)
    if isinstance(schema.get("properties"), dict):
        schema["properties"] = {
            name: {k: v for k, v in prop.items() if k != "default"}
            for name, prop in schema["properties"].items()
        }
    return schema


def classify_calls(entries: list[Entry]) -> tuple[set[str], dict[str, list[bool]]]:
    """Run each entry's ground truth on BFCL's backends: the methods that changed a backend
    (the write tools), and per entry which of its calls left the state BFCL compares as it
    was (its reads: what they return is what BFCL's response check looks for)."""
    writes: set[str] = set()
    reads: dict[str, list[bool]] = {}
    for entry in entries:
        instances = {
            c: load_instance(c, entry.initial_config.get(c, {}), entry.long_context)
            for c in entry.involved_classes
        }
        flags = []
        for call in (c for turn in entry.ground_truth for c in turn):
            instance = instances[method_owner(call.name, entry.involved_classes)]
            before = encode(instance)
            try:
                getattr(instance, call.name)(**call.args)
            except Exception as error:
                raise UsageError(
                    f"{entry.id}: the ground-truth call {call.text} raised {error!r}"
                ) from None
            after = encode(instance)
            flags.append(public(after) == public(before))
            if after != before:
                writes.add(call.name)
        reads[entry.id] = flags
    return writes, reads


def public(encoded: dict[str, Any]) -> dict[str, Any]:
    """The attributes of an encoded backend that BFCL's state check compares (not those
    whose names start with `_`: a current directory, a random generator, a cache)."""
    return {k: v for k, v in encoded["attrs"].items() if not k.startswith("_")}


TOOLS_HEADER = '''"""BFCL's backend methods as toolproof tools, written by `toolproof import bfcl`.

Each tool decodes its backend from the trial's world, calls BFCL's own method, and writes
the backend's new state back (toolproof.importers.bfcl.state)."""

from __future__ import annotations

from typing import Any

from toolproof.importers.bfcl import invoke
from toolproof.tools import tool
from toolproof.world import World


def given(**arguments: Any) -> dict[str, Any]:
    """The arguments the model gave: an optional one it left out keeps the method's default."""
    return {k: v for k, v in arguments.items() if v is not None}
'''


def task_data(entry: Entry, reads: list[bool]) -> dict[str, Any]:
    """One entry as a toolproof task. Its reads are matched on the arguments the ground
    truth gives them: the same call on the same state returns what BFCL's response check
    looks for."""
    calls: list[Call] = [c for turn in entry.ground_truth for c in turn]
    said = [t for t in entry.turns if t]
    classes = entry.involved_classes
    return {
        "id": entry.id,
        "story": f"BFCL {entry.id}: {len(entry.turns)} user turns over {', '.join(classes)}.",
        "tags": ["bfcl", entry.category, *classes],
        "initial_state": {
            c: encode(load_instance(c, entry.initial_config.get(c, {}), entry.long_context))
            for c in classes
        },
        "user": {"opening": said[0], "turns": [{"say": t} for t in said[1:]]},
        "expect": {
            "actions": [{"tool": c.name, "args": _json(c.args)} for c in calls],
            "reads": [
                {"tool": c.name, "args": _json(c.args)}
                for c, is_read in zip(calls, reads, strict=True)
                if is_read
            ],
        },
    }


def _json(value: Any) -> Any:
    """Arguments as JSON data (a tuple BFCL wrote becomes a list)."""
    return json.loads(json.dumps(value))


def import_bfcl(
    category: str, out: Path, limit: int | None = None, ids: list[str] | None = None
) -> Imported:
    """Write BFCL's multi-turn `category` (its first `limit` entries, or those named in
    `ids`) as a suite in `out`."""
    if limit is not None and limit < 1:
        raise UsageError(f"--limit {limit}: give 1 or more")
    refuse_filled_folder(out, "--out")
    every = load_entries(category)
    entries = [e for e in every if e.id in ids] if ids is not None else every[:limit]
    writes, reads = classify_calls(every)
    version = metadata.version("bfcl-eval")
    classes = sorted({c for e in entries for c in e.involved_classes})
    docs = {c: function_docs(c) for c in classes}
    with staged_folder(out, "--out") as folder:
        (folder / "tasks").mkdir()
        (folder / "data").mkdir()
        for c in classes:
            # Each backend is a top-level key of the world; a task's initial state fills the
            # ones it involves, and the others stay empty.
            (folder / "data" / f"{c}.json").write_text("{}\n", encoding="utf-8")
        (folder / "policy.md").write_text(POLICY, encoding="utf-8")
        sources = [
            tool_function(
                c,
                d["name"],
                d["parameters"],
                d["name"] in writes,
                f"BFCL's {c}.{d['name']} (the model sees its function doc).",
            )
            for c in classes
            for d in docs[c]
        ]
        (folder / "tools.py").write_text(
            TOOLS_HEADER + "\n\n" + "\n\n".join(sources), encoding="utf-8"
        )
        tools = {
            d["name"]: {
                "tier": 1,
                "description": d["description"],
                "parameters": json_schema(d["parameters"]),
            }
            for c in classes
            for d in docs[c]
        }
        suite = {
            "name": f"bfcl-multi-turn-{category}".replace("_", "-"),
            "version": version,
            "description": f"BFCL v4 multi-turn '{category}' ({len(entries)} of {len(every)} "
            f"entries), imported from bfcl-eval {version} (Apache-2.0).",
            "policy": "policy.md",
            "world": {"data": ["data"]},
            "backends": {"bfcl": {"type": "python", "module": "tools.py"}},
            "tools": tools,
            "tasks": ["tasks/*.yaml"],
            "defaults": {"trials": 1, "k": [1], "max_steps": 60},
        }
        _dump(folder / "suite.yaml", suite)
        for entry in entries:
            _dump(folder / "tasks" / f"{entry.id}.yaml", [task_data(entry, reads[entry.id])])
    return Imported(out, len(entries), len(tools), version)


def _dump(path: Path, data: Any) -> None:
    header = "# Written by `toolproof import bfcl` from bfcl-eval (Apache-2.0).\n"
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    path.write_text(header + text, encoding="utf-8")
