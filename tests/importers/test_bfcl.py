"""`toolproof import bfcl`: BFCL's backends kept in the world change as BFCL changes them,
the imported suite is sound (the oracle passes, every baseline fails), and toolproof's
verdicts agree with BFCL's own multi-turn checker on a handful of entries, but for a write
made twice, which toolproof fails by design."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip(
    "bfcl_eval",
    reason="bfcl-eval is not installed (pip install --no-deps 'bfcl-eval==2026.3.23' mpmath)",
)

from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import (
    _compare_instances,
)

from toolproof.importers.bfcl import decode, encode, invoke, load_entries, parse_call
from toolproof.importers.bfcl.agreement import KINDS, STRICTER_BY_DESIGN, measure
from toolproof.importers.bfcl.state import load_instance
from toolproof.tools import ToolError
from toolproof.world import World


def toolproof_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolproof", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_backend_state_survives_the_world_as_bfcl_compares_it() -> None:
    for category in ("base", "long_context"):
        for entry in load_entries(category, 3):
            for name in entry.involved_classes:
                config = entry.initial_config.get(name, {})
                instance = load_instance(name, config, entry.long_context)
                rebuilt = decode(encode(instance))
                assert _compare_instances(rebuilt, instance) == (True, {})
                assert encode(rebuilt) == encode(instance)


def test_a_tool_call_changes_the_world_as_the_method_changes_the_instance() -> None:
    entry = load_entries("base", 1)[0]
    config = entry.initial_config["GorillaFileSystem"]
    world = World({"GorillaFileSystem": encode(load_instance("GorillaFileSystem", config, False))})
    expected = load_instance("GorillaFileSystem", config, False)
    for call in entry.ground_truth[0]:
        result = invoke(world, "GorillaFileSystem", call.name, call.args)
        assert result == getattr(expected, call.name)(**call.args)
    assert _compare_instances(decode(world["GorillaFileSystem"]), expected) == (True, {})
    assert any(c.path.startswith("/GorillaFileSystem/attrs/root") for c in world.diff())


def test_a_tool_of_a_system_the_task_does_not_involve_is_an_error() -> None:
    with pytest.raises(ToolError, match="TradingBot is not one of this task's systems"):
        invoke(World({"TradingBot": {}}), "TradingBot", "get_stock_info", {"symbol": "AAPL"})


def test_ground_truth_calls_with_positional_arguments_get_their_names() -> None:
    call = parse_call("sort('final_report.pdf')", ["TwitterAPI", "GorillaFileSystem"])
    assert (call.name, call.args) == ("sort", {"file_name": "final_report.pdf"})


@pytest.mark.slow
def test_imported_suite_is_sound_oracle_passes_every_baseline_fails(tmp_path: Path) -> None:
    made = toolproof_cli(
        "import", "bfcl", "miss_param", "--out", "suite", "--limit", "2", cwd=tmp_path
    )
    assert made.returncode == 0, made.stderr
    assert "2 tasks" in made.stdout
    checked = toolproof_cli("validate", "suite", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "is sound: 2 tasks checked" in checked.stdout
    assert len(re.findall(r"all \d+ failed", checked.stdout)) == 2  # the rest n/a


@pytest.mark.slow
def test_import_refuses_an_unknown_category_and_a_folder_in_use(tmp_path: Path) -> None:
    unknown = toolproof_cli("import", "bfcl", "parallel", "--out", "x", cwd=tmp_path)
    assert unknown.returncode == 2
    assert "CATEGORY 'parallel': use one of base, miss_func, miss_param, long_context" in (
        unknown.stderr
    )
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "notes.txt").write_text("keep me")
    used = toolproof_cli("import", "bfcl", "base", "--out", "used", cwd=tmp_path)
    assert used.returncode == 2
    assert "--out used: a folder that is not empty; give a new or empty folder" in used.stderr
    assert "Traceback" not in used.stderr
    assert (tmp_path / "used" / "notes.txt").read_text() == "keep me"


def test_toolproof_and_bfcl_verdicts_agree_on_ground_truth_nothing_and_perturbations() -> None:
    agreement = measure("base", 2)
    kinds = {g.kind for g in agreement.graded}
    assert kinds == set(KINDS)
    agreed, total = agreement.alike(headline=True)
    assert total == len(agreement.graded) - 2  # the two writes made twice left out
    assert agreed / total >= 0.99, agreement.unexplained()
    assert agreement.unexplained() == []
    for graded in agreement.graded:
        if graded.kind == "ground-truth":
            assert graded.toolproof and graded.bfcl, graded
        if graded.kind == "do-nothing":
            assert not graded.toolproof and not graded.bfcl, graded
    assert set(STRICTER_BY_DESIGN) == {"duplicate-write"}
    twice = [g for g in agreement.graded if g.kind == "duplicate-write"]
    assert len(twice) == 2
    for graded in twice:  # BFCL compares state and results; toolproof, every write made
        assert not graded.toolproof, graded
        if graded.bfcl:
            assert graded.toolproof_reason.startswith("writes: a duplicate write: "), graded
    passed_by_bfcl = [g for g in twice if g.bfcl]
    assert passed_by_bfcl and agreement.by_design() == passed_by_bfcl


@pytest.mark.slow
def test_import_without_bfcl_installed_says_how_to_install_it(tmp_path: Path) -> None:
    hidden = (
        "import sys; sys.modules['bfcl_eval'] = None; sys.argv = ['toolproof', 'import', "
        "'bfcl', 'base', '--out', 'x']; from toolproof.cli import main; main()"
    )
    result = subprocess.run(
        [sys.executable, "-c", hidden], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert "bfcl-eval is not installed: pip install 'toolproof[bfcl]'" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "x").exists()
