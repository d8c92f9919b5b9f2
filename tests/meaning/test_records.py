"""Records referred to by their values: a date's month and year tells two records apart only
where no other record of their kind has a date in that month."""

from __future__ import annotations

from typing import Any

from toolproof.meaning.clauses import read
from toolproof.meaning.records import Records, referred


def contacts(*modified: str) -> Records:
    records = Records()
    result: list[dict[str, Any]] = [
        {"id": f"5736705{i}", "name": "Diego Rossi", "modified": m} for i, m in enumerate(modified)
    ]
    records.add({"contacts": result}, {"name": "Diego Rossi"}, "hs_search_contacts")
    return records


def referred_keys(message: str, records: Records) -> list[str | None]:
    reading = read(message)
    return [r.key for r in records.items if referred(reading, r, records)]


def test_a_month_and_year_refer_to_the_one_record_changed_then() -> None:
    records = contacts("2024-12-03T10:00:00Z", "2026-02-11T08:00:00Z")
    said = "Shall I merge the older one (December 2024) into the one updated in Feb 2026?"
    assert referred_keys(said, records) == ["57367050", "57367051"]
    assert referred_keys("The one from December 2024 is older.", records) == ["57367050"]


def test_a_month_two_records_share_refers_to_neither() -> None:
    records = contacts("2024-12-03", "2024-12-19")
    assert referred_keys("The one from December 2024 is older.", records) == []


def test_a_month_without_its_year_refers_to_nothing() -> None:
    records = contacts("2024-12-03", "2026-02-11")
    assert referred_keys("The one from December is older.", records) == []
