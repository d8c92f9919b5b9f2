"""Agreement between graders and people on a small labelled fixture computed by hand."""

from __future__ import annotations

import pytest

from toolproof.metrics.agreement import (
    Item,
    agreement,
    cohen_kappa,
    grader_agreement,
    human_agreement,
    krippendorff_alpha,
)

P, F = True, False

# (task, automated, ann, bob); bob labelled the first three only.
FIXTURE = [
    ("t1", P, P, P),
    ("t1", P, P, F),
    ("t2", F, F, F),
    ("t2", P, F, None),
    ("t3", F, F, None),
    ("t3", P, P, None),
]


def items(grader: str = "outcome") -> list[Item]:
    out = []
    for task, automated, ann, bob in FIXTURE:
        humans = {"ann": ann} if bob is None else {"ann": ann, "bob": bob}
        out.append(Item(task=task, grader=grader, automated=automated, humans=humans))
    return out


def test_grader_kappa_alpha_and_rates_match_the_hand_computation() -> None:
    found = grader_agreement(items())
    # Pairs (grader, person): item1 (P,P)(P,P); item2 (P,P)(P,F); item3 (F,F)(F,F);
    # item4 (P,F); item5 (F,F); item6 (P,P): 9 pairs, 7 agree, so p_o = 7/9.
    # The grader passes 6 of 9, people pass 4 of 9:
    # p_e = 6/9 * 4/9 + 3/9 * 5/9 = 39/81; kappa = (63/81 - 39/81) / (42/81) = 24/42 = 4/7.
    assert found["pairs"] == 9 and found["items"] == 6
    assert found["cohen_kappa"] == pytest.approx(4 / 7)
    # Alpha, the grader and each person as coders. Coincidences, each unit's ordered pairs
    # divided by (m - 1): unit1 PPP -> o_PP 3; unit2 PPF -> o_PP 1, o_PF 1, o_FP 1;
    # unit3 FFF -> o_FF 3; unit4 PF -> o_PF 1, o_FP 1; unit5 FF -> o_FF 2; unit6 PP -> o_PP 2.
    # o_PP 6, o_FF 5, o_PF 2, o_FP 2; n = 15, n_P = 8, n_F = 7.
    # alpha = 1 - (n - 1) * (o_PF + o_FP) / (2 n_P n_F) = 1 - 14 * 4 / 112 = 0.5.
    assert found["krippendorff_alpha"] == pytest.approx(0.5)
    # People pass 4 pairs, the grader passes all 4: TPR 4/4. People fail 5 pairs (2b, 3a,
    # 3b, 4a, 5a); the grader passes 2 of them (2b, 4a): FPR 2/5.
    assert found["true_positive_rate"] == pytest.approx(1.0)
    assert found["false_positive_rate"] == pytest.approx(0.4)
    assert found["not_measured"] == {}


def test_intervals_are_seeded_bootstraps_over_tasks_that_hold_the_point() -> None:
    first, again = grader_agreement(items(), seed=7), grader_agreement(items(), seed=7)
    for name in ("cohen_kappa", "true_positive_rate", "false_positive_rate"):
        low, high = first[f"{name}_interval"]
        assert low <= first[name] <= high
        assert first[f"{name}_interval"] == again[f"{name}_interval"]
    assert first["cohen_kappa_interval"][0] < first["cohen_kappa_interval"][1]


def test_labels_on_one_task_give_no_interval_and_say_why() -> None:
    one_task = [Item("t1", i.grader, i.automated, i.humans) for i in items()]
    found = grader_agreement(one_task)
    assert found["cohen_kappa"] == pytest.approx(4 / 7)
    assert found["cohen_kappa_interval"] is None
    assert found["not_measured"]["cohen_kappa_interval"] == "needs labels on at least 2 tasks"


def test_too_few_labels_give_null_with_a_reason_never_a_number() -> None:
    found = grader_agreement(items()[:2])  # 4 pairs
    for name in ("cohen_kappa", "krippendorff_alpha", "true_positive_rate", "false_positive_rate"):
        assert found[name] is None
        assert found["not_measured"][name] == "only 4 labelled pairs; at least 5 needed"


def test_people_who_overlap_on_too_few_items_get_no_human_agreement() -> None:
    # ann and bob both labelled items 1-3: three pairs of labels, fewer than five.
    found = human_agreement(items())
    assert found["pairs"] == 3 and found["cohen_kappa"] is None
    assert "only 3 pairs of labels" in found["not_measured"]["cohen_kappa"]


def test_human_kappa_and_alpha_match_the_hand_computation() -> None:
    labels = [(P, P), (P, P), (F, F), (P, F), (F, F)]
    both = [Item(f"t{i}", "outcome", None, {"ann": a, "bob": b}) for i, (a, b) in enumerate(labels)]
    found = human_agreement(both)
    # p_o = 4/5; ann passes 3/5, bob 2/5: p_e = 3/5 * 2/5 + 2/5 * 3/5 = 12/25;
    # kappa = (20/25 - 12/25) / (13/25) = 8/13.
    assert found["cohen_kappa"] == pytest.approx(8 / 13)
    # Units of two: o_PP 4, o_FF 4, o_PF 1, o_FP 1; n = 10, n_P = n_F = 5:
    # alpha = 1 - 9 * 2 / (2 * 5 * 5) = 0.64.
    assert found["krippendorff_alpha"] == pytest.approx(0.64)


def test_an_unanimous_set_of_labels_has_no_kappa() -> None:
    assert cohen_kappa([(P, P)] * 6) is None
    assert krippendorff_alpha([[P, P]] * 6) is None
    same = [Item(f"t{i}", "outcome", P, {"ann": P}) for i in range(6)]
    found = grader_agreement(same)
    assert found["cohen_kappa"] is None and found["not_measured"]["cohen_kappa"]
    assert found["false_positive_rate"] is None
    assert found["not_measured"]["false_positive_rate"] == "no item a person failed"


def test_items_without_an_automated_verdict_are_left_out() -> None:
    found = grader_agreement([*items(), Item("t4", "outcome", None, {"ann": F, "bob": F})])
    assert found["pairs"] == 9 and found["cohen_kappa"] == pytest.approx(4 / 7)


def test_agreement_reports_each_grader_with_the_outcome_first() -> None:
    found = agreement([*items("polite"), *items()])
    assert list(found["graders"]) == ["outcome", "polite"]
    assert found["labellers"] == ["ann", "bob"]
    assert found["graders"]["polite"]["cohen_kappa"] == pytest.approx(4 / 7)


def test_human_agreement_is_reported_per_criterion_as_well_as_pooled() -> None:
    # (ann, bob) on five trials; they agree on every outcome and split on politeness.
    outcome = [(P, P), (P, P), (F, F), (F, F), (P, P)]
    polite = [(P, F), (F, P), (P, P), (P, F), (F, F)]
    labelled = [
        Item(f"t{i}", grader, P, {"ann": ann, "bob": bob})
        for grader, labels in (("outcome", outcome), ("polite", polite))
        for i, (ann, bob) in enumerate(labels)
    ]
    found = agreement(labelled)
    assert list(found["humans_by_criterion"]) == ["outcome", "polite"]
    on_outcome = found["humans_by_criterion"]["outcome"]
    # Outcome: p_o = 5/5; ann and bob each pass 3/5: p_e = 9/25 + 4/25 = 13/25;
    # kappa = (1 - 13/25) / (12/25) = 1. Alpha: o_PP 6, o_FF 4, no disagreement: 1.
    assert on_outcome["pairs"] == 5
    assert on_outcome["cohen_kappa"] == pytest.approx(1.0)
    assert on_outcome["krippendorff_alpha"] == pytest.approx(1.0)
    on_polite = found["humans_by_criterion"]["polite"]
    # Politeness: p_o = 2/5; ann passes 3/5, bob 2/5: p_e = 6/25 + 6/25 = 12/25;
    # kappa = (10/25 - 12/25) / (13/25) = -2/13. Alpha: o_PP 2, o_FF 2, o_PF = o_FP = 3;
    # n = 10, n_P = n_F = 5: 1 - 9 * 6 / (2 * 5 * 5) = -0.08.
    assert on_polite["cohen_kappa"] == pytest.approx(-2 / 13)
    assert on_polite["krippendorff_alpha"] == pytest.approx(-0.08)
    pooled = found["humans"]
    # Pooled: 10 pairs, 7 agree; ann passes 6/10, bob 5/10: p_e = 0.3 + 0.2 = 0.5;
    # kappa = (0.7 - 0.5) / 0.5 = 0.4. Alpha: o_PP 8, o_FF 6, o_PF = o_FP = 3; n = 20,
    # n_P = 11, n_F = 9: 1 - 19 * 6 / (2 * 11 * 9) = 14/33.
    assert pooled["pairs"] == 10
    assert pooled["cohen_kappa"] == pytest.approx(0.4)
    assert pooled["krippendorff_alpha"] == pytest.approx(14 / 33)
    # Each criterion's interval is a bootstrap over its own tasks, holding its point.
    low, high = on_polite["cohen_kappa_interval"]
    assert low <= -2 / 13 <= high
