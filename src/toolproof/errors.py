"""One family of errors a user can cause, each carrying where it happened and what to do."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Problem:
    """One located problem: `path:line: message`."""

    path: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message}"


class ToolproofError(Exception):
    """Base of every error a user can cause; the CLI prints it without a traceback, exit 2."""

    exit_code = 2


class UsageError(ToolproofError):
    """A bad flag, argument or combination of them."""


class SuiteError(ToolproofError):
    """A suite (or another input file) is unsound; carries every problem found in one pass."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))

    @classmethod
    def at(cls, path: str | Path, line: int | None, message: str) -> SuiteError:
        return cls([Problem(str(path), line, message)])


class StoreError(ToolproofError):
    """The results store cannot do what was asked (unknown run, incompatible database)."""


class MetricError(ToolproofError):
    """A metric cannot be computed honestly from the data (for example k larger than n)."""


class InfraError(Exception):
    """An endpoint or the environment failed after retries: the trial is `infra_error`."""


class AgentFailure(Exception):
    """The agent did something that ends its trial as `failed` (for example max steps)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class ToolCrashed(AgentFailure):
    """A tool could not finish its call: it ran past its timeout, or tried to end the process
    (sys.exit, os._exit, KeyboardInterrupt). What the trial does after it could not be
    trusted, so the trial ends as failed with the reason; the call is recorded as crashed,
    which blames the failure on the environment."""

    def __init__(self, message: str) -> None:
        super().__init__("tool_crashed", message)
