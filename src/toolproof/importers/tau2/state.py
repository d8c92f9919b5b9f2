"""tau2's tool implementations over a toolproof world.

A tau2 domain keeps its state in one pydantic database (`FlightDB`: flights, users,
reservations) that its tool kit reads and changes in place. The world holds that database as
JSON, one top-level collection per field, each record as tau2's `model_dump` writes it. A
tool call builds the tool kit over a database whose collections read records from the world
only when the tool asks for them (a reservation, a user), calls tau2's own method, and writes
back every record the call changed or added. The world then changes exactly as tau2's
database does, so replaying the same calls gives the same world, and its hash is tau2's
"database after the gold actions".

A dual-control domain (telecom) also keeps the user's database (their phone and its
surroundings) in the world, one top-level key per field, and its environment carries the
agent's changes to the phone after every call (`sync_tools`: a line the agent resumed gives
the phone service). A call there builds both databases and the environment, makes the call
as the agent or as the user, syncs as tau2 does, and writes back every field that changed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, MutableMapping
from typing import Any

from toolproof.importers.tau2.data import Domain, load_domain, tau2_module
from toolproof.tools import ToolError
from toolproof.world import World, thaw

_DOMAINS: dict[str, Domain] = {}


def domain(name: str) -> Domain:
    """A tau2 domain, loaded once per process."""
    if name not in _DOMAINS:
        _DOMAINS[name] = load_domain(name)
    return _DOMAINS[name]


class Records(MutableMapping[str, Any]):
    """One collection of a tau2 database, read from the world a record at a time: a record
    is validated into tau2's model when first read, and kept with its dump as read so that
    `changes` can tell what a call changed."""

    def __init__(self, source: Any, model: type[Any]) -> None:
        self.source = source
        self.model = model
        self.read: dict[str, tuple[Any, Any]] = {}
        """Each record read or added: its dump as read (None for a new one), its model."""

    def __getitem__(self, key: str) -> Any:
        if key not in self.read:
            if key not in self.source:
                raise KeyError(key)
            record = self.model.model_validate(thaw(self.source[key]))
            self.read[key] = (record.model_dump(mode="json"), record)
        return self.read[key][1]

    def __setitem__(self, key: str, value: Any) -> None:
        before = self.read[key][0] if key in self.read else None
        self.read[key] = (before, value)

    def __delitem__(self, key: str) -> None:
        raise TypeError("tau2's tools never delete a record")

    def __contains__(self, key: object) -> bool:
        return key in self.read or key in self.source

    def __iter__(self) -> Iterator[str]:
        yield from self.source
        yield from (k for k in self.read if k not in self.source)

    def __len__(self) -> int:
        return len(self.source) + sum(1 for k in self.read if k not in self.source)

    def changes(self) -> Iterator[tuple[str, Any]]:
        """Each record whose dump differs from what was read, with its new dump."""
        for key, (before, record) in self.read.items():
            after = record.model_dump(mode="json")
            if after != before:
                yield key, after


def database(world: World, name: str) -> tuple[Any, dict[str, Records]]:
    """The domain's database over the world, unvalidated (its collections validate the
    records they are asked for), with its collections by name."""
    found = domain(name)
    collections = {c: Records(world[c], model) for c, model in found.collections().items()}
    return found.db_model.model_construct(**collections), collections


def as_result(value: Any) -> Any:
    """A tool's return value as tau2 sends it to the agent: a text as it is, anything else
    as the JSON tau2's environment writes it."""
    if isinstance(value, str):
        return value
    environment = tau2_module("tau2.environment.environment")
    return json.loads(environment.Environment.to_json_str(value))


def invoke(world: World, name: str, tool: str, arguments: dict[str, Any]) -> Any:
    """Call tau2's tool `tool` of domain `name` over the world, and keep what it changed.
    A tool that raises answers the agent with tau2's error text (`Error: ...`); what it
    changed before it raised is kept, as tau2 goes on with its database as it is."""
    if domain(name).environment is not None:
        return _dual(world, name, "assistant", tool, arguments, tool=True)
    db, collections = database(world, name)
    kit = domain(name).toolkit(db)
    try:
        result = getattr(kit, tool)(**arguments)
    except Exception as error:
        _keep(world, collections)
        raise ToolError(f"Error: {error}") from None
    _keep(world, collections)
    return as_result(result)


def _keep(world: World, collections: dict[str, Records]) -> None:
    for collection, records in collections.items():
        for key, after in records.changes():
            world[collection][key] = after


def invoke_user(world: World, name: str, tool: str, arguments: dict[str, Any]) -> Any:
    """Call the user's tool `tool` of the dual-control domain `name` over the world (the
    user acting on their phone), and keep what it changed, as `invoke` does."""
    return _dual(world, name, "user", tool, arguments, tool=True)


def run_function(
    world: World, name: str, side: str, function: str, arguments: dict[str, Any]
) -> Any:
    """Run one of tau2's environment functions (a task's initialization action, like
    `turn_airplane_mode_on`, or an env assertion) on the agent's (`side` "assistant") or the
    user's database, then sync, as tau2's `run_env_function_call` does."""
    return _dual(world, name, side, function, arguments, tool=False)


def _dual(
    world: World, name: str, side: str, function: str, arguments: dict[str, Any], tool: bool
) -> Any:
    found = domain(name)
    assert found.environment is not None and found.user_db_model and found.user_toolkit
    agent_db = found.db_model.model_validate(
        {k: thaw(world[k]) for k in found.db_model.model_fields}
    )
    user_fields = found.user_db_model.model_fields
    user_db = found.user_db_model.model_validate({k: thaw(world[k]) for k in user_fields})
    read = [agent_db.model_dump(mode="json"), user_db.model_dump(mode="json")]
    env = found.environment(
        domain_name=name,
        policy="",
        tools=found.toolkit(agent_db),
        user_tools=found.user_toolkit(user_db),
    )
    try:
        if tool:
            result = env.make_tool_call(function, requestor=side, **arguments)
        else:
            kit = env.user_tools if side == "user" else env.tools
            result = getattr(kit, function)(**arguments)
        env.sync_tools()
    except Exception as error:
        _keep_whole(world, read, [env.tools.db, env.user_tools.db])
        raise ToolError(f"Error: {error}") from None
    _keep_whole(world, read, [env.tools.db, env.user_tools.db])
    return as_result(result) if tool else result


def _keep_whole(world: World, read: list[dict[str, Any]], databases: list[Any]) -> None:
    """Write back each field of the databases whose dump differs from its dump as read."""
    for before, db in zip(read, databases, strict=True):
        for key, value in db.model_dump(mode="json").items():
            if before.get(key) != value:
                world[key] = value


def asserted(
    world: World, name: str, side: str, function: str, arguments: dict[str, Any], expected: bool
) -> None:
    """tau2's env assertion `function` of domain `name` over the world (a copy: an assertion
    syncs the databases, as tau2 runs it): an AssertionError saying what tau2 found unless it
    returns `expected`."""
    found = run_function(world, name, side, function, arguments)
    if found != expected:
        said = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
        raise AssertionError(f"tau2's {function}({said}) is {found}, expected {expected}")
