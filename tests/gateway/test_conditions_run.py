"""Production conditions end to end: whole runs under fault profiles, drift variants and load,
the full profile and its Reliability Score, and `toolproof validate` on survivability.

The command line runs as a user runs it (a subprocess of the installed console script).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support import MINI_FILES, MINI_SUITE, MINI_TOOLS, write_files

from toolproof.errors import SuiteError
from toolproof.report.json import write_json
from toolproof.runner.run import RunRequest, run_suite
from toolproof.spec.user import BUILTIN_PERSONAS
from toolproof.store import Store
from toolproof.suite import Suite, load_suite

CLI = Path(sys.executable).parent / "toolproof"

REFRESH = '''

@tool
def refresh_token(world: World) -> dict:
    """Get a fresh access token."""
    return {"token": "fresh"}
'''

TOOL_ENTRY = "  cancel_order: {tier: 3, weight: 0.3}\n"

CONDITIONS = """
faults:
  refresh_tool: refresh_token
  profiles:
    flaky:
      - {kind: server_error, rate: 1.0, max_per_trial: 1}
    throttled:
      - {kind: rate_limit, rate: 1.0, max_per_trial: 2, retry_after_s: 0.5}
    expiring:
      - {kind: token_expired, tools: [get_order, cancel_order], max_per_trial: 1}
    damaged:
      - {kind: malformed_json, tools: [get_order], max_per_trial: 1}
      - {kind: timeout, tools: [cancel_order], after_s: 5, max_per_trial: 1}
      - {kind: latency, dist: lognormal, median_ms: 50, p95_ms: 400}
drift:
  v2:
    - {op: rename_tool, tool: get_order, to: fetch_order}
    - {op: rename_param, tool: cancel_order, param: order_id, to: id}
  v3:
    - op: add_required_param
      tool: cancel_order
      param: api_version
      schema: {type: string}
      value: "2024-06"
    - {op: change_type, tool: get_order, param: order_id, prefix: W}
    - {op: change_type, tool: cancel_order, param: order_id, prefix: W}
    - {op: merge_tools, tools: [get_order, cancel_order], into: orders}
load:
  levels: [1, 20]
  capacity:
    "*": {rate_per_s: 0.5, burst: 10, latency_ms: 10, servers: 4, retry_after_s: 60}
"""

ORDERS = "W1: {status: pending}\nW2: {status: shipped}\n"

PERSONAS = [f"persona:{p}" for p in BUILTIN_PERSONAS if p != "cooperative"]
"""The variants `--profile full` adds for a suite that declares no personas."""


def suite_files(conditions: str) -> dict[str, str]:
    """The mini suite with a refresh tool, integer-like order ids (W1, W2) and `conditions`."""
    assert TOOL_ENTRY in MINI_SUITE
    text = MINI_SUITE.replace(TOOL_ENTRY, TOOL_ENTRY + "  refresh_token: {tier: 1}\n")
    text = text.replace("order_id: A", "order_id: W1").replace("order_id: B", "order_id: W2")
    return {
        **MINI_FILES,
        "suite.yaml": text + conditions,
        "tools.py": MINI_TOOLS + REFRESH,
        "orders.yaml": ORDERS,
    }


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_files(tmp_path_factory.mktemp("conditions"), suite_files(CONDITIONS))


@pytest.fixture(scope="module")
def suite(root: Path) -> Suite:
    return load_suite(root)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    return Store(str(tmp_path_factory.mktemp("store") / "runs.db"))


def toolproof(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    result = subprocess.run(
        [str(CLI), *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    assert "Traceback" not in result.stdout + result.stderr, result.stderr
    return result


def line_with(text: str, needle: str) -> int:
    found = [n for n, line in enumerate(text.splitlines(), start=1) if needle in line]
    assert len(found) == 1, f"{needle!r} is on lines {found}"
    return found[0]


# ---------------------------------------------------------------- survivable conditions

VARIANTS: list[dict[str, Any]] = [
    {"faults": "flaky"},
    {"faults": "throttled"},
    {"faults": "expiring"},
    {"faults": "damaged"},
    {"drift": "v2"},
    {"drift": "v3"},
    {"load": [20]},
]


def run(suite: Suite, store: Store, agent: str, **request: Any) -> dict[str, Any]:
    report = asyncio.run(
        run_suite(
            suite,
            RunRequest(agent=agent, trials=10, k=[1], time_scale=0.001, **request),
            store,
            fresh=True,
        )
    )
    summary: dict[str, Any] = report.summary.models[0].model_dump()
    return summary


@pytest.mark.parametrize("request_", VARIANTS, ids=lambda v: next(f"{k}={v[k]}" for k in v))
def test_the_retrying_oracle_passes_every_condition_and_the_plain_oracle_does_not(
    suite: Suite, store: Store, request_: dict[str, Any]
) -> None:
    good = run(suite, store, "retrying-oracle", **request_)
    [key] = good["variants"]
    assert key != ""
    assert good["variants"][key]["pass@1"] == 1.0, good["variants"][key]
    plain = run(suite, store, "oracle", **request_)
    assert plain["variants"][key]["pass@1"] < 1.0
    if "faults" in request_:
        recovery = good["variants"][key]["recovery"]
        assert recovery["failed_calls"] > 0 and recovery["recovery_rate"] == 1.0
        assert recovery["faulted_trials"] == 20
        assert plain["variants"][key]["recovery"]["recovery_rate"] < 1.0


def test_a_plain_run_is_clean_and_both_oracles_pass_it(suite: Suite, store: Store) -> None:
    for agent in ("oracle", "retrying-oracle"):
        summary = run(suite, store, agent)
        assert list(summary["variants"]) == [""]
        assert summary["variants"][""]["pass@1"] == 1.0


# ---------------------------------------------------------------- the full profile


@pytest.mark.slow
def test_profile_full_runs_every_condition_and_measures_every_score_component(
    root: Path, tmp_path: Path
) -> None:
    out = tmp_path / "full.json"
    result = toolproof(
        "run",
        root,
        "--agent",
        "retrying-oracle",
        "--profile",
        "full",
        "--time-scale",
        "0.001",
        "--store",
        tmp_path / "runs.db",
        "--json",
        out,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    model = data["models"][0]
    conditions = {"", "faults:flaky", "drift:v2", "drift:v3", "load:20"}
    # the full profile also runs the messy built-in personas (the suite declares none)
    assert set(model["variants"]) == conditions | set(PERSONAS)
    assert all(v["pass@1"] == 1.0 for v in model["variants"].values())
    assert model["variants"]["load:20"]["load"]["trials"] == 6
    reliability = model["reliability"]
    assert reliability["missing"] == []
    assert all(value is not None for value in reliability["components"].values())
    assert set(reliability["components"]) == {
        "pass^k",
        "recovery_rate",
        "completion_under_load",
        "drift_robustness",
    }
    assert reliability["weights_used"] == pytest.approx(reliability["weights"])
    assert reliability["reliability_score"] == pytest.approx(1.0)
    assert model["conditions"]["drift"]["drift_robustness"] == 1.0
    assert model["conditions"]["load"]["completion_under_load"] == 1.0


def test_profile_full_with_the_plain_oracle_scores_below_one(suite: Suite, store: Store) -> None:
    summary = run(suite, store, "oracle", profile="full")
    reliability = summary["reliability"]
    assert reliability["missing"] == []
    assert reliability["components"]["pass^k"] == 1.0
    assert reliability["components"]["drift_robustness"] < 1.0
    assert reliability["reliability_score"] < 1.0


def test_only_clean_trials_leave_the_condition_components_missing(
    suite: Suite, store: Store, tmp_path: Path
) -> None:
    report = asyncio.run(run_suite(suite, RunRequest(agent="oracle", trials=3), store, fresh=True))
    out = tmp_path / "clean.json"
    write_json(report.summary.as_json(), out)
    model = json.loads(out.read_text(encoding="utf-8"))["models"][0]
    assert list(model["variants"]) == [""]
    reliability = model["reliability"]
    assert reliability["missing"] == ["recovery_rate", "completion_under_load", "drift_robustness"]
    assert reliability["weights_used"] == {"pass^k": pytest.approx(1.0)}
    assert reliability["components"]["pass^k"] == 1.0
    assert reliability["reliability_score"] == pytest.approx(1.0)


# ---------------------------------------------------------------- validate and suite errors

DOOMED = """
faults:
  profiles:
    flaky:
      - {kind: server_error, rate: 1.0, max_per_trial: 1}
    doomed:
      - {kind: server_error, rate: 1.0}
"""


@pytest.mark.slow
def test_validate_names_a_fault_profile_that_cannot_be_survived(tmp_path: Path) -> None:
    root = write_files(tmp_path / "suite", suite_files(DOOMED))
    result = toolproof("validate", root, cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "faults:doomed cannot be survived" in result.stderr
    assert "the retrying oracle fails" in result.stderr
    assert "faults:flaky" not in result.stderr
    assert "1 of 2 conditions cannot be survived" in result.stderr
    rows = [[cell.strip() for cell in line.split("│")] for line in result.stdout.splitlines()]
    survival = {row[1]: row[2:4] for row in rows if len(row) > 4 and row[1].startswith("faults")}
    assert survival == {"faults:flaky": ["2/2", "1/2"], "faults:doomed": ["0/2", "0/2"]}


BAD_PROFILES = """
faults:
  profiles:
    typo:
      - {kind: server_error, tools: [get_order, ship_order]}
    auth:
      - {kind: token_expired, tools: [cancel_order]}
"""


@pytest.mark.slow
def test_unknown_tools_and_token_expired_without_refresh_are_located_suite_errors(
    tmp_path: Path,
) -> None:
    files = suite_files(BAD_PROFILES)
    root = write_files(tmp_path / "suite", files)
    text = (root / "suite.yaml").read_text(encoding="utf-8")
    typo = line_with(text, "ship_order")
    auth = line_with(text, "token_expired")
    with pytest.raises(SuiteError) as caught:
        load_suite(root)
    problems = {(p.line, p.message) for p in caught.value.problems}
    assert problems == {
        (typo, "fault profile 'typo': unknown tool 'ship_order'"),
        (auth, "fault profile 'auth': token_expired needs faults.refresh_tool"),
    }
    result = toolproof("validate", root, cwd=tmp_path)
    assert result.returncode == 2
    assert f"suite.yaml:{typo}: fault profile 'typo': unknown tool 'ship_order'" in result.stderr
    assert f"suite.yaml:{auth}: fault profile 'auth': token_expired needs" in result.stderr


@pytest.mark.parametrize(
    ("conditions", "needle", "message"),
    [
        (
            "faults:\n  refresh_tool: renew\n",
            "refresh_tool",
            "refresh_tool 'renew' is not listed under tools:",
        ),
        (
            "load:\n  capacity:\n    ship_order: {burst: 1}\n",
            "ship_order",
            "load capacity for unknown tool 'ship_order'",
        ),
        (
            "score:\n  faults: production\n",
            "production",
            "score.faults: no fault profile 'production'",
        ),
        ("score:\n  drift: [v9]\n", "v9", "score.drift: no drift variant 'v9'"),
    ],
)
def test_conditions_must_name_what_the_suite_has(
    tmp_path: Path, conditions: str, needle: str, message: str
) -> None:
    root = write_files(tmp_path / "suite", suite_files(conditions))
    line = line_with((root / "suite.yaml").read_text(encoding="utf-8"), needle)
    with pytest.raises(SuiteError) as caught:
        load_suite(root)
    assert [(p.line, p.message) for p in caught.value.problems] == [(line, message)]
