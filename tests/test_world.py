"""World: copy-on-write isolation, canonical hash, diff/apply, snapshot, merge and lookup."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolproof.world import Change, World, canonical_hash, diff, freeze, split_pointer, thaw

DATA: dict[str, Any] = {
    "orders": {
        "W1": {
            "status": "pending",
            "items": [{"sku": "A", "qty": 1}, {"sku": "B", "qty": 2}],
        },
        "W2": {"status": "delivered", "items": []},
    },
    "users": [{"id": "u1", "tags": ["vip"]}, {"id": "u2", "tags": []}],
    "meta": {"count": 2, "paths": {"a/b": 1, "~c": 2}},
}


@pytest.fixture
def base() -> Any:
    return freeze(DATA)


# ---------------------------------------------------------------- isolation

Mutation = Callable[[Any], None]


def _set_through_getitem(d: Any) -> None:
    d["orders"]["W1"]["status"] = "cancelled"


def _set_through_values(d: Any) -> None:
    for order in d["orders"].values():
        order["status"] = "lost"


def _append_through_items(d: Any) -> None:
    for order_id, order in d["orders"].items():
        order["items"].append({"sku": order_id, "qty": 0})


def _increment_through_list_iteration(d: Any) -> None:
    for item in d["orders"]["W1"]["items"]:
        item["qty"] += 10


def _set_through_get(d: Any) -> None:
    d.get("orders").get("W2")["status"] = "returned"
    d.get("meta")["paths"]["a/b"] = 99


def _move_through_pop(d: Any) -> None:
    order = d["orders"].pop("W1")
    order["items"][0]["qty"] = 5
    d["archive"] = {"W1": order}


def _pop_from_list(d: Any) -> None:
    user = d["users"].pop(0)
    user["tags"].append("gone")
    d["users"][0]["tags"].append("first")


def _set_through_setdefault(d: Any) -> None:
    d["orders"].setdefault("W1", {})["status"] = "held"
    d["orders"].setdefault("W3", {"status": "new"})["status"] = "newer"
    d.setdefault("log", []).append("x")


def _nested_list_of_dicts(d: Any) -> None:
    d["users"][1]["tags"].extend(["a", "b"])
    d["users"][0]["tags"][0] = "regular"
    d["orders"]["W1"]["items"][-1]["sku"] = "Z"


def _through_a_dict_copy(d: Any) -> None:
    orders = dict(d["orders"])
    orders["W9"] = {"status": "only in the copy"}
    orders["W1"]["status"] = "shared child"  # a shallow copy shares its children


def _through_copy_methods(d: Any) -> None:
    meta = d["meta"].copy()
    meta["count"] = 100
    items = list(d["orders"]["W1"]["items"])
    items.append("only in the copy")
    items[0]["qty"] = 7
    copy.copy(d["users"])[1]["id"] = "u22"


def _through_a_deepcopy(d: Any) -> None:
    orders = copy.deepcopy(d["orders"])
    orders["W1"]["status"] = "only in the deep copy"
    orders["W1"]["items"].clear()
    users = copy.deepcopy(d["users"])
    users[0]["tags"].append("deep")


def _delete_and_clear(d: Any) -> None:
    del d["meta"]["paths"]["~c"]
    d["orders"]["W2"].clear()
    del d["users"][1]


MUTATIONS = [
    _set_through_getitem,
    _set_through_values,
    _append_through_items,
    _increment_through_list_iteration,
    _set_through_get,
    _move_through_pop,
    _pop_from_list,
    _set_through_setdefault,
    _nested_list_of_dicts,
    _through_a_dict_copy,
    _through_copy_methods,
    _through_a_deepcopy,
    _delete_and_clear,
]


@pytest.mark.parametrize("mutate", MUTATIONS, ids=lambda f: f.__name__.strip("_"))
def test_a_worlds_changes_stay_in_that_world(base: Any, mutate: Mutation) -> None:
    first, second = World(base), World(base)
    second_before = second.to_plain()
    _ = [second[name] for name in second]  # wrap the second world's collections too
    reference = copy.deepcopy(DATA)
    mutate(first)
    mutate(reference)
    # the world behaves like plain nested dicts and lists ...
    assert first.to_plain() == reference
    # ... while the other world and the shared base do not change
    assert second.to_plain() == second_before == DATA
    assert thaw(base) == DATA
    assert second.hash() == World.from_data(DATA).hash()
    assert second.diff() == []


@pytest.mark.parametrize("mutate", MUTATIONS, ids=lambda f: f.__name__.strip("_"))
def test_changes_through_any_access_are_in_hash_diff_and_snapshot(
    base: Any, mutate: Mutation
) -> None:
    world = World(base)
    reference = copy.deepcopy(DATA)
    mutate(world)
    mutate(reference)
    assert world.hash() == World.from_data(reference).hash()
    replay = World(base)
    replay.apply(world.diff())
    assert replay.to_plain() == reference
    assert World(world.snapshot()).to_plain() == reference


def test_a_world_over_plain_data_reads_changes_and_hashes_it() -> None:
    world = World(copy.deepcopy(DATA))  # a caller's own dict, not frozen
    world["orders"]["W1"]["status"] = "shipped"
    world["fresh"] = {"n": 1}
    reference = copy.deepcopy(DATA)
    reference["orders"]["W1"]["status"] = "shipped"
    reference["fresh"] = {"n": 1}
    assert world.to_plain() == reference
    assert world.hash() == World.from_data(reference).hash()


def test_deepcopy_of_world_data_is_plain_data(base: Any) -> None:
    world = World(base)
    orders = copy.deepcopy(world["orders"])
    assert type(orders) is dict
    assert type(orders["W1"]["items"]) is list
    assert orders == DATA["orders"]


def _assign_nested(d: Any) -> None:
    d["orders"]["W1"]["status"] = "x"


def _delete_key(d: Any) -> None:
    del d["meta"]


def _update(d: Any) -> None:
    d["orders"].update({"W3": {}})


def _setdefault(d: Any) -> None:
    d.setdefault("new", 1)


def _pop(d: Any) -> None:
    d["meta"].pop("count")


def _popitem(d: Any) -> None:
    d["meta"].popitem()


def _clear(d: Any) -> None:
    d["orders"]["W2"].clear()


def _merge_in_place(d: Any) -> None:
    d["meta"] |= {"count": 3}


def _append(d: Any) -> None:
    d["users"].append({})


def _extend_nested(d: Any) -> None:
    d["users"][0]["tags"].extend(["y"])


def _set_list_item(d: Any) -> None:
    d["users"][0] = {}


def _delete_list_item(d: Any) -> None:
    del d["users"][0]


def _list_in_place_add(d: Any) -> None:
    d["users"][0]["tags"] += ["y"]


def _list_pop(d: Any) -> None:
    d["orders"]["W1"]["items"].pop()


def _list_reorder(d: Any) -> None:
    d["orders"]["W1"]["items"].reverse()


def _list_insert(d: Any) -> None:
    d["users"].insert(0, {})


@pytest.mark.parametrize(
    "mutate",
    [
        _assign_nested,
        _delete_key,
        _update,
        _setdefault,
        _pop,
        _popitem,
        _clear,
        _merge_in_place,
        _append,
        _extend_nested,
        _set_list_item,
        _delete_list_item,
        _list_in_place_add,
        _list_pop,
        _list_reorder,
        _list_insert,
    ],
    ids=lambda f: f.__name__.strip("_"),
)
def test_frozen_state_refuses_direct_changes(mutate: Mutation) -> None:
    frozen = freeze(DATA)
    with pytest.raises(TypeError, match="read-only"):
        mutate(frozen)
    assert thaw(frozen) == DATA


def test_snapshot_is_frozen(base: Any) -> None:
    world = World(base)
    world["orders"]["W1"]["status"] = "shipped"
    snapshot = world.snapshot()
    with pytest.raises(TypeError):
        snapshot["orders"]["W1"]["status"] = "x"
    with pytest.raises(TypeError):
        snapshot["users"].append(1)


def test_freeze_copies_its_input(base: Any) -> None:
    data = copy.deepcopy(DATA)
    frozen = freeze(data)
    data["orders"]["W1"]["status"] = "changed after freezing"
    assert frozen["orders"]["W1"]["status"] == "pending"


@pytest.mark.parametrize("bad", [{1: "x"}, {"a": {2: "x"}}, {"a": object()}, {"a": [{1, 2}]}])
def test_freeze_accepts_only_json_data(bad: Any) -> None:
    with pytest.raises(TypeError, match="world"):
        freeze(bad)


def test_freeze_turns_tuples_into_lists() -> None:
    assert thaw(freeze({"a": (1, (2, 3))})) == {"a": [1, [2, 3]]}


def test_fork_starts_from_the_current_state_and_is_independent(base: Any) -> None:
    world = World(base)
    world["meta"]["count"] = 3
    fork = world.fork()
    fork["meta"]["count"] = 4
    world["users"].pop()
    assert fork["meta"]["count"] == 4
    assert world["meta"]["count"] == 3
    assert len(fork["users"]) == 2
    assert fork.diff() == [Change(op="replace", path="/meta/count", value=4, old=3)]


# ---------------------------------------------------------------- canonical hash


def test_hash_does_not_depend_on_key_order() -> None:
    one = World.from_data({"a": 1, "b": {"c": [1, {"x": 1, "y": 2}], "d": None}})
    two = World.from_data({"b": {"d": None, "c": [1, {"y": 2, "x": 1}]}, "a": 1})
    assert one.hash() == two.hash()
    assert canonical_hash({"a": 1, "b": 2}) == canonical_hash({"b": 2, "a": 1})


def _reference_digest(value: Any) -> bytes:
    """The canonical hash's definition, key by key: `{"key":value,"key":#digest,` with keys
    sorted, `[value,#digest,` for lists, each scalar as JSON, each container as its digest."""
    h = hashlib.blake2b(digest_size=16)
    if isinstance(value, dict):
        h.update(b"{")
        for key in sorted(value):
            h.update(orjson.dumps(key) + b":" + _reference_entry(value[key]) + b",")
    else:
        h.update(b"[")
        for item in value:
            h.update(_reference_entry(item) + b",")
    return h.digest()


def _reference_entry(value: Any) -> bytes:
    if isinstance(value, dict | list | tuple):
        return b"#" + _reference_digest(value)
    return orjson.dumps(value)


UNICODE_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(), UNICODE_JSON, max_size=4))
def test_hash_follows_its_definition_for_any_keys_and_numbers(data: dict[str, Any]) -> None:
    """Stored runs keep their final hashes: however it is computed, the hash stays the one
    defined key by key (unicode keys sorted by code point, floats, NaN, big integers)."""
    expected = _reference_digest(data).hex()
    assert canonical_hash(data) == expected
    assert World.from_data(data).hash() == expected


def test_hash_of_a_known_world_is_unchanged() -> None:
    data = {
        "orders": {"W1": {"status": "pending", "total": 12.5, "items": [{"sku": "A", "qty": 1}]}},
        "é": {"": [], "~1/": {}, "big": 2**63 - 1, "neg": -0.0, "pair": (1, "x")},
    }
    data["orders"]["W1"].update({"note": None, "gift": True})
    assert World.from_data(data).hash() == "9fde5990369520d92ed635cda73cf943"


def test_a_changed_copy_of_a_large_collection_hashes_like_a_fresh_one() -> None:
    """A trial's hash recomputes only the entries it changed, added or removed; the result
    is the hash of the same data built from scratch."""
    data = {"orders": {f"W{i:04}": {"status": "pending", "qty": i} for i in range(500)}}
    world = World.from_data(data)
    world.hash()
    reference = copy.deepcopy(data)
    for order in ("W0007", "W0499", "W0000"):  # changed in place: no key added or removed
        world["orders"][order]["status"] = reference["orders"][order]["status"] = "shipped"
    world["orders"]["W0250"] = reference["orders"]["W0250"] = {"status": "replaced"}
    assert world.hash() == _reference_digest(reference).hex()
    del world["orders"]["W0100"]
    world["orders"]["W0000a"] = {"status": "new"}
    world["orders"]["W0200"] = world["orders"].pop("W0300")
    del reference["orders"]["W0100"]
    reference["orders"]["W0000a"] = {"status": "new"}
    reference["orders"]["W0200"] = reference["orders"].pop("W0300")
    assert world.hash() == _reference_digest(reference).hex()
    assert world.diff() == diff(world.to_plain(), World.from_data(data).snapshot())


def test_hash_is_a_16_byte_hex_digest(base: Any) -> None:
    digest = World(base).hash()
    assert len(digest) == 32
    int(digest, 16)


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ({"a": 1}, {"a": "1"}),
        ({"a": 1}, {"a": 2}),
        ({"a": 1}, {"b": 1}),
        ({"a": [1, 2]}, {"a": [2, 1]}),
        ({"a": {}}, {"a": []}),
        ({"a": [1]}, {"a": [[1]]}),
        ({"a": None}, {}),
        ({"a": {"b": 1}}, {"a": {"b": 1, "c": None}}),
        ({"a": ["x", "y"]}, {"a": ["xy"]}),
    ],
)
def test_different_content_gives_different_hashes(left: Any, right: Any) -> None:
    assert World.from_data(left).hash() != World.from_data(right).hash()


def test_changing_and_changing_back_restores_the_hash(base: Any) -> None:
    world = World(base)
    original = world.hash()
    world["orders"]["W1"]["status"] = "shipped"
    changed = world.hash()
    assert changed != original
    world["orders"]["W1"]["status"] = "pending"
    assert world.hash() == original
    item = world["orders"]["W1"]["items"].pop()
    assert world.hash() != original
    world["orders"]["W1"]["items"].append(item)
    assert world.hash() == original
    assert world.diff() == []


def test_equal_content_from_different_histories_has_one_hash(base: Any) -> None:
    built = World.from_data({})
    for key, value in reversed(list(DATA.items())):
        built[key] = copy.deepcopy(value)
    assert built.hash() == World(base).hash()

    rebuilt = World(base)
    meta = rebuilt.pop("meta")
    rebuilt["orders"] = {"W2": dict(rebuilt["orders"]["W2"]), "W1": rebuilt["orders"]["W1"]}
    rebuilt["meta"] = meta
    assert rebuilt.hash() == World(base).hash()


def test_reading_does_not_change_the_hash_or_the_diff(base: Any) -> None:
    world = World(base)
    original = world.hash()
    json.dumps(world.to_plain())
    for order in world["orders"].values():
        list(order["items"])
    world.lookup("users/1/tags")
    assert world.hash() == original
    assert world.diff() == []


# ---------------------------------------------------------------- diff and apply


def test_diff_lists_replaced_added_and_removed_values(base: Any) -> None:
    world = World(base)
    world["orders"]["W1"]["status"] = "shipped"
    world["orders"]["W3"] = {"status": "new"}
    del world["meta"]["count"]
    assert world.diff() == [
        Change(op="replace", path="/orders/W1/status", value="shipped", old="pending"),
        Change(op="add", path="/orders/W3", value={"status": "new"}),
        Change(op="remove", path="/meta/count", old=2),
    ]


def test_diff_escapes_slash_and_tilde_in_keys(base: Any) -> None:
    world = World(base)
    world["meta"]["paths"]["a/b"] = 10
    del world["meta"]["paths"]["~c"]
    world["meta"]["paths"]["~1/"] = 3
    changes = {change.path: change.op for change in world.diff()}
    assert changes == {
        "/meta/paths/a~1b": "replace",
        "/meta/paths/~0c": "remove",
        "/meta/paths/~01~1": "add",
    }
    assert split_pointer("/meta/paths/~01~1") == ["meta", "paths", "~1/"]


def test_diff_of_list_items_points_at_the_index(base: Any) -> None:
    world = World(base)
    world["orders"]["W1"]["items"][1]["qty"] = 3
    world["users"][0]["tags"].append("new")
    assert world.diff() == [
        Change(op="replace", path="/orders/W1/items/1/qty", value=3, old=2),
        Change(op="replace", path="/users/0/tags", value=["vip", "new"], old=["vip"]),
    ]


def test_diff_of_a_type_change_is_a_replace(base: Any) -> None:
    world = World(base)
    world["meta"]["count"] = "2"
    world["orders"]["W2"]["items"] = {}
    assert world.diff() == [
        Change(op="replace", path="/orders/W2/items", value={}, old=[]),
        Change(op="replace", path="/meta/count", value="2", old=2),
    ]


def test_an_untouched_world_has_no_diff(base: Any) -> None:
    assert World(base).diff() == []


def test_applying_a_diff_reproduces_the_world(base: Any) -> None:
    world = World(base)
    world["orders"]["W1"]["items"][0]["qty"] = 4
    world["orders"]["W1"]["items"].append({"sku": "C", "qty": 1})
    del world["orders"]["W2"]
    world["meta"]["paths"]["a/b"] = {"nested": ["x"]}
    world["meta"]["paths"]["new~/"] = None
    world["users"][1] = "replaced"
    world["fresh"] = {"list": [1, 2]}
    replay = World(base)
    replay.apply(world.diff())
    assert replay.hash() == world.hash()
    assert replay.to_plain() == world.to_plain()
    assert thaw(base) == DATA


def test_applied_values_are_copies_of_the_change(base: Any) -> None:
    change = Change(op="add", path="/fresh", value={"a": [1]})
    world = World(base)
    world.apply([change])
    world["fresh"]["a"].append(2)
    assert change.value == {"a": [1]}


def test_apply_refuses_to_replace_the_whole_world(base: Any) -> None:
    with pytest.raises(ValueError, match="whole world"):
        World(base).apply([Change(op="replace", path="", value={})])


# ---------------------------------------------------------------- snapshot


def test_snapshot_has_the_same_hash_and_an_empty_diff(base: Any) -> None:
    world = World(base)
    world["orders"]["W1"]["items"][0]["qty"] = 9
    world["users"].append({"id": "u3", "tags": []})
    del world["meta"]["paths"]["a/b"]
    again = World(world.snapshot())
    assert again.hash() == world.hash()
    assert again.diff() == []
    assert again.to_plain() == world.to_plain()


def test_snapshot_shares_untouched_subtrees(base: Any) -> None:
    world = World(base)
    world["orders"]["W1"]["status"] = "shipped"
    snapshot = world.snapshot()
    assert snapshot["users"] is base["users"]
    assert snapshot["orders"]["W2"] is base["orders"]["W2"]
    assert snapshot["orders"]["W1"] is not base["orders"]["W1"]


def test_changing_a_world_after_its_snapshot_leaves_the_snapshot(base: Any) -> None:
    world = World(base)
    world["meta"]["count"] = 3
    snapshot = world.snapshot()
    world["meta"]["count"] = 4
    world["meta"]["paths"]["a/b"] = 5
    assert thaw(snapshot)["meta"] == {"count": 3, "paths": {"a/b": 1, "~c": 2}}


# ---------------------------------------------------------------- merge, lookup, json


def test_merge_follows_json_merge_patch(base: Any) -> None:
    world = World(base)
    world.merge(
        {
            "orders": {"W1": {"status": "shipped", "note": "fragile"}, "W2": None, "W7": None},
            "meta": {"count": None, "paths": {"a/b": {"deep": None, "kept": 1}}},
            "users": [{"id": "only"}],
            "fresh": {"a": {"b": None, "c": [None]}},
        }
    )
    assert world.to_plain() == {
        "orders": {
            "W1": {
                "status": "shipped",
                "items": [{"sku": "A", "qty": 1}, {"sku": "B", "qty": 2}],
                "note": "fragile",
            },
        },
        "users": [{"id": "only"}],
        "meta": {"paths": {"a/b": {"kept": 1}, "~c": 2}},
        "fresh": {"a": {"c": [None]}},
    }
    assert thaw(base) == DATA


def test_merged_values_are_copies_of_the_patch(base: Any) -> None:
    patch = {"meta": {"tags": ["a"]}}
    world = World(base)
    world.merge(patch)
    world["meta"]["tags"].append("b")
    assert patch == {"meta": {"tags": ["a"]}}


def test_merge_replaces_a_list_with_a_mapping(base: Any) -> None:
    world = World(base)
    world.merge({"users": {"u1": {"tags": None}}})
    assert world["users"] == {"u1": {}}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("orders/W1/status", (True, "pending")),
        ("/orders/W1/status", (True, "pending")),
        ("orders/W1/items/1/sku", (True, "B")),
        ("/users/0/tags/0", (True, "vip")),
        ("meta/paths/a~1b", (True, 1)),
        ("meta/paths/~0c", (True, 2)),
        ("orders/W2/items", (True, [])),
        ("orders/W9", (False, None)),
        ("orders/W1/items/2", (False, None)),
        ("orders/W1/items/x", (False, None)),
        ("orders/W1/status/0", (False, None)),
        ("users/-1", (False, None)),
    ],
)
def test_lookup_follows_keys_and_list_indices(base: Any, path: str, expected: Any) -> None:
    assert World(base).lookup(path) == expected


def test_lookup_of_the_empty_path_is_the_whole_world(base: Any) -> None:
    found, value = World(base).lookup("")
    assert found
    assert thaw(value) == DATA


def test_lookup_sees_the_worlds_changes(base: Any) -> None:
    world = World(base)
    world["orders"]["W1"]["items"].append({"sku": "C"})
    assert world.lookup("orders/W1/items/2/sku") == (True, "C")


def test_world_data_serializes_as_json(base: Any) -> None:
    world = World(base)
    world["orders"]["W1"]["items"][0]["qty"] = 5
    expected = copy.deepcopy(DATA)
    expected["orders"]["W1"]["items"][0]["qty"] = 5
    assert json.loads(json.dumps(dict(world))) == expected
    assert json.loads(json.dumps(world["orders"], indent=2)) == expected["orders"]
    assert json.loads(json.dumps(world["users"])) == DATA["users"]
    assert json.loads(json.dumps(world.snapshot())) == expected


def test_to_plain_gives_builtin_containers(base: Any) -> None:
    plain = World(base).to_plain()
    assert type(plain) is dict
    assert type(plain["orders"]["W1"]) is dict
    assert type(plain["users"]) is list
    plain["orders"]["W1"]["status"] = "x"  # plain data is freely mutable
    assert thaw(base) == DATA


# ---------------------------------------------------------------- known defects


def test_a_tuple_value_hashes_like_the_list_it_freezes_to() -> None:
    world = World.from_data({})
    world["pair"] = (1, 2)
    assert world.hash() == World(world.snapshot()).hash()


def test_popitem_on_an_empty_dict_raises_key_error() -> None:
    world = World.from_data({"a": {}})
    with pytest.raises(KeyError):
        world["a"].popitem()


def test_a_top_level_empty_key_survives_diff_and_apply() -> None:
    base = freeze({"a": 1})
    world = World(base)
    world[""] = 5
    replay = World(base)
    replay.apply(world.diff())
    assert replay.hash() == world.hash()


# ---------------------------------------------------------------- random operations

KEYS = st.sampled_from(["a", "b", "c", "", "x/y", "~0", "~1/", "é"])
# the top-level key "" is left out: see test_a_top_level_empty_key_survives_diff_and_apply
TOP_KEYS = KEYS.filter(bool)
SCALARS = st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["", "s", "t"])
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
    max_leaves=5,
)
CONTAINERS = st.lists(JSON, max_size=3) | st.dictionaries(KEYS, JSON, max_size=3)
BASES = st.dictionaries(TOP_KEYS, CONTAINERS, min_size=1, max_size=3)

DICT_EDITS = ["set", "delete", "pop", "popitem", "setdefault", "update", "ior", "clear"]
LIST_EDITS = ["append", "pop", "setitem", "delitem", "insert", "iadd", "reverse", "clear"]
OPERATION = st.tuples(
    st.sampled_from(["edit"] * 4 + ["each", "move", "alias", "shallow_copy", "deep_copy"]),
    st.integers(0, 7),  # which edit (of DICT_EDITS or LIST_EDITS, by the container's type)
    st.integers(0, 1000),  # which container
    st.integers(0, 1000),  # which key or index inside it
    st.integers(0, 1000),  # which other container (for move, alias, copies)
    st.integers(0, 4),  # how to reach the containers
    KEYS,
    SCALARS | st.lists(SCALARS, max_size=2) | st.dictionaries(KEYS, SCALARS, max_size=2),
)


def _containers(root: Any) -> list[tuple[Any, ...]]:
    """Paths of every dict and list reachable from the reference root, root first."""
    found: list[tuple[Any, ...]] = []

    def walk(node: Any, path: tuple[Any, ...]) -> None:
        found.append(path)
        children = node.items() if isinstance(node, dict) else enumerate(node)
        for key, child in children:
            if isinstance(child, dict | list):
                walk(child, (*path, key))

    walk(root, ())
    return found


def _child(node: Any, step: Any, style: int) -> Any:
    """One step down, reached in one of several ways that all mean node[step]."""
    if isinstance(step, str):
        if style == 0:
            return node[step]
        if style == 1:
            return node.get(step)
        if style == 2:
            return next(value for key, value in node.items() if key == step)
        if style == 3:
            return next(
                value for key, value in zip(node, node.values(), strict=True) if key == step
            )
        return node.setdefault(step, None)
    if style == 0:
        return node[step]
    if style == 1:
        return list(node)[step]
    if style == 2:
        return next(value for i, value in enumerate(node) if i == step)
    if style == 3:
        return list(reversed(node))[len(node) - 1 - step]
    return node[step : step + 1][0]


def _reach(root: Any, path: tuple[Any, ...], style: int) -> Any:
    node = root
    for step in path:
        node = _child(node, step, style)
    return node


def _contains(outer: Any, inner: Any) -> bool:
    """Whether `inner` (by identity) is `outer` or lies inside it."""
    if outer is inner:
        return True
    children = outer.values() if isinstance(outer, dict) else outer
    return any(_contains(c, inner) for c in children if isinstance(c, dict | list))


def _is_tree(node: Any) -> bool:
    """Whether no container is reachable from `node` by two paths."""
    seen: set[int] = set()

    def walk(value: Any) -> bool:
        if not isinstance(value, dict | list):
            return True
        if id(value) in seen:
            return False
        seen.add(id(value))
        return all(walk(v) for v in (value.values() if isinstance(value, dict) else value))

    return walk(node)


MAX_SIZE = 60


def _size(node: Any) -> int:
    """Nodes in the data as a tree (shared subtrees counted each time)."""
    if isinstance(node, dict):
        return 1 + sum(_size(v) for v in node.values())
    if isinstance(node, list):
        return 1 + sum(_size(v) for v in node)
    return 1


def _edit_dict(w: Any, r: dict[str, Any], edit: str, where: int, key: str, value: Any) -> None:
    names = sorted(r)
    if not names and edit in ("delete", "pop", "popitem"):
        edit = "set"
    name = names[where % len(names)] if names else ""
    w_value, r_value = copy.deepcopy(value), copy.deepcopy(value)
    if edit == "set":
        w[key], r[key] = w_value, r_value
    elif edit == "delete":
        del w[name]
        del r[name]
    elif edit == "pop":
        assert w.pop(name) == r.pop(name)
    elif edit == "popitem":
        popped, w_popped = w.popitem()  # whichever key it takes, the reference loses it too
        assert w_popped == r.pop(popped)
    elif edit == "setdefault":
        w_got, r_got = w.setdefault(key, w_value), r.setdefault(key, r_value)
        if isinstance(r_got, list):
            w_got.append(1)
            r_got.append(1)
    elif edit == "update" or isinstance(w, World):  # a World has no |=
        w.update({key: w_value})
        r.update({key: r_value})
    elif edit == "ior":
        w |= {key: w_value}
        r |= {key: r_value}
    else:
        w.clear()
        r.clear()


def _edit_list(w: Any, r: list[Any], edit: str, where: int, value: Any) -> None:
    if not r and edit in ("pop", "setitem", "delitem"):
        edit = "append"
    index = where % len(r) if r else 0
    w_value, r_value = copy.deepcopy(value), copy.deepcopy(value)
    if edit == "append":
        w.append(w_value)
        r.append(r_value)
    elif edit == "pop":
        assert w.pop(index) == r.pop(index)
    elif edit == "setitem":
        w[index], r[index] = w_value, r_value
    elif edit == "delitem":
        del w[index]
        del r[index]
    elif edit == "insert":
        w.insert(where % (len(r) + 1), w_value)
        r.insert(where % (len(r) + 1), r_value)
    elif edit == "iadd":
        w += [w_value]
        r += [r_value]
    elif edit == "reverse":
        w.reverse()
        r.reverse()
    else:
        w.clear()
        r.clear()


def _do(world: World, ref: dict[str, Any], op: tuple[Any, ...]) -> None:
    """Apply one operation to the world and, identically, to the plain reference."""
    kind, edit, which, where, other, style, key, value = op
    paths = _containers(ref)
    path = paths[which % len(paths)]
    w_node, r_node = _reach(world, path, style), _reach(ref, path, style)
    if path == () and not key:
        key = "top"  # see test_a_top_level_empty_key_survives_diff_and_apply

    if kind == "edit":
        if isinstance(r_node, dict):
            _edit_dict(w_node, r_node, DICT_EDITS[edit], where, key, value)
        else:
            _edit_list(w_node, r_node, LIST_EDITS[edit], where, value)
        return

    if kind == "each":
        # change every container child reached by iterating over the chosen container
        w_children = w_node.values() if isinstance(r_node, dict) else w_node
        r_children = r_node.values() if isinstance(r_node, dict) else r_node
        for w_child, r_child in zip(list(w_children), list(r_children), strict=True):
            if isinstance(r_child, dict):
                w_child[key], r_child[key] = copy.deepcopy(value), copy.deepcopy(value)
            elif isinstance(r_child, list):
                w_child.append(copy.deepcopy(value))
                r_child.append(copy.deepcopy(value))
        return

    # move, alias or copy another container's data into the chosen container
    source = paths[other % len(paths)]
    w_source, r_source = _reach(world, source, style), _reach(ref, source, style)
    if kind == "move":
        if not isinstance(r_source, dict) or not r_source:
            return
        name = sorted(r_source)[where % len(r_source)]
        if isinstance(r_source[name], dict | list) and _contains(r_source[name], r_node):
            return  # it would contain itself
        w_value, r_value = w_source.pop(name), r_source.pop(name)
    elif source == ():
        return  # the World object itself is not world data
    elif _size(ref) + _size(r_source) > MAX_SIZE:
        return  # shared subtrees can double the data with every step
    elif kind == "alias":
        if _contains(r_source, r_node):
            return  # it would contain itself
        w_value, r_value = w_source, r_source
    elif kind == "shallow_copy":
        children = r_source.values() if isinstance(r_source, dict) else r_source
        if any(_contains(c, r_node) for c in children if isinstance(c, dict | list)):
            return  # it would contain itself
        w_value, r_value = copy.copy(w_source), copy.copy(r_source)
    elif not _is_tree(r_source):
        # world data is JSON, a tree; what a deep copy of a container shared by two paths is
        # (one container or two) is left open
        return
    else:
        w_value, r_value = copy.deepcopy(w_source), copy.deepcopy(r_source)
    if isinstance(r_node, dict):
        w_node[key], r_node[key] = w_value, r_value
    else:
        w_node.append(w_value)
        r_node.append(r_value)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(BASES, st.lists(OPERATION, min_size=5, max_size=30))
def test_random_operations_match_plain_data(data: dict[str, Any], ops: list[Any]) -> None:
    """Random edits, reached in random ways, do to a World what they do to plain data; its
    hash, diff and snapshot follow; its base and a world beside it never change."""
    base = freeze(data)
    base_hash = canonical_hash(base)
    bystander = World(base)
    _ = [_reach(bystander, path, 0) for path in _containers(data)]  # wrap it all
    world = World(base)
    ref = copy.deepcopy(data)

    for op in ops:
        _do(world, ref, op)
        assert world.hash() == World.from_data(ref).hash()

    assert world.to_plain() == ref
    assert world.hash() == World.from_data(ref).hash()
    replay = World(base)
    replay.apply(world.diff())
    assert replay.hash() == world.hash()
    assert replay.to_plain() == ref
    # visiting only what the trial changed lists what comparing everything lists, in order
    assert world.diff() == diff(world.to_plain(), base)
    again = World(world.snapshot())
    assert again.hash() == world.hash()
    assert again.diff() == []
    # nothing leaked into the shared base or the other world
    assert thaw(base) == data
    assert World.from_data(thaw(base)).hash() == base_hash
    assert bystander.to_plain() == data
    assert bystander.hash() == base_hash
    assert bystander.diff() == []
