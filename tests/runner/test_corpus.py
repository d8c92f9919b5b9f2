"""The labelled corpus (bench/validity): every rule's false passes and false failures stay
at most 2%, except the rules listed here at the level last measured, and a listed rule that
gets to 2% leaves the list (it may only shrink)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml

from toolproof.runner.corpus import OUTCOME, Case, grade_corpus

CORPUS = Path(__file__).resolve().parents[2] / "bench" / "validity"
LIMIT = 0.02
"""The most false passes, and the most false failures, a rule may have (a share of the
adversarial cases that break it, and of the honest cases)."""

ABOVE_LIMIT: dict[tuple[str, str], int] = {}
"""Rules above the limit, by how many cases they misjudge at most: measured, and to be
brought under it (docs/metrics.md says which cases and why)."""


def test_every_corpus_file_names_its_suite_and_labels_each_case() -> None:
    files = sorted(CORPUS.glob("*.yaml"))
    assert len(files) >= 4
    cases = 0
    for path in files:
        data = yaml.safe_load(path.read_text())
        loaded = [Case.model_validate(c) for c in data["cases"]]
        assert (CORPUS / data["suite"] / "suite.yaml").is_file(), path.name
        assert {c.kind for c in loaded} == {"honest", "adversarial"}, path.name
        assert all(c.breaks for c in loaded if c.kind == "adversarial"), path.name
        cases += len(loaded)
    assert cases >= 800


@pytest.mark.slow
def test_no_rule_misjudges_more_than_two_percent_of_its_cases() -> None:
    rates = asyncio.run(grade_corpus(sorted(CORPUS.glob("*.yaml"))))
    over: list[str] = []
    under: list[str] = []
    for rule, rate in sorted(rates.rules.items()):
        if rule == OUTCOME:
            continue  # a trial's verdict, every rule's errors together: not one rule
        for kind, count, total in (
            ("false failures", rate.false_failures, rate.honest),
            ("false passes", rate.false_passes, rate.adversarial),
        ):
            allowed = ABOVE_LIMIT.get((rule, kind))
            share = count / total if total else 0.0
            if share > LIMIT and (allowed is None or count > allowed):
                over.append(f"{rule}: {kind} {count}/{total} ({share:.1%})")
            if allowed is not None and share <= LIMIT:
                under.append(f"{rule}: {kind} {count}/{total}: take it off ABOVE_LIMIT")
    assert over == []
    assert under == []
