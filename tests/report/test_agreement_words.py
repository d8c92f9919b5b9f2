"""The agreement of graders with people in words: what the labels cannot support."""

from __future__ import annotations

from toolproof.metrics.agreement import Item, agreement
from toolproof.report.agreement import not_measured


def test_what_the_labels_cannot_support_is_a_line_per_reason_not_per_statistic() -> None:
    # seven items by one labeller: the outcome of four trials, three criteria of one
    items = [Item("t", "outcome", True, {"ann": n % 2 == 0}) for n in range(4)]
    items += [Item("t", name, True, {"ann": True}) for name in ("polite", "concise", "grounded")]
    found = {"run_id": "R", "labelled_items": 7, **agreement(items)}
    assert not_measured(found) == [
        "outcome: kappa, alpha, TPR and FPR (only 4 labelled pairs; at least 5 needed)",
        "concise, grounded and polite: kappa, alpha, TPR and FPR (only 1 labelled pair; at "
        "least 5 needed)",
        "people with each other: no item was labelled by two people; a second person's labels "
        "on the same trials measure it",
    ]
