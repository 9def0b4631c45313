"""The request reader over the transcript (validator.gate.requests): what names the action, negation, word forms."""

from __future__ import annotations

from typing import Any

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


_SAID = [
    "Please email bob@acme.example the minutes.",
    "Actually, cancel that.",
    "Never mind.",
    "Never email bob@acme.example.",
    "Do not email anyone today.",
    "Thanks, that looks good.",
    "Email carol@acme.example the minutes instead.",
]


def _later_whole(transcript: Transcript, sentence: Any, intents: Any) -> Any:
    """The reader's definition before it scanned from the request on: every take-back of the whole
    transcript found first, then those after the request kept (the reference the one pass must equal)."""
    from validator.gate.reader import Reading, read, sentences, takes_back
    from validator.gate.requests import _other_values
    from validator.gate.sentences import own_words

    retractions = []
    for i, m in enumerate(transcript.messages):
        if m.role == "user":
            own = own_words(transcript, i)
            retractions += [
                (i, x.start, m.content[x.start : x.end]) for x in sentences(own) if takes_back(own[x.start : x.end])
            ]
    for i in range(sentence.message, len(transcript.messages)):
        if transcript.messages[i].role != "user":
            continue
        own = own_words(transcript, i)
        for x in sentences(own):
            if i == sentence.message and x.start < sentence.end:
                continue
            text = own[x.start : x.end]
            if _other_values(text, sentence.text):
                continue
            for intent in intents:
                later = read(text, intent)
                if later is not None and later.proof == "disproved":
                    return Reading("disproved", "negated", transcript.messages[i].content[x.start : x.end])
    for message, position, words in retractions:
        if message > sentence.message or (message == sentence.message and position >= sentence.end):
            return Reading("unknown", "retracted", words)
    return None


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.booleans(), st.lists(st.sampled_from(_SAID), min_size=1, max_size=3)), min_size=1, max_size=8)
)
def test_what_undoes_a_request_is_read_from_the_request_on_as_over_the_whole_transcript(
    turns: list[tuple[bool, list[str]]],
) -> None:
    from validator.gate.requests import _later
    from validator.gate.sentences import request_sentences
    from validator.rules import ALL_ON

    messages = [Message(role="user" if user else "assistant", content=" ".join(said)) for user, said in turns]
    transcript = Transcript(messages)
    quote = "email bob@acme.example the minutes"
    cited = [(0, quote, [i for i, m in enumerate(messages) if m.role == "user" and quote in m.content.lower()])]
    for sentence in request_sentences(transcript, cited):
        assert _later(transcript, sentence, ("email",), ALL_ON) == _later_whole(transcript, sentence, ("email",))
