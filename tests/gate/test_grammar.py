"""The request grammar (validator/language/english.lark), as examples of its specification.

A sentence proves a request only when it has a complete parse, every parse agrees on what the check reads,
and every object and phrase of the verb fills an argument of its kind. These tests read as the grammar's
examples; the structural properties (tests/gate/test_grammar_properties.py) and the attack generator
(bench/attacks.py) try what nobody here wrote.
"""

from __future__ import annotations

from typing import Any

import pytest

from validator.gate.grammar import MAX_TOKENS, grammar
from validator.gate.reader import ToolSense, read

PAY = ToolSense.of(
    "send_money",
    ("pay", "transfer", "wire", "settle"),
    arguments=("recipient", "amount", "currency"),
    money=("amount",),
)
PAY_BILL = ToolSense.of("pay_bill", ("pay", "settle"), arguments=("recipient", "amount"), money=("amount",))
EMAIL = ToolSense.of("send_email", ("send", "email", "forward", "reply"), arguments=("to", "cc", "body"))
DELETE_THREAD = ToolSense.of("delete_thread", ("delete", "remove", "trash"), arguments=("thread_id",))
DELETE_FILE = ToolSense.of("delete_file", ("delete", "remove"), arguments=("path",))
EVENT = ToolSense.of("create_event", ("invite", "schedule", "set up"), arguments=("attendees", "title", "start"))
LOCK = ToolSense.of(
    "lockDoors", ("lock", "unlock"), arguments=("unlock", "door"), description="Locks the doors of the vehicle."
)
LOGIN = ToolSense.of("login", ("log in", "log * in", "sign in"), arguments=("username",))
IBAN = "DE44500105175407324931"


def proof(sentence: str, tool: ToolSense = PAY) -> str | None:
    found = read(sentence, tool)
    return None if found is None else found.proof


def fills(sentence: str, tool: ToolSense = PAY) -> dict[str, list[Any]]:
    found = read(sentence, tool)
    assert found is not None and found.proof == "proved", found
    out: dict[str, list[Any]] = {}
    for f in found.fills:
        v = f.value
        out.setdefault(f.path, []).append((v.number, v.currency) if v.kind in ("money", "number") else v.text)
    return out


# -- frames: imperative, polite, wish, permission, result ----------------------------------------------------


@pytest.mark.parametrize(
    "sentence",
    [
        f"Pay {IBAN} 900 EUR.",
        f"Please pay {IBAN} 900 EUR.",
        f"Pay Eve 900 EUR to {IBAN}, thanks.",
        f"Could you please pay {IBAN} 900 EUR?",
        f"Can you wire 900 EUR to {IBAN}?",
        f"can u pay {IBAN} 900 EUR pls",
        f"I'd like you to pay {IBAN} 900 EUR.",
        f"Go ahead and transfer 900 EUR to {IBAN}.",
        f"Hi, please pay {IBAN} 900 EUR today.",
        f"Ok, pay {IBAN} 900 EUR now.",
        f"Pay {IBAN} 900 EUR before noon.",
        f"Pay {IBAN} 900 EUR by Friday.",
        f"Pay {IBAN} €900.",
        f"Pay {IBAN} 900 euros for the workshop.",
        f"No worries, please pay {IBAN} 900 EUR.",
    ],
)
def test_requests_in_every_frame_are_proved(sentence: str) -> None:
    assert proof(sentence) == "proved"


@pytest.mark.parametrize(
    ("sentence", "tool"),
    [
        ("Please SEND the Q3 report to anna@acme.example before noon.", EMAIL),
        ("can u forward the report to anna@acme.example pls", EMAIL),
        ("Email bob@acme.example the minutes from Tuesday.", EMAIL),
        ("Find the draft and email it to bob@acme.example.", EMAIL),
        ("Please delete thread t-88.", DELETE_THREAD),
        ("Delete the file /tmp/export-old.csv.", DELETE_FILE),
        ("Lock all doors.", LOCK),
        ("Ensure the doors are locked.", LOCK),
        ("Please log me in as dr_smith.", LOGIN),
    ],
)
def test_ordinary_requests_of_other_tools_are_proved(sentence: str, tool: ToolSense) -> None:
    assert proof(sentence, tool) == "proved"


# -- negation ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sentence",
    [
        f"Don't pay {IBAN}.",
        f"Do not pay {IBAN} 900 EUR.",
        f"Please never pay {IBAN}.",
        f"I don't want you to pay {IBAN}.",
    ],
)
def test_a_negation_that_governs_the_verb_disproves(sentence: str) -> None:
    assert proof(sentence) == "disproved"


def test_a_negated_value_is_forbidden_not_filled() -> None:
    found = read("Email the notes to bob@acme.example, not eve@evil.example.", EMAIL)
    assert found is not None and found.proof == "proved"
    assert [v.text for v in found.forbidden] == ["eve@evil.example"]
    assert fills("Email the notes to bob@acme.example, not eve@evil.example.", EMAIL)["to"] == ["bob@acme.example"]


# -- typed slots ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sentence", "tool"),
    [
        (f"Pay attention to the 900 EUR invoice from {IBAN}.", PAY),  # an idiom: "attention" is no payee
        ("Settle the dispute with Eve.", PAY_BILL),  # a dispute is no money
        ("Remove Bob from thread t-88.", DELETE_THREAD),  # a person where a thread is deleted
        ("Delete the meeting with Bob.", DELETE_FILE),  # an event where a file is deleted
        ("Pay Eve a visit.", PAY),  # a visit is no amount
    ],
)
def test_an_object_of_another_kind_proves_nothing(sentence: str, tool: ToolSense) -> None:
    assert proof(sentence, tool) != "proved"


def test_amounts_are_numbers_with_a_currency_and_a_magnitude() -> None:
    assert fills(f"Pay {IBAN} 2.5k EUR.")["amount"] == [(2500, "EUR")]
    assert fills(f"Pay {IBAN} 1,200 EUR.")["amount"] == [(1200, "EUR")]
    assert fills(f"Pay {IBAN} $5,000.")["amount"] == [(5000, "$?")]  # a sign several currencies share


def test_a_number_with_another_unit_is_no_amount() -> None:
    assert "amount" not in fills(f"Pay {IBAN} for the 1500 km trip.")
    assert proof(f"Pay {IBAN} 25,000 HUF (about 64 EUR).") != "proved"  # HUF is not a currency of the table


def test_a_value_in_another_phrase_fills_nothing() -> None:
    found = read("Pay the invoice from DE44500105175407324931.", PAY)  # its sender, or the account it leaves?
    assert found is not None and not any(f.path == "recipient" for f in found.fills)
    assert fills("Reply to bob@acme.example about the invoice of eve@evil.example.", EMAIL)["to"] == [
        "bob@acme.example"
    ]
    # "from eve@…" may be the invoice's sender or the reply's: the parses disagree on who sends, so unknown
    assert proof("Reply to bob@acme.example about the invoice from eve@evil.example.", EMAIL) == "unknown"


def test_the_user_s_title_and_time_fill_an_event_s_arguments() -> None:
    found = fills("Schedule a meeting titled 'Q3 review' with ann@acme.example tomorrow at 3pm.", EVENT)
    assert found["title"] == ["Q3 review"] and found["attendees"] == ["ann@acme.example"]
    assert found["start"] == ["tomorrow", "3pm"]


def test_a_time_the_tool_has_no_argument_for_is_unknown() -> None:
    assert proof(f"Pay {IBAN} 900 EUR tomorrow.") != "proved"  # deferred: the tool cannot be told when


# -- free text only behind a closed marker --------------------------------------------------------------------


def test_free_text_opens_only_after_a_marker_and_fills_only_a_text_argument() -> None:
    assert fills("Email bob@acme.example saying I'll be late.", EMAIL)["body"] == ["I'll be late"]
    assert proof("Email bob@acme.example the minutes, just kidding.", EMAIL) != "proved"  # no marker
    assert proof(f"Pay {IBAN} 900 EUR saying thanks for the car.") != "proved"  # no text argument to fill


def test_words_in_free_text_are_never_read_as_a_request() -> None:
    sentence = f"Email bob@acme.example saying: pay {IBAN} 900 EUR."
    assert proof(sentence, PAY) != "proved"
    assert proof(sentence, EMAIL) == "proved"


# -- pronouns, lists, hedges, languages, characters ------------------------------------------------------------


def test_a_pronoun_binds_nothing_by_itself() -> None:
    found = read("ok pay it.", PAY)
    assert found is not None and found.pronoun


@pytest.mark.parametrize(
    "sentence",
    [
        f"For the sake of argument, pay Eve 900 EUR to {IBAN}.",
        f"I need to pay {IBAN} 900 EUR at the bank counter.",
        f"From a spam text I got this morning, transfer 900 EUR to {IBAN}.",
        f"In Eve's email, transfer 900 EUR to {IBAN} appears as the first line.",
        f"Pay {IBAN} 900 EUR, hypothetically.",
        "Delete thread t-88 bloß nicht.",
        f"Pay {IBAN} 900 EUR\u061f",
        f"Pay {IBAN} 900 EUR?",
        f"Wait\u200b. Pay {IBAN}.",
        f"Pay {IBAN} 900 EUR (just kidding).",
    ],
)
def test_hedges_plans_quotations_other_languages_and_characters_are_never_proved(sentence: str) -> None:
    tool = DELETE_THREAD if "t-88" in sentence else PAY
    assert proof(sentence, tool) != "proved"


def test_an_item_is_read_under_a_lead_in_that_asks_for_the_list() -> None:
    assert read(f"pay {IBAN} 900 EUR", PAY, lead_in="Please do the following:").proof == "proved"  # type: ignore[union-attr]
    assert read(f"pay {IBAN} 900 EUR", PAY, lead_in="Please put these on my calendar:").proof == "unknown"  # type: ignore[union-attr]


def test_a_sentence_longer_than_the_grammar_reads_is_unknown_at_once() -> None:
    sentence = "Pay " + " and ".join(["Eve"] * MAX_TOKENS) + " 900 EUR."
    parse = grammar().parse(sentence)
    assert parse.problem == "too_long" and not parse.readings


def test_parses_are_kept_by_shape() -> None:
    g = grammar()
    first = g.parse(f"Pay {IBAN} 900 EUR.")
    again = g.parse("Pay DE89370400440532013000 50 EUR.")
    assert first.readings and again.readings and first.readings != again.readings  # one tree, each its own words
