"""The request reader over the transcript (validator.gate.requests): what names the action, negation, word forms."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
from validator.gate.check_context import CheckContext

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
        user_says("No worries, please pay ACME the invoice."),
        justified("send_money", {"recipient": "ACME"}, "please pay ACME the invoice"),
        policy=POLICY,
    )
    assert v.approved, v.reasoning


def test_intent_word_forms() -> None:
    from validator.gate.reader import ToolSense, read

    invite = ToolSense.of("create_event", ("invite",), arguments=("attendees",))
    transfer = ToolSense.of("send_money", ("transfer",), arguments=("recipient", "amount"), money=("amount",))
    assert read("Please invite the team", invite).proof == "proved"  # type: ignore[union-attr]
    assert read("I'd like the money transferred", transfer).proof == "proved"  # type: ignore[union-attr]
    # a noun is not the verb heading a request: "invitations" does not ask for `invite`
    assert read("Send invitations to the team", invite) is None
    assert read("Review the invoice list", invite) is None


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
    from validator.gate.reader import ToolSense
    from validator.gate.requests import requests_tool

    for text, intent in (("Reply to the sender of that email", "send"), ("Ask the payer", "pay")):
        transcript = Transcript([Message(role="user", content=text)])
        sentence = RequestSentence(0, 0, len(text), text, 0)
        assert requests_tool(ToolSense.of("tool", (intent,)), [sentence], CheckContext(transcript)) is None


_SAID = [
    "Please email bob@acme.example the minutes.",
    "Actually, cancel that.",
    "Never mind.",
    "Never email bob@acme.example.",
    "Do not email anyone today.",
    "Thanks, that looks good.",
    "Email carol@acme.example the minutes instead.",
    "Belay that.",
    "Change of heart, let's keep it.",
]
HARMLESS = {"Thanks, that looks good."}  # the same request again names this one's values: not harmless


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(_SAID), min_size=1, max_size=4))
def test_whatever_the_user_says_after_a_request_that_is_not_harmless_leaves_it_unproved(later: list[str]) -> None:
    from validator.gate.reader import ToolSense
    from validator.gate.requests import read_request
    from validator.text.sentences import request_sentences

    request = "Please email bob@acme.example the minutes."
    transcript = Transcript([Message(role="user", content=request), *(Message(role="user", content=t) for t in later)])
    sense = ToolSense.of("send_email", ("email",), arguments=("to",))
    cited = [(0, "email bob@acme.example the minutes", [0])]
    found = read_request(sense, request_sentences(transcript, cited), CheckContext(transcript))
    harmless = all(t in HARMLESS for t in later)
    assert found.requested == harmless, (later, found)
