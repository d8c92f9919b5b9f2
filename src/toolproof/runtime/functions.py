"""Hook and check functions: Python functions of the suite, called with what they ask for."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Mapping
from typing import Any

INJECTABLE = ("trial_dir", "trial_id", "seed", "task", "suite_dir", "services", "world")
"""Parameters a hook or check function may declare to receive them (`trial_id`: a name
unique to the trial among those running, for a tenant of a shared service; `services`: the
base URL of each of the suite's services, by name; `world`: a copy of the trial's world as it
is then, for a check the final state the graders see, which the check cannot change)."""


def signature_problem(func: Callable[..., Any], args: set[str]) -> str | None:
    """Why a hook or check function cannot be called with these `args` (and the injected
    values it asks for), if so."""
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return None
    clash = sorted(args & set(INJECTABLE))
    if clash:
        return f"args {', '.join(clash)}: these names are filled in by toolproof"
    open_kwargs = any(p.kind is p.VAR_KEYWORD for p in params.values())
    unknown = sorted(a for a in args if a not in params)
    if unknown and not open_kwargs:
        return f"{func.__name__}() takes no argument {', '.join(map(repr, unknown))}"
    for name, param in params.items():
        if param.kind in (param.VAR_KEYWORD, param.VAR_POSITIONAL):
            continue
        if name not in args and name not in INJECTABLE and param.default is param.empty:
            return (
                f"{func.__name__}() needs '{name}': give it in args, or name a parameter "
                f"{', '.join(INJECTABLE)} to receive that value"
            )
    return None


async def call_function(
    func: Callable[..., Any], values: Mapping[str, Any], args: Mapping[str, Any], timeout: float
) -> Any:
    """Call a hook or check function with the values it declares and `args`, in a thread
    when it is synchronous, bounded by `timeout` seconds."""
    params = inspect.signature(func).parameters
    open_kwargs = any(p.kind is p.VAR_KEYWORD for p in params.values())
    kwargs = {k: v for k, v in values.items() if k in params or open_kwargs}
    kwargs.update(args)
    if inspect.iscoroutinefunction(func):
        return await asyncio.wait_for(func(**kwargs), timeout)
    return await asyncio.wait_for(asyncio.to_thread(func, **kwargs), timeout)
