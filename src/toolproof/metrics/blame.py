"""Who the failed trials are to blame on: counts by party and by the rule that decided.

Each failed trial's stored condition statistics carry its blame (`toolproof.graders.blame`
assigns it when the trial is graded or re-graded). A failed trial stored before blame was
assigned counts as `unattributed` (shown only when there is one), so the counts always sum
to the failed trials.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

PARTIES = ("agent", "user_simulator", "environment", "grader")
"""The parties a failure can be blamed on (the same as `toolproof.graders.blame.PARTIES`)."""


def blame_counts(
    rows: Sequence[Mapping[str, Any]],
) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    """(failed trials by party, failed trials by party and the rule that decided) over these
    rows. Every party is listed in the first, a zero being a count like any other; the
    second lists the parties with failures, each rule's count most common first."""
    parties: dict[str, int] = dict.fromkeys(PARTIES, 0)
    rules: dict[str, Counter[str]] = {}
    unattributed = 0
    for row in rows:
        if row["outcome"] != "failed":
            continue
        blame = (row.get("conditions") or {}).get("blame")
        if not isinstance(blame, dict) or blame.get("party") not in parties:
            unattributed += 1
            continue
        party = blame["party"]
        parties[party] += 1
        rules.setdefault(party, Counter())[str(blame.get("rule", ""))] += 1
    if unattributed:
        parties["unattributed"] = unattributed
    by_rule = {party: dict(rules[party].most_common()) for party in parties if party in rules}
    return parties, by_rule
