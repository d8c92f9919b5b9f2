"""Replaying a task's gold actions on a fresh world: the expected final state.

Only simulated (Python) tools are replayed. The effects of real systems (MCP, OpenAPI) live
outside the world, and simulated tools cannot see them, so the world a task must end with is
the replay of its simulated gold actions alone; what the real systems must end with, its
`check` expectations verify (the loader requires them). A task whose gold actions all call
real systems has no expected world hash.

The replay runs twice, with two different tools seeds: gold actions that leave a different
world each time (a tool drawing ids from the seed, reading the clock, or depending on
iteration order) could never be matched by an agent's trial, which gets a seed of its own,
so that is a suite error naming the first paths that moved.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from toolproof.errors import ToolCrashed
from toolproof.spec.expectations import Action
from toolproof.spec.task import Task
from toolproof.suite.loaded import Suite
from toolproof.tools.base import ToolContext
from toolproof.tools.binding import ToolBinding
from toolproof.world import Change, World, describe_changes


@dataclass(frozen=True)
class GoldReplay:
    """The hash of the expected final state, and any gold action that failed."""

    hash: str | None
    errors: list[str] = field(default_factory=list)
    changes: tuple[Change, ...] = ()
    """What the gold actions change in the initial world (shown when a trial's state differs)."""
    real_tools: list[str] = field(default_factory=list)
    """The tools of real systems among the gold actions (no replay when there are any)."""


async def replay_gold(suite: Suite, task: Task, seed: int = 0) -> GoldReplay:
    """Run the gold actions in order; None hash when the task has none."""
    actions = task.spec.expect.actions
    if actions is None:
        return GoldReplay(hash=None)
    real = sorted(
        {
            a.tool
            for a in actions
            if a.tool in (bindings := _side(suite, a)) and not bindings[a.tool].simulated
        }
    )
    simulated = [(i, a) for i, a in enumerate(actions) if a.tool not in real]
    if real and not simulated:
        return GoldReplay(hash=None, real_tools=real)
    world, errors = await _replay(suite, task, simulated, seed)
    again, _ = await _replay(suite, task, simulated, seed + 1)
    expected, changes = world.hash(), world.diff()
    if not errors and again.hash() != expected:
        moved = describe_changes(again.diff(), changes, "first replay")
        errors.append(
            "gold actions leave a different world on each replay (a tool depends on its seed, "
            f"the clock or iteration order), so no trial could match it: {moved}"
        )
    return GoldReplay(hash=expected, errors=errors, changes=tuple(changes), real_tools=real)


async def _replay(
    suite: Suite, task: Task, actions: list[tuple[int, Action]], seed: int
) -> tuple[World, list[str]]:
    world = World(suite.start_state(task))
    context = ToolContext(world=world, seed=seed)
    errors = []
    for i, action in actions:
        binding = _side(suite, action)[action.tool]
        try:
            result = await binding.tool.call(dict(action.args), context)
        except ToolCrashed as exc:
            errors.append(f"gold action {i + 1} {action.tool} failed: {exc}")
            break
        if result.is_error:
            errors.append(f"gold action {i + 1} {action.tool} failed: {result.content}")
    return world, errors


def _side(suite: Suite, action: Action) -> dict[str, ToolBinding]:
    """The tools of whoever makes the action: the agent's, or the user's own."""
    return suite.user_tools if action.by == "user" else suite.tools
