"""A persona is one registration: this module adds one (`shouty`) without touching
toolproof, and a real suite uses it by name, in its own persona's `use:` and as `--persona`."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import MINI_FILES, write_files

from toolproof import RunRequest, Store, TrialResult, load_suite, run_suite
from toolproof.errors import SuiteError, UsageError
from toolproof.users.personas import PERSONAS, Play, persona

LOUD = """personas:
  loud:
    use: [shouty]
    prefix: "HELLO."
"""


@pytest.fixture
def shouty() -> Iterator[None]:
    """A user who writes in capitals, registered for one test."""

    @persona("shouty", prompt="Write everything in capitals.")
    def shout(play: Play) -> None:
        play.say_first(play.user.opening.upper())

    yield
    PERSONAS.unregister("shouty")


def run(suite_dir: Path, store: Path, request: RunRequest) -> list[TrialResult]:
    results: list[TrialResult] = []
    asyncio.run(
        run_suite(load_suite(suite_dir), request, Store(str(store)), on_result=results.append)
    )
    return sorted(results, key=lambda r: (r.variant, r.task_id))


def test_an_added_persona_is_used_by_a_suites_own_persona_and_by_name(
    shouty: None, tmp_path: Path
) -> None:
    suite = write_files(
        tmp_path / "s", {**MINI_FILES, "suite.yaml": MINI_FILES["suite.yaml"] + LOUD}
    )
    request = RunRequest(
        agent="oracle", tasks="status", trials=1, k=[1], personas=["loud", "shouty"]
    )
    results = run(suite, tmp_path / "runs.db", request)
    said = {r.variant: r.transcript.messages("user")[0].content for r in results}
    assert said == {
        "": "Where is order B?",
        "persona:loud": "HELLO. WHERE IS ORDER B?",
        "persona:shouty": "WHERE IS ORDER B?",
    }
    assert {r.outcome for r in results} == {"passed"}


def test_a_persona_no_one_registered_is_a_located_problem_listing_the_personas(
    tmp_path: Path,
) -> None:
    suite = write_files(
        tmp_path / "s", {**MINI_FILES, "suite.yaml": MINI_FILES["suite.yaml"] + LOUD}
    )
    with pytest.raises(SuiteError, match=r"suite.yaml:\d+: .*unknown built-in persona 'shouty'"):
        load_suite(suite)
    plain = write_files(tmp_path / "p", MINI_FILES)
    with pytest.raises(UsageError, match="--persona shouty: no such persona"):
        run(plain, tmp_path / "runs.db", RunRequest(agent="oracle", trials=1, personas=["shouty"]))
