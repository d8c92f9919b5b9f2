"""A loaded, checked suite: its tools (with tiers and weights), its tasks, its world."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar, cast

from toolproof.errors import UsageError
from toolproof.spec.suite import SuiteFile
from toolproof.spec.task import Task
from toolproof.tools.base import ToolSchema
from toolproof.tools.binding import ToolBinding
from toolproof.world import FrozenDict, World

if TYPE_CHECKING:
    from toolproof.runtime import Runtime

T = TypeVar("T")


@dataclass
class Suite:
    """A suite folder, loaded and checked. Build one with `toolproof.load_suite`."""

    root: Path
    file: SuiteFile
    policy: str
    tools: dict[str, ToolBinding]
    tasks: list[Task]
    world: FrozenDict
    content_hash: str
    warnings: list[str] = field(default_factory=list)
    user_tools: dict[str, ToolBinding] = field(default_factory=dict)
    """The simulated user's own tools (`user: tools:`); the agent never sees them."""
    _starts: dict[str, FrozenDict] = field(default_factory=dict, repr=False)
    _memo: dict[tuple[str, str], Any] = field(default_factory=dict, repr=False)
    runtime: Runtime | None = field(default=None, repr=False)
    """Live backends, services, hooks and checks; None for a suite of Python tools only."""

    @property
    def name(self) -> str:
        return self.file.name

    def close(self) -> None:
        """Stop what the suite started (servers, services); load it again to use them."""
        if self.runtime is not None:
            self.runtime.close()

    def __enter__(self) -> Suite:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def task(self, task_id: str) -> Task:
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise UsageError(f"suite '{self.name}' has no task '{task_id}'")

    def start_state(self, task: Task) -> FrozenDict:
        """The task's initial state: the suite's world with the task's patch, frozen once."""
        start = self._starts.get(task.id)
        if start is None:
            world = World(self.world)
            world.merge(task.spec.initial_state)
            start = world.snapshot()
            self._starts[task.id] = start
        return start

    def memo(self, key: tuple[str, str], build: Callable[[], T]) -> T:
        """What `build` makes of this suite (or of one of its tasks), made once: the graders'
        indexes of the world are built once per suite and task, not once per trial."""
        if key not in self._memo:
            self._memo[key] = build()
        return cast(T, self._memo[key])

    def select(self, selector: str | None) -> list[Task]:
        """Tasks whose id or one of whose tags is in a comma-separated list (all when None)."""
        if not selector:
            return list(self.tasks)
        wanted = {part.strip() for part in selector.split(",") if part.strip()}
        chosen = [t for t in self.tasks if t.id in wanted or wanted & set(t.spec.tags)]
        known = {t.id for t in self.tasks} | {tag for t in self.tasks for tag in t.spec.tags}
        unknown = sorted(wanted - known)
        if unknown:
            raise UsageError(f"--tasks: no task id or tag {', '.join(map(repr, unknown))}")
        return chosen

    def schemas(self) -> list[ToolSchema]:
        return [binding.schema for binding in self.tools.values()]

    def tool_weights(self) -> dict[str, Any]:
        return {name: b.weight for name, b in self.tools.items()}
