"""Personas: each built-in rewrites the task's user side deterministically per seed, keeps
its goal (every detail still said, the right value last), marks its confusing message, and
never says a fact the agent must look up."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest

from toolproof.errors import UsageError
from toolproof.meaning.dialogue import is_affirmative
from toolproof.meaning.values import mentions
from toolproof.spec.task import Task, TaskSpec
from toolproof.spec.user import PersonaSpec, UserSpec
from toolproof.suite import load_suite
from toolproof.transcript import Transcript
from toolproof.users.personas import (
    BUILTIN_PERSONAS,
    Persona,
    confusing,
    leaked,
    perform,
    resolve_persona,
)
from toolproof.users.scripted import ScriptedUser, scripted_user
from toolproof.users.variant import variant_user

EXAMPLES = Path(__file__).parents[2] / "examples"


def make_task(opening: str, **expect: object) -> Task:
    spec = TaskSpec.model_validate(
        {
            "id": "t",
            "user": {
                "opening": opening,
                "replies": [{"when": "asks_confirmation", "say": "Yes, please go ahead."}],
            },
            "expect": {
                "actions": [
                    {"tool": "find_customer", "args": {"email": "ana.ruiz@example.com"}},
                    {"tool": "cancel_order", "args": {"order_id": "W11177"}},
                ],
                **expect,
            },
        }
    )
    return Task(spec=spec, source="tasks.yaml", line=1, lines={})


CANCEL = make_task(
    "Hi, I'd like to cancel my order W11177, I don't need it. My email is ana.ruiz@example.com.",
    must_say=["cancelled", {"fact": "podcast", "source": "tools"}],
)


def play(name: str, seed: int, task: Task = CANCEL) -> UserSpec:
    return perform(resolve_persona(name, {}), task, random.Random(seed)).user


def everything_said(user: UserSpec) -> str:
    return " ".join([user.opening, *(t.say for t in user.turns), *(r.say for r in user.replies)])


@pytest.mark.parametrize("name", BUILTIN_PERSONAS)
def test_each_persona_is_the_same_for_the_same_seed(name: str) -> None:
    assert play(name, 11) == play(name, 11)


@pytest.mark.parametrize("name", BUILTIN_PERSONAS)
def test_each_persona_keeps_every_goal_detail_and_the_yes(name: str) -> None:
    for seed in range(20):
        user = play(name, seed)
        said = everything_said(user)
        assert mentions(said, "W11177") and mentions(said, "ana.ruiz@example.com")
        assert any(r.say.lower().startswith("yes") for r in user.replies)


@pytest.mark.parametrize("name", sorted(confusing()))
def test_a_confusing_persona_marks_a_message_it_says(name: str) -> None:
    for seed in range(10):
        done = perform(resolve_persona(name, {}), CANCEL, random.Random(seed))
        assert done.confusing in [done.user.opening, *(t.say for t in done.user.turns)]


@pytest.mark.parametrize(
    "use",
    [
        ["corrector", "impatient"],
        ["corrector", "terse"],
        ["ambiguous", "impatient"],
        ["topic-switcher", "terse"],
        ["terse", "contradictory"],
        ["corrector", "topic-switcher"],
    ],
)
def test_the_confusing_mark_holds_after_later_built_ins_and_the_suites_own_words(
    use: list[str],
) -> None:
    own = PersonaSpec.model_validate(
        {"use": use, "prefix": "Quick one.", "turns": [{"say": "Are you there?"}]}
    )
    persona = resolve_persona("mixed", {"mixed": own})
    for seed in range(10):
        done = perform(persona, CANCEL, random.Random(seed))
        said = [done.user.opening, *(t.say for t in done.user.turns)]
        assert done.confusing is not None and done.confusing in said, (use, seed, said)
        if use[0] != "topic-switcher":  # the opening confuses, and is said before any aside
            assert done.confusing == done.user.opening


def test_a_persona_that_rewrites_nothing_is_plain() -> None:
    assert resolve_persona("cooperative", {}).plain
    assert not resolve_persona("terse", {}).plain
    polite = PersonaSpec.model_validate({"use": ["cooperative"]})
    worded = PersonaSpec.model_validate({"use": ["cooperative"], "prompt": "Be polite."})
    declared = {"polite": polite, "worded": worded}
    assert resolve_persona("polite", declared).plain
    assert not resolve_persona("worded", declared).plain


@pytest.mark.parametrize("name", ["cooperative", "terse", "impatient"])
def test_a_messy_but_clear_persona_marks_nothing(name: str) -> None:
    assert perform(resolve_persona(name, {}), CANCEL, random.Random(1)).confusing is None


def test_cooperative_is_the_task_as_written() -> None:
    user = play("cooperative", 3)
    assert (user.opening, user.turns, user.replies) == (
        CANCEL.spec.user.opening,
        CANCEL.spec.user.turns,
        CANCEL.spec.user.replies,
    )


def test_the_corrector_says_a_near_miss_then_the_right_value_last() -> None:
    kinds = set()
    for seed in range(30):
        user = play("corrector", seed)
        messages = [user.opening, *(t.say for t in user.turns[:1])]
        text = " ".join(messages)
        # the wrong value differs from a goal detail by one character, and the right one
        # comes after it
        wrong = [w for w in text.replace("(", " ").replace(")", " ").split() if _near(w)]
        assert wrong, text
        right = "W11177" if wrong[0].startswith("W") else "ana.ruiz@example.com"
        assert text.rindex(right) > text.index(wrong[0])
        kinds.add("same message" if "sorry, I mean" in user.opening else "next message")
    assert kinds == {"same message", "next message"}


def _near(word: str) -> bool:
    word = word.strip(".,:")
    for right in ("W11177", "ana.ruiz@example.com"):
        if len(word) == len(right) and sum(a != b for a, b in zip(word, right, strict=True)) == 1:
            return True
    return False


def test_ambiguous_names_nothing_at_first_and_everything_when_asked() -> None:
    user = play("ambiguous", 5)
    assert "W11177" not in user.opening and "ana.ruiz" not in user.opening
    assert "my order" in user.opening
    said = asyncio.run(ScriptedUser(user).respond("Which order do you mean?"))
    assert said is not None and "W11177" in said and "ana.ruiz@example.com" in said


def test_ambiguous_waits_to_be_asked() -> None:
    user = play("ambiguous", 5)
    # no question: the clarification is not volunteered (and no reply fits either)
    assert asyncio.run(ScriptedUser(user).respond("I have cancelled it.")) is None


def test_contradictory_takes_it_back_then_resolves_when_asked() -> None:
    user = play("contradictory", 2)
    assert user.opening.startswith(CANCEL.spec.user.opening.strip())
    assert len(user.opening) > len(CANCEL.spec.user.opening.strip())
    said = asyncio.run(ScriptedUser(user).respond("Do you want me to cancel it or not?"))
    assert said is not None and ("want" in said or "do what I asked" in said)


def test_the_topic_switcher_asks_something_unrelated_then_comes_back() -> None:
    user = play("topic-switcher", 4)
    scripted = ScriptedUser(user)
    aside = asyncio.run(scripted.respond("Let me look that up."))
    back = asyncio.run(scripted.respond("I'm not sure."))
    assert aside is not None and "?" in aside
    assert back is not None and back.lower().startswith(("anyway", "sorry"))


def test_the_topic_switcher_never_says_a_fact_the_agent_must_look_up() -> None:
    # "podcast" is a grounded must_say fact of CANCEL: the aside that names it is never used
    asides = {play("topic-switcher", seed).turns[0].say for seed in range(40)}
    assert len(asides) >= 2
    assert not any("podcast" in aside for aside in asides)


def test_terse_drops_pleasantries_and_holds_details_until_asked() -> None:
    user = play("terse", 1)
    assert not user.opening.lower().startswith("hi")
    assert "W11177" in user.opening and "ana.ruiz" not in user.opening
    said = asyncio.run(ScriptedUser(user).respond("What is your email?"))
    assert said is not None and "ana.ruiz@example.com" in said


def test_impatient_pushes_and_repeats_the_request() -> None:
    user = play("impatient", 3)
    assert user.opening != CANCEL.spec.user.opening
    assert "W11177" in user.turns[0].say and user.turns[0].when == "always"


def test_each_persona_tells_a_simulated_user_its_manner() -> None:
    for name in BUILTIN_PERSONAS[1:]:
        user = play(name, 0)
        assert user.persona and user.instructions == CANCEL.spec.user.opening


def test_a_suite_persona_combines_built_ins_with_its_own_words() -> None:
    own = PersonaSpec.model_validate(
        {
            "use": ["terse"],
            "prefix": "Ugh.",
            "prompt": "You are annoyed.",
            "turns": [{"say": "Are you even listening?"}],
        }
    )
    persona = resolve_persona("grumpy", {"grumpy": own})
    user = perform(persona, CANCEL, random.Random(0)).user
    assert user.opening.startswith("Ugh. ")
    assert user.turns[0].say == "Are you even listening?"
    assert "annoyed" in user.persona


def test_an_unknown_persona_is_a_usage_error_naming_the_known_ones() -> None:
    with pytest.raises(UsageError, match=r"--persona grumpy: no such persona.*corrector"):
        resolve_persona("grumpy", {})


def test_the_variant_user_marks_the_confusing_turn_in_the_transcript() -> None:
    transcript = Transcript()
    make = variant_user(scripted_user, Persona("topic-switcher", ("topic-switcher",)), None)
    user = make(CANCEL, transcript, 42)
    transcript.say("user", user.opening())
    transcript.say("assistant", "Looking.")
    aside = asyncio.run(user.respond("Looking."))
    notes = transcript.notes()
    assert [n.kind for n in notes] == ["persona", "confusing_turn"]
    assert notes[1].turn == 1 and aside is not None and "?" in aside


# Slow: loading the CRM suite starts its REST service.
@pytest.mark.parametrize(
    "suite",
    ["retail", "logistics-dispatch", pytest.param("crm-consolidation", marks=pytest.mark.slow)],
)
def test_no_built_in_persona_leaks_a_grounded_fact_of_a_shipped_task(suite: str) -> None:
    loaded = load_suite(EXAMPLES / suite)
    for task in loaded.tasks:
        original = everything_said(task.spec.user)
        protected = [
            o for f in task.spec.expect.facts() if f.source == "tools" for o in f.sources
        ] + list(task.spec.expect.must_not_say)
        for name in BUILTIN_PERSONAS:
            for seed in range(3):
                said = everything_said(play(name, seed, task))
                leaked = [f for f in protected if mentions(said, f) and not mentions(original, f)]
                assert not leaked, (task.id, name, leaked)


def test_nothing_a_persona_adds_reads_as_a_yes_to_a_confirmation() -> None:
    for name in BUILTIN_PERSONAS:
        for seed in range(10):
            user = play(name, seed)
            added = [t.say for t in user.turns if t not in CANCEL.spec.user.turns]
            assert not any(is_affirmative(text) for text in added), (name, added)


def test_a_suite_persona_that_says_a_fact_the_agent_must_look_up_is_found() -> None:
    own = PersonaSpec.model_validate({"turns": [{"say": "I heard a podcast about you."}]})
    assert leaked(resolve_persona("chatty", {"chatty": own}), CANCEL) == "podcast"
    quiet = PersonaSpec.model_validate({"prefix": "Hello again."})
    assert leaked(resolve_persona("quiet", {"quiet": quiet}), CANCEL) is None
