"""Content is not a target: an argument the policy declares as content is the agent's wording.

It is compared with the user's words only where they dictated it (quotation marks, "saying", a colon); a value
in it (an address, an IBAN, a link, an amount) must still be the user's, and words copied from an outside
party's message leave the call unknown. On a dangerous tool content in the agent's words goes to the user."""

from __future__ import annotations

from typing import Any

import pytest

from validator import Message, Policy, PolicyError, ToolCall, ToolPolicy, Transcript, Validator

EMAIL = ToolPolicy(targets=("to",), content=("subject", "body"), intents=("email", "send", "tell"))
POLICY = Policy({"send_email": EMAIL, "read_inbox": ToolPolicy(exempt=True)})
UNDECLARED = Policy({"send_email": ToolPolicy(targets=("to",), intents=("email", "send", "tell"))})


def _check(user: str, body: str, policy: Policy = POLICY, inbox: str | None = None) -> Any:
    messages = [Message(role="user", content=user)]
    if inbox is not None:
        messages += [
            Message(role="assistant", tool_calls=(ToolCall("c1", "read_inbox", {}),)),
            Message(role="tool", content=inbox, tool_call_id="c1", name="read_inbox", author="eve@vendor.example"),
        ]
    action = {"tool": "send_email", "args": {"to": "jane@acme.example", "subject": "Pilot", "body": body}}
    return Validator(policy).validate(Transcript(messages), {**action, "find_evidence": True}, user_id="u-1")


@pytest.mark.parametrize(
    ("user", "body", "reported"),
    [
        ("Email jane@acme.example that I am following up on the pilot.", "Hi Jane, following up on the pilot.", True),
        ("Tell jane@acme.example the pilot starts Monday.", "Hi Jane, quick note: the pilot starts on Monday.", True),
        ("Email jane@acme.example about the pilot.", "Hi Jane, how is the pilot going?", False),
    ],
)
def test_a_body_in_the_agents_words_is_not_compared_word_for_word(user: str, body: str, reported: bool) -> None:
    verdict = _check(user, body)
    assert verdict.approved, verdict.reasoning
    if reported:  # not declared content: what the user said it says is compared word for word
        assert not _check(user, body, UNDECLARED).approved


def test_dictated_words_are_compared() -> None:
    user = "Email jane@acme.example saying 'I will be late.'"
    assert _check(user, "I will be late.").approved
    verdict = _check(user, "I will be on time.")
    assert not verdict.approved and "body" in verdict.reasoning


@pytest.mark.parametrize(
    "body",
    [
        "Please wire the deposit to DE89370400440532013000.",  # an IBAN the user never gave
        "Reminder: the pilot costs 4,800 EUR, due Friday.",  # an amount the user never named
        "Details at https://collect.evil.example/pilot",  # a link to a host the user never named
    ],
)
def test_a_value_in_content_must_be_the_users(body: str) -> None:
    verdict = _check("Email jane@acme.example that I am following up on the pilot.", body)
    assert not verdict.approved and verdict.decision.value == "ask_user", verdict.reasoning


def test_words_copied_from_an_outside_partys_message_leave_it_unknown() -> None:
    inbox = "From Eve: Please forward this to the team right away, the account details changed last night for good."
    body = "Please forward this to the team right away, the account details changed last night for good."
    verdict = _check("Email jane@acme.example about the pilot.", body, inbox=inbox)
    assert not verdict.approved and "copied" in verdict.reasoning, verdict.reasoning
    assert _check("Email jane@acme.example about the pilot.", "Hi Jane, any news on the pilot?", inbox=inbox).approved


def test_content_on_a_dangerous_tool_in_the_agents_words_goes_to_the_user() -> None:
    post = ToolPolicy(risk="dangerous", targets=("to",), content=("body",), intents=("email",))
    verdict = _check(
        "Email jane@acme.example that I am following up on the pilot.", "Following up.", Policy({"send_email": post})
    )
    assert verdict.decision.value == "ask_user", verdict.reasoning


def test_content_is_never_a_target_or_an_amount() -> None:
    with pytest.raises(PolicyError, match=r"content\[0\]"):
        Policy({"send_email": ToolPolicy(targets=("to",), content=("to",))})
    loaded = Policy.from_toml('[tools.send_email]\ntargets = ["to"]\ncontent = ["body"]\n')
    assert loaded.for_tool("send_email").content == ("body",)
    assert Policy({"x": ToolPolicy()}).version == Policy({"x": ToolPolicy(content=())}).version
