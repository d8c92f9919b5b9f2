"""The rubric grader's pure parts: what the judge model is asked, how its answer is read, and
how the criteria's verdicts decide the rubric.

The judge sees the task's goal, the transcript in brief (what was said, each tool call with
its arguments and result) and one criterion at a time, and answers with one JSON object:
`{"verdict": "pass" | "fail", "explanation": "..."}`. One criterion per call keeps every
answer small and every verdict tied to the prompt that produced it. A criterion's verdicts
count only when the judge graded its controls right (`toolproof.graders.controls`). The calls
themselves are made by `toolproof.runner.judging`; here nothing does I/O.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, Field

from toolproof.graders.base import Verdict
from toolproof.graders.controls import CriterionControls
from toolproof.spec.expectations import Criterion, Expectations
from toolproof.transcript import MessageEvent, ToolCallEvent, Transcript

SYSTEM = (
    "You grade one conversation between a user and a support agent that uses tools, against "
    "one criterion. Judge only what the transcript shows. Answer with one JSON object and "
    'nothing else: {"verdict": "pass" or "fail", "explanation": "one or two sentences"}.'
)

ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["pass", "fail"]},
        "explanation": {"type": "string", "minLength": 1, "maxLength": 400},
    },
    "required": ["verdict", "explanation"],
    "additionalProperties": False,
}
"""The answer's shape as a JSON Schema, for a judge model that can be held to one (the
explanation's bound keeps a held answer within a turn's default 256 tokens)."""

RESULT_CHARS = 600
"""A tool result is cut to this many characters in the prompt (the judge needs its gist)."""


class CriterionVerdict(BaseModel):
    """The judge's verdict on one criterion, with what it was asked and what it answered."""

    name: str
    passed: bool
    explanation: str
    prompt: str
    answers: list[str] = Field(description="The raw answers, one per attempt, the last read.")


class JudgeRecord(BaseModel):
    """Everything the judge did for one trial: its model, each criterion's verdict, its
    answers on each criterion's controls, and what its calls used and cost (None: the model
    has no price; controls count where they were asked)."""

    model: str
    system: str = SYSTEM
    criteria: list[CriterionVerdict] = Field(default_factory=list)
    controls: list[CriterionControls] = Field(default_factory=list)
    tokens_input: int = 0
    tokens_output: int = 0
    cost_usd: float | None = 0.0

    def undecided(self) -> dict[str, str]:
        """The criteria whose verdicts cannot count, each with why: the judge misjudged
        their controls (or answered none)."""
        answered = {c.name: c for c in self.controls}
        out: dict[str, str] = {}
        for verdict in self.criteria:
            controls = answered.get(verdict.name)
            why = controls.misjudged() if controls else "the judge answered no controls for it"
            if why is not None:
                out[verdict.name] = why
        return out


def render_transcript(transcript: Transcript) -> str:
    """The conversation as the judge reads it: messages and tool calls, in order."""
    lines: list[str] = []
    for event in transcript.events:
        if isinstance(event, MessageEvent):
            who = "User" if event.role == "user" else "Agent"
            lines.append(f"{who}: {event.content}")
        elif isinstance(event, ToolCallEvent):
            args = json.dumps(event.arguments, sort_keys=True, default=str)
            result = json.dumps(event.result, sort_keys=True, default=str)
            if len(result) > RESULT_CHARS:
                result = result[:RESULT_CHARS] + " ..."
            status = "error" if event.is_error else "result"
            lines.append(f"[tool call] {event.name}({args}) -> {status}: {result}")
    return "\n".join(lines)


def judge_prompt(goal: str, transcript: Transcript, name: str, criterion: Criterion) -> str:
    """The user message the judge gets for one criterion."""
    return (
        f"The user's goal:\n{goal}\n\n"
        f"The conversation:\n{render_transcript(transcript)}\n\n"
        f"The criterion ({name}): {criterion.does}\n\n"
        'Does the agent meet this criterion? Answer {"verdict": "pass" or "fail", '
        '"explanation": "..."} and nothing else.'
    )


_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def read_answer(text: str) -> tuple[bool, str]:
    """(passed, explanation) from a judge's answer; ValueError saying what is wrong with an
    answer of another shape (one JSON object, exactly these two keys; a ```json fence
    around it is allowed)."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1)
    try:
        data: Any = json.loads(body)
    except json.JSONDecodeError:
        raise ValueError("the answer is not one JSON object") from None
    if not isinstance(data, dict) or set(data) != {"verdict", "explanation"}:
        raise ValueError('the answer must be {"verdict": ..., "explanation": ...} exactly')
    verdict, explanation = data["verdict"], data["explanation"]
    if verdict not in ("pass", "fail"):
        raise ValueError(f"verdict {verdict!r} is neither 'pass' nor 'fail'")
    if not isinstance(explanation, str) or not explanation.strip():
        raise ValueError("the explanation is empty")
    return verdict == "pass", explanation.strip()


def grade_rubric(expect: Expectations, record: JudgeRecord) -> list[Verdict]:
    """The rubric's verdict: it fails when a required criterion fails or the weighted share
    of passed criteria is below `rubric_pass`; the reason names the failed criteria. A
    criterion whose judge misjudged its controls is undecided: the rubric is decided only
    when it would be the same whichever way those criteria went, and undecided (the
    grader's failure, not the agent's) otherwise."""
    criteria = expect.criteria()
    if not criteria:
        return []
    answers = {v.name: v for v in record.criteria}
    undecided = {n: why for n, why in record.undecided().items() if n in criteria}
    sure = {n: answers[n].passed for n in criteria if n not in undecided}
    worst = _Tally(expect, {**sure, **dict.fromkeys(undecided, False)})
    best = _Tally(expect, {**sure, **dict.fromkeys(undecided, True)})
    note = f"; undecided (the judge failed their controls): {', '.join(undecided)}"
    if worst.passed:
        despite = [n for n in worst.failed if n not in undecided]
        reason = f"score {worst.share:.2f}: " + (
            f"passed despite {', '.join(despite)}"
            if despite
            else f"every {'decided ' if undecided else ''}criterion passed"
        )
        return [Verdict(grader="rubric", passed=True, reason=reason + (note if undecided else ""))]
    if not best.passed:
        first = best.required[0] if best.required else best.failed[0]
        reason = f"criterion '{first}' failed: {answers[first].explanation}"
        if len(best.failed) > 1:
            reason += f" (failed: {', '.join(best.failed)}; score {best.share:.2f})"
        return [Verdict(grader="rubric", passed=False, reason=reason + (note if undecided else ""))]
    first = next(iter(undecided))
    reason = f"criterion '{first}' undecided: {undecided[first]}"
    if len(undecided) > 1:
        reason += f" (undecided: {', '.join(undecided)})"
    return [Verdict(grader="rubric", passed=False, reason=reason, decided=False)]


class _Tally:
    """A rubric's score for given criterion verdicts: the weighted share passed, the failed
    criteria (the required ones apart) and whether the rubric passes."""

    def __init__(self, expect: Expectations, passed: dict[str, bool]) -> None:
        criteria = expect.criteria()
        total = sum(c.weight for c in criteria.values())
        self.share = sum(c.weight for n, c in criteria.items() if passed[n]) / total
        self.failed = [n for n in criteria if not passed[n]]
        self.required = [n for n in self.failed if criteria[n].required]
        self.passed = not self.required and self.share >= expect.rubric_pass
