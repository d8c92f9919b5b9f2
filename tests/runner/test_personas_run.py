"""Runs with personas and turn checkpoints, end to end on the shipped examples: the oracle
passes every task under every built-in persona and at every length, the adversarial
baselines still fail, and the JSON summary has both sections."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from stored import mini_suite, run_json, toolproof_ci

from toolproof.agents.baselines import ADVERSARIES
from toolproof.errors import UsageError
from toolproof.runner.config import run_config, variant_keys
from toolproof.runner.run import RunRequest, run_suite
from toolproof.spec.user import BUILTIN_PERSONAS
from toolproof.store.journal import Store
from toolproof.suite import load_suite

EXAMPLES = Path(__file__).parents[2] / "examples"


@pytest.mark.slow
def test_retail_with_two_personas_and_two_checkpoints_reports_both_sections(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run.json"
    result = run_retail(
        tmp_path, "--persona", "corrector", "--persona", "ambiguous", "--checkpoints", "3,8"
    )
    assert result.returncode == 0, result.stdout + result.stderr
    summary = json.loads(out.read_text())
    tasks = len(load_suite(EXAMPLES / "retail").tasks)
    assert set(summary["models"][0]["variants"]) == {
        "",
        "persona:corrector",
        "persona:ambiguous",
        "turns:3",
        "turns:8",
    }
    for name in ("corrector", "ambiguous"):
        persona = summary["personas"][name]
        assert persona["n_tasks"] == tasks and persona["pass@1"] == 1.0
        assert persona["pass^k"]["2"] == 1.0
        recovery = persona["recovery"]
        # the oracle acts on the confusing message itself
        assert recovery["confused_trials"] > tasks and recovery["recovery_turns"] == 1.0
    for target in ("3", "8"):
        checkpoint = summary["checkpoints"][target]
        assert checkpoint["pass@1"] == 1.0 and checkpoint["too_long"] == []
        assert abs(checkpoint["user_turns"] - int(target)) < 1
    assert summary["checkpoint_degradation"]["value"] == 0.0
    assert "personas [95% CI]" in result.stdout and "turn checkpoints" in result.stdout


def run_retail(tmp_path: Path, *flags: str) -> Any:
    """`toolproof run` of the retail example with the oracle, two trials of each task."""
    done, _ = run_json(tmp_path, EXAMPLES / "retail", "--agent", "oracle", *flags)
    return done


def run(suite: str, agent: str, tmp_path: Path, **request: Any) -> dict[str, Any]:
    loaded = load_suite(EXAMPLES / suite)
    report = asyncio.run(
        run_suite(
            loaded,
            RunRequest(agent=agent, trials=1, k=[1], time_scale=0.001, **request),
            Store(str(tmp_path / f"{suite}-{agent}.db")),
            fresh=True,
        )
    )
    return report.summary.models[0].model_dump()


@pytest.mark.slow
@pytest.mark.parametrize("suite", ["retail", "logistics-dispatch", "crm-consolidation"])
def test_the_oracle_passes_every_task_under_every_persona_and_length(
    suite: str, tmp_path: Path
) -> None:
    summary = run(
        suite, "oracle", tmp_path, personas=list(BUILTIN_PERSONAS), checkpoints=[3, 8, 15, 25]
    )
    failed = {
        key: v["counts"]["failed"] + v["counts"]["infra_error"]
        for key, v in summary["variants"].items()
        if v["counts"]["passed"] != v["counts"]["total"]
    }
    assert not failed
    # cooperative is the plain variant itself: not run a second time
    assert len(summary["variants"]) == len(BUILTIN_PERSONAS) + 4


ALWAYS_FAIL = [name for name in ADVERSARIES if name not in ("leaker", "hedger")]
"""The baselines that fail every retail task; the leaker and the hedger pass those that leave
their shortcut no room (no one else named, one value to state), which validate marks n/a."""


@pytest.mark.slow
def test_the_adversarial_baselines_still_fail_every_task_under_every_persona(
    tmp_path: Path,
) -> None:
    for agent in ALWAYS_FAIL:
        summary = run("retail", agent, tmp_path, personas=list(BUILTIN_PERSONAS))
        passed = {k: v["counts"]["passed"] for k, v in summary["variants"].items()}
        assert set(passed.values()) == {0}, (agent, passed)


@pytest.mark.slow
def test_an_unknown_persona_is_refused_before_any_trial(tmp_path: Path) -> None:
    result = run_retail(tmp_path, "--persona", "grumpy")
    assert result.returncode == 2
    assert "--persona grumpy: no such persona" in result.stderr + result.stdout
    assert not (tmp_path / "run.json").exists()


@pytest.mark.slow
def test_a_bad_suite_persona_is_a_located_suite_error(tmp_path: Path) -> None:
    extra = "\npersonas:\n  hurried:\n    use: [terse, rushed]\n  Bad Name: {}\n"
    suite = mini_suite(tmp_path / "mini", extra)
    text = (suite / "suite.yaml").read_text()
    result = toolproof_ci("validate", suite, cwd=tmp_path)
    output = result.stdout + result.stderr
    assert result.returncode == 2
    line = text.count("\n") - 1  # the `use:` line
    assert f"suite.yaml:{line}" in output and "unknown built-in persona 'rushed'" in output


def test_the_full_profile_adds_the_suites_personas_or_the_messy_built_ins() -> None:
    logistics = load_suite(EXAMPLES / "logistics-dispatch")
    keys = variant_keys(logistics, RunRequest(profile="full", checkpoints=[5]))
    personas = [k for k in keys if k.startswith("persona:")]
    assert personas == [f"persona:{p}" for p in BUILTIN_PERSONAS if p != "cooperative"]
    assert keys.count("turns:5") == 1  # checkpoints stretch the clean trials only
    retail = load_suite(EXAMPLES / "retail")  # it declares its own
    keys = variant_keys(retail, RunRequest(profile="full"))
    assert [k for k in keys if k.startswith("persona:")] == ["persona:rushed-regular"]
    with pytest.raises(UsageError, match="--profile full chooses"):
        variant_keys(retail, RunRequest(profile="full", personas=["terse"]))


def test_the_full_profile_says_first_what_the_suite_lacks_and_what_to_add(
    capsys: pytest.CaptureFixture[str],
) -> None:
    variant_keys(load_suite(EXAMPLES / "retail"), RunRequest(profile="full"))
    assert capsys.readouterr().err == (
        "note: --profile full: suite 'retail' declares no fault profile, drift variant or load "
        "levels, so recovery_rate, drift_robustness and completion_under_load cannot be "
        "measured (the run has clean trials and personas only); add `faults:`, `drift:` and "
        "`load:` to suite.yaml to measure them (docs/conditions.md)\n"
    )
    variant_keys(load_suite(EXAMPLES / "logistics-dispatch"), RunRequest(profile="full"))
    assert capsys.readouterr().err == ""  # it declares all three


@pytest.mark.slow
def test_a_full_profile_run_of_retail_suggests_no_full_profile(tmp_path: Path) -> None:
    result, summary = run_json(tmp_path, EXAMPLES / "retail", "--agent", "oracle", "--profile",
                               "full", "--tasks", "status-latest-order-by-email")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "declares no fault profile, drift variant or load levels" in result.stderr
    [note] = summary["models"][0]["reliability"]["notes"]
    assert "--profile full" not in note + result.stdout
    assert "add `faults:`, `load:` and `drift:` to suite.yaml" in note


def test_a_checkpoint_beyond_max_steps_is_told_before_the_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    retail = load_suite(EXAMPLES / "retail")  # max_steps 30
    run_config(retail, RunRequest(models=["local/smollm2"], checkpoints=[8, 40, 35]))
    assert capsys.readouterr().err == (
        "note: --checkpoints 35,40: a conversation of 35 user turns needs at least 35 agent "
        "turns, more than max_steps (30) allows, so its trials are cut at max_steps; give "
        "--max-steps 40 or more (each tool call takes a turn too)\n"
    )
    run_config(retail, RunRequest(models=["local/smollm2"], checkpoints=[40], max_steps=45))
    run_config(retail, RunRequest(agent="oracle", checkpoints=[40]))  # takes no turns
    assert capsys.readouterr().err == ""


@pytest.mark.slow
def test_retails_own_persona_keeps_the_oracle_passing_every_task(tmp_path: Path) -> None:
    result = run_retail(tmp_path, "--persona", "rushed-regular")
    assert result.returncode == 0, result.stderr
    summary = json.loads((tmp_path / "run.json").read_text())
    tasks = len(load_suite(EXAMPLES / "retail").tasks)
    persona = summary["personas"]["rushed-regular"]
    assert persona["n_tasks"] == tasks and persona["pass@1"] == 1.0
    assert persona["pass^k"]["2"] == 1.0
    [trial] = [
        r
        for _, r in Store(str(tmp_path / "runs.db")).results(summary["run_id"])
        if r.variant == "persona:rushed-regular" and r.task_id == "refund-before-identity"
    ][:1]
    opening = trial.transcript.messages("user")[0].content
    assert opening.startswith("Quick one, I'm between meetings.")  # the persona's own words
    # corrector's near miss is marked though impatient and the prefix reword its message:
    # only the tasks whose opening says no goal detail have nothing to correct
    recovery = persona["recovery"]
    assert recovery["confused_trials"] >= 2 * (tasks - 2)
    assert recovery["recovery_turns"] == 1.0 and recovery["recovered"] == 1.0


def test_a_persona_that_plays_the_task_as_written_is_not_run_twice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = "\npersonas:\n  polite: {use: [cooperative]}\n  chatty: {prompt: Chat a lot.}\n"
    suite = load_suite(mini_suite(tmp_path / "mini", extra))
    keys = variant_keys(suite, RunRequest(personas=["cooperative", "terse", "polite", "chatty"]))
    assert keys == ["", "persona:terse", "persona:chatty"]
    err = capsys.readouterr().err
    assert "persona cooperative plays every task as written" in err
    assert "persona polite plays every task as written" in err
    assert variant_keys(suite, RunRequest(profile="full")) == ["", "persona:chatty"]


@pytest.mark.slow
def test_the_adversarial_baselines_still_fail_every_task_under_retails_own_persona(
    tmp_path: Path,
) -> None:
    for agent in ALWAYS_FAIL:
        summary = run("retail", agent, tmp_path, personas=["rushed-regular"])
        passed = {k: v["counts"]["passed"] for k, v in summary["variants"].items()}
        assert passed == {"": 0, "persona:rushed-regular": 0}, agent
