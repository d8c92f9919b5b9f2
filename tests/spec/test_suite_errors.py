"""Every problem in a suite is reported as `path:line: message`, all of them in one pass.

Each kind of problem is checked through the API (`load_suite` raising `SuiteError` whose
problems carry the file, the line and what is wrong) and, for a representative subset, through
the command line (exit code 2, `path:line:` on stderr, no traceback).

The suites are built in a temporary folder from the sound suite in `fixtures/mini`, with the
text under test edited in; expected lines are counted in that text.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest
from support import SOUND, SPEC_FIXTURE, edit, line_with, make_suite

from toolproof.errors import Problem, SuiteError
from toolproof.suite import load_suite

FIXTURE = SPEC_FIXTURE
TOOLS = (FIXTURE / "tools.py").read_text(encoding="utf-8")
CLI = Path(sys.executable).parent / "toolproof"


def problems_of(root: Path) -> list[Problem]:
    with pytest.raises(SuiteError) as info:
        load_suite(root)
    assert info.value.problems, "a SuiteError without problems"
    return info.value.problems


def only_problem(root: Path) -> Problem:
    problems = problems_of(root)
    assert len(problems) == 1, "\n".join(map(str, problems))
    return problems[0]


def cli(*args: str, cwd: Path, columns: int = 200) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": str(columns), "NO_COLOR": "1"}
    return subprocess.run(
        [str(CLI), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A suite folder that is also the working directory, so problems name `suite.yaml`."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


# ---------------------------------------------------------------- the fixture itself


def test_the_mini_fixture_is_a_sound_suite(here: Path) -> None:
    suite = load_suite(make_suite(here))
    assert [t.id for t in suite.tasks] == ["cancel", "status"]


# ---------------------------------------------------------------- YAML syntax


def test_yaml_syntax_error_in_suite_file_is_located(here: Path) -> None:
    text = edit(SOUND, "policy: policy.md", "policy: policy.md: oops")
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert problem.path == "suite.yaml"
    assert problem.line == 2
    assert "YAML syntax error" in problem.message
    assert "mapping values are not allowed" in problem.message


def test_tab_indentation_is_a_located_syntax_error(here: Path) -> None:
    text = edit(SOUND, "world:\n  data:", "world:\n\tdata:")
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert (problem.path, problem.line) == ("suite.yaml", line_with(text, "\tdata"))
    assert "YAML syntax error" in problem.message


def test_duplicate_yaml_key_is_located(here: Path) -> None:
    text = edit(SOUND, "name: mini\n", "name: mini\nname: again\n")
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert (problem.path, problem.line) == ("suite.yaml", 2)
    assert "duplicate key 'name'" in problem.message


def test_suite_file_that_is_not_a_mapping_is_reported(here: Path) -> None:
    problem = only_problem(make_suite(here, {"suite.yaml": "- just\n- a list\n"}))
    assert (problem.path, problem.line) == ("suite.yaml", 1)
    assert "mapping" in problem.message


def test_folder_without_suite_file_is_reported(here: Path) -> None:
    problem = only_problem(here)
    assert problem.path == "suite.yaml"
    assert "suite.yaml not found" in problem.message


# ---------------------------------------------------------------- YAML that would expand


def alias_bomb(indent: str, levels: int = 9) -> str:
    """A billion laughs: each level an anchored list of nine aliases of the level before."""
    lines = [f'{indent}l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, levels + 1):
        aliases = ", ".join([f"*l{level - 1}"] * 9)
        lines.append(f"{indent}l{level}: &l{level} [{aliases}]")
    return "\n".join(lines) + "\n"


def with_initial_state(body: str) -> str:
    """The sound suite with `orders:` of the status task's initial state set to `body`."""
    return edit(
        SOUND, "  - id: status\n", f"  - id: status\n    initial_state:\n      orders:\n{body}"
    )


def test_an_alias_bomb_in_initial_state_is_refused_at_its_alias(here: Path) -> None:
    bomb = alias_bomb("        ")
    assert len(bomb) < 1024
    text = with_initial_state(bomb)
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert problem.path == "suite.yaml"
    assert problem.line == line_with(text, "l5: &l5")  # where the repeated nodes pass 100,000
    assert "YAML refused: aliases repeat more than 100,000 nodes (at *l4)" in problem.message


def test_an_alias_bomb_in_world_data_names_the_data_file(here: Path) -> None:
    data = "A: {status: pending}\nB: {status: shipped}\nbomb:\n" + alias_bomb("  ")
    problem = only_problem(make_suite(here, {"orders.yaml": data}))
    assert (problem.path, problem.line) == ("orders.yaml", line_with(data, "l5: &l5"))
    assert "aliases repeat more than" in problem.message


def test_aliases_that_repeat_little_still_load(here: Path) -> None:
    data = (
        "base: &base {status: pending, items: [1, 2, 3]}\n"
        "A: *base\n"
        "B: {<<: *base, status: shipped}\n"
    )
    suite = load_suite(make_suite(here, {"orders.yaml": data}))
    assert suite.world["orders"]["A"]["status"] == "pending"
    assert suite.world["orders"]["B"] == {"status": "shipped", "items": [1, 2, 3]}


def test_nesting_250_levels_deep_is_refused_where_it_passes_the_limit(here: Path) -> None:
    deep = "[" * 250 + "1" + "]" * 250
    text = with_initial_state(f"        C: {{status: pending, deep: {deep}}}\n")
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert (problem.path, problem.line) == ("suite.yaml", line_with(text, "deep: [[["))
    assert problem.message == "YAML refused: nesting deeper than 100 levels"


def test_nesting_in_block_style_is_refused_at_its_line(here: Path) -> None:
    lines = [f"{'  ' * i}k{i}:" for i in range(120)]
    data = (
        "A: {status: pending}\nB: {status: shipped}\nC:\n"
        + "\n".join("  " + line for line in lines)
        + " 1\n"
    )
    problem = only_problem(make_suite(here, {"orders.yaml": data}))
    assert problem.path == "orders.yaml"
    assert problem.line == line_with(data, " k98:")  # the 101st level: C is the first
    assert "nesting deeper than 100 levels" in problem.message


def test_an_alias_that_nests_data_too_deep_is_refused(here: Path) -> None:
    deep = "[" * 60 + "1" + "]" * 60
    data = f"A: {{status: pending}}\nB: {{status: shipped}}\nx: &x {deep}\ny: {{z: [[*x]]}}\n"
    data = edit(data, "y: {z: [[*x]]}", "y: " + "[" * 45 + "*x" + "]" * 45)
    problem = only_problem(make_suite(here, {"orders.yaml": data}))
    assert (problem.path, problem.line) == ("orders.yaml", 4)
    assert "alias *x nests the data deeper than 100 levels" in problem.message


def test_an_alias_inside_its_own_anchor_is_refused(here: Path) -> None:
    data = "A: {status: pending}\nB: {status: shipped}\nloop: &loop [1, *loop]\n"
    problem = only_problem(make_suite(here, {"orders.yaml": data}))
    assert (problem.path, problem.line) == ("orders.yaml", 3)
    assert "alias *loop refers to a node that contains it" in problem.message


def test_json_world_data_nested_too_deep_is_refused(here: Path) -> None:
    text = edit(SOUND, "data: [orders.yaml]", "data: [orders.json]")
    data = (
        '{"A": {"status": "pending"}, "B": {"status": "shipped"}, "x": '
        + ("[" * 150 + "]" * 150)
        + "}"
    )
    problem = only_problem(make_suite(here, {"suite.yaml": text, "orders.json": data}))
    assert problem.path == "orders.json"
    assert problem.message == "nesting deeper than 100 levels"


def test_yaml_dates_load_as_the_strings_they_are_written_as(here: Path) -> None:
    data = "A: {status: pending, placed: 2026-11-05}\nB: {status: shipped}\n"
    suite = load_suite(make_suite(here, {"orders.yaml": data}))
    assert suite.world["orders"]["A"]["placed"] == "2026-11-05"


# ---------------------------------------------------------------- unknown and missing fields


def test_unknown_top_level_field_is_named_and_located(here: Path) -> None:
    text = edit(SOUND, "name: mini\n", "name: mini\nnmae: typo\n")
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert (problem.path, problem.line) == ("suite.yaml", 2)
    assert "unknown field 'nmae'" in problem.message


def test_unknown_field_in_tool_entry_names_the_tool(here: Path) -> None:
    text = edit(SOUND, "get_order: {tier: 1, weight: 0.7}", "get_order: {tier: 1, wieght: 0.7}")
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert (problem.path, problem.line) == ("suite.yaml", line_with(text, "wieght"))
    assert "unknown field 'wieght' in tools.get_order" in problem.message


def test_unknown_field_in_expect_names_the_field(here: Path) -> None:
    text = edit(SOUND, 'must_say: ["cancelled"]', 'must_sayy: ["cancelled"]')
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert (problem.path, problem.line) == ("suite.yaml", line_with(text, "must_sayy"))
    assert "unknown field 'must_sayy' in expect" in problem.message


def test_unknown_field_in_user_reply_names_the_field_and_the_missing_one(here: Path) -> None:
    text = edit(SOUND, "{when: asks_confirmation,", "{whem: asks_confirmation,")
    problems = problems_of(make_suite(here, {"suite.yaml": text}))
    line = line_with(text, "whem")
    assert {(p.path, p.line) for p in problems} == {("suite.yaml", line)}
    messages = " | ".join(p.message for p in problems)
    assert "unknown field 'whem' in user.replies.0" in messages
    assert "missing required field 'user.replies.0.when'" in messages


def test_missing_required_field_is_named(here: Path) -> None:
    text = edit(SOUND, "name: mini\n", "")
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert problem.path == "suite.yaml"
    assert problem.line == 1
    assert "missing required field 'name'" in problem.message


def test_task_without_user_is_located_at_the_task(here: Path) -> None:
    text = edit(SOUND, '    user: {opening: "Where is order B?"}\n', "")
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert (problem.path, problem.line) == ("suite.yaml", line_with(text, "- id: status"))
    assert "missing required field 'user'" in problem.message


def test_wrong_value_in_suite_head_is_located(here: Path) -> None:
    text = edit(SOUND, "cancel_order: {tier: 3,", "cancel_order: {tier: 4,")
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert (problem.path, problem.line) == ("suite.yaml", line_with(text, "tier: 4"))
    assert "tools.cancel_order.tier" in problem.message
    assert "1, 2 or 3" in problem.message


def test_task_id_with_spaces_is_located(here: Path) -> None:
    text = edit(SOUND, "- id: status", "- id: order status")
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert (problem.path, problem.line) == ("suite.yaml", line_with(text, "order status"))
    assert "task ids" in problem.message


def test_state_check_with_two_checks_is_located(here: Path) -> None:
    text = edit(
        SOUND,
        "      must_say: [shipped]\n",
        "      must_say: [shipped]\n"
        "      state:\n"
        "        - {path: orders/B/status, equals: shipped, exists: true}\n",
    )
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert (problem.path, problem.line) == ("suite.yaml", line_with(text, "path: orders/B"))
    assert "exactly one of equals" in problem.message


# ---------------------------------------------------------------- gold actions


def test_unknown_tool_in_gold_action_is_located(here: Path) -> None:
    text = edit(SOUND, "{tool: cancel_order,", "{tool: cancel_ordr,")
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert (problem.path, problem.line) == ("suite.yaml", 21)
    assert "unknown tool 'cancel_ordr' in actions" in problem.message


def test_wrong_argument_type_in_gold_action_is_located(here: Path) -> None:
    text = edit(
        SOUND,
        "      actions: [{tool: get_order, args: {order_id: B}}]\n",
        "      actions:\n        - tool: get_order\n          args: {order_id: 7}\n",
    )
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert (problem.path, problem.line) == ("suite.yaml", line_with(text, "order_id: 7"))
    assert "get_order" in problem.message
    assert "order_id" in problem.message
    assert "valid string" in problem.message


def test_missing_argument_in_gold_action_is_reported(here: Path) -> None:
    text = edit(SOUND, "{tool: get_order, args: {order_id: B}}", "{tool: get_order}")
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert (problem.path, problem.line) == ("suite.yaml", line_with(text, "{tool: get_order}"))
    assert "order_id: missing required argument" in problem.message


def test_unexpected_argument_in_gold_action_is_reported(here: Path) -> None:
    text = edit(SOUND, "args: {order_id: B}", "args: {order_id: B, note: hi}")
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert (problem.path, problem.line) == ("suite.yaml", line_with(text, "note: hi"))
    assert "note: unexpected argument" in problem.message


# ---------------------------------------------------------------- missing files


def test_missing_policy_file_is_located_at_the_policy_field(here: Path) -> None:
    problem = only_problem(make_suite(here, {"policy.md": None}))
    assert (problem.path, problem.line) == ("suite.yaml", 2)
    assert "policy file not found: policy.md" in problem.message


def test_missing_world_data_is_located_at_its_entry(here: Path) -> None:
    problem = only_problem(make_suite(here, {"orders.yaml": None}))
    assert (problem.path, problem.line) == ("suite.yaml", 5)
    assert "world data not found: orders.yaml" in problem.message


def test_missing_tools_module_is_located_at_the_backend(here: Path) -> None:
    problems = problems_of(make_suite(here, {"tools.py": None}))
    first = problems[0]
    assert (first.path, first.line) == ("suite.yaml", 7)
    assert "file not found: tools.py" in first.message


def test_task_glob_matching_nothing_is_located(here: Path) -> None:
    text = edit(SOUND, "tasks:\n", "tasks:\n  - tasks/*.yaml\n")
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert (problem.path, problem.line) == ("suite.yaml", line_with(text, "tasks/*.yaml"))
    assert "no task files match 'tasks/*.yaml'" in problem.message


def test_world_data_json_syntax_error_names_the_data_file(here: Path) -> None:
    text = edit(SOUND, "data: [orders.yaml]", "data: [orders.json]")
    data = '{"A": {"status": "pending"},\n "B": }\n'
    problem = only_problem(make_suite(here, {"suite.yaml": text, "orders.json": data}))
    assert (problem.path, problem.line) == ("orders.json", 2)
    assert "JSON syntax error" in problem.message


def test_world_data_yaml_syntax_error_names_the_data_file(here: Path) -> None:
    data = "A: {status: pending}\nB: {status: [shipped}\n"
    problem = only_problem(make_suite(here, {"orders.yaml": data}))
    assert (problem.path, problem.line) == ("orders.yaml", 2)
    assert "YAML syntax error" in problem.message


# ---------------------------------------------------------------- duplicate ids


def test_duplicate_task_id_names_both_places(here: Path) -> None:
    text = edit(SOUND, "- id: status", "- id: cancel")
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert (problem.path, problem.line) == ("suite.yaml", 23)
    assert "duplicate task id 'cancel'" in problem.message
    assert "first at suite.yaml:12" in problem.message


def test_duplicate_task_id_across_task_file_and_inline_task(here: Path) -> None:
    text = edit(SOUND, "tasks:\n", "tasks:\n  - more.yaml\n")
    more = 'id: status\nuser: {opening: "Is B on its way?"}\nexpect: {must_say: [shipped]}\n'
    problem = only_problem(make_suite(here, {"suite.yaml": text, "more.yaml": more}))
    assert (problem.path, problem.line) == ("suite.yaml", line_with(text, "- id: status"))
    assert "duplicate task id 'status' (first at more.yaml:1)" in problem.message


def test_task_file_matched_twice_is_reported_at_the_second_entry(here: Path) -> None:
    text = edit(SOUND, "tasks:\n", "tasks:\n  - tasks/*.yaml\n  - tasks/more.yaml\n")
    more = 'id: where\nuser: {opening: "Is B on its way?"}\nexpect: {must_say: [shipped]}\n'
    files = {"suite.yaml": text, "tasks/more.yaml": more}
    problem = only_problem(make_suite(here, files))
    assert (problem.path, problem.line) == ("suite.yaml", line_with(text, "- tasks/more.yaml"))
    assert "tasks/more.yaml is already included by an earlier entry" in problem.message


def test_duplicate_ids_on_one_line_are_reported(here: Path) -> None:
    head = SOUND.split("tasks:\n")[0]
    text = (
        head + "tasks: [{id: a, user: {opening: hi}, expect: {must_say: [x]}},"
        " {id: a, user: {opening: hi}, expect: {must_say: [y]}}]\n"
    )
    problems = problems_of(make_suite(here, {"suite.yaml": text}))
    assert any("duplicate task id 'a'" in p.message for p in problems)


# ---------------------------------------------------------------- references


def test_tool_listed_under_tools_missing_from_backend_is_located(here: Path) -> None:
    text = edit(SOUND, "tools:\n", "tools:\n  refund_order: {tier: 2}\n")
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert (problem.path, problem.line) == ("suite.yaml", line_with(text, "refund_order"))
    assert "tool 'refund_order' not found in backend 't'" in problem.message
    assert "cancel_order, get_order" in problem.message


def test_unknown_backend_is_located_at_the_tool(here: Path) -> None:
    text = edit(SOUND, "{tier: 3, weight: 0.3}", "{tier: 3, weight: 0.3, backend: zz}")
    problems = problems_of(make_suite(here, {"suite.yaml": text}))
    first = problems[0]
    assert (first.path, first.line) == ("suite.yaml", line_with(text, "backend: zz"))
    assert "tool 'cancel_order': unknown backend 'zz'" in first.message


def test_tool_without_backend_among_several_is_reported(here: Path) -> None:
    text = edit(
        SOUND,
        "  t: {type: python, module: tools.py}\n",
        "  t: {type: python, module: tools.py}\n  u: {type: python, module: tools.py}\n",
    )
    problems = problems_of(make_suite(here, {"suite.yaml": text}))
    assert (
        Problem(
            "suite.yaml",
            line_with(text, "get_order: {tier"),
            "tool 'get_order': say which backend (there are several)",
        )
        in problems
    )


def test_initial_state_naming_an_unknown_collection_is_located(here: Path) -> None:
    text = edit(
        SOUND,
        '    user: {opening: "Where is order B?"}\n',
        '    initial_state:\n      customers: {c1: {name: Ann}}\n    user: {opening: "Where?"}\n',
    )
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert (problem.path, problem.line) == ("suite.yaml", line_with(text, "customers:"))
    assert "initial_state names 'customers'" in problem.message


def test_forbidden_call_with_unknown_argument_is_located(here: Path) -> None:
    text = edit(
        SOUND,
        "      must_say: [shipped]\n",
        "      must_say: [shipped]\n      forbidden_calls:\n"
        "        - tool: cancel_order\n          args: {id: B}\n",
    )
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert (problem.path, problem.line) == ("suite.yaml", line_with(text, "{id: B}"))
    assert "cancel_order has no argument 'id'" in problem.message


def test_required_call_with_unknown_argument_is_located(here: Path) -> None:
    text = edit(
        SOUND,
        "      must_say: [shipped]\n",
        "      must_say: [shipped]\n      calls:\n"
        "        - tool: get_order\n          args:\n            orderid: B\n",
    )
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert (problem.path, problem.line) == ("suite.yaml", line_with(text, "orderid: B"))
    assert "get_order has no argument 'orderid'" in problem.message


def test_unknown_tool_in_forbidden_calls_is_located(here: Path) -> None:
    text = edit(
        SOUND,
        "      must_say: [shipped]\n",
        "      must_say: [shipped]\n      forbidden_calls: [{tool: delete_order}]\n",
    )
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert (problem.path, problem.line) == ("suite.yaml", line_with(text, "delete_order"))
    assert "unknown tool 'delete_order' in forbidden_calls" in problem.message


# ---------------------------------------------------------------- facts and their sources


def test_a_fact_the_user_states_is_a_located_problem(here: Path) -> None:
    text = edit(
        SOUND,
        "      must_say: [shipped]\n",
        '      must_say:\n        - shipped\n        - "order b"\n',
    )
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert (problem.path, problem.line) == ("suite.yaml", line_with(text, '"order b"'))
    assert problem.message.startswith(
        "task 'status': must_say 'order b' is in the user's own words, so an agent that "
        "repeats the user says it"
    )


def test_a_fact_in_a_reply_of_the_user_counts_as_the_users_words(here: Path) -> None:
    text = edit(SOUND, 'must_say: ["cancelled"]', 'must_say: ["cancelled", [gone, ahead]]')
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert (problem.path, problem.line) == ("suite.yaml", line_with(text, "[gone, ahead]"))
    assert "must_say 'ahead' is in the user's own words" in problem.message


def test_a_fact_marked_as_the_users_words_loads_and_must_be_them(here: Path) -> None:
    marked = edit(
        SOUND, "must_say: [shipped]", "must_say: [shipped, {fact: order B, source: user}]"
    )
    assert load_suite(make_suite(here, {"suite.yaml": marked})).task("status")
    wrong = edit(SOUND, "must_say: [shipped]", "must_say: [{fact: shipped, source: user}]")
    problem = only_problem(make_suite(here, {"suite.yaml": wrong}))
    assert (problem.path, problem.line) == ("suite.yaml", line_with(wrong, "source: user"))
    assert "is marked source: user, but the user never says it" in problem.message


def test_a_fact_without_letters_or_digits_is_located(here: Path) -> None:
    text = edit(SOUND, "must_say: [shipped]", 'must_say: [shipped, {fact: x, found_as: ["$"]}]')
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert (problem.path, problem.line) == ("suite.yaml", line_with(text, "found_as"))
    assert "must_say '$' has no letters or digits to look for" in problem.message


def test_found_as_on_a_fact_that_needs_no_source_is_located(here: Path) -> None:
    text = edit(
        SOUND, "must_say: [shipped]", "must_say: [{fact: shipped, source: none, found_as: [S]}]"
    )
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert (problem.path, problem.line) == ("suite.yaml", line_with(text, "found_as"))
    assert "found_as is for facts a tool result shows" in problem.message


def test_decisive_reads_name_known_tools_and_arguments(here: Path) -> None:
    text = edit(
        SOUND,
        "      must_say: [shipped]\n",
        "      must_say: [shipped]\n      reads:\n        - {tool: get_ordr}\n"
        "        - {tool: get_order, args: {id: B}}\n",
    )
    problems = problems_of(make_suite(here, {"suite.yaml": text}))
    assert [(p.line, p.message) for p in problems] == [
        (line_with(text, "get_ordr"), "unknown tool 'get_ordr' in reads"),
        (line_with(text, "{id: B}"), "get_order has no argument 'id'"),
    ]


def test_invalid_parameters_schema_override_is_located(here: Path) -> None:
    text = edit(
        SOUND,
        "  get_order: {tier: 1, weight: 0.7}\n",
        "  get_order:\n    tier: 1\n    parameters: {type: objekt}\n",
    )
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert (problem.path, problem.line) == ("suite.yaml", line_with(text, "parameters:"))
    assert "bad JSON Schema" in problem.message


# ---------------------------------------------------------------- expectations and conditions


def test_task_without_expectations_is_located(here: Path) -> None:
    text = edit(
        SOUND,
        "    expect:\n      actions: [{tool: get_order, args: {order_id: B}}]\n"
        "      must_say: [shipped]\n",
        "    expect: {}\n",
    )
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert (problem.path, problem.line) == ("suite.yaml", line_with(text, "expect: {}"))
    assert "task 'status' has no expectations" in problem.message


def test_unknown_when_condition_is_located(here: Path) -> None:
    text = edit(SOUND, "when: asks_confirmation", "when: asks_confirm")
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert (problem.path, problem.line) == ("suite.yaml", 17)
    assert "unknown condition 'asks_confirm'" in problem.message
    assert "asks_confirmation" in problem.message


def test_when_with_both_contains_and_regex_is_located(here: Path) -> None:
    text = edit(
        SOUND,
        '        - {when: asks_confirmation, say: "Yes, go ahead."}\n',
        "        - say: Sure\n          when: {contains: [sure], regex: ok}\n",
    )
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert (problem.path, problem.line) == ("suite.yaml", line_with(text, "contains: [sure]"))
    assert "exactly one of 'contains' or 'regex'" in problem.message


def test_bad_regex_in_when_is_located(here: Path) -> None:
    text = edit(SOUND, "when: asks_confirmation", "when: {regex: 'go ahead(('}")
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert (problem.path, problem.line) == ("suite.yaml", 17)
    assert "bad regex" in problem.message
    assert "user.replies.0.when" in problem.message


def test_bad_regex_in_scripted_turn_is_located(here: Path) -> None:
    text = edit(
        SOUND,
        "      replies:\n",
        "      turns:\n        - say: Hello\n          when: {regex: '[a-'}\n      replies:\n",
    )
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert (problem.path, problem.line) == ("suite.yaml", line_with(text, "regex: '[a-'"))
    assert "user.turns.0.when" in problem.message
    assert "bad regex" in problem.message


# ---------------------------------------------------------------- task files

ONE_TASK = """\
id: one
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
  user: {opening: "Where is order A?"}
  expect:
    must_say: [pending]
"""


def with_task_files(**files: str) -> dict[str, str | None]:
    text = edit(SOUND, "tasks:\n", "tasks:\n  - tasks/*.yaml\n")
    out: dict[str, str | None] = {"suite.yaml": text}
    out.update({f"tasks/{name}.yaml": body for name, body in files.items()})
    return out


def test_problem_in_single_task_file_names_that_file(here: Path) -> None:
    one = edit(ONE_TASK, "must_say", "must_sayy")
    problem = only_problem(make_suite(here, with_task_files(a=one, b=TWO_TASKS)))
    assert (problem.path, problem.line) == ("tasks/a.yaml", 4)
    assert "unknown field 'must_sayy' in expect" in problem.message


def test_problem_in_list_task_file_names_that_file_and_line(here: Path) -> None:
    two = edit(TWO_TASKS, "- id: three", "- id: three\n  storyy: x")
    problem = only_problem(make_suite(here, with_task_files(a=ONE_TASK, b=two)))
    assert (problem.path, problem.line) == ("tasks/b.yaml", line_with(two, "storyy"))
    assert "unknown field 'storyy'" in problem.message


def test_yaml_syntax_error_in_task_file_names_that_file_and_line(here: Path) -> None:
    broken = edit(ONE_TASK, "must_say: [shipped]", "must_say: shipped: now")
    bad_field = edit(TWO_TASKS, "must_say: [pending]\n- id", "must_sayy: [pending]\n- id")
    problems = problems_of(make_suite(here, with_task_files(a=broken, b=bad_field)))
    assert [(p.path, p.line) for p in problems] == [("tasks/a.yaml", 4), ("tasks/b.yaml", 4)]
    assert "YAML syntax error" in problems[0].message
    assert "must_sayy" in problems[1].message


def test_task_file_that_is_not_a_task_is_reported(here: Path) -> None:
    problem = only_problem(make_suite(here, with_task_files(a="just a sentence\n")))
    assert (problem.path, problem.line) == ("tasks/a.yaml", 1)
    assert "one task (a mapping) or a list of tasks" in problem.message


def test_list_item_that_is_not_a_task_is_located(here: Path) -> None:
    body = "- id: ok\n  user: {opening: hi}\n  expect: {must_say: [x]}\n- 42\n"
    problem = only_problem(make_suite(here, with_task_files(a=body)))
    assert (problem.path, problem.line) == ("tasks/a.yaml", 4)
    assert "each task is a mapping" in problem.message


def test_task_entry_that_is_neither_glob_nor_mapping_is_located(here: Path) -> None:
    text = edit(SOUND, "tasks:\n", "tasks:\n  - 42\n")
    problem = only_problem(make_suite(here, {"suite.yaml": text}))
    assert (problem.path, problem.line) == ("suite.yaml", line_with(text, "- 42"))
    assert "file glob or a task mapping" in problem.message


def test_json_task_file_problem_is_located(here: Path) -> None:
    text = edit(SOUND, "tasks:\n", "tasks:\n  - extra.json\n")
    body = '{"id": "j", "user": {"opening": "hi"},\n "expect": {"must_sayy": ["x"]}}\n'
    problem = only_problem(make_suite(here, {"suite.yaml": text, "extra.json": body}))
    assert (problem.path, problem.line) == ("extra.json", 2)
    assert "unknown field 'must_sayy' in expect" in problem.message


# ---------------------------------------------------------------- the tools module

BROKEN_TOOLS = TOOLS + "\n\nraise RuntimeError('no database configured')\n"


def test_tools_module_raising_at_import_reports_its_line(here: Path) -> None:
    tools = BROKEN_TOOLS
    problems = problems_of(make_suite(here, {"tools.py": tools}))
    first = problems[0]
    assert (first.path, first.line) == ("tools.py", line_with(tools, "raise RuntimeError"))
    assert "cannot import: RuntimeError: no database configured" in first.message


def test_tools_module_with_missing_import_reports_its_line(here: Path) -> None:
    tools = "import no_such_module_for_toolproof\n" + TOOLS
    problems = problems_of(make_suite(here, {"tools.py": tools}))
    first = problems[0]
    assert (first.path, first.line) == ("tools.py", 1)
    assert "ModuleNotFoundError" in first.message
    assert "no_such_module_for_toolproof" in first.message


def test_tools_module_with_syntax_error_reports_its_line(here: Path) -> None:
    tools = edit(TOOLS, "def cancel_order(", "def cancel_order(:")
    problems = problems_of(make_suite(here, {"tools.py": tools}))
    first = problems[0]
    assert first.path == "tools.py"
    assert "SyntaxError" in first.message
    assert first.line == line_with(tools, "def cancel_order(:")


def test_tools_module_without_tools_is_reported_at_the_backend(here: Path) -> None:
    problems = problems_of(make_suite(here, {"tools.py": "VERSION = 1\n"}))
    first = problems[0]
    assert (first.path, first.line) == ("suite.yaml", 7)
    assert "backend 't': no @tool functions in tools.py" in first.message


def test_failed_tools_import_is_not_followed_by_unknown_tool_noise(here: Path) -> None:
    tools = BROKEN_TOOLS
    problems = problems_of(make_suite(here, {"tools.py": tools}))
    assert [p.path for p in problems] == ["tools.py"], "\n".join(map(str, problems))


# ---------------------------------------------------------------- locations and rendering


def test_problem_renders_as_path_line_message() -> None:
    assert str(Problem("suite.yaml", 7, "bad")) == "suite.yaml:7: bad"
    assert str(Problem("suite.yaml", None, "bad")) == "suite.yaml: bad"
    error = SuiteError([Problem("a.yaml", 1, "x"), Problem("b.yaml", 2, "y")])
    assert str(error) == "a.yaml:1: x\nb.yaml:2: y"
    assert error.exit_code == 2


def test_paths_outside_the_working_directory_are_shown_in_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    text = edit(SOUND, "{tool: cancel_order,", "{tool: cancel_ordr,")
    problem = only_problem(make_suite(suite, {"suite.yaml": text}))
    assert Path(problem.path) == (suite / "suite.yaml").resolve()
    assert problem.line == 21


def test_problem_in_capitalised_tool_entry_is_located_at_that_tool(here: Path) -> None:
    tools = TOOLS.replace("def get_order(", "def GetOrder(")
    text = SOUND.replace("get_order", "GetOrder")
    text = edit(text, "GetOrder: {tier: 1,", "GetOrder: {tier: 5,")
    problem = only_problem(make_suite(here, {"suite.yaml": text, "tools.py": tools}))
    assert (problem.path, problem.line) == ("suite.yaml", line_with(text, "tier: 5"))
    assert "tools.GetOrder.tier" in problem.message


# ---------------------------------------------------------------- many problems in one pass

MANY = """\
name: many
policy: policy.md
world:
  data: [orders.yaml]
backends:
  t: {type: python, module: tools.py}
tools:
  get_order: {tier: 1}
  cancel_order: {tier: 3}
  refund_order: {tier: 2}
tasks:
  - id: typo-tool
    user: {opening: "Cancel A"}
    expect:
      actions:
        - {tool: cancel_ordr, args: {order_id: A}}
  - id: wrong-type
    user: {opening: "Where is B?"}
    expect:
      actions:
        - tool: get_order
          args: {order_id: 7}
  - id: wrong-type
    user: {opening: "Where is B?"}
    expect: {must_say: [shipped]}
  - id: empty
    user: {opening: "Hello"}
    expect: {}
  - id: bad-when
    user:
      opening: "Cancel A"
      replies:
        - {when: asks_confirm, say: "Yes"}
    expect: {must_say: [cancelled]}
  - id: bad-regex
    user:
      opening: "Cancel A"
      turns:
        - {when: {regex: "yes(("}, say: "Yes"}
    expect: {must_say: [cancelled]}
  - id: bad-refs
    initial_state:
      customers: {c1: {name: Ann}}
    user: {opening: "Where is B?"}
    expect:
      must_say: [shipped]
      forbidden_calls:
        - {tool: cancel_order, args: {id: B}}
      calls:
        - tool: get_order
          args: {orderid: B}
  - tasks/*.yaml
  - extra/*.yaml
"""

MANY_TASK_FILE = """\
- id: nested-typo
  user: {opening: "Where is B?"}
  expect:
    must_sayy: [shipped]
"""

# (path, line, what the message must say), in the order they are reported
MANY_PROBLEMS = [  # by file and line
    ("suite.yaml", 10, "tool 'refund_order' not found in backend 't'"),
    ("suite.yaml", 16, "unknown tool 'cancel_ordr' in actions"),
    ("suite.yaml", 22, "get_order: order_id: Input should be a valid string"),
    ("suite.yaml", 23, "duplicate task id 'wrong-type' (first at suite.yaml:17)"),
    ("suite.yaml", 28, "task 'empty' has no expectations"),
    ("suite.yaml", 33, "unknown condition 'asks_confirm'"),
    ("suite.yaml", 39, "bad regex"),
    ("suite.yaml", 43, "initial_state names 'customers'"),
    ("suite.yaml", 48, "cancel_order has no argument 'id'"),
    ("suite.yaml", 51, "get_order has no argument 'orderid'"),
    ("suite.yaml", 53, "no task files match 'extra/*.yaml'"),
    ("tasks/more.yaml", 4, "unknown field 'must_sayy' in expect"),
]


def many_problems_suite(root: Path) -> Path:
    return make_suite(root, {"suite.yaml": MANY, "tasks/more.yaml": MANY_TASK_FILE})


def test_many_problems_are_all_reported_in_one_pass(here: Path) -> None:
    problems = problems_of(many_problems_suite(here))
    assert [(p.path, p.line) for p in problems] == [(p, n) for p, n, _ in MANY_PROBLEMS]
    for problem, (_, _, said) in zip(problems, MANY_PROBLEMS, strict=True):
        assert said in problem.message, str(problem)


def test_suite_field_problem_does_not_hide_task_problems(here: Path) -> None:
    text = edit(SOUND, "name: mini\n", "name: mini\nnmae: typo\n")
    text = edit(text, 'must_say: ["cancelled"]', 'must_sayy: ["cancelled"]')
    problems = problems_of(make_suite(here, {"suite.yaml": text}))
    messages = [p.message for p in problems]
    assert any("'nmae'" in m for m in messages)
    assert any("'must_sayy'" in m for m in messages)


# ---------------------------------------------------------------- the command line

USER_FACT = edit(SOUND, "must_say: [shipped]", 'must_say: [shipped, "order B"]')

CLI_CASES: dict[str, tuple[Mapping[str, str | None], str]] = {
    "fact-in-the-users-words": (
        {"suite.yaml": USER_FACT},
        f"suite.yaml:{line_with(USER_FACT, '[shipped, ')}: task 'status': must_say 'order B' is "
        "in the user's own words",
    ),
    "unknown-tool-in-gold-action": (
        {"suite.yaml": edit(SOUND, "{tool: cancel_order,", "{tool: cancel_ordr,")},
        "suite.yaml:21: unknown tool 'cancel_ordr' in actions",
    ),
    "yaml-syntax-error": (
        {"suite.yaml": edit(SOUND, "policy: policy.md", "policy: policy.md: oops")},
        "suite.yaml:2: YAML syntax error",
    ),
    "unknown-nested-field": (
        {"suite.yaml": edit(SOUND, 'must_say: ["cancelled"]', 'must_sayy: ["cancelled"]')},
        "suite.yaml:22: unknown field 'must_sayy' in expect",
    ),
    "missing-policy": ({"policy.md": None}, "suite.yaml:2: policy file not found: policy.md"),
    "duplicate-task-id": (
        {"suite.yaml": edit(SOUND, "- id: status", "- id: cancel")},
        "suite.yaml:23: duplicate task id 'cancel'",
    ),
    "bad-regex": (
        {"suite.yaml": edit(SOUND, "when: asks_confirmation", "when: {regex: 'go ahead(('}")},
        "suite.yaml:17: user.replies.0.when: Value error, bad regex",
    ),
    "task-file-syntax-error": (
        with_task_files(a=edit(ONE_TASK, "must_say: [shipped]", "must_say: shipped: now")),
        "tasks/a.yaml:4: YAML syntax error",
    ),
    "alias-bomb": (
        {"suite.yaml": with_initial_state(alias_bomb("        "))},
        f"suite.yaml:{line_with(with_initial_state(alias_bomb('        ')), 'l5: &l5')}: YAML "
        "refused: aliases repeat more than 100,000 nodes",
    ),
    "deep-nesting": (
        {"suite.yaml": with_initial_state("        C: " + "[" * 250 + "]" * 250 + "\n")},
        "YAML refused: nesting deeper than 100 levels",
    ),
    "tools-import-error": (
        {"tools.py": BROKEN_TOOLS},
        f"tools.py:{line_with(BROKEN_TOOLS, 'raise RuntimeError')}: cannot import: RuntimeError",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CLI_CASES))
def test_validate_prints_located_problem_and_exits_2(tmp_path: Path, case: str) -> None:
    files, expected = CLI_CASES[case]
    make_suite(tmp_path, files)
    result = cli("validate", ".", cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert expected in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


@pytest.mark.slow
def test_validate_prints_every_problem_of_many_and_exits_2(tmp_path: Path) -> None:
    many_problems_suite(tmp_path)
    result = cli("validate", ".", cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.splitlines()
    for path, line, said in MANY_PROBLEMS:
        assert any(x.startswith(f"{path}:{line}: ") and said in x for x in lines), (
            f"{path}:{line}: {said}\n{result.stderr}"
        )
    assert f"{len(MANY_PROBLEMS)} problem(s)" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_run_refuses_an_unsound_suite_with_located_problems(tmp_path: Path) -> None:
    make_suite(tmp_path, {"suite.yaml": edit(SOUND, "- id: status", "- id: cancel")})
    result = cli("run", ".", "--store", str(tmp_path / "runs.db"), cwd=tmp_path)
    assert result.returncode == 2
    assert "suite.yaml:23: duplicate task id 'cancel'" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_validate_on_a_missing_folder_exits_2_without_traceback(tmp_path: Path) -> None:
    result = cli("validate", "no-such-suite", cwd=tmp_path)
    assert result.returncode == 2
    assert "no-such-suite: no suite here: suite.yaml not found" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_each_problem_is_one_line_in_a_narrow_terminal(tmp_path: Path) -> None:
    text = edit(
        SOUND,
        "    expect:\n      actions: [{tool: get_order, args: {order_id: B}}]\n"
        "      must_say: [shipped]\n",
        "    expect: {}\n",
    )
    make_suite(tmp_path, {"suite.yaml": text})
    result = cli("validate", ".", cwd=tmp_path, columns=80)
    assert result.returncode == 2
    *problems, summary = result.stderr.strip().splitlines()
    assert summary == "1 problem(s)"
    assert problems == [
        "suite.yaml:25: task 'status' has no expectations; a task that cannot fail proves "
        "nothing (give actions, state, calls, reads, forbidden_calls, must_say or "
        "must_not_say)"
    ]


# ---------------------------------------------------------------- conditions with tasks

CONDITIONS = """\
faults:
  profiles:
    flaky:
      - {kind: timeout, tools: [get_ordr], rate: 0.1}
drift:
  v2:
    - {op: rename_param, tool: get_order, param: orderid, to: orderId}
"""


def test_fault_and_drift_problems_come_with_task_problems_in_one_pass(here: Path) -> None:
    text = edit(SOUND, 'must_say: ["cancelled"]', 'must_sayy: ["cancelled"]') + CONDITIONS
    problems = problems_of(make_suite(here, {"suite.yaml": text}))
    found = {(p.line, p.message.split(":")[0]) for p in problems}
    assert (line_with(text, "must_sayy"), "unknown field 'must_sayy' in expect") in found
    assert (line_with(text, "get_ordr"), "fault profile 'flaky'") in found, problems
    assert (line_with(text, "v2:"), "drift variant 'v2'") in found, problems


def test_unsound_faults_do_not_hide_task_problems(here: Path) -> None:
    text = edit(SOUND, "{tool: cancel_order,", "{tool: cancel_ordr,")
    text += "faults:\n  profiles:\n    flaky:\n      - {kind: meteor, rate: 0.1}\n"
    problems = problems_of(make_suite(here, {"suite.yaml": text}))
    lines = {p.line for p in problems}
    assert line_with(text, "cancel_ordr") in lines, problems
    assert line_with(text, "meteor") in lines, problems


# ---------------------------------------------------------------- the tools behind tools:


def test_a_function_listed_under_tools_without_tool_is_said_to_lack_it(here: Path) -> None:
    tools = TOOLS.replace("@tool(write=True)\n", "")
    problem = only_problem(make_suite(here, {"tools.py": tools}))
    assert (problem.path, problem.line) == ("suite.yaml", line_with(SOUND, "cancel_order: {"))
    where = f"tools.py:{line_with(tools, 'def cancel_order(')}"
    assert problem.message == f"tool 'cancel_order': the function {where} lacks @tool"


@pytest.mark.slow
def test_a_gold_action_whose_tool_raises_names_the_tools_line(tmp_path: Path) -> None:
    tools = TOOLS.replace(
        '    order = world["orders"][order_id]\n', '    order = world["ordrs"][order_id]\n'
    )
    assert tools != TOOLS
    make_suite(tmp_path, {"tools.py": tools})
    result = cli("validate", ".", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    where = f"tools.py:{line_with(tools, 'ordrs')}"
    assert f"gold action 2 cancel_order failed: {{'error': \"KeyError: 'ordrs' (at {where})" in (
        result.stderr
    )
    assert "Traceback" not in result.stdout + result.stderr


def test_a_tool_parameter_of_a_type_json_cannot_carry_is_located(here: Path) -> None:
    tools = TOOLS.replace(
        'order_id: str) -> dict:\n    """Look', 'order_id: set) -> dict:\n    """Look'
    )
    assert tools != TOOLS
    problems = problems_of(make_suite(here, {"tools.py": tools}))
    first = problems[0]
    assert first.path == "tools.py"
    assert first.line == line_with(tools, "order_id: set)") - 1  # its @tool line
    assert "parameter 'order_id' has the type set" in first.message
