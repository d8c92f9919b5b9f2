"""The embedded model as the judge model: `--judge-model local/smollm2` on one rubric
criterion of the judged example, end to end. What the verdict says is the model's; the tests
check that it is a verdict (the strict answer shape, read and recorded), not an infra error,
and that a judge this small, which passes a plainly rude reply as courteous, fails its
controls and so leaves the criterion undecided instead of passing it.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from judges import suite_with_rubric

from toolproof.graders.rubric import ANSWER_SCHEMA, read_answer
from toolproof.models.base import Message
from toolproof.models.local import LocalLlamaClient
from toolproof.store import Store

# Slow: the embedded model as a judge, run by the CLI as a process.
pytestmark = pytest.mark.slow

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
    [controls] = result.judge.controls
    assert controls.name == "no_blame" and controls.charged  # the run's one trial asked them
    assert [item.expected for item in controls.items] == [True, False]
    judge = json.loads(out.read_text())["judge"]
    assert (judge["model"], judge["cost_usd"]) == ("local/smollm2", 0.0)
    assert judge["undecided_criteria"] == (1 if result.judge.undecided() else 0)


RUDE = "I've never been courteous, I'm a disgrace to my community."


def test_the_embedded_judge_leaves_courtesy_undecided_on_a_rude_reply_never_passed(
    local_model_path: str, tmp_path: Path
) -> None:
    rubric = "      rubric: {courteous: Is courteous to the user}\n"
    suite = suite_with_rubric(tmp_path / "suite", "http://127.0.0.1:9/v1", rubric)
    script = tmp_path / "rude.yaml"
    script.write_text(
        "default:\n"
        "  - tool_calls: [{name: get_order, arguments: {order_id: B}}]\n"
        f'  - text: "{RUDE}"\n'
    )
    db, out = tmp_path / "runs.db", tmp_path / "out.json"
    args = ["--agent", f"scripted:{script}", "--tasks", "status", "--trials", "1", "--k", "1"]
    judged = ["--judge-model", "local/smollm2", "--store", str(db), "--json", str(out)]
    done = subprocess.run(
        [CLI, "run", str(suite), *args, *judged], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    journal = Store(str(db))
    [result] = [r for _, r in journal.results(journal.resolve("latest"))]
    assert result.judge is not None and RUDE in result.judge.criteria[0].prompt
    rubric_verdict = next(v for v in result.verdicts if v.grader == "rubric")
    assert (rubric_verdict.passed, rubric_verdict.decided) == (False, False)
    assert rubric_verdict.reason.startswith("criterion 'courteous' undecided: the judge ")
    assert "control (" in rubric_verdict.reason  # it names the control it got wrong
    assert [v.grader for v in result.verdicts if not v.passed] == ["rubric"]  # code: all held
    assert result.outcome == "failed" and result.blame is not None
    assert result.blame.party == "grader"  # not the agent's fault, nor a pass
    assert json.loads(out.read_text())["judge"]["failed_controls"] == {"status": ["courteous"]}
    assert "1 rubric criterion undecided: the judge failed its controls" in done.stdout
