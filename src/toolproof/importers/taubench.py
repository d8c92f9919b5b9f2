"""Importing tau-bench results (a JSON list of {task_id, trial, reward, info, traj}).

A trial passed when its reward is within 1e-6 of 1.0, as tau-bench counts it. Transcripts
are kept: messages, model turns with their tool calls, and tool results.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from pathlib import Path
from typing import Any

from toolproof.errors import Problem, SuiteError
from toolproof.metrics.recovery import trial_stats
from toolproof.models.base import ToolCall
from toolproof.records.run import RunConfig
from toolproof.records.trial import TrialResult
from toolproof.spec.files import FileProblem, gunzip, read_file
from toolproof.spec.yamlload import MAX_DEPTH, too_deep
from toolproof.store.journal import NewRun, Store
from toolproof.store.manifest import record_manifest
from toolproof.transcript import EndEvent, MessageEvent, ModelCallEvent, ToolCallEvent, Transcript
from toolproof.version import __version__

REQUIRED = ("task_id", "trial", "reward")


def read_results(path: Path) -> tuple[list[dict[str, Any]], bytes]:
    """The results list and the file's bytes; anything malformed is reported with its place
    in the file. Only a regular file within the size limit is read (`read_file`), and data
    nested deeper than `MAX_DEPTH` levels is refused, as in a suite."""
    deep = f"nesting deeper than {MAX_DEPTH} levels"
    try:
        raw = read_file(path)
        data = json.loads(gunzip(raw) if path.name.endswith(".gz") else raw)
    except FileProblem as exc:
        raise SuiteError.at(str(path), None, str(exc)) from None
    except json.JSONDecodeError as exc:
        raise SuiteError.at(str(path), exc.lineno, f"JSON syntax error: {exc.msg}") from None
    except RecursionError:
        raise SuiteError.at(str(path), None, deep) from None
    except (EOFError, zlib.error) as exc:
        raise SuiteError.at(str(path), None, f"not a readable gzip file: {exc}") from None
    except UnicodeDecodeError as exc:
        raise SuiteError.at(str(path), None, f"cannot read: {exc}") from None
    if too_deep(data):
        raise SuiteError.at(str(path), None, deep)
    if not isinstance(data, list):
        raise SuiteError.at(str(path), 1, "expected a JSON list of tau-bench results")
    if not data:
        raise SuiteError.at(str(path), 1, "the list of results is empty: nothing to import")
    problems = []
    for i, item in enumerate(data):
        if not isinstance(item, dict):
            problems.append(Problem(str(path), None, f"result [{i}]: expected an object"))
            continue
        missing = [key for key in REQUIRED if key not in item]
        if missing:
            problems.append(Problem(str(path), None, f"result [{i}]: missing {', '.join(missing)}"))
        elif not isinstance(item["reward"], int | float):
            problems.append(Problem(str(path), None, f"result [{i}]: reward is not a number"))
    if problems:
        raise SuiteError(problems)
    return data, raw


def _arguments(raw: str) -> dict[str, Any] | None:
    try:
        value = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def transcript_of(traj: list[dict[str, Any]]) -> Transcript:
    """tau-bench's OpenAI-format message list as our ordered events."""
    transcript = Transcript()
    pending: dict[str, ToolCall] = {}
    for message in traj:
        role = message.get("role")
        content = message.get("content") or ""
        if role == "user":
            transcript.add(MessageEvent(t=0.0, role="user", content=content))
        elif role == "assistant":
            calls = [
                ToolCall(
                    id=call.get("id", ""),
                    name=call.get("function", {}).get("name", ""),
                    arguments=_arguments(call.get("function", {}).get("arguments", "")),
                    raw_arguments=call.get("function", {}).get("arguments", ""),
                )
                for call in message.get("tool_calls") or []
            ]
            transcript.add(
                ModelCallEvent(t=0.0, model="", content=content, tool_calls=calls, cost_usd=None)
            )
            pending.update({c.id: c for c in calls})
            if content and not calls:
                transcript.add(MessageEvent(t=0.0, role="assistant", content=content))
        elif role == "tool":
            call = pending.pop(message.get("tool_call_id", ""), None)
            transcript.add(
                ToolCallEvent(
                    t=0.0,
                    call_id=message.get("tool_call_id", ""),
                    name=message.get("name", call.name if call else ""),
                    arguments=call.arguments if call else None,
                    raw_arguments=call.raw_arguments if call else "",
                    result=content,
                    is_error=content.startswith("Error"),
                )
            )
    transcript.add(EndEvent(t=0.0, reason="imported"))
    return transcript


def import_results(path: Path, store: Store, ks: list[int] | None = None) -> str:
    """Store a tau-bench results file as a run (once per file content); returns the run id."""
    data, raw = read_results(path)
    digest = hashlib.sha256(raw).hexdigest()
    existing = store.latest(digest, unfinished=False)
    if existing and store.run(existing).finished:
        return existing
    trials_per_task: dict[str, int] = {}
    for item in data:
        task = str(item["task_id"])
        trials_per_task[task] = trials_per_task.get(task, 0) + 1
    fewest = min(trials_per_task.values(), default=1)
    stem = path.name.removesuffix(".gz").removesuffix(".json")
    new = NewRun(
        suite_name="tau-bench",
        suite_version=stem,
        suite_hash=digest,
        fingerprint=digest,
        agent=f"tau-bench:{stem}",
        config=RunConfig(
            source=path.name,
            trials=fewest,
            k=ks or list(range(1, fewest + 1)),
            seed=0,
            infra_errors="fail",
            imported=True,
        ),
        tasks=[
            {"task_id": task, "task_hash": "", "tags": ["tau-bench"], "tools": {}}
            for task in sorted(trials_per_task, key=_task_order)
        ],
        version=__version__,
    )
    with store.open_run(new) as lease:
        _write_trials(store, lease.run_id, data, stem)
        store.finish(lease.run_id)
        record_manifest(store, lease.run_id)
    return lease.run_id


def _write_trials(store: Store, run_id: str, data: list[dict[str, Any]], stem: str) -> None:
    """Every result the run does not hold yet, as a trial."""
    done = store.done(run_id)
    for item in data:
        if ("", "", str(item["task_id"]), int(item["trial"])) in done:
            continue
        passed = abs(float(item["reward"]) - 1.0) <= 1e-6
        transcript = transcript_of(item.get("traj") or [])
        info = item.get("info") or {}
        detail = (info.get("reward_info") or {}).get("info", {})
        store.write(
            run_id,
            TrialResult(
                task_id=str(item["task_id"]),
                trial=int(item["trial"]),
                seed=0,
                agent=f"tau-bench:{stem}",
                outcome="passed" if passed else "failed",
                reason="" if passed else f"reward {item['reward']} {json.dumps(detail)}",
                ended="imported",
                transcript=transcript,
                cost_usd=None,
                tool_calls=len(transcript.tool_calls()),
                conditions=trial_stats(transcript),
                turns=len(transcript.messages("assistant")),
            ),
        )


def _task_order(task_id: str) -> tuple[int, str]:
    return (int(task_id), "") if task_id.isdigit() else (1 << 30, task_id)
