"""Calling the judge model on a trial's rubric (what it is asked and how its answers are read:
`toolproof.graders.rubric`).

Every criterion is one call. An answer that is not the strict JSON shape is asked again, up to
`ATTEMPTS` times in all; a provider that fails after its retries, or answers that stay
malformed, make the trial an infra error: a judge that could not judge never passes or fails
an agent.

Before its first verdict on a criterion of a task, the judge answers the criterion's two
controls (`toolproof.graders.controls`), once for the judge model's life: a run, a validate,
a regrade. The trial whose grading asks them is charged their calls; every trial records the
answers.
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass, field

from toolproof.errors import InfraError
from toolproof.graders.controls import (
    ControlAnswer,
    CriterionControls,
    control_transcript,
    controls_of,
)
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
from toolproof.spec.expectations import Criterion
from toolproof.spec.task import Task
from toolproof.transcript import Transcript

ATTEMPTS = 3
"""Calls one criterion gets for an answer of the strict shape."""


@dataclass(frozen=True)
class JudgeModel:
    """The model that grades rubrics: its name, its identity (name and settings) and client,
    and its answers on each (task, criterion)'s controls, asked once in its life."""

    name: str
    identity: str
    client: ModelClient
    controls: dict[tuple[str, str], asyncio.Future[CriterionControls]] = field(
        default_factory=dict, compare=False, repr=False
    )


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


@dataclass
class Spend:
    """What a series of judge calls used: tokens, and each call's cost (None: unpriced)."""

    tokens_input: int = 0
    tokens_output: int = 0
    costs: list[float | None] = field(default_factory=list)

    def cost_usd(self) -> float | None:
        if any(c is None for c in self.costs):
            return None
        return float(sum(c or 0.0 for c in self.costs))


async def ask(
    judge: JudgeModel, prompt: str, what: str, seed: int, first: int, spend: Spend
) -> tuple[bool, str, list[str]]:
    """(passed, explanation, raw answers) of one question, asked again while the answer is
    malformed; InfraError naming `what` when the judge fails. Seeds are the judge stream's
    draws from `first` on."""
    messages = [Message(role="system", content=SYSTEM), Message(role="user", content=prompt)]
    answers: list[str] = []
    problem = ""
    while len(answers) < ATTEMPTS:
        try:
            response = await judge.client.generate(
                messages, [], seed=stream_seed(seed, "judge", first + len(answers))
            )
        except (ProviderError, InfraError) as exc:
            raise InfraError(f"judge {judge.name} on {what}: {exc}") from exc
        spend.tokens_input += response.usage.input_tokens
        spend.tokens_output += response.usage.output_tokens
        spend.costs.append(response.cost_usd)
        answers.append(response.message.content)
        try:
            passed, explanation = read_answer(response.message.content)
        except ValueError as exc:
            problem = str(exc)
        else:
            return passed, explanation, answers
    raise InfraError(
        f"judge {judge.name} on {what}: {problem} ({ATTEMPTS} answers; last: {answers[-1][:120]!r})"
    )


def control_seed(task: Task, name: str) -> int:
    """The seed of a criterion's controls: fixed by the task and the criterion, as they are
    asked once for every trial."""
    digest = hashlib.sha256(f"controls:{task.id}:{name}".encode()).digest()
    return int.from_bytes(digest[:4], "big") >> 1


def control_prompts(task: Task, name: str, criterion: Criterion) -> list[tuple[bool, str, str]]:
    """(expected verdict, reply, prompt) of the criterion's passing and failing controls."""
    controls = controls_of(criterion)
    return [
        (
            expected,
            reply,
            judge_prompt(
                goal(task), control_transcript(task.spec.user.opening, reply), name, criterion
            ),
        )
        for expected, reply in ((True, controls.passes), (False, controls.fails))
    ]


async def answer_controls(
    judge: JudgeModel, task: Task, name: str, criterion: Criterion
) -> CriterionControls:
    """The judge's verdicts on the criterion's two controls."""
    spend = Spend()
    items: list[ControlAnswer] = []
    for index, (expected, reply, prompt) in enumerate(control_prompts(task, name, criterion)):
        kind = "passing" if expected else "failing"
        what = f"criterion '{name}' (its {kind} control)"
        seed = control_seed(task, name)
        passed, explanation, answers = await ask(judge, prompt, what, seed, index * ATTEMPTS, spend)
        items.append(
            ControlAnswer(
                expected=expected,
                reply=reply,
                prompt=prompt,
                answers=answers,
                passed=passed,
                explanation=explanation,
            )
        )
    return CriterionControls(
        name=name,
        given=criterion.controls is not None,
        items=items,
        tokens_input=spend.tokens_input,
        tokens_output=spend.tokens_output,
        cost_usd=spend.cost_usd(),
    )


async def controls_for(
    judge: JudgeModel, task: Task, name: str, criterion: Criterion
) -> CriterionControls:
    """The judge's answers on a criterion's controls: asked by the first trial of the task
    to be graded (and `charged` to it), awaited by the others. A failure is not kept: the
    next trial asks again."""
    key = (task.id, name)
    pending = judge.controls.get(key)
    if pending is not None:
        return await pending
    pending = judge.controls[key] = asyncio.get_running_loop().create_future()
    try:
        answered = await answer_controls(judge, task, name, criterion)
    except asyncio.CancelledError:
        del judge.controls[key]
        pending.cancel()
        raise
    except Exception as exc:
        del judge.controls[key]
        pending.set_exception(exc)
        pending.exception()  # marked as seen: a failure nobody else waited for is no warning
        raise
    pending.set_result(answered)
    return answered.model_copy(update={"charged": True})


async def judge_rubric(
    judge: JudgeModel, task: Task, transcript: Transcript, seed: int
) -> JudgeRecord:
    """Every criterion of the task's rubric judged on this transcript, each after its
    controls; InfraError when the judge fails."""
    record = JudgeRecord(model=judge.name)
    spend = Spend()
    for index, (name, criterion) in enumerate(task.spec.expect.criteria().items()):
        controls = await controls_for(judge, task, name, criterion)
        if controls.charged:
            spend.tokens_input += controls.tokens_input
            spend.tokens_output += controls.tokens_output
            spend.costs.append(controls.cost_usd)
        record.controls.append(controls)
        prompt = judge_prompt(goal(task), transcript, name, criterion)
        passed, explanation, answers = await ask(
            judge, prompt, f"criterion '{name}'", seed, index * ATTEMPTS, spend
        )
        record.criteria.append(
            CriterionVerdict(
                name=name, passed=passed, explanation=explanation, prompt=prompt, answers=answers
            )
        )
    record.tokens_input, record.tokens_output = spend.tokens_input, spend.tokens_output
    record.cost_usd = spend.cost_usd()
    return record
