"""The rubric grader's pure parts: what the judge model is asked, how its answer is read, and
how the criteria's verdicts decide the rubric.

The judge sees the task's goal, the transcript in brief (what was said, each tool call with
its arguments and result) and one criterion at a time, and answers with one JSON object:
`{"verdict": "pass" | "fail", "explanation": "..."}`. One criterion per call keeps every
answer small and every verdict tied to the prompt that produced it. The calls themselves are
made by `toolproof.runner.judging`; here nothing does I/O.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, Field

from toolproof.graders.base import Verdict
from toolproof.spec.models import Criterion, Expectations
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
    """Everything the judge did for one trial: its model, each criterion's verdict, and
    what its calls used and cost (None: the model has no price)."""

    model: str
    system: str = SYSTEM
    criteria: list[CriterionVerdict] = Field(default_factory=list)
    tokens_input: int = 0
    tokens_output: int = 0
    cost_usd: float | None = 0.0


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
    of passed criteria is below `rubric_pass`; the reason names the failed criteria."""
    criteria = expect.criteria()
    if not criteria:
        return []
    verdicts = {v.name: v for v in record.criteria}
    total = sum(c.weight for c in criteria.values())
    earned = sum(c.weight for name, c in criteria.items() if verdicts[name].passed)
    failed = [name for name in criteria if not verdicts[name].passed]
    required = [name for name in failed if criteria[name].required]
    share = earned / total
    passed = not required and share >= expect.rubric_pass
    if passed:
        reason = f"score {share:.2f}: " + (
            "every criterion passed" if not failed else f"passed despite {', '.join(failed)}"
        )
    else:
        first = required[0] if required else failed[0]
        reason = f"criterion '{first}' failed: {verdicts[first].explanation}"
        if len(failed) > 1:
            reason += f" (failed: {', '.join(failed)}; score {share:.2f})"
    return [Verdict(grader="rubric", passed=passed, reason=reason)]
