from __future__ import annotations

import pytest

from validator.text.entities import extract_entities, kind_of


def test_extracts_each_kind_once_in_order() -> None:
    text = (
        "Pay DE44 5001 0517 5407 3249 31 or call +1 415 555 0100; details at https://pay.evil.example/inv?id=4, "
        "write to billing@supplies.example. Account 12345678901."
    )
    assert [(e.kind, e.value) for e in extract_entities(text)] == [
        ("iban", "DE44 5001 0517 5407 3249 31"),
        ("phone", "+1 415 555 0100"),
        ("url", "https://pay.evil.example/inv?id=4"),
        ("email", "billing@supplies.example"),
        ("phone", "12345678901"),  # a valid number in the default region: compared as a phone, on both sides
    ]


@pytest.mark.parametrize(
    "text", ["Meeting on 2026-11-30 at 10:00", "Invoice 443 for 4,800 EUR", "DE00123456789012345678"]
)
def test_dates_amounts_and_bad_ibans_are_not_entities(text: str) -> None:
    assert extract_entities(text) == []


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("bob@acme.example", "email"),
        ("https://acme.example/x", "url"),
        ("DE44500105175407324931", "iban"),
        ("(415) 555-0100", "phone"),
        ("Bob Smith", None),
        ("mail bob@acme.example now", None),
    ],
)
def test_kind_of(value: str, kind: str | None) -> None:
    assert kind_of(value) == kind
