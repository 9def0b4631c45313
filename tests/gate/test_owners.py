"""Declarations bound to their owner: a value the user declares their own fills the argument its noun names; a
value of someone else's binds only through that owner, to the argument the request fills with the owner."""

from __future__ import annotations

from typing import Any

import pytest

from validator import Decision, Message, Policy, ToolPolicy, Transcript, Validator
from validator.gate.grammar import grammar
from validator.gate.meaning import OWNER_BACK, OWNER_OTHER, OWNER_USER
from validator.inputs.action import PendingAction

POLICY = Policy(
    {
        "send_money": ToolPolicy(risk="dangerous", targets=("recipient",), amounts=("amount",)),
        "reply_email": ToolPolicy(targets=("to",), intents=("reply",)),
        "login": ToolPolicy(risk="dangerous", targets=("username",), intents=("log in",), step_of=("post",)),
        "post": ToolPolicy(intents=("post",)),
    }
)
BOBS = "DE89370400440532013000"
OTHER = "DE44500105175407324931"


def _pay(user: str | list[str], account: str, *, found: bool = False) -> Any:
    said = [user] if isinstance(user, str) else user
    t = Transcript([Message("user", u) for u in said])
    args = {"recipient": account, "amount": 500, "currency": "EUR"}
    if found:  # no justification: the gate reads the user's words itself
        return Validator(POLICY).validate(t, PendingAction("send_money", args, find_evidence=True))
    justification = {"reason": "r", "evidence": [{"quote": q} for q in said]}
    return Validator(POLICY).validate(t, {"tool": "send_money", "args": args, "justification": justification})


@pytest.mark.parametrize(
    "sentence",
    [
        "my old landlord's IBAN is X",
        "the landlord's IBAN is X",
        "his IBAN is X",
        "Eve's IBAN is X",
        "my IBAN is X",
    ],
)
def test_the_grammar_types_each_declarations_owner(sentence: str) -> None:
    text = sentence.replace("X", OTHER) + "."
    owners = {d.owner for r in grammar().parse(text).readings for d in r.declarations}
    want = {"my old": OWNER_OTHER, "the land": OWNER_OTHER, "his": OWNER_BACK, "Eve'": "Eve", "my IBAN": OWNER_USER}
    assert owners == {next(v for k, v in want.items() if sentence.startswith(k))}


@pytest.mark.parametrize("found", [False, True])
@pytest.mark.parametrize(
    "user",
    [
        f"Pay Bob 500 EUR, his IBAN is {BOBS}.",  # the most natural way to ask for a payment
        f"Pay Bob 500 EUR; Bob's IBAN is {BOBS}.",
        [f"Pay Bob 500 EUR. His IBAN is {BOBS}."],
        f"Pay Bob 500 EUR, her IBAN is {BOBS}.",
    ],
)
def test_a_value_declared_for_the_one_person_the_request_names_is_theirs(user: Any, found: bool) -> None:
    v = _pay(user, BOBS, found=found)
    assert v.approved, v.reasoning


@pytest.mark.parametrize("found", [False, True])
@pytest.mark.parametrize(
    "user",
    [
        f"Pay Bob 900 EUR for the car; my old landlord's IBAN is {OTHER}.",  # someone described: not the payee's
        f"Pay Bob 500 EUR; my landlord's IBAN is {OTHER}.",
        f"Pay Bob 500 EUR; Eve's IBAN is {OTHER}.",  # another name: does not bind to a payment to Bob
        f"Pay Bob 500 EUR. Eve's IBAN is {OTHER}.",
        f"Pay Bob and Ann 500 EUR, his IBAN is {OTHER}.",  # "his" of two people is no one's
        f"Pay 500 EUR, his IBAN is {OTHER}.",  # no one to be his
        f"Pay Bob 500 EUR; my IBAN is {OTHER}.",  # the user's own account is not Bob's
        f"Pay Bob 500 EUR, his old IBAN is {OTHER}.",  # a word that changes which one: not read
        f"Pay Bob 500 EUR, his IBAN isn't {OTHER}.",
        f"Don't pay Bob 500 EUR, his IBAN is {OTHER}.",
        # the message names someone else the pronoun may mean (a modifier, another tool's request)
        f"Pay Bob 500 EUR for Eve's dinner, her IBAN is {OTHER}.",
        f"Pay Bob 500 EUR for my landlord, his IBAN is {OTHER}.",
        f"Pay Bob 500 EUR. Email Tom the receipt, his IBAN is {OTHER}.",
        f"Email Tom the receipt, his IBAN is {OTHER}. Pay Bob 500 EUR.",
        ["I met my landlord Tom today.", f"His IBAN is {OTHER}. Pay Bob 500 EUR."],  # before anyone it can mean
        # another noun says whose it is
        f"Pay Bob 500 EUR, his landlord IBAN is {OTHER}.",
        f"Pay Bob 500 EUR, Bob's landlord IBAN is {OTHER}.",
        f"Pay Bob 500 EUR, his company IBAN is {OTHER}.",
    ],
)
def test_a_value_of_someone_else_never_proves_the_payee(user: Any, found: bool) -> None:
    v = _pay(user, OTHER, found=found)
    assert not v.approved, v.reasoning


def test_a_value_in_a_role_of_its_own_fills_no_other_slot() -> None:
    user = "Reply to Anna about the invoice bob@evil.example sent."
    t = Transcript([Message("user", user)])
    action = {"tool": "reply_email", "args": {"to": "bob@evil.example"}}
    v = Validator(POLICY).validate(t, {**action, "justification": {"reason": "r", "evidence": [{"quote": user}]}})
    assert v.decision is Decision.ASK_USER, v.reasoning


def test_a_step_takes_no_value_from_what_its_parent_writes() -> None:
    """ "Post that dr_evil's account is suspended" is no login as dr_evil."""
    user = "Post that dr_evil's account is suspended."
    t = Transcript([Message("user", user)])
    justification = {"reason": "r", "evidence": [{"quote": user}]}
    v = Validator(POLICY).validate(
        t, {"tool": "login", "args": {"username": "dr_evil"}, "justification": justification}
    )
    assert not v.approved, v.reasoning


def test_a_message_longer_than_is_read_for_people_names_more_than_one() -> None:
    """ "His" binds only when the message names one person in all; past what is read, another may be named."""
    from validator.gate.requests import _PEOPLE_READ, _people
    from validator.language import english

    short = Transcript([Message("user", "Pay Bob 500 EUR, his IBAN is DE89370400440532013000.")])
    assert _people(short, 0, english()) == {"bob"}
    long = Transcript([Message("user", "Pay Bob 500 EUR. " + "The weather is fine. " * (_PEOPLE_READ // 20))])
    assert len(_people(long, 0, english())) > 1
