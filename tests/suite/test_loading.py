"""Loading sound suites: tools, policy, world, tasks from inline entries and task files."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest
from support import SOUND, SPEC_FIXTURE, edit, make_suite

from toolproof.errors import UsageError
from toolproof.suite import load_suite

FIXTURE = SPEC_FIXTURE
TOOLS = (FIXTURE / "tools.py").read_text(encoding="utf-8")


def only_tasks(entries: str) -> str:
    """The mini suite.yaml with its task list replaced by `entries` (YAML list items)."""
    head, _, _ = SOUND.partition("tasks:\n")
    return f"{head}tasks:\n{entries}defaults: {{trials: 3, k: [1, 3]}}\n"


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


ONE_TASK = """\
id: one
tags: [lookup]
user: {opening: "Where is order B?"}
expect:
  must_say: [shipped]
"""

TWO_TASKS = """\
- id: two
  user: {opening: "Where is order A?"}
  expect:
    must_say: [pending]

- id: three
  tags: [lookup]
  user: {opening: "Where is order A?"}
  expect:
    must_say: [pending]
"""

INLINE = """\
  - id: inline
    user: {opening: "Where is order B?"}
    expect: {must_say: [shipped]}
"""


# ---------------------------------------------------------------- the suite file


def test_tools_carry_tier_weight_kind_and_schema(here: Path) -> None:
    suite = load_suite(make_suite(here))
    get_order, cancel_order = suite.tools["get_order"], suite.tools["cancel_order"]
    assert (get_order.tier, get_order.weight, get_order.write) == (1, 0.7, False)
    assert (cancel_order.tier, cancel_order.weight, cancel_order.write) == (3, 0.3, True)
    assert get_order.backend == "t"
    assert get_order.schema.description == "Look up an order."
    assert get_order.schema.parameters["properties"]["order_id"] == {
        "type": "string",
        "description": "The order id.",
    }
    assert get_order.schema.parameters["required"] == ["order_id"]
    assert [s.name for s in suite.schemas()] == ["get_order", "cancel_order"]
    assert suite.tool_weights() == {"get_order": 0.7, "cancel_order": 0.3}


def test_policy_world_and_defaults_are_read(here: Path) -> None:
    suite = load_suite(make_suite(here))
    assert suite.name == "mini"
    assert suite.file.version == "1"
    assert suite.policy == "You are a support agent.\n"
    assert suite.world == {"orders": {"A": {"status": "pending"}, "B": {"status": "shipped"}}}
    assert suite.file.rule_names() == ["confirm_before_write"]
    assert (suite.file.defaults.trials, suite.file.defaults.k) == (3, [1, 3])
    assert suite.warnings == []


def test_k_values_are_sorted_and_deduplicated(here: Path) -> None:
    text = edit(SOUND, "k: [1, 3]", "k: [3, 1, 3]")
    suite = load_suite(make_suite(here, {"suite.yaml": text}))
    assert suite.file.defaults.k == [1, 3]


def test_suite_yaml_path_loads_like_its_folder(here: Path) -> None:
    make_suite(here)
    by_folder, by_file = load_suite(here), load_suite(here / "suite.yaml")
    assert by_folder.root == by_file.root == here.resolve()
    assert by_folder.content_hash == by_file.content_hash
    assert [t.id for t in by_file.tasks] == ["cancel", "status"]


def test_tool_entry_overrides_description_kind_and_parameters(here: Path) -> None:
    text = edit(
        SOUND,
        "  get_order: {tier: 1, weight: 0.7}\n",
        "  get_order:\n"
        "    tier: 1\n"
        "    write: true\n"
        "    description: Find an order by id.\n"
        "    parameters:\n"
        "      type: object\n"
        "      properties: {order_id: {type: string, pattern: '^[A-Z]$'}}\n",
    )
    suite = load_suite(make_suite(here, {"suite.yaml": text}))
    binding = suite.tools["get_order"]
    assert binding.write is True
    assert binding.weight is None
    assert binding.schema.description == "Find an order by id."
    assert binding.schema.parameters["properties"]["order_id"]["pattern"] == "^[A-Z]$"


def test_tools_may_name_their_backend_among_several(here: Path) -> None:
    text = edit(
        SOUND,
        "  t: {type: python, module: tools.py}\n",
        "  t: {type: python, module: tools.py}\n  more: {type: python, module: more.py}\n",
    )
    text = edit(text, "{tier: 1, weight: 0.7}", "{tier: 1, weight: 0.7, backend: t}")
    text = edit(text, "{tier: 3, weight: 0.3}", "{tier: 3, weight: 0.3, backend: t}")
    text = edit(text, "tools:\n", "tools:\n  ping: {tier: 2, backend: more}\n")
    more = (
        "from toolproof.tools import tool\n\n\n"
        "@tool\ndef ping() -> str:\n"
        '    """Check the service."""\n'
        '    return "pong"\n'
    )
    suite = load_suite(make_suite(here, {"suite.yaml": text, "more.py": more}))
    assert {name: b.backend for name, b in suite.tools.items()} == {
        "ping": "more",
        "get_order": "t",
        "cancel_order": "t",
    }


def test_backend_tool_left_out_of_tools_is_a_warning(here: Path) -> None:
    text = only_tasks("  - id: status\n    user: {opening: hi}\n    expect: {must_say: [x]}\n")
    text = edit(text, "  cancel_order: {tier: 3, weight: 0.3}\n", "")
    suite = load_suite(make_suite(here, {"suite.yaml": text}))
    assert list(suite.tools) == ["get_order"]
    assert suite.warnings == [
        "backend 't': tool 'cancel_order' is not listed under tools:, so no agent sees it"
    ]


def test_loading_leaves_sys_path_as_it_was(here: Path) -> None:
    before = list(sys.path)
    load_suite(make_suite(here))
    assert sys.path == before


# ---------------------------------------------------------------- the world


def test_world_folder_gives_one_collection_per_data_file(here: Path) -> None:
    text = edit(SOUND, "data: [orders.yaml]", "data: [data]")
    (here / "data").mkdir()
    (here / "data" / "customers.json").write_text('{"c1": {"name": "Ann"}}')
    (here / "data" / "products.json.gz").write_bytes(gzip.compress(b'{"p1": {"price": 5}}'))
    (here / "data" / "notes.txt").write_text("not data")
    files = {"suite.yaml": text, "data/orders.yml": "A: {status: pending}\n"}
    suite = load_suite(make_suite(here, files))
    assert suite.world == {
        "customers": {"c1": {"name": "Ann"}},
        "orders": {"A": {"status": "pending"}},
        "products": {"p1": {"price": 5}},
    }


def test_world_factory_is_merged_over_the_data(here: Path) -> None:
    text = edit(
        SOUND, "  data: [orders.yaml]\n", "  data: [orders.yaml]\n  factory: make.py:build\n"
    )
    make = "def build(data):\n    return {'counts': {'orders': len(data['orders'])}}\n"
    suite = load_suite(make_suite(here, {"suite.yaml": text, "make.py": make}))
    assert suite.world["counts"] == {"orders": 2}
    assert suite.world["orders"]["A"] == {"status": "pending"}


def test_initial_state_patches_only_its_own_task(here: Path) -> None:
    text = edit(
        SOUND,
        '    user: {opening: "Where is order B?"}\n',
        "    initial_state:\n      orders: {B: {status: lost}}\n"
        '    user: {opening: "Where is order B?"}\n',
    )
    suite = load_suite(make_suite(here, {"suite.yaml": text}))
    assert suite.start_state(suite.task("status"))["orders"]["B"] == {"status": "lost"}
    assert suite.start_state(suite.task("cancel"))["orders"]["B"] == {"status": "shipped"}
    assert suite.world["orders"]["B"] == {"status": "shipped"}


# ---------------------------------------------------------------- tasks


def test_inline_tasks_keep_order_source_and_line(here: Path) -> None:
    suite = load_suite(make_suite(here))
    assert [(t.id, t.source, t.line) for t in suite.tasks] == [
        ("cancel", "suite.yaml", 12),
        ("status", "suite.yaml", 23),
    ]
    cancel = suite.task("cancel").spec
    assert cancel.tags == ["cancel"]
    assert [(a.tool, dict(a.args)) for a in cancel.expect.actions or []] == [
        ("get_order", {"order_id": "A"}),
        ("cancel_order", {"order_id": "A"}),
    ]
    assert cancel.user.replies[0].when == "asks_confirmation"


def test_task_files_hold_one_task_or_a_list_of_tasks(here: Path) -> None:
    text = only_tasks("  - tasks/*.yaml\n")
    files = {"suite.yaml": text, "tasks/a.yaml": ONE_TASK, "tasks/b.yaml": TWO_TASKS}
    suite = load_suite(make_suite(here, files))
    assert [(t.id, t.source, t.line) for t in suite.tasks] == [
        ("one", "tasks/a.yaml", 1),
        ("two", "tasks/b.yaml", 1),
        ("three", "tasks/b.yaml", 6),
    ]


def test_task_entries_load_in_the_order_given(here: Path) -> None:
    text = only_tasks("  - tasks/b.yaml\n" + INLINE + "  - tasks/a.yaml\n")
    files = {"suite.yaml": text, "tasks/a.yaml": ONE_TASK, "tasks/b.yaml": TWO_TASKS}
    suite = load_suite(make_suite(here, files))
    assert [t.id for t in suite.tasks] == ["two", "three", "inline", "one"]
    assert suite.task("inline").source == "suite.yaml"


def test_json_task_file_is_loaded(here: Path) -> None:
    task = {"id": "j", "user": {"opening": "Where is B?"}, "expect": {"must_say": ["shipped"]}}
    text = only_tasks("  - more.json\n")
    suite = load_suite(make_suite(here, {"suite.yaml": text, "more.json": json.dumps(task)}))
    assert [(t.id, t.source, t.line) for t in suite.tasks] == [("j", "more.json", 1)]


def test_when_conditions_accept_shortcuts_contains_and_regex(here: Path) -> None:
    text = edit(
        SOUND,
        "      replies:\n",
        "      turns:\n"
        "        - say: It is A.\n"
        "          when: {contains: [which order]}\n"
        "        - say: Thanks.\n"
        "          when: {regex: 'cancel+ed'}\n"
        "      replies:\n",
    )
    suite = load_suite(make_suite(here, {"suite.yaml": text}))
    turns = suite.task("cancel").spec.user.turns
    assert turns[0].when.contains == ["which order"]  # type: ignore[union-attr]
    assert turns[1].when.regex == "cancel+ed"  # type: ignore[union-attr]


def test_tasks_are_selected_by_id_or_tag(here: Path) -> None:
    text = only_tasks("  - tasks/*.yaml\n")
    files = {"suite.yaml": text, "tasks/a.yaml": ONE_TASK, "tasks/b.yaml": TWO_TASKS}
    suite = load_suite(make_suite(here, files))
    assert [t.id for t in suite.select(None)] == ["one", "two", "three"]
    assert [t.id for t in suite.select("lookup")] == ["one", "three"]
    assert [t.id for t in suite.select(" two , one ")] == ["one", "two"]
    with pytest.raises(UsageError, match="nope"):
        suite.select("two,nope")
    with pytest.raises(UsageError, match="no task 'nope'"):
        suite.task("nope")


# ---------------------------------------------------------------- the content hash


def test_content_hash_depends_on_content_not_location(tmp_path: Path) -> None:
    files = {
        "suite.yaml": only_tasks("  - tasks/*.yaml\n"),
        "tasks/a.yaml": ONE_TASK,
        "tasks/b.yaml": TWO_TASKS,
    }
    first = load_suite(make_suite(tmp_path / "first", files))
    again = load_suite(tmp_path / "first")
    moved = load_suite(make_suite(tmp_path / "moved", files))
    assert first.content_hash == again.content_hash == moved.content_hash
    task_edited = {**files, "tasks/b.yaml": TWO_TASKS.replace("[pending]", "[waiting]", 1)}
    policy_edited = {**files, "policy.md": "Be brief.\n"}
    tools_edited = {**files, "tools.py": TOOLS + "\n# a comment\n"}
    hashes = {
        first.content_hash,
        load_suite(make_suite(tmp_path / "task", task_edited)).content_hash,
        load_suite(make_suite(tmp_path / "policy", policy_edited)).content_hash,
        load_suite(make_suite(tmp_path / "tools", tools_edited)).content_hash,
    }
    assert len(hashes) == 4


def test_task_hash_changes_only_with_that_task(here: Path) -> None:
    suite = load_suite(make_suite(here))
    text = edit(SOUND, 'must_say: ["cancelled"]', 'must_say: ["canceled"]')
    edited = load_suite(make_suite(here, {"suite.yaml": text}))
    assert suite.task("status").content_hash == edited.task("status").content_hash
    assert suite.task("cancel").content_hash != edited.task("cancel").content_hash
