"""The embedded model as the judge model: `--judge-model local/smollm2` on one rubric
criterion of the judged example, end to end. What the verdict says is the model's; the test
checks that it is a verdict (the strict answer shape, read and recorded), not an infra error.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from toolproof.graders.rubric import ANSWER_SCHEMA, read_answer
from toolproof.models.base import Message
from toolproof.models.local import LocalLlamaClient
from toolproof.store import Store

JUDGED = Path(__file__).parents[2] / "examples" / "judged"
CLI = str(Path(sys.executable).parent / "toolproof")


def test_a_held_text_answer_is_one_json_object_of_the_schema(local_model_path: str) -> None:
    model = LocalLlamaClient(local_model_path)
    model.hold_text_to(ANSWER_SCHEMA)
    asked = Message(role="user", content="Is the sky green? Say pass or fail, and why.")
    answer = asyncio.run(model.generate([asked], [], seed=3))
    passed, explanation = read_answer(answer.message.content)
    assert isinstance(passed, bool) and explanation
    assert set(json.loads(answer.message.content)) == {"verdict", "explanation"}


def test_the_embedded_model_judges_a_rubric_with_answers_of_the_strict_shape(
    local_model_path: str, tmp_path: Path
) -> None:
    db, out = tmp_path / "runs.db", tmp_path / "out.json"
    args = ["--agent", "oracle", "--tasks", "late-fees", "--trials", "1", "--k", "1"]
    judged = ["--judge-model", "local/smollm2", "--store", str(db), "--json", str(out)]
    done = subprocess.run(
        [CLI, "run", str(JUDGED), *args, *judged],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    journal = Store(str(db))
    [result] = [r for _, r in journal.results(journal.resolve("latest"))]
    assert result.outcome in ("passed", "failed"), result.reason  # a verdict, not infra_error
    assert result.judge is not None and result.judge.model == "local/smollm2"
    [criterion] = result.judge.criteria
    assert criterion.name == "no_blame" and len(criterion.answers) == 1  # read the first time
    assert read_answer(criterion.answers[0]) == (criterion.passed, criterion.explanation)
    assert result.judge.tokens_output > 0 and result.judge.cost_usd == 0.0
    assert json.loads(out.read_text())["judge"] == {"model": "local/smollm2", "cost_usd": 0.0}
