"""A judge model for tests: a real local OpenAI-compatible server (`servers.model_server`)
whose answers come from a script keyed by the criterion each prompt names, and the mini suite
with a rubric graded by it."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from servers import Raw, completion
from support import MINI_FILES, edit, write_files

RUBRIC = """      must_say: [shipped]
      rubric:
        polite: Is polite to the user
        names_status: {does: Tells the user that the order has shipped, required: true}
"""
JUDGE = "openai-compatible/judge"
Judge = Callable[[str, int], tuple[int, dict[str, Any]] | Raw]
"""(criterion, how many times it was asked before) -> the server's answer."""


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


def scripted(judge: Judge) -> Callable[[dict[str, Any]], tuple[int, dict[str, Any]] | Raw]:
    """The server's answer to a judge prompt: `judge` given the criterion the prompt names."""
    asked: dict[str, int] = {}

    def answer(body: dict[str, Any]) -> tuple[int, dict[str, Any]] | Raw:
        found = re.search(r"The criterion \(([\w-]+)\)", body["messages"][-1]["content"])
        assert found, "every judge prompt names its criterion"
        name = found.group(1)
        asked[name] = asked.get(name, 0) + 1
        return judge(name, asked[name] - 1)

    return answer
