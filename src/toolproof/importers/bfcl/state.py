"""BFCL's executable backends living in a toolproof world.

A BFCL backend is a Python object (GorillaFileSystem, TradingBot, ...) whose attributes are
its state. toolproof's world must stay JSON data that hashes and diffs, so each instance is
kept in the world as an encoding of every attribute it has, its nested objects, references
(a directory's parent, the current directory) and its private random generator included;
a tool call decodes the instance, calls the method and writes the new encoding back. The
world then changes exactly when the instance does, and replaying the same calls gives the
same world: the gold replay's hash is BFCL's "state after the ground-truth calls".
"""

from __future__ import annotations

import datetime
import importlib
import json
import random
from typing import Any

from toolproof.tools import ToolError
from toolproof.world import World, thaw

BACKEND_PACKAGE = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"
"""Only classes of BFCL's backends are rebuilt from a world (never an arbitrary import)."""

CLOCK = datetime.datetime(2024, 1, 1)
"""What a clock value reads as once rebuilt: a file's modification time is taken from the
machine's clock and read by no method, so it is not kept (it would make replays differ)."""

_OBJECT, _REF, _TUPLE, _SET, _RANDOM, _PAIRS, _CLOCK, _NONE = (
    "__object__",
    "__ref__",
    "__tuple__",
    "__set__",
    "__random__",
    "__pairs__",
    "__clock__",
    "__none__",
)
"""The tags of what JSON cannot say. None is tagged too: a task's initial state is a JSON
merge patch, in which null deletes a key."""


def encode(value: Any) -> Any:
    """`value` as JSON data; `decode` gives back an equal object graph."""
    return _encode(value, [], {})


def _encode(value: Any, path: list[Any], seen: dict[int, list[Any]]) -> Any:
    if value is None:
        return {_NONE: True}
    if isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, datetime.datetime):
        return {_CLOCK: True}
    if id(value) in seen:
        return {_REF: seen[id(value)]}
    if isinstance(value, random.Random):
        version, internal, gauss = value.getstate()
        return {_RANDOM: [version, list(internal), gauss]}
    if isinstance(value, list):
        return [_encode(v, [*path, i], seen) for i, v in enumerate(value)]
    if isinstance(value, tuple):
        return {_TUPLE: [_encode(v, [*path, _TUPLE, i], seen) for i, v in enumerate(value)]}
    if isinstance(value, set | frozenset):
        return {_SET: sorted((_encode(v, [], {}) for v in value), key=json.dumps)}
    if isinstance(value, dict):
        if all(isinstance(k, str) and not k.startswith("__") for k in value):
            return {k: _encode(v, [*path, k], seen) for k, v in value.items()}
        return {
            _PAIRS: [
                [_encode(k, [], {}), _encode(v, [*path, _PAIRS, i, 1], seen)]
                for i, (k, v) in enumerate(value.items())
            ]
        }
    kind = type(value)
    if kind.__module__.startswith(BACKEND_PACKAGE) and hasattr(value, "__dict__"):
        seen[id(value)] = path
        attrs = {k: _encode(v, [*path, "attrs", k], seen) for k, v in vars(value).items()}
        return {_OBJECT: f"{kind.__module__}:{kind.__qualname__}", "attrs": attrs}
    raise TypeError(f"cannot keep a {kind.__name__} in the world")


def decode(data: Any) -> Any:
    """The object graph `encode` wrote. A reference may come before the object it names (a
    world's keys need not keep their order), so references are filled in last."""
    made: dict[str, Any] = {}
    later: list[tuple[Any, Any, str]] = []
    value = _decode(data, [], made, later)
    for container, key, target in later:
        if isinstance(container, dict | list):
            container[key] = made[target]
        else:
            setattr(container, key, made[target])
    return value


def _decode(data: Any, path: list[Any], made: dict[str, Any], later: list[Any]) -> Any:
    if isinstance(data, list):
        items: list[Any] = []
        for i, v in enumerate(data):
            items.append(_child(items, i, v, [*path, i], made, later))
        return items
    if not isinstance(data, dict):
        return data
    if _NONE in data:
        return None
    if _CLOCK in data:
        return CLOCK
    if _RANDOM in data:
        version, internal, gauss = data[_RANDOM]
        generator = random.Random()
        generator.setstate((version, tuple(internal), gauss))
        return generator
    if _TUPLE in data:
        return tuple(_decode(data[_TUPLE], [*path, _TUPLE], made, later))
    if _SET in data:
        return {_decode(v, [], {}, []) for v in data[_SET]}
    if _PAIRS in data:
        pairs: dict[Any, Any] = {}
        for i, (k, v) in enumerate(data[_PAIRS]):
            key = _decode(k, [], {}, [])
            pairs[key] = _child(pairs, key, v, [*path, _PAIRS, i, 1], made, later)
        return pairs
    if _OBJECT in data:
        instance = _new(data[_OBJECT])
        made[json.dumps(path)] = instance
        for key, value in data["attrs"].items():
            setattr(instance, key, _child(instance, key, value, [*path, "attrs", key], made, later))
        return instance
    mapping: dict[str, Any] = {}
    for key, value in data.items():
        mapping[key] = _child(mapping, key, value, [*path, key], made, later)
    return mapping


def _child(
    container: Any, key: Any, data: Any, path: list[Any], made: dict[str, Any], later: list[Any]
) -> Any:
    """One member decoded; a reference is noted, to be filled in once everything is made."""
    if isinstance(data, dict) and _REF in data:
        later.append((container, key, json.dumps(list(data[_REF]))))
        return None
    return _decode(data, path, made, later)


def _new(name: str) -> Any:
    module_name, _, qualname = name.partition(":")
    if not module_name.startswith(BACKEND_PACKAGE):
        raise ValueError(f"{name}: not a BFCL backend class")
    kind = getattr(importlib.import_module(module_name), qualname)
    return kind.__new__(kind)


def backend_class(class_name: str) -> type:
    """BFCL's backend class by the name its entries use (`involved_classes`)."""
    from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING

    kind: type = getattr(importlib.import_module(CLASS_FILE_PATH_MAPPING[class_name]), class_name)
    return kind


def load_instance(class_name: str, config: dict[str, Any], long_context: bool) -> Any:
    """A backend as BFCL starts it for an entry: built, then its scenario loaded."""
    from bfcl_eval.constants.executable_backend_config import STATELESS_CLASSES

    instance = backend_class(class_name)()
    if class_name not in STATELESS_CLASSES:
        instance._load_scenario(json.loads(json.dumps(config)), long_context=long_context)
    return instance


def as_result(value: Any) -> Any:
    """A method's return value as a tool result: JSON data as it is, anything else as BFCL
    prints it (`str`)."""
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError):
        return str(value)


def invoke(world: World, class_name: str, method: str, arguments: dict[str, Any]) -> Any:
    """Call one method of the backend kept in the world under `class_name`, and keep its new
    state. BFCL's backends answer a refusal with `{"error": ...}`; that, and an exception,
    go back to the agent as an error (a call that did not succeed), after whatever the
    method changed is kept, as BFCL goes on with the instance as it is."""
    if not world.get(class_name):
        raise ToolError(f"{method}: {class_name} is not one of this task's systems", "not_found")
    before = thaw(world[class_name])
    instance = decode(before)
    try:
        result = getattr(instance, method)(**arguments)
    except Exception as error:
        _keep(world, class_name, before, instance)
        raise ToolError(f"Error during execution: {error}", kind="exception") from None
    _keep(world, class_name, before, instance)
    if isinstance(result, dict) and "error" in result:
        raise ToolError(str(result["error"]))
    return as_result(result)


def _keep(world: World, class_name: str, before: Any, instance: Any) -> None:
    after = encode(instance)
    if after != before:
        world[class_name] = after
