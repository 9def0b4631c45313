"""The request reader over the transcript (validator.gate.requests): what names the action, negation, word forms."""

from __future__ import annotations

import pytest

from tests.conftest import POLICY, justified, user_says
from validator import (
    Code,
    Decision,
    Message,
    Policy,
    ToolPolicy,
    Transcript,
    Validator,
    validate,
)

PAY = Policy({"send_money": ToolPolicy(risk="dangerous", targets=("recipient",), intents=("pay",))})


def test_words_that_do_not_name_the_action_are_not_a_request() -> None:
    policy = Policy({"unlock_door": ToolPolicy(risk="dangerous")})
    v = validate(
        user_says("Fetch the laptop's reviews."),
        justified("unlock_door", {}, "Fetch the laptop's reviews."),
        policy=policy,
    )
    # not named: unknown (a paraphrase is not something code can rule out), so a dangerous action goes to the user
    assert (v.decision, v.code) == (Decision.ASK_USER, Code.ACTION_NOT_REQUESTED)
    assert v.findings.intent is not None and v.findings.intent.intents == ("unlock",)
    assert "none of the 1 cited sentence(s) of the user names this action" in v.reasoning


@pytest.mark.parametrize(
    ("user", "quote"),
    [
        ("Don't pay the invoice from ACME.", "pay the invoice from ACME"),
        ("Please never pay the invoice from ACME", "pay the invoice from ACME"),
        ("I do not want you to pay the invoice from ACME.", "pay the invoice from ACME"),
    ],
)
def test_a_negated_request_is_not_a_request(user: str, quote: str) -> None:
    v = validate(user_says(user), justified("send_money", {"recipient": "ACME"}, quote), policy=POLICY)
    assert (v.decision, v.code) == (Decision.BLOCK, Code.ACTION_NOT_REQUESTED)
    assert v.findings.intent is not None and v.findings.intent.negated
    assert "only under a negation" in v.reasoning


def test_negation_in_an_earlier_clause_does_not_count() -> None:
    v = validate(
        user_says("No worries, please pay the invoice from ACME."),
        justified("send_money", {"recipient": "ACME"}, "please pay the invoice from ACME"),
        policy=POLICY,
    )
    assert v.approved, v.reasoning


def test_intent_word_forms() -> None:
    policy = Policy({"create_event": ToolPolicy(intents=("invite",)), "send_money": ToolPolicy(intents=("transfer",))})
    assert validate(
        user_says("Please invite the team"),
        justified("create_event", {}, "Please invite the team"),
        policy=policy,
    ).approved
    assert validate(
        user_says("I'd like the money transferred"), justified("send_money", {}, "the money transferred"), policy=policy
    ).approved
    # a noun is not the verb heading a request: "invitations" does not ask for `invite`
    assert not validate(
        user_says("Send invitations to the team"),
        justified("create_event", {}, "Send invitations to the team"),
        policy=policy,
    ).approved
    assert not validate(
        user_says("Review the invoice list"), justified("create_event", {}, "Review the invoice list"), policy=policy
    ).approved


def test_negations_across_commas_and_long_clauses() -> None:
    for user in (
        "Do not, under any circumstances, pay Bob.",
        "I really do not want you to ever pay Bob.",
        "Make no payment to Bob.",
    ):
        v = Validator(PAY).validate(
            [{"role": "user", "content": user}],
            {
                "tool": "send_money",
                "args": {"recipient": "Bob"},
                "justification": {
                    "reason": "r",
                    "evidence": [{"quote": "pay Bob" if "pay Bob" in user else "payment to Bob"}],
                },
            },
        )
        assert not v.approved, user


def test_sender_and_payer_are_not_intents_of_send_and_pay() -> None:
    from validator.findings import RequestSentence
    from validator.gate.requests import requests_tool

    for text, intent in (("Reply to the sender of that email", "send"), ("Ask the payer", "pay")):
        transcript = Transcript([Message(role="user", content=text)])
        sentence = RequestSentence(0, 0, len(text), text, 0)
        assert requests_tool([intent], [sentence], transcript) is None
