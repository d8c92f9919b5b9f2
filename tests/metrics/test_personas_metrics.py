"""Persona and checkpoint metrics on hand-made rows and transcripts, with hand-computed
values: pass rates over tasks, recovery from confusion, the degradation rate."""

from __future__ import annotations

from typing import Any

import pytest
from rows import trial

from toolproof.metrics.checkpoints import degradation
from toolproof.metrics.personas import conversation_stats, recovery_turns
from toolproof.metrics.summary import ModelSummary, model_metrics, summarize_run
from toolproof.spec.gate import check_metric, k_of
from toolproof.transcript import NoteEvent, ToolCallEvent, Transcript

GOLD = [("get_order", {"order_id": "W1"}), ("cancel_order", {"order_id": "W1"})]


def talk(*events: tuple[str, str]) -> Transcript:
    """('user'|'assistant', text) messages and ('call', 'tool:order') tool calls."""
    transcript = Transcript()
    for i, (kind, text) in enumerate(events):
        if kind == "call":
            tool, order = text.split(":")
            transcript.add(
                ToolCallEvent(t=i, call_id=str(i), name=tool, arguments={"order_id": order})
            )
        elif kind == "note":
            transcript.add(NoteEvent(t=i, kind="confusing_turn", turn=int(text)))
        else:
            transcript.say("user" if kind == "user" else "assistant", text)
    return transcript


def test_recovery_counts_turns_to_the_first_call_matching_a_gold_call() -> None:
    transcript = talk(
        ("user", "Cancel W2, sorry, W1"),
        ("call", "get_order:W2"),  # the wrong order: not a correct action
        ("assistant", "W2 is on its way."),
        ("user", "No, W1!"),
        ("call", "get_order:W1"),
        ("assistant", "Found it."),
    )
    assert recovery_turns(transcript, 0, GOLD) == 2


def test_a_question_to_the_user_is_a_correct_next_action() -> None:
    transcript = talk(("user", "Cancel my order"), ("assistant", "Which order do you mean?"))
    assert recovery_turns(transcript, 0, GOLD) == 1


def test_a_gold_call_before_the_confusing_turn_does_not_count_again() -> None:
    transcript = talk(
        ("user", "Look up W1"),
        ("call", "get_order:W1"),
        ("assistant", "It is pending."),
        ("user", "By the way, nice weather."),
        ("call", "get_order:W1"),  # the same call again: that gold call is already matched
        ("assistant", "Indeed."),
    )
    assert recovery_turns(transcript, 1, GOLD) is None


def test_conversation_stats_only_for_trials_with_notes() -> None:
    assert conversation_stats(talk(("user", "hi"), ("assistant", "hello")), GOLD) is None
    stats = conversation_stats(
        talk(("note", "0"), ("user", "x"), ("assistant", "Which one?"), ("user", "W1")), GOLD
    )
    assert stats == {"user_turns": 2, "confusing_turn": 0, "recovery_turns": 1}


def row(task: str, variant: str, index: int, passed: bool, **conversation: Any) -> dict[str, Any]:
    out = trial(task, variant, index, passed)
    if conversation:
        out["conditions"]["conversation"] = conversation
    return out


def persona_rows() -> list[dict[str, Any]]:
    clean = [row(t, "", i, True) for t in "ab" for i in range(3)]
    v = "persona:corrector"
    return [
        *clean,
        row("a", v, 0, True, confusing_turn=0, recovery_turns=1),
        row("a", v, 1, True, confusing_turn=0, recovery_turns=3),
        row("a", v, 2, False, confusing_turn=0, recovery_turns=None),
        *(row("b", v, i, True, confusing_turn=0, recovery_turns=1) for i in range(3)),
    ]


def test_persona_pass_rates_and_recovery_are_taken_over_tasks() -> None:
    summary = summarize_run(persona_rows(), [], [1, 2])
    corrector = summary["personas"]["corrector"]
    # a: 2 of 3 passed, b: 3 of 3
    assert corrector["pass@1"] == pytest.approx((2 / 3 + 1) / 2)
    assert corrector["pass^k"]["2"] == pytest.approx((1 / 3 + 1) / 2)  # C(2,2)/C(3,2) = 1/3
    assert corrector["n_tasks"] == 2
    low, high = corrector["ci"]["pass@1"]
    assert low <= corrector["pass@1"] <= high
    recovery = corrector["recovery"]
    # a: mean of 1 and 3 = 2 (one trial never recovered); b: 1; median over tasks 1.5
    assert recovery["recovery_turns"] == pytest.approx(1.5)
    assert recovery["recovered"] == pytest.approx((2 / 3 + 1) / 2)
    assert recovery["confused_trials"] == 6
    assert recovery["ci"] is not None and recovery["ci"][0] <= 1.5 <= recovery["ci"][1]


def test_recovery_is_null_when_no_confusing_message_was_said() -> None:
    rows = [row(t, "persona:terse", i, True, user_turns=2) for t in "ab" for i in range(2)]
    recovery = summarize_run(rows, [], [1])["personas"]["terse"]["recovery"]
    assert recovery == {
        "recovery_turns": None,
        "ci": None,
        "recovered": None,
        "confused_trials": 0,
    }


def checkpoint_rows() -> list[dict[str, Any]]:
    def at(target: int, task: str, outcomes: str, planned: int | None = None) -> list[Any]:
        stretch = {"target": target, "planned": planned or target}
        return [
            row(task, f"turns:{target}", i, o == "P", user_turns=target, stretch=stretch)
            for i, o in enumerate(outcomes)
        ]

    return [
        *(row(t, "", i, True) for t in "abc" for i in range(2)),
        *at(3, "a", "PP"),
        *at(3, "b", "PP"),
        *at(3, "c", "PP", planned=5),  # already longer than 3 turns: left out of it
        *at(13, "a", "PF"),
        *at(13, "b", "FF"),
        *at(13, "c", "PF"),
    ]


def test_checkpoints_leave_out_tasks_already_longer_and_measure_the_degradation() -> None:
    summary = summarize_run(checkpoint_rows(), [], [1, 2])
    three, thirteen = summary["checkpoints"]["3"], summary["checkpoints"]["13"]
    assert three["too_long"] == ["c"] and three["n_tasks"] == 2 and three["pass@1"] == 1.0
    assert thirteen["n_tasks"] == 3 and thirteen["pass@1"] == pytest.approx((0.5 + 0 + 0.5) / 3)
    assert three["user_turns"] == 3 and thirteen["pass^k"]["2"] == 0.0
    trend = summary["checkpoint_degradation"]
    # over a and b (measured at both): a drops 0.5 over 10 turns, b drops 1.0
    assert trend["value"] == pytest.approx(0.75) and trend["n_tasks"] == 2
    assert trend["ci"] == [pytest.approx(0.5), pytest.approx(1.0)]
    assert summary["metrics"]["checkpoint_degradation"] == pytest.approx(0.75)


def test_the_degradation_is_the_least_squares_slope_over_three_lengths() -> None:
    # one task: pass@1 1.0, 0.5, 0.5 at 5, 10, 20 turns; slope = -0.5*... by hand:
    # mean x = 35/3; sxx = 116.67; sxy = (5-11.67)*1 + (10-11.67)*.5 + (20-11.67)*.5 = -3.333
    trend = degradation({5: {"a": 1.0}, 10: {"a": 0.5}, 20: {"a": 0.5}}, seed=0)
    assert trend["value"] == pytest.approx(-10 * (-10 / 3) / (350 / 3))
    assert trend["ci"] is None  # one task: no interval


def test_the_degradation_is_null_with_a_reason_under_two_checkpoints() -> None:
    rows = [row(t, "turns:8", i, True) for t in "ab" for i in range(2)]
    trend = summarize_run(rows, [], [1])["checkpoint_degradation"]
    assert trend["value"] is None and trend["reason"] == "needs two checkpoints or more; 1 measured"


def test_a_plain_run_has_no_persona_or_checkpoint_sections() -> None:
    summary = summarize_run([row(t, "", i, True) for t in "ab" for i in range(2)], [], [1])
    assert "personas" not in summary and "checkpoints" not in summary
    assert "checkpoint_degradation" not in summary["metrics"]


def test_the_gate_reads_persona_and_checkpoint_metrics_by_name() -> None:
    body = summarize_run([*persona_rows(), *checkpoint_rows()], [], [1, 2])
    entry = ModelSummary.model_validate({"model": "m", **body["models"][0]})
    metrics = model_metrics(entry)
    assert metrics["persona.corrector.pass^2"] == pytest.approx(2 / 3)
    assert metrics["persona.corrector.recovery_turns"] == pytest.approx(1.5)
    assert metrics["checkpoint.13.pass@1"] == pytest.approx(1 / 3)
    assert metrics["checkpoint_degradation"] == pytest.approx(0.75)


def test_the_gate_grammar_names_persona_and_checkpoint_metrics() -> None:
    for name in (
        "persona.corrector.pass@1",
        "persona.topic-switcher.recovery_turns",
        "checkpoint.8.pass^3",
        "checkpoint_degradation",
    ):
        assert check_metric(name) == name
    assert k_of("persona.corrector.pass^5") == 5 and k_of("checkpoint.8.pass^3") == 3
    for bad in ("persona.Corrector.pass@1", "checkpoint.x.pass@1", "persona.a.pass@2"):
        with pytest.raises(ValueError, match=r"persona\.NAME"):
            check_metric(bad)
