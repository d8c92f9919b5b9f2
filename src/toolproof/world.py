"""World: each trial's isolated, mutable copy of a suite's state.

A suite's state is loaded once and frozen. A trial's world is a copy-on-write view over it:
reading a record wraps it in a shallow copy that belongs to the trial, and only what a trial
touches is ever copied. So a copy costs O(1), the canonical hash reuses the cached digests
of every untouched subtree (a Merkle hash), and the diff visits only touched nodes.

Tools use a world like nested dicts and lists. The frozen state underneath is read-only:
a tool can never change what another trial sees.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any, Literal, SupportsIndex

import orjson
from pydantic import BaseModel, ConfigDict


def _read_only(*_args: Any, **_kwargs: Any) -> Any:
    raise TypeError(
        "this part of the world is shared by all trials and read-only; "
        "change the world through the `world` your tool receives"
    )


class FrozenDict(dict[str, Any]):
    """A read-only dict of the shared state; its Merkle digest is cached."""

    __slots__ = ("_digest",)
    _digest: bytes | None
    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _read_only
    __ior__ = _read_only

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return thaw(self)


class FrozenList(list[Any]):
    """A read-only list of the shared state; its Merkle digest is cached."""

    __slots__ = ("_digest",)
    _digest: bytes | None
    __setitem__ = __delitem__ = append = extend = insert = pop = remove = clear = _read_only
    sort = reverse = __iadd__ = __imul__ = _read_only

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return thaw(self)


def freeze(value: Any) -> Any:
    """A frozen deep copy of JSON-like data (dicts with string keys, lists, scalars)."""
    if isinstance(value, Mapping):
        out = FrozenDict()
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"world keys must be strings, got {key!r}")
            dict.__setitem__(out, key, freeze(item))
        out._digest = None
        return out
    if isinstance(value, list | tuple):
        frozen = FrozenList()
        for item in value:
            list.append(frozen, freeze(item))
        frozen._digest = None
        return frozen
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise TypeError(f"world values must be JSON data, got {type(value).__name__}")


def thaw(value: Any) -> Any:
    """A plain deep copy (dicts, lists, scalars) of frozen, copy-on-write or plain data."""
    if isinstance(value, dict):
        return {k: thaw(v) for k, v in dict.items(value)}
    if isinstance(value, list):
        return [thaw(v) for v in list.__iter__(value)]
    if isinstance(value, tuple):
        return [thaw(v) for v in value]
    return value


class _Cow:
    """Bookkeeping shared by the copy-on-write containers."""

    __slots__ = ()
    if TYPE_CHECKING:
        _base: Any
        _parent: _Cow | None
        _dirty: bool

    def _touch(self) -> None:
        node: _Cow | None = self
        while node is not None and not node._dirty:
            node._dirty = True  # type: ignore[misc]
            node = node._parent

    def _wrap(self, value: Any) -> Any:
        kind = type(value)
        if kind is FrozenDict:
            return CowDict(value, self)
        if kind is FrozenList:
            return CowList(value, self)
        return value


class CowDict(_Cow, dict[str, Any]):
    """A trial's copy of a frozen dict, made when first read; children are wrapped lazily."""

    __slots__ = ("_base", "_dirty", "_parent")

    def __init__(self, base: FrozenDict, parent: _Cow | None) -> None:
        dict.__init__(self, base)
        self._base = base
        self._parent = parent
        self._dirty = False

    def __getitem__(self, key: str) -> Any:
        value = dict.__getitem__(self, key)
        kind = type(value)
        if kind is FrozenDict or kind is FrozenList:
            value = self._wrap(value)
            dict.__setitem__(self, key, value)
        return value

    def __iter__(self) -> Iterator[str]:
        return dict.__iter__(self)

    def _wrap_all(self) -> None:
        for key in list(dict.keys(self)):
            self[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default  # noqa: SIM401 - self.get is this method

    def values(self) -> Any:
        self._wrap_all()
        return dict.values(self)

    def items(self) -> Any:
        self._wrap_all()
        return dict.items(self)

    def __setitem__(self, key: str, value: Any) -> None:
        self._touch()
        dict.__setitem__(self, key, value)

    def __delitem__(self, key: str) -> None:
        self._touch()
        dict.__delitem__(self, key)

    def pop(self, key: str, *default: Any) -> Any:
        if key not in self:
            return dict.pop(self, key, *default)
        value = self[key]
        self._touch()
        dict.__delitem__(self, key)
        return value

    def popitem(self) -> tuple[str, Any]:
        if not dict.__len__(self):
            raise KeyError("popitem(): dictionary is empty")
        key = next(reversed(dict.keys(self)))
        return key, self.pop(key)

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def update(self, *args: Any, **kwargs: Any) -> None:
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def clear(self) -> None:
        self._touch()
        dict.clear(self)

    def copy(self) -> dict[str, Any]:
        return {key: self[key] for key in dict.keys(self)}

    __copy__ = copy

    def __or__(self, other: Any) -> dict[str, Any]:  # type: ignore[override]
        return {**self.copy(), **dict(other)}

    def __ior__(self, other: Any) -> CowDict:  # type: ignore[override]
        self.update(other)
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return thaw(self)

    def __reduce__(self) -> Any:
        return (dict, (thaw(self),))


def _mutate(name: str) -> Any:
    """A list method that marks the list (and its ancestors) changed before running."""
    method = getattr(list, name)

    def mutator(self: _Cow, *args: Any, **kwargs: Any) -> Any:
        self._touch()
        return method(self, *args, **kwargs)

    mutator.__name__ = name
    return mutator


class CowList(_Cow, list[Any]):
    """A trial's copy of a frozen list, made when first read; items are wrapped lazily."""

    __slots__ = ("_base", "_dirty", "_parent")

    def __init__(self, base: FrozenList, parent: _Cow | None) -> None:
        list.__init__(self, base)
        self._base = base
        self._parent = parent
        self._dirty = False

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        value = list.__getitem__(self, index)
        kind = type(value)
        if kind is FrozenDict or kind is FrozenList:
            value = self._wrap(value)
            list.__setitem__(self, index, value)
        return value

    def _wrap_all(self) -> None:
        for i in range(len(self)):
            self[i]

    def __iter__(self) -> Iterator[Any]:
        self._wrap_all()
        return list.__iter__(self)

    def __reversed__(self) -> Iterator[Any]:
        self._wrap_all()
        return list.__reversed__(self)

    __setitem__ = _mutate("__setitem__")
    __delitem__ = _mutate("__delitem__")
    append = _mutate("append")
    extend = _mutate("extend")
    insert = _mutate("insert")
    remove = _mutate("remove")
    clear = _mutate("clear")
    sort = _mutate("sort")
    reverse = _mutate("reverse")
    __iadd__ = _mutate("__iadd__")
    __imul__ = _mutate("__imul__")

    def pop(self, index: SupportsIndex = -1) -> Any:
        value = self[index]
        self._touch()
        list.pop(self, index)
        return value

    def copy(self) -> list[Any]:
        return list(self)

    __copy__ = copy

    def __add__(self, other: Any) -> list[Any]:
        return [*self, *other]

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return thaw(self)

    def __reduce__(self) -> Any:
        return (list, (thaw(self),))


# ---------------------------------------------------------------- canonical hash


def _scalar(value: Any) -> bytes:
    try:
        return orjson.dumps(value)
    except TypeError:
        raise TypeError(f"world values must be JSON data, got {type(value).__name__}") from None


def _entry(value: Any) -> bytes:
    if isinstance(value, dict | list | tuple):
        return b"#" + digest(value)
    return _scalar(value)


def digest(value: Any) -> bytes:
    """The canonical 16-byte digest of JSON-like data, independent of dict key order."""
    kind = type(value)
    if kind is FrozenDict or kind is FrozenList:
        cached: bytes | None = value._digest
        if cached is None:
            cached = _compute(value)
            value._digest = cached
        return cached
    if (kind is CowDict or kind is CowList) and not value._dirty:
        return digest(value._base)
    if isinstance(value, dict | list | tuple):
        return _compute(value)
    return hashlib.blake2b(_scalar(value), digest_size=16).digest()


def _compute(value: dict[str, Any] | list[Any] | tuple[Any, ...]) -> bytes:
    h = hashlib.blake2b(digest_size=16)
    if isinstance(value, dict):
        h.update(b"{")
        for key in sorted(dict.keys(value)):
            h.update(_scalar(key))
            h.update(b":")
            h.update(_entry(dict.__getitem__(value, key)))
            h.update(b",")
    else:
        h.update(b"[")
        for item in list.__iter__(value) if isinstance(value, list) else value:
            h.update(_entry(item))
            h.update(b",")
    return h.digest()


def canonical_hash(value: Any) -> str:
    """Hex form of `digest`."""
    return digest(value).hex()


# ---------------------------------------------------------------- diff


class Change(BaseModel):
    """One difference between two worlds, at a JSON Pointer path."""

    model_config = ConfigDict(frozen=True)

    op: Literal["add", "remove", "replace"]
    path: str
    value: Any = None
    old: Any = None


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def split_pointer(path: str) -> list[str]:
    """`/orders/W1/status` or `orders/W1/status` -> ["orders", "W1", "status"]; "" is the
    whole world and "/" the top-level key "" (as in JSON Pointer)."""
    if not path:
        return []
    parts = path[1:].split("/") if path.startswith("/") else path.split("/")
    return [p.replace("~1", "/").replace("~0", "~") for p in parts]


def diff(current: Any, before: Any, path: str = "") -> list[Change]:
    """The changes that turn `before` into `current`; untouched subtrees are skipped."""
    out: list[Change] = []
    _diff(current, before, path, out)
    return out


def _diff(cur: Any, old: Any, path: str, out: list[Change]) -> None:
    if cur is old:
        return
    if isinstance(cur, _Cow) and cur._base is old and not cur._dirty:
        return
    if isinstance(cur, dict) and isinstance(old, dict):
        for key in dict.keys(old):
            if key not in cur:
                out.append(Change(op="remove", path=f"{path}/{_escape(key)}", old=thaw(old[key])))
        for key in dict.keys(cur):
            here = f"{path}/{_escape(key)}"
            value = dict.__getitem__(cur, key)
            if key not in old:
                out.append(Change(op="add", path=here, value=thaw(value)))
            else:
                _diff(value, dict.__getitem__(old, key), here, out)
        return
    if isinstance(cur, list) and isinstance(old, list) and len(cur) == len(old):
        for i, (a, b) in enumerate(zip(list.__iter__(cur), list.__iter__(old), strict=True)):
            _diff(a, b, f"{path}/{i}", out)
        return
    if type(cur) is type(old) and cur == old:
        return
    if isinstance(cur, dict | list) and isinstance(old, dict | list) and thaw(cur) == thaw(old):
        return
    out.append(Change(op="replace", path=path, value=thaw(cur), old=thaw(old)))


def describe_changes(
    got: Iterable[Change], expected: Iterable[Change], name: str = "got", most: int = 3
) -> str:
    """Where two sets of changes to the same starting world disagree, first paths first:
    `/orders/W1/status: expected 'cancelled', got 'pending'`. A failing state check says
    this instead of only that two hashes differ."""
    want = {c.path: c for c in expected}
    have = {c.path: c for c in got}
    lines = []
    for path in sorted(want.keys() | have.keys()):
        a, b = want.get(path), have.get(path)
        if a is not None and b is not None and (a.op, a.value) == (b.op, b.value):
            continue
        lines.append(f"{path or '/'}: expected {_shown(a)}, {name} {_shown(b)}")
    if not lines:
        return "no path differs by value (a value's type may, e.g. 1 against 1.0)"
    more = f" (+{len(lines) - most} more)" if len(lines) > most else ""
    return "; ".join(lines[:most]) + more


def _shown(change: Change | None) -> str:
    if change is None:
        return "unchanged"
    if change.op == "remove":
        return "removed"
    text = repr(change.value)
    return text if len(text) <= 60 else text[:57] + "..."


# ---------------------------------------------------------------- the world


class World(MutableMapping[str, Any]):
    """One trial's world: a mapping of collections, copy-on-write over a frozen state."""

    def __init__(self, base: FrozenDict) -> None:
        self._start = base
        self._root = CowDict(base, None)

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> World:
        return cls(freeze(data))

    def __getitem__(self, key: str) -> Any:
        return self._root[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self._root[key] = value

    def __delitem__(self, key: str) -> None:
        del self._root[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._root)

    def __len__(self) -> int:
        return len(self._root)

    def __repr__(self) -> str:
        return f"World({len(self)} collections, hash={self.hash()[:12]})"

    def hash(self) -> str:
        """Canonical hash of the current state (key order never matters)."""
        return canonical_hash(self._root)

    def diff(self) -> list[Change]:
        """What changed since this world was created."""
        return diff(self._root, self._start)

    def snapshot(self) -> FrozenDict:
        """The current state, frozen; untouched subtrees are shared, not copied."""
        result: FrozenDict = _snapshot(self._root)
        return result

    def fork(self) -> World:
        """A new independent world starting from this one's current state."""
        return World(self.snapshot())

    def to_plain(self) -> dict[str, Any]:
        result: dict[str, Any] = thaw(self._root)
        return result

    def lookup(self, path: str) -> tuple[bool, Any]:
        """(found, value) at a path such as `orders/W1001/status`; list indices are numbers."""
        node: Any = self._root
        for part in split_pointer(path):
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return False, None
        return True, node

    def merge(self, patch: Mapping[str, Any]) -> None:
        """Apply a JSON merge patch (RFC 7386): null deletes, mappings merge, the rest replaces."""
        _merge(self._root, patch)

    def apply(self, changes: Iterable[Change]) -> None:
        """Replay changes produced by `diff` (for re-grading stored trials)."""
        for change in changes:
            parts = split_pointer(change.path)
            if not parts:
                raise ValueError("cannot replace the whole world")
            parent: Any = self._root
            for part in parts[:-1]:
                parent = parent[int(part)] if isinstance(parent, list) else parent[part]
            last: Any = int(parts[-1]) if isinstance(parent, list) else parts[-1]
            if change.op == "remove":
                del parent[last]
            else:
                parent[last] = thaw(change.value)


def _merge(target: MutableMapping[str, Any], patch: Mapping[str, Any]) -> None:
    for key, value in patch.items():
        if value is None:
            if key in target:
                del target[key]
        elif isinstance(value, Mapping) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        elif isinstance(value, Mapping):
            target[key] = {}
            _merge(target[key], value)
        else:
            target[key] = thaw(value)


def _snapshot(value: Any) -> Any:
    kind = type(value)
    if kind is FrozenDict or kind is FrozenList:
        return value
    if (kind is CowDict or kind is CowList) and not value._dirty:
        return value._base
    if isinstance(value, dict):
        out = FrozenDict()
        for key in dict.keys(value):
            dict.__setitem__(out, key, _snapshot(dict.__getitem__(value, key)))
        out._digest = None
        return out
    if isinstance(value, list):
        items = FrozenList()
        for item in list.__iter__(value):
            list.append(items, _snapshot(item))
        items._digest = None
        return items
    return freeze(value)
