"""The file formats of a suite (suite.yaml, task files) and reading them with located errors.

A leaf: nothing here imports the runtime, gateway, models, runner, store or CI code. A suite
is loaded (its tools discovered, its live systems started) by `toolproof.suite.load_suite`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolproof.spec.expectations import Expectations
    from toolproof.spec.read import read_suite
    from toolproof.spec.source import SuiteSource
    from toolproof.spec.suite import SuiteFile
    from toolproof.spec.task import Task, TaskSpec

__all__ = ["Expectations", "SuiteFile", "SuiteSource", "Task", "TaskSpec", "read_suite"]

_HOMES = {
    "Expectations": "expectations",
    "SuiteFile": "suite",
    "TaskSpec": "task",
    "Task": "task",
    "read_suite": "read",
    "SuiteSource": "source",
}


def __getattr__(name: str) -> Any:
    """The public names, imported when first used: a command that reads one small part of
    the formats (the gate's grammar) does not load the suite models."""
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
