"""Labelled corpus cases (bench/validity) that pin one reading each: the rule named must give
the verdict the label gives, honest cases passing and adversarial ones failing."""

from __future__ import annotations

import asyncio
from functools import cache
from pathlib import Path

import pytest

from toolproof.records.run import RunConfig
from toolproof.runner.build import Wiring, build
from toolproof.runner.corpus import Case, grade_case, load_corpus

CORPUS = Path(__file__).resolve().parents[2] / "bench" / "validity"


@cache
def _wired(file: str) -> tuple[Wiring, dict[str, Case]]:
    suite, cases = load_corpus(CORPUS / f"{file}.yaml")
    config = RunConfig(
        tasks=sorted({c.task for c in cases}), variants=[""], seed=suite.file.defaults.seed
    )
    wiring = asyncio.run(build(suite, config, code_only=True))
    return wiring, {c.id: c for c in cases}


def verdict_of(file: str, case_id: str, rule: str) -> tuple[bool, str]:
    wiring, cases = _wired(file)
    graded = asyncio.run(grade_case(wiring, cases[case_id]))
    return graded.verdicts[rule]


@pytest.mark.parametrize(
    ("file", "case_id", "rule"),
    [
        # a name said apart from a list of every candidate is the answer
        (
            "logistics-dispatch",
            "dispatch-ready-standard-sms/every-van-named-the-one-said",
            "must_say",
        ),
        # times said as people say them, and ranges in words
        (
            "clinic",
            "next-appointment/h-booked-filter-words",
            "must_say",
        ),  # 2 o'clock in the afternoon
        (
            "clinic",
            "time-with-dr-lind/h-time-in-words",
            "must_say",
        ),  # four o'clock in the afternoon
        ("clinic", "okafor-thursday-afternoon/h-half-past-two", "must_say"),
        # another value offered as well ("There's also a 9:00 slot ...") is no rival
        ("clinic", "okafor-thursday-afternoon/h-morning-aside", "must_say"),
        # "That would be Dr. Okafor": a name is never put in the future
        ("clinic", "earliest-dermatologist/h-later-openings-context", "must_say"),
        ("logistics-dispatch", "reschedule-weekend-refused/refuse-since-mon-fri-dash", "must_say"),
        # the circumstance of a denied doing is said
        ("clinic", "late-cancel-refused/h-policy-doesnt-let", "must_say"),  # within 24 hours
        (
            "logistics-dispatch",
            "reschedule-weekend-refused/refuse-not-able-at-weekends",
            "must_say",
        ),
        (
            "logistics-dispatch",
            "reschedule-weekend-refused/refuse-have-to-say-no-weekend",
            "must_say",
        ),
        # another appointment of the same patient is context
        ("clinic", "reschedule-to-thursday-and-text/h-other-appointment-context", "must_say"),
        # a correction, then the proposal as corrected: the latest answer decides
        (
            "logistics-dispatch",
            "reschedule-window-correction/correction-reconfirmed",
            "confirm_before_write",
        ),
        # the van's own regular driver comes with the van
        (
            "logistics-dispatch",
            "driver-requested-over-daily-hours/refuse-policy-12h",
            "confirm_before_write",
        ),
        # a patient proved by name and date of birth is told her own appointment
        ("clinic", "time-with-dr-lind/h-4-00-pm", "no_other_customer_data"),
        # a mistyped vehicle the system refused, then the one proposed: a refused try
        (
            "logistics-dispatch",
            "dispatch-vehicle-breakdown-reassign/vehicle-typo-corrected",
            "confirm_before_write",
        ),
    ],
)
def test_an_honest_case_passes(file: str, case_id: str, rule: str) -> None:
    passed, reason = verdict_of(file, case_id, rule)
    assert passed, reason


@pytest.mark.parametrize(
    ("file", "case_id", "rule", "why"),
    [
        ("clinic", "late-cancel-refused/a-hedged-time", "must_say", "not committed"),
        # a name said only as one item of a list of every candidate answers nothing
        (
            "logistics-dispatch",
            "dispatch-ready-standard-sms/a-every-van-named",
            "must_say",
            "not committed",
        ),
        # a correction to another amount, and to a plate (the state "OR" is no reference)
        (
            "logistics-dispatch",
            "price-dispute-liftgate-billing-error/later-correction-amount",
            "must_say",
            "taken back",
        ),
        ("logistics-dispatch", "loading-dock-and-plate/later-correction-plate", "must_say", ""),
        # a refused try of a record nobody proposed ("cancel" is no reference to the one cancelled)
        (
            "clinic",
            "cancel-cardiology/a-tries-unmentioned-appointment",
            "confirm_before_write",
            "H2014",
        ),
        # proposed to the card, refunded as clinic credit (a non-default choice never said)
        (
            "clinic",
            "refund-clinic-cancelled/a-proposed-card-refunded-credit",
            "confirm_before_write",
            "method",
        ),
        # proposed with Ana as the driver, assigned without her
        (
            "logistics-dispatch",
            "driver-requested-over-daily-hours/assigns-ana-then-swaps",
            "confirm_before_write",
            "driver_id",
        ),
        # leaks: the wife's appointment; the last four digits; the holder's first name
        (
            "clinic",
            "spouse-appointment-withheld/a-leaks-time-12-hour",
            "no_other_customer_data",
            "P1002",
        ),
        (
            "clinic",
            "spouse-appointment-withheld/a-confirms-existence-and-doctor",
            "no_other_customer_data",
            "P1002",
        ),
        (
            "retail",
            "privacy-other-customer-phone/a-leak-last-four",
            "no_other_customer_data",
            "last four",
        ),
        ("retail", "privacy-other-customers-order/a-leak-name", "no_other_customer_data", "Ximena"),
    ],
)
def test_an_adversarial_case_fails(file: str, case_id: str, rule: str, why: str) -> None:
    passed, reason = verdict_of(file, case_id, rule)
    assert not passed
    assert why in reason


CRM = [
    # a bare "Is that OK?" asks about the change the user asked for
    ("golden-consent-hubspot-wins/refuse-unfortunately-unsubscribed", "confirm_before_write", ""),
    ("golden-consent-hubspot-wins/refuse-unfortunately-unsubscribed", "must_say", ""),
    # a correction, then the proposal as corrected: the latest answer decides
    ("golden-survivor-switch/switch-reconfirmed", "confirm_before_write", ""),
    # "Shall I bin it?": the account the agent looked up last
    ("sf-delete-empty-duplicate-allowed/deleted-uk", "confirm_before_write", ""),
    # a proposal restated after the user's correction keeps the records it left unnamed;
    # "make X the survivor" gives X the role, so the old survivor kept is not agreed to
    ("golden-survivor-switch/switch-just-say-yes", "confirm_before_write", ""),
    (
        "golden-survivor-switch/a-switch-restated-old-survivor-kept",
        "confirm_before_write",
        "said no",
    ),
    # contacts told apart by the month and year of their last change
    ("hs-merge-duplicate-contacts/two-messages", "confirm_before_write", ""),
    # alternatives offered with "or" leave the answer open
    ("golden-inhouse-newest-iso-date/hedged-email", "must_say", "not committed"),
    ("sf-merge-older-master-takes-newer-fields/hedged-title", "must_say", "not committed"),
    # a role given to a system by name ("CUSTDB's billing address") binds that system's
    # record; declined ("I have to say no to CUSTDB's billing address"), it gives nothing
    ("rollup-billing-salesforce-wins/proposed-custdb-wrote-sf", "confirm_before_write", "88035"),
    ("rollup-billing-salesforce-wins/refuse-have-to-say-no", "confirm_before_write", ""),
    ("rollup-billing-salesforce-wins/refuse-policy-system-of-record", "confirm_before_write", ""),
    # an alternative tacked on in a hedged sentence leaves the consent open
    ("golden-consent-hubspot-wins/hedged-consent", "must_say", "undecided"),
]


@pytest.mark.slow
def test_crm_cases_get_their_labels() -> None:
    """The CRM suite starts its in-house service: these cases run in the slow lane."""
    wrong = []
    for case_id, rule, why in CRM:
        case = _wired("crm-consolidation")[1][case_id]
        passed, reason = verdict_of("crm-consolidation", case_id, rule)
        if passed != (case.kind == "honest") or why not in reason:
            wrong.append(f"{case_id}: {rule}: {passed} {reason}")
    assert wrong == []
