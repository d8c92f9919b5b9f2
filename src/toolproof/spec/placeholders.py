"""Placeholders in configured strings: `{name}` filled in by toolproof, `${VAR}` from the
environment.

A suite's services, backends, hooks and checks may name values known only when they run:
`{suite_dir}` and `{python}` everywhere; `{services.NAME.url}` and `{services.NAME.port}` once
the suite's services have ports; `{trial_dir}`, `{trial_id}`, `{seed}` and `{task}` inside a
trial. Which names a string may use depends on when it is expanded (its scope); loading a
suite reports every name used out of its scope, located, before anything starts.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from toolproof.spec.suite import SuiteFile

Scope = Literal["run", "trial"]

_PLACEHOLDER = re.compile(r"(?<!\$)\{([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_-]+)*)\}")
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")

RUN_NAMES = frozenset({"suite_dir", "python"})
TRIAL_NAMES = RUN_NAMES | {"trial_dir", "trial_id", "seed", "task"}
SERVICE_NAMES = RUN_NAMES | {"port"}
"""What a service's own command may use: it starts before any other placeholder is known."""


class PlaceholderError(ValueError):
    """A `{name}` that is unknown where it is used, or a `${VAR}` that is not set."""


def expand(
    text: str, variables: Mapping[str, str], environ: Mapping[str, str] | None = None
) -> str:
    """`{name}` from `variables`, then `${VAR}` (or `${VAR:-default}`) from the environment."""
    env = os.environ if environ is None else environ

    def variable(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in variables:
            raise PlaceholderError(f"unknown placeholder '{{{name}}}'")
        return variables[name]

    def from_env(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        raise PlaceholderError(f"environment variable {name} is not set")

    return _ENV_REF.sub(from_env, _PLACEHOLDER.sub(variable, text))


def expand_value(value: Any, variables: Mapping[str, str]) -> Any:
    """`expand` over every string of a JSON-like value."""
    if isinstance(value, str):
        return expand(value, variables)
    if isinstance(value, list):
        return [expand_value(v, variables) for v in value]
    if isinstance(value, dict):
        return {k: expand_value(v, variables) for k, v in value.items()}
    return value


def placeholders(text: str) -> set[str]:
    """The `{name}`s a configured string uses."""
    return {match.group(1) for match in _PLACEHOLDER.finditer(text)}


def template_problem(value: Any, allowed: frozenset[str] | set[str]) -> str | None:
    """Why a configured string (or any string inside a value) cannot be expanded, if so."""
    if isinstance(value, list):
        return next((p for v in value if (p := template_problem(v, allowed))), None)
    if isinstance(value, dict):
        return next((p for v in value.values() if (p := template_problem(v, allowed))), None)
    if not isinstance(value, str):
        return None
    for match in _PLACEHOLDER.finditer(value):
        if match.group(1) not in allowed:
            known = ", ".join(f"{{{n}}}" for n in sorted(allowed))
            return f"unknown placeholder '{{{match.group(1)}}}' here (known: {known})"
    for match in _ENV_REF.finditer(value):
        if match.group(1) not in os.environ and match.group(2) is None:
            return f"environment variable {match.group(1)} is not set"
    return None


def service_names(services: Mapping[str, Any]) -> set[str]:
    """The placeholders the suite's services add once their ports are chosen."""
    names: set[str] = set()
    for service in services:
        names |= {f"services.{service}.port", f"services.{service}.url"}
    return names


def scope_names(scope: Scope, services: Mapping[str, Any]) -> set[str]:
    """Every placeholder a string of this scope may use in a suite with these services."""
    return set(RUN_NAMES if scope == "run" else TRIAL_NAMES) | service_names(services)


def template_problems(file: SuiteFile) -> list[tuple[list[str | int], str]]:
    """Every placeholder problem of the suite's services, backends and hooks, located by
    the path of the field in suite.yaml. Each part of the file says which of its strings are
    templates and in which scope (`templates()`)."""
    found: list[tuple[list[str | int], str]] = []

    def check(loc: list[str | int], value: Any, allowed: frozenset[str] | set[str]) -> None:
        problem = template_problem(value, allowed)
        if problem:
            found.append((loc, problem))

    for name, service in file.services.items():
        for key, value in service.templates():
            check(["services", name, key], value, SERVICE_NAMES)
    for name, backend in file.backends.items():
        for key, value, scope in backend.templates():
            check(["backends", name, key], value, scope_names(scope, file.services))
    for hook_name, hook in (("setup", file.hooks.setup), ("teardown", file.hooks.teardown)):
        if hook is not None and hook.command:
            check(
                ["hooks", hook_name, "command"], hook.command, scope_names("trial", file.services)
            )
    return found
