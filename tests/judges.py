"""A judge model for tests: a real local OpenAI-compatible server (`servers.model_server`)
whose answers come from a script keyed by the criterion each prompt names, and the mini suite
with a rubric graded by it. A criterion's controls are told from a trial's prompt by their
reply (derived from the criterion, or given) and answered by a script of their own: by
default rightly."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servers import Raw, Seen, completion, model_server
from support import MINI_FILES, edit, write_files

from toolproof.graders.controls import derived_controls
from toolproof.spec.expectations import Controls
from toolproof.store import Store

RUBRIC = """      must_say: [shipped]
      rubric:
        polite: Is polite to the user
        names_status: {does: Tells the user that the order has shipped, required: true}
"""
JUDGE = "openai-compatible/judge"
Judge = Callable[[str, int], tuple[int, dict[str, Any]] | Raw]
"""(criterion, how many times it was asked before) -> the server's answer."""
ControlJudge = Callable[[str, bool], tuple[int, dict[str, Any]] | Raw]
"""(criterion, whether it is the passing control) -> the server's answer to a control."""
Given = Mapping[str, Controls] | None
"""The controls a suite gives, by criterion name."""
PROMPT = re.compile(
    r"The conversation:\n(?P<said>.*)\n\nThe criterion \((?P<name>[\w-]+)\): (?P<does>.*)\n\n",
    re.DOTALL,
)


def verdict(passed: bool, why: str = "as the transcript shows") -> tuple[int, dict[str, Any]]:
    """A judge's answer of the strict shape: 100 tokens in, 10 out."""
    text = json.dumps({"verdict": "pass" if passed else "fail", "explanation": why})
    return 200, completion(text, prompt_tokens=100, completion_tokens=10)


def judge_models(url: str) -> str:
    """suite.yaml lines naming the judge model at `url`, priced at $1 / $2 per million
    tokens in / out."""
    return (
        f"models:\n  {JUDGE}: {{base_url: '{url}'}}\n"
        f"prices:\n  {JUDGE}: {{input: 1.0, output: 2.0}}\n"
    )


def suite_with_rubric(root: Path, url: str, rubric: str = RUBRIC) -> Path:
    """The mini suite whose `status` task has `rubric`, judged by the server at `url`."""
    files = dict(MINI_FILES)
    text = edit(files["suite.yaml"], "      must_say: [shipped]\n", rubric)
    files["suite.yaml"] = text + judge_models(url)
    return write_files(root, files)


def rightly(name: str, passing: bool) -> tuple[int, dict[str, Any]]:
    """A judge that grades every control right."""
    return verdict(passing, "as the reply shows")


def control(body: dict[str, Any], given: Given = None) -> bool | None:
    """Whether a judge request is a control: True for a passing one, False for a failing one
    (a criterion's `given` controls, else those derived from its words); None for a trial's."""
    found = PROMPT.search(body["messages"][-1]["content"])
    assert found, "every judge prompt names its criterion"
    lines = found["said"].split("\n")
    if len(lines) != 2 or not lines[1].startswith("Agent: "):
        return None
    replies = (given or {}).get(found["name"]) or derived_controls(found["does"])
    reply = lines[1].removeprefix("Agent: ")
    return True if reply == replies.passes else False if reply == replies.fails else None


def trial_requests(seen: Seen, given: Given = None) -> list[dict[str, Any]]:
    """The judge requests about trials, controls left out."""
    return [body for body in seen.bodies if control(body, given) is None]


def scripted(
    judge: Judge, controls: ControlJudge = rightly, given: Given = None
) -> Callable[[dict[str, Any]], tuple[int, dict[str, Any]] | Raw]:
    """The server's answer to a judge prompt: `controls` on a control (see `control`),
    else `judge` given the criterion the prompt names."""
    asked: dict[str, int] = {}

    def answer(body: dict[str, Any]) -> tuple[int, dict[str, Any]] | Raw:
        found = PROMPT.search(body["messages"][-1]["content"])
        assert found, "every judge prompt names its criterion"
        name = found["name"]
        kind = control(body, given)
        if kind is not None:
            return controls(name, kind)
        asked[name] = asked.get(name, 0) + 1
        return judge(name, asked[name] - 1)

    return answer


CLI = str(Path(sys.executable).parent / "toolproof")


def toolproof(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=120)


def run_status(
    suite: Path, store: Path, out: Path, *extra: str
) -> subprocess.CompletedProcess[str]:
    return toolproof(
        "run",
        str(suite),
        "--agent",
        "oracle",
        "--tasks",
        "status",
        "--trials",
        "2",
        "--k",
        "1",
        "--store",
        str(store),
        "--json",
        str(out),
        *extra,
    )


def stored(store: Path) -> list[Any]:
    journal = Store(str(store))
    run_id = journal.resolve("latest")
    return sorted((r for _, r in journal.results(run_id)), key=lambda r: r.trial)


@dataclass
class Judged:
    """A judged run of the status task: its stored trials, what the judge server saw, the
    command's output and its JSON summary."""

    results: list[Any]
    seen: Seen
    done: subprocess.CompletedProcess[str]
    summary: dict[str, Any]


def judged_run(
    tmp_path: Path,
    judge: Judge,
    *extra: str,
    rubric: str = RUBRIC,
    controls: ControlJudge = rightly,
    given: Given = None,
) -> Judged:
    """`toolproof run` of the status task's 2 trials by the oracle, judged by `judge` (and
    `controls`, with `given` control replies), into a fresh store."""
    out, db = tmp_path / "out.json", tmp_path / "s.db"
    with model_server(scripted(judge, controls, given)) as (url, seen):
        suite = suite_with_rubric(tmp_path / "suite", url, rubric)
        done = run_status(suite, db, out, "--judge-model", JUDGE, *extra)
    assert done.returncode == 0, done.stderr
    return Judged(stored(db), seen, done, json.loads(out.read_text()))
