"""A scripted model: canned model turns from a file, to drive the agent loop in tests.

File format (YAML):

    latency_s: 0.2            # optional: each turn sleeps this long, like a real model
    default:                  # turns for any task without its own list
      - text: "Hello"
    tasks:
      cancel-order:
        - tool_calls: [{name: get_order, arguments: {order_id: W1}}]
        - tool_calls: [{name: get_order, raw_arguments: "{not json"}]
        - text: "Your order is cancelled."
          usage: {input_tokens: 120, output_tokens: 9}

Each turn is one model response; when a task's turns run out the model answers "".

The same file serves two ways: `--agent scripted:FILE` (the built-in loop over these turns)
and `--model scripted/FILE`, a provider like any other, so a team's own agent code (through
the model bridge) or the built-in loop is driven by it with no key and no network. As a
provider it plays each trial its task's turns in order (`models.trial` says which trial a
call serves); outside a trial it plays the default turns.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Collection
from pathlib import Path
from typing import Annotated, Any

from pydantic import ConfigDict, Field, ValidationError

from toolproof.errors import Problem, SuiteError
from toolproof.models.base import Message, ModelClient, ModelResponse, ToolCall, Usage
from toolproof.models.trial import current_trial
from toolproof.spec.base import Numbers
from toolproof.spec.limits import MAX_CALL_TOKENS, MAX_SCRIPT_LATENCY_S
from toolproof.spec.yamlload import line_of, load_yaml
from toolproof.tools.base import ToolSchema


class _Scripted(Numbers):
    """A part of a script file: unknown keys are errors and every number is finite."""

    model_config = ConfigDict(extra="forbid")


class ScriptedCall(_Scripted):
    name: str
    arguments: dict[str, Any] | None = None
    raw_arguments: str | None = None


Tokens = Annotated[int, Field(ge=0, le=MAX_CALL_TOKENS)]


class ScriptedUsage(_Scripted):
    """The tokens a scripted turn reports: whole, 0 or more, and bounded."""

    input_tokens: Tokens = 0
    output_tokens: Tokens = 0
    cached_tokens: Tokens = 0
    reasoning_tokens: Tokens = 0


class ScriptedTurn(_Scripted):
    text: str = ""
    tool_calls: list[ScriptedCall] = Field(default_factory=list)
    usage: ScriptedUsage = Field(default_factory=ScriptedUsage)


class Script(_Scripted):
    latency_s: float = Field(0.0, ge=0, le=MAX_SCRIPT_LATENCY_S)
    default: list[ScriptedTurn] = Field(default_factory=list)
    tasks: dict[str, list[ScriptedTurn]] = Field(default_factory=dict)

    def turns_for(self, task_id: str) -> list[ScriptedTurn]:
        return self.tasks.get(task_id, self.default)


def load_script(path: str | Path, task_ids: Collection[str] | None = None) -> Script:
    """Read a script file; problems are located like suite problems. With `task_ids` (the
    suite's), a task the script names that the suite lacks is a problem too: its turns
    would never play."""
    from toolproof.spec.source import shown, validation_problems

    file = Path(path)
    data = load_yaml(file, shown(file))
    try:
        script = Script.model_validate(data)
    except ValidationError as exc:
        raise SuiteError(validation_problems(exc, data, shown(file))) from None
    unknown = [t for t in script.tasks if task_ids is not None and t not in task_ids]
    if unknown:
        raise SuiteError(
            [
                Problem(shown(file), line_of(data, ["tasks", t]), f"tasks.{t}: no such task")
                for t in unknown
            ]
        )
    return script


class ScriptedModel(ModelClient):
    """Plays one task's scripted turns in order."""

    def __init__(
        self, turns: list[ScriptedTurn], latency_s: float = 0.0, name: str = "scripted"
    ) -> None:
        self.name = name
        self.turns = iter(turns)
        self.latency_s = latency_s
        self._ids = itertools.count(1)

    async def generate(
        self, messages: list[Message], tools: list[ToolSchema], *, seed: int | None = None
    ) -> ModelResponse:
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        return self.play(next(self.turns, None) or ScriptedTurn())

    def play(self, turn: ScriptedTurn) -> ModelResponse:
        """One turn as the model's response, its tool calls numbered in order."""
        calls = [
            ToolCall(
                id=f"scripted_{next(self._ids)}",
                name=c.name,
                arguments=c.arguments if c.raw_arguments is None else None,
                raw_arguments=c.raw_arguments or "",
            )
            for c in turn.tool_calls
        ]
        return ModelResponse(
            message=Message(role="assistant", content=turn.text, tool_calls=calls),
            usage=Usage(**turn.usage.model_dump()),
            latency_s=self.latency_s,
            stop_reason="tool_calls" if calls else "stop",
        )


class ScriptedProvider(ModelClient):
    """`--model scripted/FILE`: one client for a whole run, playing each trial its task's
    turns; the trial's place in its turns is kept with the trial, never shared."""

    def __init__(self, script: Script, name: str) -> None:
        self.name = name
        self.script = script
        self._outside = ScriptedModel(script.default, script.latency_s, name)

    async def generate(
        self, messages: list[Message], tools: list[ToolSchema], *, seed: int | None = None
    ) -> ModelResponse:
        return await self._for_trial().generate(messages, tools, seed=seed)

    def _for_trial(self) -> ScriptedModel:
        trial = current_trial()
        if trial is None:
            return self._outside
        player = trial.state.get(self)
        if not isinstance(player, ScriptedModel):
            turns = self.script.turns_for(trial.task_id)
            player = trial.state[self] = ScriptedModel(turns, self.script.latency_s, self.name)
        return player
