"""tau2's tool implementations over a toolproof world.

A tau2 domain keeps its state in one pydantic database (`FlightDB`: flights, users,
reservations) that its tool kit reads and changes in place. The world holds that database as
JSON, one top-level collection per field, each record as tau2's `model_dump` writes it. A
tool call builds the tool kit over a database whose collections read records from the world
only when the tool asks for them (a reservation, a user), calls tau2's own method, and writes
back every record the call changed or added. The world then changes exactly as tau2's
database does, so replaying the same calls gives the same world, and its hash is tau2's
"database after the gold actions".
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
