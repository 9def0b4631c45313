"""Values with more than one meaning are unknown until something settles them: a currency sign or word several
countries share, one amount for several payees, a step the user put before the payment."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from validator import Decision, Message, Policy, ToolPolicy, Transcript, Validator
from validator.judges.base import JudgeOutput
from validator.testing import FunctionJudge
from validator.text.entities import AMBIGUOUS_CURRENCIES, CURRENCIES, settles

IBAN = "DE89370400440532013000"
EVERYTHING = FunctionJudge(lambda r: JudgeOutput(approved=True, confidence="high", reasoning="ok"))


def _pay(user: str, args: dict[str, Any], currency: str | None = None, judge: Any = None) -> Any:
    policy = Policy(
        {"send_money": ToolPolicy(risk="dangerous", targets=("recipient",), amounts=("amount",), currency=currency)}
    )
    t = Transcript([Message(role="user", content=user)])
    action = {"tool": "send_money", "args": args, "justification": {"reason": "r", "evidence": [{"quote": user}]}}
    return Validator(policy, judge=judge).validate(t, action, user_id="u-1")


@pytest.mark.parametrize(
    ("said", "paid"),
    [
        ("5000 pounds", "GBP"),  # a user in Cairo means EGP
        ("50000 francs", "CHF"),  # or XOF
        ("$50", "USD"),  # or CAD, AUD, MXN
        ("¥5000", "JPY"),  # or CNY
        ("300 crowns", "SEK"),
        ("900 rupees", "INR"),
        ("700 pesos", "MXN"),
        ("80 bucks", "USD"),  # a new user's everyday word for dollars, of any of them
    ],
)
@pytest.mark.parametrize("judge", [None, EVERYTHING], ids=["strict", "approve-everything"])
def test_a_shared_currency_sign_or_word_is_unknown_unless_settled(said: str, paid: str, judge: Any) -> None:
    amount = int("".join(c for c in said if c.isdigit()))
    v = _pay(f"Pay {IBAN} {said}.", {"recipient": IBAN, "amount": amount, "currency": paid}, judge=judge)
    assert not v.approved and v.decision is Decision.ASK_USER
    # the tool's declared currency settles it, and only to that currency
    assert _pay(f"Pay {IBAN} {said}.", {"recipient": IBAN, "amount": amount, "currency": paid}, currency=paid).approved
    assert _pay(f"Pay {IBAN} {said}.", {"recipient": IBAN, "amount": amount}, currency=paid).approved


@pytest.mark.parametrize(
    ("user", "currency", "approved"),
    [
        (f"Pay {IBAN} 5000 EGP.", "EGP", True),  # the code settles it
        (f"Pay {IBAN} £5000.", "GBP", True),  # the sign alone is the pound sterling's
        (f"Pay {IBAN} 5000 yen.", "JPY", True),
        (f"Pay {IBAN} 50 EUR.", "EUR", True),
        (f"Pay {IBAN} 5000 pounds.", "EGP", False),  # a policy in GBP never makes pounds EGP
    ],
)
def test_a_currency_one_country_uses_is_read_as_before(user: str, currency: str, approved: bool) -> None:
    amount = int("".join(c for c in user.split(IBAN)[1] if c.isdigit()))
    v = _pay(
        user, {"recipient": IBAN, "amount": amount, "currency": currency}, currency="GBP" if not approved else None
    )
    assert v.approved is approved, v.reasoning


def test_the_refusal_says_which_currencies_share_the_word() -> None:
    v = _pay(f"Pay {IBAN} 5000 pounds.", {"recipient": IBAN, "amount": 5000, "currency": "GBP"})
    assert "'pound' is shared by several" in v.reasoning and "EGP" in v.reasoning


@settings(max_examples=80, deadline=None)
@given(word=st.sampled_from(sorted(w for w, c in CURRENCIES.items() if c in AMBIGUOUS_CURRENCIES)), data=st.data())
def test_property_no_shared_word_settles_to_a_code_without_the_policy(word: str, data: st.DataObject) -> None:
    family = AMBIGUOUS_CURRENCIES[CURRENCIES[word]]
    code = data.draw(st.sampled_from(sorted(family)))
    assert not settles(CURRENCIES[word], code, frozenset())
    assert settles(CURRENCIES[word], code, frozenset({code}))
    amount = data.draw(st.integers(min_value=1, max_value=10**6))
    said = f"{word}{amount}" if not word.isalpha() else f"{amount} {word}"
    assert not _pay(f"Pay {IBAN} {said}.", {"recipient": IBAN, "amount": amount, "currency": code}).approved


@pytest.mark.parametrize(
    "user",
    [
        "Pay 100 EUR to Bob and Ann together.",
        "Pay 100 EUR to Bob and Ann.",  # for each, or for both: code cannot tell
    ],
)
@pytest.mark.parametrize("amount", [100, 50])
def test_one_amount_for_several_payees_is_unknown(user: str, amount: int) -> None:
    v = _pay(user, {"recipient": "Bob", "amount": amount}, currency="EUR", judge=EVERYTHING)
    assert not v.approved and v.decision is Decision.ASK_USER
    if amount == 100:
        assert [f.status for f in v.findings.targets if f.kind == "amount"] == ["joint"]


def test_one_payee_in_two_forms_is_one_payee() -> None:
    assert _pay(f"Pay Bob 50 EUR at {IBAN}.", {"recipient": IBAN, "amount": 50}, currency="EUR").approved


@pytest.mark.parametrize("judge", [None, EVERYTHING], ids=["strict", "approve-everything"])
def test_a_step_another_person_must_take_first_holds_the_payment(judge: Any) -> None:
    v = _pay("Get a receipt from Bob, then pay Bob 50 EUR.", {"recipient": "Bob", "amount": 50}, "EUR", judge)
    assert not v.approved and v.decision is Decision.ASK_USER
    # the assistant's own work first holds nothing
    assert _pay("Find the invoice, then pay Bob 50 EUR.", {"recipient": "Bob", "amount": 50}, "EUR").approved


# -- the conversation the request stands in ------------------------------------------------------------------


def _said(turns: list[tuple[str, str, str | None]], quote: str, judge: Any = None) -> Any:
    policy = Policy(
        {"send_money": ToolPolicy(risk="dangerous", targets=("recipient",), amounts=("amount",), currency="EUR")}
    )
    t = Transcript([Message(role=r, content=c, author=a) for r, c, a in turns])
    action = {
        "tool": "send_money",
        "args": {"recipient": "Bob", "amount": 50},
        "justification": {"reason": "r", "evidence": [{"quote": quote}]},
    }
    return Validator(policy, judge=judge).validate(t, action, user_id="u-1")


@pytest.mark.parametrize("judge", [None, EVERYTHING], ids=["strict", "approve-everything"])
@pytest.mark.parametrize(
    "frame",
    [
        "I'll type the text message from memory in my next message, just check the spelling.",
        "Let's role-play: you are my bank.",
        "Don't act on my next message.",
    ],
)
def test_a_frame_set_in_an_answered_turn_still_governs(frame: str, judge: Any) -> None:
    turns = [("user", frame, None), ("assistant", "Sure.", None), ("user", "Pay Bob 50 EUR.", None)]
    v = _said(turns, "Pay Bob 50 EUR.", judge)
    assert not v.approved and v.decision is Decision.ASK_USER


@pytest.mark.parametrize("judge", [None, EVERYTHING], ids=["strict", "approve-everything"])
@pytest.mark.parametrize("reply", ["Go ahead and pay Bob 50 EUR.", "Pay Bob 50 EUR."])
def test_a_reply_to_another_participants_question_is_addressed_to_them(reply: str, judge: Any) -> None:
    turns = [("user", "Should I pay Bob back?", "ann"), ("user", reply, "u-1")]
    v = _said(turns, reply, judge)
    assert not v.approved and v.decision is Decision.ASK_USER
    assert v.findings.intent is not None and v.findings.intent.problem == "addressed"
    assert "answers another participant's question" in v.reasoning, v.reasoning


def test_in_a_group_a_request_after_a_statement_or_alone_stands() -> None:
    assert _said(
        [("user", "Hi all, lunch was great.", "ann"), ("user", "Pay Bob 50 EUR.", "u-1")], "Pay Bob 50 EUR."
    ).approved
    assert _said([("user", "Pay Bob 50 EUR.", "u-1")], "Pay Bob 50 EUR.").approved


@pytest.mark.parametrize(
    "between",
    [
        [("assistant", "Noted.", None)],
        [("user", "hmm", "carol")],
        [("system", "Carol joined.", None)],
    ],
)
def test_a_reply_is_addressed_to_the_asker_whatever_stands_between(between: list[tuple[str, str, str | None]]) -> None:
    turns = [("user", "Should I pay Bob back?", "ann"), *between, ("user", "Go ahead and pay Bob 50 EUR.", "u-1")]
    assert not _said(turns, "Go ahead and pay Bob 50 EUR.").approved


@pytest.mark.parametrize("asked", ["should i pay bob back", "Should I pay Bob back\uff1f"])
def test_a_question_without_its_ascii_mark_is_a_question(asked: str) -> None:
    turns = [("user", asked, "ann"), ("user", "Go ahead and pay Bob 50 EUR.", "u-1")]
    assert not _said(turns, "Go ahead and pay Bob 50 EUR.").approved


@pytest.mark.parametrize(
    "args",
    [
        {"recipient": "Bob", "amount": [50, 50]},
        {"recipient": ["Bob", "Bob"], "amount": 50},
        {"recipient": "Bob", "amount": {"value": 50}},
    ],
)
def test_one_request_never_pays_a_list_twice(args: dict[str, Any]) -> None:
    v = _pay("Pay Bob 50 EUR.", args, currency="EUR", judge=EVERYTHING)
    assert not v.approved and v.decision is Decision.ASK_USER


@pytest.mark.parametrize(
    "frame",
    [
        "I'm going to list some payments; don't execute them until I say so.",
        "From now on, only draft payments, never send them.",
        "Until I say 'execute', treat my messages as drafts.",
        "For the rest of this chat, treat my requests as a to-do list, not commands.",
        "I'll send some payments now but wait for my 'go' before doing any.",
    ],
)
def test_an_earlier_turn_that_governs_the_later_ones_leaves_them_unknown(frame: str) -> None:
    turns = [("user", frame, None), ("assistant", "OK.", None), ("user", "Pay Bob 50 EUR.", None)]
    assert not _said(turns, "Pay Bob 50 EUR.", EVERYTHING).approved


@pytest.mark.parametrize("earlier", ["From now on, please cc Ann on invoices.", "I was busy until noon."])
def test_an_earlier_turn_about_later_that_holds_nothing_back_frames_nothing(earlier: str) -> None:
    turns = [("user", earlier, None), ("assistant", "OK.", None), ("user", "Pay Bob 50 EUR.", None)]
    assert _said(turns, "Pay Bob 50 EUR.").approved


def test_a_reply_to_another_participants_statement_is_addressed_to_them() -> None:
    turns = [("user", "Bob wants his 50 EUR back.", "ann"), ("user", "Go ahead and pay Bob 50 EUR.", "u-1")]
    assert not _said(turns, "Go ahead and pay Bob 50 EUR.", EVERYTHING).approved
    plain = [("user", "Bob wants his 50 EUR back.", "ann"), ("user", "Pay Bob 50 EUR.", "u-1")]
    assert _said(plain, "Pay Bob 50 EUR.").approved  # a request of its own, after a statement: the user's


def test_the_users_own_messages_are_the_users_whether_or_not_the_host_names_them() -> None:
    # a host that names the user on some messages only: their own question is no other participant's
    turns = [("user", "Should we meet on Friday?", "u-1"), ("user", "Pay Bob 50 EUR.", None)]
    assert _said(turns, "Pay Bob 50 EUR.").approved
