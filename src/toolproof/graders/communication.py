"""Communication graders: facts the user must hear, things never to say, the turn budget."""

from __future__ import annotations

from toolproof.conversation import mentions
from toolproof.graders.base import Evidence, Verdict
from toolproof.spec.models import Expectations


def grade_communication(expect: Expectations, evidence: Evidence) -> list[Verdict]:
    said = "\n".join(m.content for m in evidence.transcript.messages("assistant"))
    verdicts: list[Verdict] = []
    if expect.must_say:
        missing = []
        for fact in expect.must_say:
            options = fact if isinstance(fact, list) else [fact]
            if not any(mentions(said, option) for option in options):
                missing.append(" or ".join(repr(o) for o in options))
        verdicts.append(
            Verdict(
                grader="must_say",
                passed=not missing,
                reason=f"not said: {', '.join(missing)}" if missing else "every fact said",
            )
        )
    if expect.must_not_say:
        leaked = [repr(s) for s in expect.must_not_say if mentions(said, s)]
        verdicts.append(
            Verdict(
                grader="must_not_say",
                passed=not leaked,
                reason=f"said {', '.join(leaked)}" if leaked else "nothing forbidden said",
            )
        )
    if expect.max_turns is not None:
        turns = len(evidence.transcript.messages("assistant"))
        verdicts.append(
            Verdict(
                grader="max_turns",
                passed=turns <= expect.max_turns,
                reason=f"{turns} agent turns (limit {expect.max_turns})",
            )
        )
    return verdicts
