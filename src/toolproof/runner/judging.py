"""Calling the judge model on a trial's rubric (what it is asked and how its answers are read:
`toolproof.graders.rubric`).

Every criterion is one call. An answer that is not the strict JSON shape is asked again, up to
`ATTEMPTS` times in all; a provider that fails after its retries, or answers that stay
malformed, make the trial an infra error: a judge that could not judge never passes or fails
an agent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolproof.errors import InfraError, UsageError
from toolproof.graders.rubric import (
    ANSWER_SCHEMA,
    SYSTEM,
    CriterionVerdict,
    JudgeRecord,
    judge_prompt,
    read_answer,
)
from toolproof.models.base import Message, ModelClient, ProviderError
from toolproof.seeds import stream_seed
from toolproof.spec.source import Task
from toolproof.suite.loaded import Suite
from toolproof.transcript import Transcript

ATTEMPTS = 3
"""Calls one criterion gets for an answer of the strict shape."""


@dataclass(frozen=True)
class JudgeModel:
    """The model that grades rubrics: its name, its identity (name and settings) and client."""

    name: str
    identity: str
    client: ModelClient


def rubric_tasks(tasks: list[Task]) -> list[Task]:
    """The tasks a judge model must grade."""
    return [task for task in tasks if task.spec.expect.rubric]


def judge_name(suite: Suite, given: str | None, tasks: list[Task]) -> str | None:
    """The run's judge model: --judge-model, else the suite's `judge:`. Tasks with a rubric
    and no judge model are a usage error before any trial starts."""
    name = given or suite.file.judge
    needing = rubric_tasks(tasks)
    if needing and name is None:
        shown = ", ".join(task.id for task in needing[:5])
        raise UsageError(
            f"task(s) {shown} have a rubric, which a judge model grades: give --judge-model "
            "provider/model, or judge: in suite.yaml"
        )
    return name


def resolve_judge(
    name: str | None, suite: Suite, flags: dict[str, Any], concurrency: int | None = None
) -> JudgeModel | None:
    """The judge model's client, with settings from config, the suite and flags (as the
    agent's and the simulated user's)."""
    if name is None:
        return None
    from toolproof.agents.registry import model_client

    identity, client = model_client(name, suite, flags, concurrency)
    hold_answers(client)
    return JudgeModel(name=name, identity=identity, client=client)


def hold_answers(client: ModelClient) -> None:
    """Hold the judge's answers to the verdict's shape where its client can be held to a
    JSON Schema (the embedded model, by a grammar; found under the price meter and other
    wrappers): other providers are asked in words and their answers read as they come."""
    inner: object = client
    while inner is not None:
        hold = getattr(inner, "hold_text_to", None)
        if callable(hold):
            hold(ANSWER_SCHEMA)
            return
        inner = getattr(inner, "inner", None)


def goal(task: Task) -> str:
    """What the user wanted, as the judge is told: the task's story, else its opening."""
    return task.spec.story.strip() or task.spec.user.opening


async def judge_rubric(
    judge: JudgeModel, task: Task, transcript: Transcript, seed: int
) -> JudgeRecord:
    """Every criterion of the task's rubric judged on this transcript; InfraError when the
    judge fails."""
    record = JudgeRecord(model=judge.name)
    costs: list[float | None] = []
    for index, (name, criterion) in enumerate(task.spec.expect.criteria().items()):
        prompt = judge_prompt(goal(task), transcript, name, criterion)
        messages = [Message(role="system", content=SYSTEM), Message(role="user", content=prompt)]
        answers: list[str] = []
        verdict: tuple[bool, str] | None = None
        problem = ""
        while verdict is None and len(answers) < ATTEMPTS:
            try:
                response = await judge.client.generate(
                    messages, [], seed=stream_seed(seed, "judge", index * ATTEMPTS + len(answers))
                )
            except (ProviderError, InfraError) as exc:
                raise InfraError(f"judge {judge.name} on criterion '{name}': {exc}") from exc
            record.tokens_input += response.usage.input_tokens
            record.tokens_output += response.usage.output_tokens
            costs.append(response.cost_usd)
            answers.append(response.message.content)
            try:
                verdict = read_answer(response.message.content)
            except ValueError as exc:
                problem = str(exc)
        if verdict is None:
            raise InfraError(
                f"judge {judge.name} on criterion '{name}': {problem} "
                f"({ATTEMPTS} answers; last: {answers[-1][:120]!r})"
            )
        record.criteria.append(
            CriterionVerdict(
                name=name,
                passed=verdict[0],
                explanation=verdict[1],
                prompt=prompt,
                answers=answers,
            )
        )
    record.cost_usd = None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)
    return record
