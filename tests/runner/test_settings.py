"""The run's effective settings: which k values a run reports when its trials are few."""

from __future__ import annotations

import pytest

from toolproof.errors import UsageError
from toolproof.runner.config import RunRequest, run_config
from toolproof.suite import Suite


def test_default_k_above_the_trials_is_dropped_with_a_note(
    mini: Suite, capsys: pytest.CaptureFixture[str]
) -> None:
    assert mini.file.defaults.k == [1, 3]
    config = run_config(mini, RunRequest(trials=2))
    assert (config.trials, config.k) == (2, [1])
    note = capsys.readouterr().err
    assert "too few for the suite's default k=3; reporting k=1" in note


def test_default_k_within_the_trials_is_kept_without_a_note(
    mini: Suite, capsys: pytest.CaptureFixture[str]
) -> None:
    config = run_config(mini, RunRequest(trials=3))
    assert config.k == [1, 3]
    assert capsys.readouterr().err == ""


def test_an_explicit_k_above_the_trials_stays_a_usage_error(mini: Suite) -> None:
    with pytest.raises(UsageError, match="k=3 needs at least 3 trials per task, but --trials is 2"):
        run_config(mini, RunRequest(trials=2, k=[1, 3]))
