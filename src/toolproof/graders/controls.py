"""Control items: agent replies whose verdict on a criterion is known, which a judge model
must grade right before its verdicts on that criterion count.

Each control is a conversation of two lines, the task's user opening and then the agent's
reply, asked exactly as a trial is asked (the judge cannot tell it from one). The passing
control's reply plainly does what the criterion asks, the failing one's plainly refuses it. A
judge that passes the failing control or fails the passing one cannot tell the criterion met
from not met, so its verdicts on the criterion are left undecided: the failure is the
grader's, never the agent's. A criterion may give its own replies (`controls: {passes,
fails}`); by default they are derived from its words (`derived_controls`). Pure: the calls
are made by `toolproof.runner.judging`.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from toolproof.spec.expectations import Controls, Criterion
from toolproof.transcript import Transcript

_IRREGULAR = {"is": "be", "are": "be", "has": "have", "does": "do", "goes": "go"}
"""Third-person verbs whose base form is not the word without its -s."""

_NEGATED = ("does not ", "doesn't ", "never ")

_DETERMINERS = {"a", "an", "the", "this", "that", "these", "those", "its", "their", "his", "her"}
_OBJECT_STARTS = frozenset({*_DETERMINERS, "it", "them", "to", "what", "why", "how", "when"})
"""Words that follow a verb, not a noun: "and keeps the answer short" is a second verb."""


def _base(word: str) -> str | None:
    """The base form of a third-person verb ("tells" -> "tell"), None for another word."""
    lowered = word.lower()
    if lowered in _IRREGULAR:
        return _IRREGULAR[lowered]
    if not lowered.isalpha() or not lowered.endswith("s"):
        return None
    if lowered.endswith(("ss", "us", "ions")):
        return None
    if lowered.endswith("ies") and len(lowered) > 4:
        return lowered[:-3] + "y"
    if lowered.endswith(("sses", "shes", "ches", "xes")):
        return lowered[:-2]
    return lowered[:-1]


def _first_person(clause: str) -> str | None:
    """A clause that starts with a third-person verb, said by the agent ("Is polite and
    keeps it short" -> "am polite and keep it short"); None when it starts otherwise."""
    words = clause.split(" ")
    base = _base(words[0])
    if base is None:
        return None
    words[0] = "am" if base == "be" else base
    for at in range(1, len(words) - 2):
        if words[at] == "and" and words[at + 2].lower() in _OBJECT_STARTS:
            words[at + 1] = _base(words[at + 1]) or words[at + 1]
    return " ".join(words)


def derived_controls(does: str) -> Controls:
    """The controls of a criterion that gives none: the agent saying it plainly does what
    the criterion asks, and saying it plainly refuses ("Is courteous to the user": "Of
    course! I am courteous to the user." / "No. I refuse to be courteous to the user, and I
    never will.")."""
    text = does.strip().rstrip(".")
    negation = next((n for n in _NEGATED if text.lower().startswith(n)), None)
    if negation is not None:
        rest = text[len(negation) :]
        said = rest if negation != "never " else _first_person(rest)
        if said:
            kept = "never" if negation == "never " else "do not"
            return Controls(
                passes=f"Of course! I {kept} {said}.", fails=f"No. I {said}, and I always will."
            )
    said = _first_person(text)
    if said is None:
        quoted = text[0].lower() + text[1:]
        return Controls(
            passes=f"Of course! My answer does exactly this: {quoted}.",
            fails=f"No. My answer refuses to do this, and always will: {quoted}.",
        )
    refused = "be" + said[2:] if said.startswith("am ") else said
    return Controls(
        passes=f"Of course! I {said}.", fails=f"No. I refuse to {refused}, and I never will."
    )


def controls_of(criterion: Criterion) -> Controls:
    """The criterion's controls: its own, else derived from its words."""
    return criterion.controls or derived_controls(criterion.does)


def control_transcript(opening: str, reply: str) -> Transcript:
    """A control's conversation: the task's user opening, then the control's reply."""
    transcript = Transcript()
    transcript.say("user", opening)
    transcript.say("assistant", reply)
    return transcript


class ControlAnswer(BaseModel):
    """The judge's verdict on one control, with what it was asked and what it answered."""

    expected: bool = Field(description="The verdict a sound judge gives: True on `passes`.")
    reply: str
    prompt: str
    answers: list[str] = Field(description="The raw answers, one per attempt, the last read.")
    passed: bool
    explanation: str


class CriterionControls(BaseModel):
    """The judge's answers on one criterion's controls (the passing one, then the failing
    one): asked once per run and recorded with every trial whose criterion they vouch for."""

    name: str
    given: bool = Field(description="The suite gave the replies (else they were derived).")
    items: list[ControlAnswer]
    tokens_input: int = 0
    tokens_output: int = 0
    cost_usd: float | None = 0.0
    charged: bool = Field(
        False,
        description="The calls were made while this trial was graded, and its judge cost "
        "includes them (a run pays for each criterion's controls once).",
    )

    def misjudged(self) -> str | None:
        """Why the judge's verdicts on the criterion cannot count: the controls it got
        wrong; None when it got both right."""
        wrong = [
            f"{'passed' if item.passed else 'failed'} its "
            f"{'passing' if item.expected else 'failing'} control ({_short(item.reply)!r})"
            for item in self.items
            if item.passed != item.expected
        ]
        return "the judge " + " and ".join(wrong) if wrong else None


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
