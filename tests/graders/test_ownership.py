"""Whose records are whose, derived from the world: by the owner field, by the id a record is
stored under, and by the ids a record refers to; and who the caller is."""

from __future__ import annotations

from toolproof.graders.ownership import Ownership, caller_of, identifier, index_world, patched

WORLD = {
    "customers": {
        "C0001": {"name": "Ana Ruiz", "email": "Ana@Example.com", "phone": "+15035550142"},
        "C0002": {"name": "Bo Chen", "email": "bo@example.com", "phone": "+16125552950"},
    },
    "orders": {
        "W1": {"customer_id": "C0001", "status": "shipped", "charge_id": "ch_A1"},
        "W2": {"customer_id": "C0002", "status": "shipped", "charge_id": "ch_B2"},
    },
    "payments": {"ch_A1": {"amount": 10.0}, "ch_B2": {"amount": 20.0, "order_id": "W2"}},
    "erp": {"W2": {"SHIP_STAT": "SHPD", "TRACK_NO": "1Z999"}},
    "catalog": {"SKU-1": {"name": "Belt", "price": 20.0}},
}


def test_every_identifier_of_an_owned_record_names_its_owner() -> None:
    owners = index_world(WORLD, "customer_id")
    assert owners["c0001"] == "C0001"  # stored under the owner's id
    assert owners["ana@examplecom"] == "C0001"  # an email in any case
    assert owners[identifier("(612) 555-2950") or ""] == "C0002"  # a phone in any format
    assert owners["w2"] == "C0002" and owners["chb2"] == "C0002"  # the owner field, its ids
    assert owners["1z999"] == "C0002"  # the ERP record stored under W2's id
    assert "sku1" not in owners  # a catalog entry is no one's


def test_a_value_two_owners_share_names_neither() -> None:
    world = {"orders": {"W1": {"customer_id": "C1", "coupon_code": "FALL"}}}
    world["orders"]["W2"] = {"customer_id": "C2", "coupon_code": "FALL"}
    assert "fall" not in index_world(world, "customer_id")


def test_a_tasks_patch_is_indexed_over_the_suites_world() -> None:
    base = index_world(WORLD, "customer_id")
    world = {**WORLD, "erp": {**WORLD["erp"], "W1": {"TRACK_NO": "1Z777"}}}
    patch = {"erp": {"W1": {"TRACK_NO": "1Z777"}}}
    owners = index_world(patched(world, patch), "customer_id", base)
    assert owners["1z777"] == "C0001"
    assert owners["1z999"] == "C0002"


def test_the_caller_is_whom_the_task_declares_else_whom_its_gold_identifies() -> None:
    owners = index_world(WORLD, "customer_id")
    assert caller_of(owners, [], ["ana@example.com"]) == {"C0001"}
    assert caller_of(owners, ["C0002"], ["ana@example.com"]) == {"C0002"}
    assert caller_of(owners, [], ["nobody@example.com"]) == frozenset()


def test_a_results_values_belong_to_the_owner_its_records_or_the_call_name() -> None:
    ownership = Ownership("customer_id", index_world(WORLD, "customer_id"), frozenset({"C0001"}))
    erp = list(ownership.leaves({"SHIP_STAT": "SHPD", "TRACK_NO": "1Z999"}, {"order_no": "W2"}))
    assert erp == [("C0002", "SHIP_STAT", "SHPD"), ("C0002", "TRACK_NO", "1Z999")]
    order = list(ownership.leaves({"customer_id": "C0001", "status": "shipped"}, {}))
    assert ("C0001", "status", "shipped") in order
    catalog = list(ownership.leaves({"name": "Belt", "price": 20.0}, {"sku": "SKU-1"}))
    assert catalog == [(None, "name", "Belt"), (None, "price", "20.0")]
