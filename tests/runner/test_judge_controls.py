"""A judge proves itself on each criterion's controls before its verdicts count: a real local
OpenAI-compatible server answers as the judge from a script, and `toolproof run`, `regrade`,
`validate`, `gate` and `report` run as subprocesses against a real SQLite store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from judges import (
    JUDGE,
    judged_run,
    scripted,
    stored,
    suite_with_rubric,
    toolproof,
    trial_requests,
    verdict,
)
from servers import model_server

from toolproof.spec.expectations import Controls

# Slow: every test here runs the CLI as a process.
pytestmark = pytest.mark.slow

PASSING_POLITE = "Of course! I am polite to the user."
FAILING_POLITE = "No. I refuse to be polite to the user, and I never will."


def always(passed: bool) -> Any:
    """A judge (of trials or of controls) that gives one verdict whatever it is asked."""
    return lambda name, n: verdict(passed, "looks right" if passed else "looks wrong")


def test_a_judge_that_passes_everything_leaves_every_criterion_undecided(
    tmp_path: Path,
) -> None:
    run = judged_run(tmp_path, always(True), controls=always(True))
    assert len(run.seen.bodies) - len(trial_requests(run.seen)) == 4  # 2 criteria x 2, once
    assert [r.outcome for r in run.results] == ["failed", "failed"]
    result = run.results[0]
    assert result.reason == (
        "rubric: criterion 'polite' undecided: the judge passed its failing control "
        f"({FAILING_POLITE!r}) (undecided: polite, names_status)"
    )
    [rubric] = [v for v in result.verdicts if v.grader == "rubric"]
    assert (rubric.passed, rubric.decided) == (False, False)
    assert result.blame is not None and result.blame.party == "grader"
    assert result.blame.rule == "grader_undecided"
    assert result.judge is not None
    assert [c.passed for c in result.judge.criteria] == [True, True]  # what it said is kept
    polite = result.judge.controls[0]
    assert (polite.name, polite.given) == ("polite", False)
    assert [(i.expected, i.reply, i.passed) for i in polite.items] == [
        (True, PASSING_POLITE, True),
        (False, FAILING_POLITE, True),
    ]
    assert f"User: Where is order B?\nAgent: {FAILING_POLITE}" in polite.items[1].prompt
    assert run.summary["judge"]["undecided_criteria"] == 2
    assert run.summary["judge"]["failed_controls"] == {"status": ["names_status", "polite"]}
    assert run.summary["models"][0]["blame"]["grader"] == 2
    assert run.summary["models"][0]["blame"]["agent"] == 0
    assert "2 rubric criteria undecided: the judge failed their controls" in run.done.stdout


def test_a_judge_that_fails_everything_is_blamed_not_the_agent(tmp_path: Path) -> None:
    run = judged_run(tmp_path, always(False), controls=always(False))
    assert [r.outcome for r in run.results] == ["failed", "failed"]
    result = run.results[0]
    assert result.reason.startswith(
        f"rubric: criterion 'polite' undecided: the judge failed its passing control "
        f"({PASSING_POLITE!r})"
    )
    assert result.blame is not None and result.blame.party == "grader"
    assert run.summary["judge"]["undecided_criteria"] == 2


def test_a_judge_right_on_its_controls_fails_the_agent_as_before(tmp_path: Path) -> None:
    run = judged_run(tmp_path, lambda name, n: verdict(name == "polite", "never said it"))
    result = run.results[0]
    assert result.reason == "rubric: criterion 'names_status' failed: never said it"
    assert result.blame is not None and result.blame.party == "agent"
    assert run.summary["judge"]["undecided_criteria"] == 0


def test_a_criterion_s_own_controls_are_asked_instead_of_derived_ones(tmp_path: Path) -> None:
    given = Controls(passes="Hello! Order B has shipped.", fails="Figure it out yourself.")
    rubric = (
        "      must_say: [shipped]\n"
        "      rubric:\n"
        "        polite:\n"
        "          does: Is polite to the user\n"
        f"          controls: {{passes: '{given.passes}', fails: '{given.fails}'}}\n"
    )

    def controls(name: str, passing: bool) -> tuple[int, dict[str, Any]]:
        return verdict(passing)

    run = judged_run(
        tmp_path, always(True), rubric=rubric, controls=controls, given={"polite": given}
    )
    asked = [b["messages"][-1]["content"] for b in run.seen.bodies]
    assert sum(f"Agent: {given.passes}" in text for text in asked) == 1
    assert sum(f"Agent: {given.fails}" in text for text in asked) == 1
    assert not any(FAILING_POLITE in text or PASSING_POLITE in text for text in asked)
    assert [r.outcome for r in run.results] == ["passed", "passed"]
    assert run.results[0].judge is not None
    [polite] = run.results[0].judge.controls
    assert polite.given and [i.reply for i in polite.items] == [given.passes, given.fails]


def test_a_bad_controls_value_is_a_located_suite_error(tmp_path: Path) -> None:
    rubric = (
        "      must_say: [shipped]\n"
        "      rubric:\n"
        "        polite: {does: Is polite, controls: {passes: Hi there, fails: Hi there}}\n"
        "        warm: {does: Is warm, controls: {passes: Hi there}}\n"
    )
    suite = suite_with_rubric(tmp_path / "suite", "http://127.0.0.1:9/v1", rubric)
    done = toolproof("validate", str(suite))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    line = 1 + (suite / "suite.yaml").read_text().splitlines().index(
        "        polite: {does: Is polite, controls: {passes: Hi there, fails: Hi there}}"
    )
    assert f"suite.yaml:{line}:" in done.stderr
    assert "'passes' and 'fails' are the same reply: give two different ones" in done.stderr
    assert f"suite.yaml:{line + 1}:" in done.stderr and "fails" in done.stderr


def test_regrade_grades_from_the_recorded_control_answers_calling_no_model(
    tmp_path: Path,
) -> None:
    run = judged_run(tmp_path, always(True), controls=always(True))
    db = tmp_path / "s.db"
    again = toolproof("regrade", "latest", "--store", str(db))  # the judge server is gone
    assert again.returncode == 0, again.stderr
    assert "0 trial outcomes changed" in again.stdout
    regraded = stored(db)
    assert [r.reason for r in regraded] == [r.reason for r in run.results]
    assert regraded[0].judge is not None and regraded[0].judge.controls


def test_validate_asks_each_criterion_s_controls_once_for_every_agent_it_judges(
    tmp_path: Path,
) -> None:
    with model_server(scripted(always(True), controls=always(True))) as (url, seen):
        suite = suite_with_rubric(tmp_path / "suite", url)
        done = toolproof("validate", str(suite), "--tasks", "status", "--judge-model", JUDGE)
    assert done.returncode == 1
    assert "the oracle agent fails it (rubric: criterion 'polite' undecided: the judge" in (
        done.stderr + done.stdout
    )
    assert len(seen.bodies) - len(trial_requests(seen)) == 4
    assert len(trial_requests(seen)) > 2  # the oracle's and the baselines' trials


def test_the_gate_s_markdown_report_warns_of_the_undecided_criteria(tmp_path: Path) -> None:
    judged_run(tmp_path, always(True), controls=always(True))
    db, markdown = tmp_path / "s.db", tmp_path / "gate.md"
    gate = toolproof(
        "gate", "latest", "--store", str(db), "--min", "pass@1=0.5", "--markdown", str(markdown)
    )
    assert gate.returncode == 1, gate.stderr  # every trial failed: undecided is no pass
    text = markdown.read_text()
    assert f"Judge `{JUDGE}`: $0.0010, apart from the agents' cost." in text
    assert (
        "> ⚠️ 2 rubric criteria undecided: the judge failed their controls "
        "(`status`: `names_status`, `polite`)."
    ) in text


def test_the_html_report_warns_of_the_undecided_criteria(tmp_path: Path, chromium: Any) -> None:
    judged_run(tmp_path, always(True), controls=always(True))
    db, html = tmp_path / "s.db", tmp_path / "report.html"
    done = toolproof("report", "latest", "--store", str(db), "--output", str(html))
    assert done.returncode == 0, done.stderr
    page = html.read_text()
    data = json.loads(page.split('id="tp-data">', 1)[1].split("</script>", 1)[0])
    assert data["runs"][0]["judge"]["failed_controls"] == {"status": ["names_status", "polite"]}
    dom = chromium.dump_dom(html.as_uri())
    assert (
        f"2 rubric criteria undecided: the judge {JUDGE} failed their controls "
        "(status: names_status, polite)"
    ) in dom
