"""The gate as JUnit XML, for the test reports of CI systems.

One test suite `gate` with a test case per gate check, and one test suite of tasks per
model and variant with a test case per task: it fails when any of the task's trials failed,
with the reasons as the failure message (an `error` when every non-passing trial was an
infra error).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from toolproof.ci.gate import GateResult
from toolproof.metrics.summary import ungradable_tasks
from toolproof.report.gate import detail
from toolproof.report.json import write_text
from toolproof.version import __version__

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def clean(text: str) -> str:
    """Text without the characters XML 1.0 cannot carry (control characters from a model)."""
    return _NOT_XML.sub("\ufffd", text)


def _suite(parent: ET.Element, name: str) -> ET.Element:
    return ET.SubElement(parent, "testsuite", name=name)


def _count(suite: ET.Element) -> tuple[int, int, int, int, float]:
    cases = suite.findall("testcase")
    failures = sum(1 for c in cases if c.find("failure") is not None)
    errors = sum(1 for c in cases if c.find("error") is not None)
    skipped = sum(1 for c in cases if c.find("skipped") is not None)
    time = sum(float(c.get("time", "0")) for c in cases)
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    suite.set("skipped", str(skipped))
    suite.set("time", f"{time:.3f}")
    return len(cases), failures, errors, skipped, time


def _properties(suite: ET.Element, values: Mapping[str, Any]) -> None:
    props = ET.SubElement(suite, "properties")
    for name, value in values.items():
        if value is not None:
            ET.SubElement(props, "property", name=name, value=str(value))


def gate_junit(result: GateResult) -> ET.Element:
    """The <testsuites> element of a gate result."""
    run = result.run
    root = ET.Element("testsuites", name=f"toolproof gate {run.suite_name}")
    gate = _suite(root, "gate")
    gate.set("timestamp", str(run.finished_at or run.created_at))
    gate.set("hostname", str(run.host))
    _properties(
        gate,
        {
            "run_id": result.run_id,
            "suite": run.suite_name,
            "suite_version": run.suite_version,
            "suite_hash": run.suite_hash,
            "agent": run.agent,
            "baseline": result.baseline,
            "toolproof_version": __version__,
            "manifest_hash": result.verification.manifest_hash if result.verification else None,
            "passed": str(result.passed).lower(),
        },
    )
    for check in result.checks:
        case = ET.SubElement(
            gate, "testcase", classname="toolproof.gate", name=check.title, time="0"
        )
        said = clean(detail(check))
        if check.skipped:
            ET.SubElement(case, "skipped", message=said)
        elif not check.passed:
            failure = ET.SubElement(case, "failure", message=said, type="gate")
            failure.text = said
        else:
            ET.SubElement(case, "system-out").text = said
    _count(gate)
    left_out = {} if result.include_ungradable else ungradable_tasks(result.metas)
    for suite in _task_suites(root, result.trials, run.suite_name, run.agent, left_out):
        _count(suite)
    totals = [0, 0, 0, 0]
    time = 0.0
    for suite in root.findall("testsuite"):
        for i, attr in enumerate(("tests", "failures", "errors", "skipped")):
            totals[i] += int(suite.get(attr, "0"))
        time += float(suite.get("time", "0"))
    for i, attr in enumerate(("tests", "failures", "errors", "skipped")):
        root.set(attr, str(totals[i]))
    root.set("time", f"{time:.3f}")
    return root


def _task_suites(
    root: ET.Element,
    trials: Sequence[Mapping[str, Any]],
    suite_name: str,
    agent: str,
    left_out: Mapping[str, str],
) -> list[ET.Element]:
    grouped: dict[tuple[str, str], dict[str, list[Mapping[str, Any]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for row in trials:
        grouped[(row.get("model", ""), row.get("variant", ""))][row["task_id"]].append(row)
    models = {model for model, _ in grouped}
    suites = []
    for (model, variant), tasks in grouped.items():
        label = (model or agent) if len(models) > 1 else ""
        where = " ".join(p for p in (label, f"[{variant}]" if variant else "") if p)
        suite = _suite(root, f"tasks {where}".strip())
        classname = f"{suite_name} {where}".strip()
        for task_id in sorted(tasks):
            rows = sorted(tasks[task_id], key=lambda r: int(r["trial"]))
            _task_case(suite, classname, task_id, rows, left_out.get(task_id))
        suites.append(suite)
    return suites


def _task_case(
    suite: ET.Element,
    classname: str,
    task_id: str,
    rows: Sequence[Mapping[str, Any]],
    ungradable: str | None = None,
) -> None:
    """A task's case; one that cannot be graded is skipped, with why (left out of the gate)."""
    time = sum(float(r.get("duration_s") or 0.0) for r in rows)
    case = ET.SubElement(suite, "testcase", classname=classname, name=task_id, time=f"{time:.3f}")
    if ungradable is not None:
        said = clean(f"ungradable, left out: {ungradable}")
        ET.SubElement(case, "skipped", message=said)
        return
    counts = Counter(str(r["outcome"]) for r in rows)
    bad = [r for r in rows if r["outcome"] != "passed"]
    summary = (
        f"{len(rows)} trials: {counts['passed']} passed, {counts['failed']} failed, "
        f"{counts['infra_error']} infra errors"
    )
    if bad:
        reasons = Counter(str(r["reason"] or r["outcome"]) for r in bad)
        message = f"{len(bad)} of {len(rows)} trials did not pass: " + "; ".join(
            f"{reason}" + (f" (×{n})" if n > 1 else "") for reason, n in reasons.most_common()
        )
        kind = "error" if counts["failed"] == 0 else "failure"
        element = ET.SubElement(
            case, kind, message=clean(message[:1000]), type=str(bad[0]["outcome"])
        )
        element.text = clean(
            "\n".join(f"trial {r['trial']}: {r['outcome']}: {r['reason']}" for r in bad)
        )
    ET.SubElement(case, "system-out").text = summary


def junit_text(result: GateResult) -> str:
    root = gate_junit(result)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(result: GateResult, path: str | Path) -> None:
    """Write the gate's JUnit XML (parent folders created)."""
    write_text(path, junit_text(result), "--junit")
