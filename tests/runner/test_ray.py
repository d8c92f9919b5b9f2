"""The Ray executor on a real local Ray cluster (started once for the test session): the same
trials as the local executor, trials in worker processes, resume after a kill, the budget,
progress, and the usage errors of a missing extra or a cluster that does not answer."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest
from servers import openai_server
from support import kill_part_way, write_files
from test_resume import SLOW_SCRIPT, trial_keys

from toolproof.records.run import RunConfig
from toolproof.records.trial import TrialResult
from toolproof.runner.build import gold_replays
from toolproof.runner.plan import PlannedTrial
from toolproof.runner.ray import ActorSetup, TrialActor, archive
from toolproof.runner.run import RunRequest, run_suite
from toolproof.spec.overrides import ModelOverrides
from toolproof.store import Store
from toolproof.suite import load_suite

CLI = (sys.executable, "-m", "toolproof")
RETAIL = Path(__file__).parents[2] / "examples" / "retail"
FLAKY = """
faults:
  profiles:
    flaky:
      - {kind: latency, dist: lognormal, median_ms: 40, p95_ms: 300}
      - {kind: rate_limit, tiers: [1], rate: 0.25, retry_after_s: 1}
"""
PID_AGENT = """
import os


async def agent(conversation, tools):
    return f"pid {os.getpid()}"
"""

needs_ray = pytest.mark.skipif(
    find_spec("ray") is None, reason="ray is not installed: pip install 'toolproof[ray]'"
)


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[str]:
    """A local two-CPU Ray cluster for the whole session; yields its address for commands
    that join it. Its workers import toolproof from where this process does."""
    import ray

    paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    os.environ["PYTHONPATH"] = os.pathsep.join(str(Path(p).resolve()) for p in paths if p)
    context = ray.init(
        num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False
    )
    yield str(context.address_info["gcs_address"])
    ray.shutdown()


@pytest.fixture
def flaky_retail(tmp_path: Path) -> Path:
    """examples/retail with a fault profile: rate limits the plain oracle does not survive."""
    root = tmp_path / "retail"
    shutil.copytree(RETAIL, root, ignore=shutil.ignore_patterns("__pycache__"))
    (root / "suite.yaml").write_text((root / "suite.yaml").read_text() + FLAKY)
    return root


def run(suite: Path, db: Path, **request: Any) -> tuple[str, list[TrialResult]]:
    """Run in this process; returns the run id and the results in the order they arrived."""
    arrived: list[TrialResult] = []
    store = Store(str(db))
    report = asyncio.run(
        run_suite(load_suite(suite), RunRequest(**request), store, on_result=arrived.append)
    )
    return report.run_id, arrived


def stored(db: Path, run_id: str) -> dict[tuple[str, str, str, int], tuple[Any, ...]]:
    """Each stored trial's outcome and everything that makes it: seed, reason, calls, faults,
    the final world's hash and the expected one."""
    out = {}
    for _, r in Store(str(db)).results(run_id):
        key = (r.variant, r.model, r.task_id, r.trial)
        out[key] = (r.seed, r.outcome, r.reason, r.tool_calls, r.final_hash, r.expected_hash)
    return out


@pytest.mark.slow
@needs_ray
def test_ray_run_stores_the_same_trials_as_a_local_run(
    ray_cluster: str, flaky_retail: Path, tmp_path: Path
) -> None:
    same = {"agent": "oracle", "trials": 2, "k": [1, 2], "concurrency": 4, "faults": "flaky"}
    local_id, _ = run(flaky_retail, tmp_path / "local.db", **same, time_scale=0.01)
    ray_id, _ = run(flaky_retail, tmp_path / "ray.db", **same, time_scale=0.01, executor="ray")
    local, remote = stored(tmp_path / "local.db", local_id), stored(tmp_path / "ray.db", ray_id)
    assert len(local) == len(load_suite(flaky_retail).tasks) * 2
    assert remote == local
    outcomes = Counter(row[1] for row in local.values())
    assert outcomes["passed"] > 0 and outcomes["failed"] > 0  # the faults make a difference


@pytest.mark.slow
@needs_ray
def test_trials_run_in_worker_processes_up_to_the_concurrency(
    ray_cluster: str, mini_dir: Path, tmp_path: Path
) -> None:
    agent = write_files(tmp_path, {"pid_agent.py": PID_AGENT}) / "pid_agent.py"
    _, results = run(
        mini_dir,
        tmp_path / "s.db",
        agent=f"python:{agent}:agent",
        trials=6,
        k=[1],
        concurrency=2,
        executor="ray",
    )
    pids = {
        int(p) for r in results for p in re.findall(r"pid (\d+)", r.transcript.model_dump_json())
    }
    assert len(results) == 12  # progress heard of every trial as it arrived
    assert len(pids) == 2  # two actors, one trial each at a time
    assert os.getpid() not in pids


@pytest.mark.slow
@needs_ray
def test_ray_run_stops_scheduling_once_max_cost_is_reached(
    ray_cluster: str, mini_dir: Path, tmp_path: Path
) -> None:
    suite = mini_dir / "suite.yaml"
    suite.write_text(
        suite.read_text() + "prices:\n  openai-compatible/good: {input: 1.0, output: 2.0}\n"
    )

    def answer(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        from servers import completion

        if body["messages"][-1]["role"] == "tool":
            return 200, completion("Order B has shipped.")
        return 200, completion(tool_calls=[{"name": "get_order", "arguments": {"order_id": "B"}}])

    with openai_server(answer) as (url, _):
        run_id, results = run(
            mini_dir,
            tmp_path / "s.db",
            models=["openai-compatible/good"],
            model_flags=ModelOverrides(base_url=url),
            tasks="status",
            trials=4,
            k=[1],
            concurrency=1,
            max_cost=0.0005,
            executor="ray",
        )
    # each trial costs $0.00024 (two calls of 100 tokens in and 10 out): the 4th never starts
    assert [r.outcome for r in results] == ["passed"] * 3
    record = Store(str(tmp_path / "s.db")).run(run_id)
    assert record.config.stopped is not None and "budget reached" in record.config.stopped
    assert record.config.model_flags == ModelOverrides(base_url=url)


def one_oracle_trial(
    suite: Path, db: Path, *flags: str, cli: tuple[str, ...] = CLI
) -> subprocess.CompletedProcess[str]:
    """`toolproof run` of one oracle trial per task, with `flags` added."""
    command = [*cli, "run", str(suite), "--agent", "oracle", "--trials", "1", "--k", "1"]
    return subprocess.run(
        [*command, "--store", str(db), *flags], capture_output=True, text=True, timeout=120
    )


@pytest.mark.slow
@needs_ray
def test_killed_ray_run_resumes_with_the_same_command(
    ray_cluster: str, mini_dir: Path, tmp_path: Path
) -> None:
    script = write_files(tmp_path, {"slow.yaml": SLOW_SCRIPT}) / "slow.yaml"
    db = tmp_path / "runs.db"
    plan = ["--trials", "30", "--k", "1,5", "--concurrency", "2", "--executor", "ray"]
    command = [*CLI, "run", str(mini_dir), "--agent", f"scripted:{script}", *plan]
    command += ["--store", str(db), "--ray-address", ray_cluster]
    kill_part_way(command, lambda: len(trial_keys(db)))
    before = trial_keys(db)
    assert 10 <= len(before) < 60, "the run must be killed part-way"

    resumed = subprocess.run(command, capture_output=True, text=True, timeout=180)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{len(before)} of 60 trials done" in resumed.stdout.split("resuming", 1)[1]
    after = Counter(trial_keys(db))
    assert sorted(after.values()) == [1] * 60 and set(before) <= set(after)


def test_worker_without_the_suite_folder_loads_the_copy_it_was_sent(
    mini_dir: Path, tmp_path: Path
) -> None:
    suite = load_suite(mini_dir)
    expected = asyncio.run(gold_replays(suite, [suite.task("status")]))
    gone = tmp_path / "elsewhere" / mini_dir.name  # the driver's path, absent on the worker
    actor = TrialActor(
        ActorSetup(
            suite_path=str(gone),
            suite_hash=suite.content_hash,
            suite_archive=archive(mini_dir),
            config=RunConfig(agent="oracle", tasks=["status"], seed=3),
            expected=expected,
            secrets={},
            config_file=None,
            slots=1,
        )
    )

    async def one() -> TrialResult:
        assert await actor.start() == suite.content_hash
        result = await actor.run(PlannedTrial(task_id="status", trial=0, seed=11))
        await actor.close()
        return result

    result = asyncio.run(one())
    assert result.outcome == "passed", result.reason
    assert result.seed == 11 and result.final_hash == expected["status"].hash
    assert actor.suite is not None and actor.suite.root != mini_dir.resolve()


@pytest.mark.slow
def test_executor_ray_without_ray_installed_names_the_extra(mini_dir: Path, tmp_path: Path) -> None:
    hide_ray = (
        "import sys; sys.modules['ray'] = None; sys.argv[0] = 'toolproof'; "
        "from toolproof.cli import main; main()"
    )
    done = one_oracle_trial(
        mini_dir, tmp_path / "s.db", "--executor", "ray", cli=(sys.executable, "-c", hide_ray)
    )
    assert done.returncode == 2
    assert "toolproof[ray]" in done.stderr and "Traceback" not in done.stderr
    assert Store(str(tmp_path / "s.db")).runs() == []  # no run was created


@pytest.mark.slow
@needs_ray
def test_ray_address_that_does_not_answer_is_a_usage_error(mini_dir: Path, tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.monotonic()
    address = f"127.0.0.1:{port}"
    done = one_oracle_trial(
        mini_dir, tmp_path / "s.db", "--executor", "ray", "--ray-address", address
    )
    assert done.returncode == 2
    assert f"--ray-address 127.0.0.1:{port}: no Ray cluster answers there" in done.stderr
    assert "Traceback" not in done.stderr
    assert time.monotonic() - started < 60  # no minutes of Ray's own retries


@pytest.mark.slow
@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--executor", "dask"], "--executor dask: use local or ray"),
        (["--ray-address", "127.0.0.1:6379"], "--ray-address needs --executor ray"),
    ],
)
def test_bad_executor_flags_are_usage_errors(
    mini_dir: Path, tmp_path: Path, flags: list[str], message: str
) -> None:
    done = one_oracle_trial(mini_dir, tmp_path / "s.db", *flags)
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr
