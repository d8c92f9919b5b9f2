"""The Python source of a tool an importer writes into a suite's tools.py: a `@tool` function
whose parameters are the upstream schema's, passed on as given to the upstream method."""

from __future__ import annotations

import keyword
from typing import Any

from toolproof.errors import UsageError

RESERVED = ("world", "context", "invoke", "tool", "given")
"""Names the generated tools.py itself uses, so no tool or argument may take them."""


def tool_function(
    owner: str,
    name: str,
    parameters: dict[str, Any],
    write: bool,
    doc: str,
    call: str = "invoke",
) -> str:
    """One generated `@tool` function calling `invoke(world, owner, name, given(...))` (or
    the function named `call`, with the same arguments).

    Arguments reach the upstream method as the model gives them, unchecked against the
    schema's types: the upstream's own ground truth breaks its docs at times (BFCL gives a
    ticket id as a string where its doc says integer), and tau2's tools take pydantic models
    and plain dicts alike. The model sees the upstream schema."""
    props: list[str] = list(parameters.get("properties", {}))
    required = set(parameters.get("required", []))
    for word in [name, *props]:
        if keyword.iskeyword(word) or word in RESERVED:
            raise UsageError(f"{owner}.{name}: '{word}' cannot be a tool's name or argument")
    params = ["world: World"]
    params += [p + ": Any" for p in props if p in required]
    params += [p + ": Any = None" for p in props if p not in required]
    passed = ", ".join(f"{p}={p}" for p in props)
    decorator = "@tool(write=True)" if write else "@tool"
    return (
        f"{decorator}\n"
        f"def {name}({', '.join(params)}) -> Any:\n"
        f'    """{doc}"""\n'
        f'    return {call}(world, "{owner}", "{name}", given({passed}))\n'
    )
