"""The worked SDK agents of examples/agents run on the retail suite under a fault profile,
with the scripted model through the model bridge: no key, no network."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from toolproof.records.trial import TrialResult
from toolproof.runner.run import RunReport, RunRequest, run_suite
from toolproof.store.journal import Store
from toolproof.suite import load_suite
from toolproof.transcript import ModelCallEvent

ROOT = Path(__file__).parents[2]
EXAMPLES = ROOT / "examples" / "agents"
SCRIPT = EXAMPLES / "retail.script.yaml"
AGENTS_PAGE = ROOT / "docs" / "agents.md"
SCRIPTED = ["status-latest-order-by-email", "payment-amount-and-card", "tracking-number-by-phone"]
UNSCRIPTED = "refund-status-cancelled-order"

FLAKY = """
faults:
  profiles:
    flaky-erp:
      - {kind: latency, dist: fixed, ms: 20}
      - {kind: server_error, status: 503, tools: [erp_lookup], rate: 1.0, max_per_trial: 1}
"""
"""Every trial's first ERP call fails with a 503; the scripted turns call it again."""


@pytest.fixture(scope="module")
def retail(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The retail suite with a fault profile of its own."""
    root = tmp_path_factory.mktemp("suite") / "retail"
    shutil.copytree(ROOT / "examples" / "retail", root)
    suite = root / "suite.yaml"
    suite.write_text(suite.read_text(encoding="utf-8") + FLAKY, encoding="utf-8")
    return root


def run(retail: Path, agent: str, tmp_path: Path) -> tuple[RunReport, list[TrialResult]]:
    store = Store(str(tmp_path / "runs.db"))
    request = RunRequest(
        agent=f"python:{EXAMPLES / agent}:agent",
        models=[f"scripted/{SCRIPT}"],
        faults="flaky-erp",
        tasks=",".join([*SCRIPTED, UNSCRIPTED]),
        trials=2,
        k=[1, 2],
        time_scale=0.1,
    )
    report = asyncio.run(run_suite(load_suite(retail), request, store, fresh=True))
    return report, [result for _, result in store.results(report.run_id)]


FRAMEWORKS = {
    "openai_agents_agent.py": "agents",
    "langgraph_agent.py": "langgraph",
    "pydantic_ai_agent.py": "pydantic_ai",
}
"""The framework examples and the package each needs (the `agents` extra)."""


@pytest.mark.slow
@pytest.mark.parametrize("agent", ["openai_agent.py", "anthropic_agent.py", *FRAMEWORKS])
def test_an_sdk_agent_on_the_scripted_model_recovers_from_the_faults_and_counts_its_tokens(
    retail: Path, tmp_path: Path, agent: str
) -> None:
    if agent in FRAMEWORKS:
        pytest.importorskip(FRAMEWORKS[agent])
    report, results = run(retail, agent, tmp_path)
    outcomes = sorted({(r.task_id, r.outcome) for r in results})
    assert outcomes == sorted([*((t, "passed") for t in SCRIPTED), (UNSCRIPTED, "failed")])
    assert {r.variant for r in results} == {"faults:flaky-erp"}
    status = next(r for r in results if r.task_id == SCRIPTED[0])
    erp = [c for c in status.transcript.tool_calls() if c.name == "erp_lookup"]
    assert [c.is_error for c in erp] == [True, False]
    calls = [e for r in results for e in r.transcript.events if isinstance(e, ModelCallEvent)]
    # 6 + 4 + 5 scripted turns and 1 default turn, each task twice
    assert len(calls) == 2 * (6 + 4 + 5 + 1)
    [model] = report.summary.models
    tokens = model.metrics["tokens_input"], model.metrics["tokens_output"]
    assert tokens == (
        float(sum(c.usage.input_tokens for c in calls)),
        float(sum(c.usage.output_tokens for c in calls)),
    )
    assert tokens[0] > 60_000


def framework_sections() -> dict[str, tuple[str, str, str]]:
    """docs/agents.md's "Framework by framework": each section's example file, with the
    section's Python block and its shell command."""
    text = AGENTS_PAGE.read_text(encoding="utf-8")
    part = text.split("\n## Framework by framework\n", 1)[1].split("\n## ", 1)[0]
    found = {}
    for section in part.split("\n### ")[1:]:
        title = section.splitlines()[0]
        [name] = set(re.findall(r"\(\.\./examples/agents/(\w+\.py)\)", section))
        [code] = re.findall(r"```python\n(.*?)\n```", section, re.DOTALL)
        [command] = re.findall(r"```sh\n(.*?)\n```", section, re.DOTALL)
        found[name] = (title, code, command)
    return found


def body(name: str) -> str:
    """An example file after its docstring and `from __future__` line: the whole agent."""
    text = (EXAMPLES / name).read_text(encoding="utf-8")
    return text.split("from __future__ import annotations\n\n", 1)[1].rstrip("\n")


def test_each_framework_section_shows_its_example_file_as_it_is() -> None:
    sections = framework_sections()
    assert set(sections) == {"openai_agent.py", "anthropic_agent.py", *FRAMEWORKS}
    for name, (title, code, command) in sections.items():
        assert code == body(name), f"docs/agents.md, {title}: the code differs from {name}"
        assert f"--agent python:examples/agents/{name}:agent" in command, title


@pytest.mark.slow
@pytest.mark.parametrize("agent", ["openai_agent.py", "anthropic_agent.py", *FRAMEWORKS])
def test_each_framework_sections_command_runs_and_every_scripted_trial_passes(
    tmp_path: Path, agent: str
) -> None:
    if agent in FRAMEWORKS:
        pytest.importorskip(FRAMEWORKS[agent])
    _, _, command = framework_sections()[agent]
    program, *args = shlex.split(command.replace("\\\n", " "))
    assert program == "toolproof"
    summary = tmp_path / "summary.json"
    extra = ["--store", str(tmp_path / "runs.db"), "--json", str(summary)]
    done = subprocess.run(
        [sys.executable, "-m", "toolproof", *args, *extra],
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    [model] = json.loads(summary.read_text(encoding="utf-8"))["models"]
    assert model["counts"] == {"passed": 6, "failed": 0, "infra_error": 0, "total": 6}
    # 6 + 4 + 5 scripted turns per trial of the three tasks, twice
    assert model["metrics"]["tokens_input"] == 2 * (14_200 + 8_710 + 11_260)
