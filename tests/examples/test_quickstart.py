"""The quick-start suite that `make demo` runs: sound, and every answer needs its lookup."""

from __future__ import annotations

import asyncio
from pathlib import Path

from toolproof.runner.validate import validate_suite
from toolproof.suite import load_suite
from toolproof.suite.checks import user_words

QUICKSTART = Path(__file__).parents[2] / "examples" / "quickstart"


def test_quickstart_is_sound_oracle_passes_and_every_baseline_fails_every_task() -> None:
    checks = asyncio.run(validate_suite(load_suite(QUICKSTART)))
    assert [c.task.id for c in checks if not c.ok] == []
    assert all(c.oracle == "passed" for c in checks)
    assert all(
        outcome.startswith(("failed", "n/a")) for c in checks for outcome in c.baselines.values()
    )


def test_each_quickstart_answer_is_one_lookup_and_not_in_the_users_words() -> None:
    suite = load_suite(QUICKSTART)
    assert len(suite.tools) <= 3 and 3 <= len(suite.tasks) <= 8
    for task in suite.tasks:
        assert len(task.spec.expect.actions or []) == 1, task.id
        heard = user_words(task.spec).lower()
        for fact in task.spec.expect.facts():
            assert not any(form.lower() in heard for form in fact.sources), (task.id, fact)
