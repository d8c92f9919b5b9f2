"""The build layer: one rule picks a command's judge model, one place wires every trial, and a
served run's config is made as a run's is."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from support import MINI_FILES, write_files

from toolproof.errors import UsageError
from toolproof.runner.build import judge_name
from toolproof.runner.config import RunRequest, run_config
from toolproof.suite import Suite, load_suite

SRC = Path(__file__).parents[2] / "src" / "toolproof"
SUITE_JUDGE = "openai-compatible/suite-judge"
RUBRIC = "      must_say: [shipped]\n      rubric: {polite: Is polite to the user}\n"


def suite(root: Path, *, judge: bool = False, rubric: bool = False) -> Suite:
    """The mini suite, naming a judge model in `judge:`, its `status` task with a rubric."""
    text = MINI_FILES["suite.yaml"]
    if rubric:
        text = text.replace("      must_say: [shipped]\n", RUBRIC)
    if judge:
        text += f"judge: {SUITE_JUDGE}\n"
    return load_suite(write_files(root, {**MINI_FILES, "suite.yaml": text}))


def test_the_judge_is_the_flag_then_the_run_s_own_then_the_suite_s(tmp_path: Path) -> None:
    judged = suite(tmp_path / "judged", judge=True)
    assert judge_name(judged, "openai/flag", stored="openai/run") == "openai/flag"
    assert judge_name(judged, None, stored="openai/run") == "openai/run"
    assert judge_name(judged, None) == SUITE_JUDGE
    assert judge_name(suite(tmp_path / "plain"), None) is None


def test_a_task_with_a_rubric_and_no_judge_is_a_usage_error(tmp_path: Path) -> None:
    rubric = suite(tmp_path / "rubric", rubric=True)
    with pytest.raises(UsageError, match=r"task\(s\) status have a rubric.*--judge-model"):
        judge_name(rubric, None, graded=rubric.tasks)
    assert judge_name(rubric, None, graded=[rubric.task("cancel")]) is None
    assert judge_name(rubric, None) is None  # validate: its rubric is left unjudged


def test_a_regrade_judges_again_only_when_asked(tmp_path: Path) -> None:
    judged = suite(tmp_path / "judged", judge=True)
    assert judge_name(judged, None, stored="openai/run", rejudge=False) is None
    with pytest.raises(UsageError, match="new judge only with --rejudge"):
        judge_name(judged, "openai/flag", rejudge=False)
    assert judge_name(judged, "openai/flag", stored="openai/run", rejudge=True) == "openai/flag"
    assert judge_name(judged, None, stored="openai/run", rejudge=True) == "openai/run"
    assert judge_name(judged, None, rejudge=True) == SUITE_JUDGE


def test_a_served_run_stores_the_settings_it_always_stored(
    mini: Suite, capsys: pytest.CaptureFixture[str]
) -> None:
    """As serve-tools stored them before its config was made by `run_config`: the suite's
    default k its trials allow (3 is left out, quietly), one trial at a time, no judge."""
    asked = RunRequest(agent="mcp:mine", trials=2, seed=7, faults="x", time_scale=0.5)
    stored = run_config(mini, asked, served=mini.task("status")).stored()
    assert list(stored.items()) == [
        ("agent", "mcp:mine"),
        ("served", "mcp"),
        ("models", []),
        ("model_flags", {}),
        ("max_cost", None),
        ("user_model", None),
        ("variants", ["faults:x"]),
        ("score", {**mini.file.score.model_dump(), "conditions": []}),
        ("time_scale", 0.5),
        ("trials", 2),
        ("k", [1]),
        ("seed", 7),
        ("max_steps", 30),
        ("concurrency", 1),
        ("infra_errors", "fail"),
        ("tasks", ["cancel", "status"]),
        ("suite_path", str(mini.root)),
    ]
    assert capsys.readouterr().err == ""


def test_a_served_task_without_a_rubric_needs_no_judge_in_a_suite_with_rubrics(
    tmp_path: Path,
) -> None:
    rubric = suite(tmp_path / "rubric", judge=True, rubric=True)
    asked = RunRequest(agent="mcp:mine")
    assert run_config(rubric, asked, served=rubric.task("cancel")).judge_model is None
    assert run_config(rubric, asked, served=rubric.task("status")).judge_model == SUITE_JUDGE
    assert run_config(rubric, asked).judge_model == SUITE_JUDGE


WIRING = {
    "Trial": "a trial",
    "VariantSetup": "a variant's setup",
    "JudgeModel": "a judge model's client",
    "resolve_agents": "a run's agents",
    "resolve_user": "a run's user side",
}
"""What only `runner/build.py` makes, whoever runs the trials (the others call it)."""


def calls(tree: ast.AST) -> set[str]:
    """The names of the functions and classes a module calls."""
    return {
        node.func.id if isinstance(node.func, ast.Name) else node.func.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute)
    }


def test_only_the_build_layer_wires_trials() -> None:
    """run, the Ray actors, serve-tools, validate and regrade get their trials, agents, user
    side, judge and variants from `runner.build`, and read no suite's `judge:` themselves."""
    wired: dict[str, list[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        if path == SRC / "runner" / "build.py":
            continue
        text = path.read_text(encoding="utf-8")
        made = sorted(set(WIRING) & calls(ast.parse(text)))
        if ".file.judge" in text:
            made.append("judge:")
        if made:
            wired[str(path.relative_to(SRC))] = made
    assert wired == {}
