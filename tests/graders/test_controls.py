"""A rubric's controls, pure: the replies derived from a criterion's words, and how the judge's
answers on them decide whether its verdicts on the criterion count."""

from __future__ import annotations

from toolproof.graders.controls import ControlAnswer, CriterionControls, derived_controls
from toolproof.graders.rubric import CriterionVerdict, JudgeRecord, grade_rubric
from toolproof.spec.expectations import Expectations


def test_derived_controls_plainly_do_and_plainly_refuse_what_the_criterion_asks() -> None:
    courteous = derived_controls("Is courteous to the user")
    assert courteous.passes == "Of course! I am courteous to the user."
    assert courteous.fails == "No. I refuse to be courteous to the user, and I never will."
    short = derived_controls("Is courteous and keeps the answer short.")
    assert short.passes == "Of course! I am courteous and keep the answer short."
    replies = derived_controls("Replies in French")
    assert replies.fails == "No. I refuse to reply in French, and I never will."
    explains = derived_controls("Explains why the refund takes five days")
    assert explains.passes == "Of course! I explain why the refund takes five days."


def test_derived_controls_of_a_negative_criterion_turn_the_negation_around() -> None:
    never = derived_controls("Never blames the user")
    assert (never.passes, never.fails) == (
        "Of course! I never blame the user.",
        "No. I blame the user, and I always will.",
    )
    mention = derived_controls("Does not mention the internal ticket number")
    assert mention.passes == "Of course! I do not mention the internal ticket number."
    assert mention.fails == "No. I mention the internal ticket number, and I always will."


def test_a_criterion_that_starts_with_no_verb_is_quoted_in_its_controls() -> None:
    tone = derived_controls("Polite tone throughout")
    assert tone.passes == "Of course! My answer does exactly this: polite tone throughout."
    assert (
        tone.fails == "No. My answer refuses to do this, and always will: polite tone throughout."
    )


RUBRIC = Expectations.model_validate(
    {
        "rubric": {
            "polite": "Is polite to the user",
            "explains": {"does": "Explains when it arrives", "weight": 3, "required": True},
        },
        "rubric_pass": 0.75,
    }
)


def controls(name: str, on_passing: bool, on_failing: bool) -> CriterionControls:
    """A criterion's controls, the judge having said `on_passing` and `on_failing`."""
    return CriterionControls(
        name=name,
        given=False,
        items=[
            ControlAnswer(
                expected=expected, reply=reply, prompt="", answers=[], passed=said, explanation=""
            )
            for expected, reply, said in ((True, "Yes!", on_passing), (False, "No.", on_failing))
        ],
    )


def record(verdicts: dict[str, bool], wrong: tuple[str, ...] = ()) -> JudgeRecord:
    """The judge's verdicts, with the controls of `wrong` passed both ways (others right)."""
    return JudgeRecord(
        model="judge",
        criteria=[
            CriterionVerdict(name=n, passed=p, explanation=f"{n} said", prompt="", answers=[])
            for n, p in verdicts.items()
        ],
        controls=[controls(n, True, n in wrong) for n in verdicts],
    )


def test_the_judge_that_passes_a_failing_control_leaves_the_rubric_undecided() -> None:
    [verdict] = grade_rubric(RUBRIC, record({"polite": True, "explains": True}, ("explains",)))
    assert (verdict.passed, verdict.decided) == (False, False)
    assert (
        verdict.reason
        == "criterion 'explains' undecided: the judge passed its failing control ('No.')"
    )


def test_an_undecided_criterion_the_rubric_does_not_hang_on_leaves_it_decided() -> None:
    passes = grade_rubric(RUBRIC, record({"polite": True, "explains": True}, ("polite",)))
    assert [(v.passed, v.decided) for v in passes] == [(True, True)]
    assert passes[0].reason == (
        "score 0.75: every decided criterion passed; undecided (the judge failed their "
        "controls): polite"
    )
    fails = grade_rubric(RUBRIC, record({"polite": True, "explains": False}, ("polite",)))
    assert [(v.passed, v.decided) for v in fails] == [(False, True)]
    assert fails[0].reason.startswith("criterion 'explains' failed: explains said")


def test_a_record_without_control_answers_decides_nothing() -> None:
    bare = record({"polite": True, "explains": True}).model_copy(update={"controls": []})
    [verdict] = grade_rubric(RUBRIC, bare)
    assert not verdict.decided
    assert verdict.reason == (
        "criterion 'polite' undecided: the judge answered no controls for it (undecided: "
        "polite, explains)"
    )


def test_a_judge_right_on_every_control_grades_as_without_controls() -> None:
    [verdict] = grade_rubric(RUBRIC, record({"polite": False, "explains": True}))
    assert (verdict.passed, verdict.decided) == (True, True)
    assert verdict.reason == "score 0.75: passed despite polite"
