"""The clinic front desk's tools: Python functions over the trial's world.

The docstrings and type hints are what the agent sees; a ToolError is the error the desk
system gives back. The clinic's clock is `world["clinic"]["now"]`, never the real one, so
every trial (and the replay of the gold actions) sees the same moment.
"""

from datetime import date, datetime
from typing import Any, Literal

from toolproof.tools import ToolError, tool
from toolproof.world import World

Specialty = Literal["general_practice", "dermatology", "cardiology", "pediatrics"]
Reason = Literal["check-up", "follow-up", "new-problem", "vaccination", "prescription-renewal"]
Template = Literal["appointment_confirmation", "appointment_reminder", "cancellation_notice"]
RefundMethod = Literal["original_payment", "clinic_credit"]


def _now(world: World) -> datetime:
    return datetime.fromisoformat(world["clinic"]["now"])


def _starts(record: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(f"{record['date']}T{record['time']}")


def _digits(text: str) -> str:
    return "".join(ch for ch in text if ch.isdigit())[-10:]


def _patient(world: World, patient_id: str) -> dict[str, Any]:
    if patient_id not in world["patients"]:
        raise ToolError(f"patient {patient_id} not found", kind="not_found")
    return dict(world["patients"][patient_id])


def _appointment(world: World, appointment_id: str) -> dict[str, Any]:
    if appointment_id not in world["appointments"]:
        raise ToolError(f"appointment {appointment_id} not found", kind="not_found")
    record = world["appointments"][appointment_id]
    doctor = world["doctors"][record["doctor_id"]]
    view = dict(record)
    view["doctor_name"] = doctor["name"]
    view["specialty"] = doctor["specialty"]
    return view


def _slot(world: World, slot_id: str) -> dict[str, Any]:
    if slot_id not in world["slots"]:
        raise ToolError(f"slot {slot_id} not found", kind="not_found")
    slot = world["slots"][slot_id]
    doctor = world["doctors"][slot["doctor_id"]]
    view = dict(slot)
    view["doctor_name"] = doctor["name"]
    view["specialty"] = doctor["specialty"]
    return view


def _invoice(world: World, invoice_id: str) -> dict[str, Any]:
    if invoice_id not in world["invoices"]:
        raise ToolError(f"invoice {invoice_id} not found", kind="not_found")
    view = dict(world["invoices"][invoice_id])
    appointment = world["appointments"][view["appointment_id"]]
    view["refundable"] = round(float(view["paid"]) - float(view["refunded"]), 2)
    view["appointment_status"] = appointment["status"]
    view["cancelled_by"] = appointment.get("cancelled_by")
    return view


def _take_slot(world: World, slot_id: str) -> dict[str, Any]:
    slot = _slot(world, slot_id)
    if _starts(slot) <= _now(world):
        raise ToolError(f"slot {slot_id} is in the past", kind="invalid_state")
    if not slot["available"]:
        raise ToolError(f"slot {slot_id} is already taken", kind="slot_taken")
    world["slots"][slot_id]["available"] = False
    return slot


# ----------------------------------------------------------------------------- reads


@tool
def find_patient(
    world: World,
    email: str | None = None,
    phone: str | None = None,
    name: str | None = None,
    date_of_birth: date | None = None,
) -> dict[str, Any]:
    """Find a patient's record to identify the caller: by email, by phone, or by full name
    together with date of birth. Returns the patient's id, name, date of birth, phone and email.

    Args:
        email: The patient's email address, like "erik.nilsson@example.com".
        phone: The patient's phone number, in any format.
        name: The patient's full name; only together with date_of_birth.
        date_of_birth: The patient's date of birth, like "1978-04-12"; only together with name.
    """
    if email is None and phone is None and (name is None or date_of_birth is None):
        raise ToolError(
            "give an email, a phone number, or a full name with a date of birth",
            kind="invalid_request",
        )
    for record in world["patients"].values():
        if email is not None and record["email"].lower() != email.strip().lower():
            continue
        if phone is not None and _digits(record["phone"]) != _digits(phone):
            continue
        if name is not None and record["name"].lower() != " ".join(name.lower().split()):
            continue
        if date_of_birth is not None and record["date_of_birth"] != date_of_birth.isoformat():
            continue
        return dict(record)
    raise ToolError("no patient matches those details", kind="not_found")


@tool
def get_patient(world: World, patient_id: str) -> dict[str, Any]:
    """Get a patient's record by patient id: name, date of birth, phone and email.

    Args:
        patient_id: The patient id, like "P1001".
    """
    return _patient(world, patient_id)


@tool
def list_appointments(
    world: World,
    patient_id: str,
    status: Literal["booked", "cancelled", "completed"] | None = None,
) -> list[dict[str, Any]]:
    """List a patient's appointments, oldest first: id, doctor, date, time, status, reason and,
    where a copay was charged, the invoice id.

    Args:
        patient_id: The patient id, like "P1001".
        status: Only appointments with this status.
    """
    _patient(world, patient_id)
    found = [
        _appointment(world, appointment_id)
        for appointment_id, record in world["appointments"].items()
        if record["patient_id"] == patient_id and (status is None or record["status"] == status)
    ]
    return sorted(found, key=lambda a: (a["date"], a["time"], a["appointment_id"]))


@tool
def get_appointment(world: World, appointment_id: str) -> dict[str, Any]:
    """Get one appointment: its patient, doctor, date, time, status, reason and invoice.

    Args:
        appointment_id: The appointment id, like "H2001".
    """
    return _appointment(world, appointment_id)


@tool
def list_doctors(world: World, specialty: Specialty | None = None) -> list[dict[str, Any]]:
    """List the clinic's doctors with their ids and specialties.

    Args:
        specialty: Only doctors of this specialty.
    """
    return [
        dict(doctor)
        for doctor in world["doctors"].values()
        if specialty is None or doctor["specialty"] == specialty
    ]


@tool
def get_doctor(world: World, doctor_id: str) -> dict[str, Any]:
    """Get a doctor's name and specialty.

    Args:
        doctor_id: The doctor id, like "D01".
    """
    if doctor_id not in world["doctors"]:
        raise ToolError(f"doctor {doctor_id} not found", kind="not_found")
    return dict(world["doctors"][doctor_id])


@tool
def search_slots(
    world: World,
    doctor_id: str | None = None,
    specialty: Specialty | None = None,
    date: date | None = None,
) -> list[dict[str, Any]]:
    """Search the open appointment slots from now on, earliest first. Taken slots are not
    listed.

    Args:
        doctor_id: Only this doctor's slots, like "D01".
        specialty: Only slots of doctors of this specialty.
        date: Only slots on this day, like "2026-03-12".
    """
    now = _now(world)
    found = []
    for slot_id, slot in world["slots"].items():
        if not slot["available"] or _starts(slot) <= now:
            continue
        if doctor_id is not None and slot["doctor_id"] != doctor_id:
            continue
        if date is not None and slot["date"] != date.isoformat():
            continue
        view = _slot(world, slot_id)
        if specialty is not None and view["specialty"] != specialty:
            continue
        found.append(view)
    return sorted(found, key=lambda s: (s["date"], s["time"], s["slot_id"]))


@tool
def get_invoice(world: World, invoice_id: str) -> dict[str, Any]:
    """Get a copay invoice: the amount charged, paid and already refunded, what can still be
    refunded, the payment method, and the status of its appointment (and who cancelled it).

    Args:
        invoice_id: The invoice id, like "I3001".
    """
    return _invoice(world, invoice_id)


# ----------------------------------------------------------------------------- writes


@tool(write=True)
def book_appointment(world: World, patient_id: str, slot_id: str, reason: Reason) -> dict[str, Any]:
    """Book an open slot for a patient.

    Args:
        patient_id: The patient id, like "P1001".
        slot_id: The open slot to book, like "S002".
        reason: The kind of visit.
    """
    _patient(world, patient_id)
    slot = _take_slot(world, slot_id)
    number = max(int(key[1:]) for key in world["appointments"]) + 1
    appointment_id = f"H{number}"
    world["appointments"][appointment_id] = {
        "appointment_id": appointment_id,
        "patient_id": patient_id,
        "slot_id": slot_id,
        "doctor_id": slot["doctor_id"],
        "date": slot["date"],
        "time": slot["time"],
        "status": "booked",
        "reason": reason,
    }
    return _appointment(world, appointment_id)


@tool(write=True)
def cancel_appointment(world: World, appointment_id: str) -> dict[str, Any]:
    """Cancel a booked appointment at the patient's request. Not allowed less than 24 hours
    before the appointment starts.

    Args:
        appointment_id: The appointment id, like "H2001".
    """
    view = _appointment(world, appointment_id)
    if view["status"] != "booked":
        raise ToolError(f"appointment {appointment_id} is {view['status']}", kind="invalid_state")
    hours = (_starts(view) - _now(world)).total_seconds() / 3600
    limit = world["clinic"]["cancellation_notice_hours"]
    if hours < limit:
        raise ToolError(
            f"appointment {appointment_id} starts in less than {limit} hours: it cannot be "
            "cancelled; it can be rescheduled, or the no-show fee applies",
            kind="not_allowed",
        )
    record = world["appointments"][appointment_id]
    record["status"] = "cancelled"
    record["cancelled_by"] = "patient"
    world["slots"][record["slot_id"]]["available"] = True
    return _appointment(world, appointment_id)


@tool(write=True)
def reschedule_appointment(world: World, appointment_id: str, new_slot_id: str) -> dict[str, Any]:
    """Move a booked appointment to another open slot; its old slot is freed.

    Args:
        appointment_id: The appointment id, like "H2001".
        new_slot_id: The open slot to move it to, like "S005".
    """
    view = _appointment(world, appointment_id)
    if view["status"] != "booked":
        raise ToolError(f"appointment {appointment_id} is {view['status']}", kind="invalid_state")
    if _starts(view) <= _now(world):
        raise ToolError(f"appointment {appointment_id} has already started", kind="invalid_state")
    slot = _take_slot(world, new_slot_id)
    record = world["appointments"][appointment_id]
    world["slots"][record["slot_id"]]["available"] = True
    record["slot_id"] = new_slot_id
    record["doctor_id"] = slot["doctor_id"]
    record["date"] = slot["date"]
    record["time"] = slot["time"]
    return _appointment(world, appointment_id)


@tool(write=True)
def send_sms(
    world: World, patient_id: str, template: Template, appointment_id: str
) -> dict[str, Any]:
    """Text a patient, at the phone number on their record, about one of their appointments.

    Args:
        patient_id: The patient id, like "P1001".
        template: Which message: a confirmation of a booking or change, a reminder, or a
            cancellation notice.
        appointment_id: The patient's appointment the message is about, like "H2001".
    """
    patient = _patient(world, patient_id)
    view = _appointment(world, appointment_id)
    if view["patient_id"] != patient_id:
        raise ToolError(
            f"appointment {appointment_id} is not one of patient {patient_id}'s", kind="not_allowed"
        )
    when = f"{view['date']} at {view['time']} with {view['doctor_name']}"
    body = {
        "appointment_confirmation": f"your appointment is confirmed for {when}.",
        "appointment_reminder": f"a reminder of your appointment on {when}.",
        "cancellation_notice": f"your appointment on {when} is cancelled.",
    }[template]
    text = f"{world['clinic']['name']}: {body}"
    message_id = f"M{len(world['messages']) + 1:03d}"
    world["messages"][message_id] = {
        "message_id": message_id,
        "patient_id": patient_id,
        "appointment_id": appointment_id,
        "template": template,
        "to": patient["phone"],
        "text": text,
    }
    return dict(world["messages"][message_id])


@tool(write=True)
def refund_copay(
    world: World, invoice_id: str, amount: float, method: RefundMethod = "original_payment"
) -> dict[str, Any]:
    """Refund (part of) a copay. Only for an appointment the clinic cancelled, and never more
    than was paid and not yet refunded.

    Args:
        invoice_id: The invoice id, like "I3001".
        amount: The amount to refund, in dollars, like 25.00.
        method: Back to the card it was paid with, or as credit at the clinic.
    """
    view = _invoice(world, invoice_id)
    if view["appointment_status"] != "cancelled" or view["cancelled_by"] != "clinic":
        raise ToolError(
            f"invoice {invoice_id}: copays are refunded only for appointments the clinic "
            f"cancelled (this appointment is {view['appointment_status']}"
            + (f", cancelled by the {view['cancelled_by']})" if view["cancelled_by"] else ")"),
            kind="not_eligible",
        )
    amount = round(float(amount), 2)
    if amount <= 0:
        raise ToolError("the amount must be above zero", kind="invalid_request")
    if amount > view["refundable"]:
        raise ToolError(
            f"invoice {invoice_id}: {amount:.2f} is more than the {view['refundable']:.2f} "
            "paid and not yet refunded",
            kind="exceeds_paid",
        )
    record = world["invoices"][invoice_id]
    record["refunded"] = round(float(record["refunded"]) + amount, 2)
    record["refunds"].append({"amount": amount, "method": method})
    return _invoice(world, invoice_id)
