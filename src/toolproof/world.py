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
import weakref
from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, SupportsIndex

import orjson
from pydantic import BaseModel, ConfigDict

from toolproof.bigints import as_text


def _read_only(*_args: Any, **_kwargs: Any) -> Any:
    raise TypeError(
        "this part of the world is shared by all trials and read-only; "
        "change the world through the `world` your tool receives"
    )


class FrozenDict(dict[str, Any]):
    """A read-only dict of the shared state; its Merkle digest is cached, and so, once a
    trial's copy of it changes, is its hash input (`_layout`): hashing the copy then
    recomputes only the entries it changed."""

    __slots__ = ("_digest", "_layout")
    _digest: bytes | None
    _layout: _Layout | None
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


_FROZEN = (FrozenDict, FrozenList)


_SCALARS = frozenset({str, int, float, bool, type(None)})


def freeze(value: Any) -> Any:
    """A frozen deep copy of JSON-like data (dicts with string keys, lists, scalars). Plain
    scalars are told apart by their exact type first, and containers are built by their own
    constructors: a suite's world of 1,200 orders freezes in half the time."""
    if type(value) in _SCALARS:
        return value
    if isinstance(value, Mapping):
        if not all(isinstance(key, str) for key in value):
            key = next(key for key in value if not isinstance(key, str))
            raise TypeError(f"world keys must be strings, got {key!r}")
        out = FrozenDict({key: freeze(item) for key, item in value.items()})
        out._digest = out._layout = None
        return out
    if isinstance(value, list | tuple):
        frozen = FrozenList(map(freeze, value))
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
    """Bookkeeping shared by the copy-on-write containers: each knows its parent and where
    in it it sits, so a change marks the path up to the root, and a dict knows which of its
    keys may differ from its base.

    The parent is held by a weak reference: a world is a tree again for the reference count,
    so a finished trial's copies are freed at once instead of waiting for the garbage
    collector to find the cycles (which cost more than making them). A parent no one holds
    is in no world, so a change below it has nothing left to mark."""

    __slots__ = ()
    if TYPE_CHECKING:
        _base: Any
        _parent: weakref.ref[_Cow] | None
        _key: str | int
        _dirty: bool

    def _touch(self) -> None:
        node: _Cow | None = self
        while node is not None and not node._dirty:
            node._dirty = True  # type: ignore[misc]
            if node._parent is None:
                return
            parent = node._parent()
            if parent is not None:
                parent._note(node._key)
            node = parent

    def _note(self, key: str | int) -> None:
        """The child at `key` changed (a list hashes and diffs all its items: a no-op)."""

    def _wrap(self, value: Any, key: str | int) -> Any:
        if type(value) is FrozenDict or type(value) is FrozenList:
            return _copy_of(value, weakref.ref(self), key)
        return value


class CowDict(_Cow, dict[str, Any]):
    """A trial's copy of a frozen dict, made when first read; children are wrapped lazily.

    `_changed` holds every key set, removed, or whose child changed: any other key still
    holds its base's value (or an unchanged copy of it), so the hash and the diff of a big
    collection visit only the keys a trial changed."""

    __slots__ = ("__weakref__", "_base", "_changed", "_dirty", "_key", "_parent")

    _changed: set[str]

    def _note(self, key: str | int) -> None:
        self._changed.add(key)  # type: ignore[arg-type]

    def __getitem__(self, key: str) -> Any:
        value = dict.__getitem__(self, key)
        kind = type(value)
        if kind is FrozenDict or kind is FrozenList:
            value = self._wrap(value, key)
            dict.__setitem__(self, key, value)
        return value

    def __iter__(self) -> Iterator[str]:
        return dict.__iter__(self)

    def _wrap_all(self) -> None:
        """Wrap every frozen child (iterating hands them all out): one pass over the dict,
        not a lookup per key."""
        parent: weakref.ref[_Cow] = weakref.ref(self)
        for key, value in [(k, v) for k, v in dict.items(self) if type(v) in _FROZEN]:
            dict.__setitem__(self, key, _copy_of(value, parent, key))

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default  # noqa: SIM401 - self.get is this method

    def values(self) -> Any:
        self._wrap_all()
        return dict.values(self)

    def items(self) -> Any:
        self._wrap_all()
        return dict.items(self)

    def __setitem__(self, key: str, value: Any) -> None:
        self._changed.add(key)
        self._touch()
        dict.__setitem__(self, key, value)

    def __delitem__(self, key: str) -> None:
        self._changed.add(key)
        self._touch()
        dict.__delitem__(self, key)

    def pop(self, key: str, *default: Any) -> Any:
        if key not in self:
            return dict.pop(self, key, *default)
        value = self[key]
        self._changed.add(key)
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
        self._changed.update(dict.keys(self))
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

    __slots__ = ("__weakref__", "_base", "_dirty", "_key", "_parent")

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        value = list.__getitem__(self, index)
        kind = type(value)
        if kind is FrozenDict or kind is FrozenList:
            value = self._wrap(value, index)
            list.__setitem__(self, index, value)
        return value

    def _wrap_all(self) -> None:
        parent: weakref.ref[_Cow] = weakref.ref(self)
        for i, value in [(i, v) for i, v in enumerate(list.__iter__(self)) if type(v) in _FROZEN]:
            list.__setitem__(self, i, _copy_of(value, parent, i))

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


def _copy_of(base: Any, parent: weakref.ref[_Cow] | None, key: str | int) -> Any:
    """A trial's copy of a frozen dict or list, made by the container's own constructor and
    given its bookkeeping here: a Python `__init__` doubled the cost of each copy, and a tool
    that reads through a collection copies every record in it."""
    copy: CowDict | CowList
    if isinstance(base, dict):
        copy = CowDict(base)
        copy._changed = set()
    else:
        copy = CowList(base)
    copy._base = base
    copy._parent = parent
    copy._key = key
    copy._dirty = False
    return copy


# ---------------------------------------------------------------- canonical hash


def _scalar(value: Any) -> bytes:
    try:
        return orjson.dumps(value)
    except TypeError:
        if isinstance(value, int):  # beyond 64 bits: hashed as the text it is stored as
            return orjson.dumps(as_text(value))
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
    if kind is CowDict or kind is CowList:
        if not value._dirty:
            return digest(value._base)
        if kind is CowDict and type(value._base) is FrozenDict:  # a World over plain data
            return _changed_dict(value)  # is hashed whole, as it may change under the World
    if isinstance(value, dict | list | tuple):
        return _compute(value)
    return hashlib.blake2b(_scalar(value), digest_size=16).digest()


def _item(key: str, value: Any) -> bytes:
    """One key's part of its dict's hash input."""
    return _scalar(key) + b":" + _entry(value) + b","


class _Layout(NamedTuple):
    """A frozen dict's hash input, laid out: each key's entry (in key order), the whole
    input, and where each entry starts in it."""

    entries: dict[str, bytes]
    text: bytes
    starts: dict[str, int]


def _layout(base: FrozenDict) -> _Layout:
    layout = base._layout
    if layout is None:
        entries = {key: _item(key, dict.__getitem__(base, key)) for key in sorted(base)}
        starts, at = {}, 1
        for key, entry in entries.items():
            starts[key] = at
            at += len(entry)
        layout = base._layout = _Layout(entries, b"{" + b"".join(entries.values()), starts)
    return layout


def _changed_dict(cow: CowDict) -> bytes:
    """The digest of a trial's changed copy of a dict: its base's hash input with the entries
    of the changed keys replaced; the same bytes `_compute` would hash, at the cost of the
    changed keys only (a trial that changes one of 1,000 orders rehashes one order). When no
    key was added or removed, the base's input is hashed around the new entries, in place."""
    entries, text, starts = _layout(cow._base)
    changed = cow._changed
    if all(key in starts and dict.__contains__(cow, key) for key in changed):
        h = hashlib.blake2b(digest_size=16)
        view, at = memoryview(text), 0
        for key in sorted(changed, key=starts.__getitem__):
            h.update(view[at : starts[key]])
            h.update(_item(key, dict.__getitem__(cow, key)))
            at = starts[key] + len(entries[key])
        h.update(view[at:])
        return h.digest()
    entries = dict(entries)
    added = False
    for key in changed:
        if dict.__contains__(cow, key):
            added = added or key not in entries
            entries[key] = _item(key, dict.__getitem__(cow, key))
        else:
            entries.pop(key, None)
    parts = [entries[key] for key in sorted(entries)] if added else entries.values()
    return hashlib.blake2b(b"{" + b"".join(parts), digest_size=16).digest()


def _compute(value: dict[str, Any] | list[Any] | tuple[Any, ...]) -> bytes:
    try:
        text = _hash_input(value)
    except TypeError:  # a key or value orjson refuses: the slow path says which, or copes
        text = _hash_input_by_entry(value)
    return hashlib.blake2b(text, digest_size=16).digest()


_CONTAINER = (dict, list, tuple)


def _hash_input(value: dict[str, Any] | list[Any] | tuple[Any, ...]) -> bytes:
    """The bytes a container's digest hashes, from one orjson call with each child container
    in place as its digest: `{"a":1,"b":#<digest>,` (keys sorted), `[1,#<digest>,`. The same
    bytes as `_hash_input_by_entry`, which serializes key by key and was most of a trial's
    time in hashing a large world once."""
    if isinstance(value, dict):
        text = orjson.dumps(
            {
                k: orjson.Fragment(b"#" + digest(v)) if isinstance(v, _CONTAINER) else v
                for k, v in dict.items(value)
            },
            option=orjson.OPT_SORT_KEYS,
        )
    else:
        text = orjson.dumps(
            [
                orjson.Fragment(b"#" + digest(v)) if isinstance(v, _CONTAINER) else v
                for v in (list.__iter__(value) if isinstance(value, list) else value)
            ]
        )
    return text[:-1] + b"," if len(text) > 2 else text[:1]


def _hash_input_by_entry(value: dict[str, Any] | list[Any] | tuple[Any, ...]) -> bytes:
    if isinstance(value, dict):
        return b"{" + b"".join(_item(key, dict.__getitem__(value, key)) for key in sorted(value))
    items = list.__iter__(value) if isinstance(value, list) else value
    return b"[" + b"".join(_entry(item) + b"," for item in items)


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
    if isinstance(cur, _Cow) and cur._base is old:
        if not cur._dirty:
            return
        if type(cur) is CowDict:
            _diff_dict(cur, old, path, out, cur._changed)
            return
    if isinstance(cur, dict) and isinstance(old, dict):
        _diff_dict(cur, old, path, out, None)
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


def _diff_dict(
    cur: dict[str, Any], old: dict[str, Any], path: str, out: list[Change], changed: set[str] | None
) -> None:
    """Removed keys in `old`'s order, then added and changed ones in `cur`'s. `changed`, when
    known (a trial's copy of `old`), holds the only keys that can differ: a trial that
    changes one of 1,000 orders visits one order."""
    if changed is None or any(k in old and not dict.__contains__(cur, k) for k in changed):
        for key in dict.keys(old):
            if key not in cur:
                out.append(Change(op="remove", path=f"{path}/{_escape(key)}", old=thaw(old[key])))
    keys = dict.keys(cur) if changed is None else filter(changed.__contains__, dict.keys(cur))
    for key in keys:
        here = f"{path}/{_escape(key)}"
        value = dict.__getitem__(cur, key)
        if key not in old:
            out.append(Change(op="add", path=here, value=thaw(value)))
        else:
            _diff(value, dict.__getitem__(old, key), here, out)


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
        self._root: CowDict = _copy_of(base, None, "")

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
        out._digest = out._layout = None
        return out
    if isinstance(value, list):
        items = FrozenList()
        for item in list.__iter__(value):
            list.append(items, _snapshot(item))
        items._digest = None
        return items
    return freeze(value)
