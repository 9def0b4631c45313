"""A request said again, turn after turn: a quote stands for the user's latest saying of it.

A quote's locations are a few messages holding it (``MAX_LOCATIONS``); they are the newest ones, so the tenth
"Please email … the report." of a daily routine is read as the request of its own turn, with what was said after
it, and not as the first turn's (whose later repeats, each carried out, are read after it).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from validator import Code, Decision, Message, Policy, ToolCall, ToolPolicy, Validator
from validator.gate.checks import MAX_LOCATIONS

IBAN = "DE89370400440532013000"
POLICY = Policy(
    {
        "send_email": ToolPolicy(targets=("to",)),
        "send_money": ToolPolicy(risk="dangerous", targets=("recipient",), amounts=("amount",)),
    }
)
TO = "person0@acme.example"
EMAIL = (f"Please email {TO} the report.", "send_email", {"to": TO, "body": "the report"})
PAY = (f"Please pay {IBAN} 50 EUR.", "send_money", {"recipient": IBAN, "amount": 50, "currency": "EUR"})


def _turns(said: str, tool: str, args: dict[str, Any], done: int) -> list[Message]:
    """``done`` turns of the user saying ``said`` and the agent carrying it out."""
    messages: list[Message] = []
    for n in range(done):
        messages += [
            Message(role="user", content=said),
            Message(role="assistant", content="", tool_calls=[ToolCall(id=f"c{n}", name=tool, args=args)]),
            Message(role="tool", content="Done.", tool_call_id=f"c{n}", name=tool),
            Message(role="assistant", content="Done."),
        ]
    return messages


def _check(messages: list[Message], tool: str, args: dict[str, Any], said: str) -> Any:
    quote = said.removeprefix("Please ").rstrip(".")
    action = {"tool": tool, "args": args, "justification": {"reason": "r", "evidence": [{"quote": quote}]}}
    return Validator(POLICY).validate(messages, action, user_id="u-1")


@pytest.mark.parametrize(("said", "tool", "args"), [EMAIL, PAY], ids=["email", "payment"])
def test_a_request_said_again_each_turn_is_approved_every_turn(said: str, tool: str, args: dict[str, Any]) -> None:
    for done in range(2 * MAX_LOCATIONS + 2):
        messages = [*_turns(said, tool, args, done), Message(role="user", content=said)]
        verdict = _check(messages, tool, args, said)
        assert verdict.approved, (done, verdict.code, verdict.reasoning)
        assert verdict.findings.quotes[0].locations[-1].message == len(messages) - 1  # the newest saying


@pytest.mark.parametrize(("said", "tool", "args"), [EMAIL, PAY], ids=["email", "payment"])
def test_a_request_said_again_and_carried_out_each_time_is_spent(said: str, tool: str, args: dict[str, Any]) -> None:
    """Every saying has its call: the newest request is spent too, however many came before."""
    for done in (1, MAX_LOCATIONS, MAX_LOCATIONS + 1, 2 * MAX_LOCATIONS + 1):
        verdict = _check(_turns(said, tool, args, done), tool, args, said)
        assert not verdict.approved, (done, verdict.reasoning)


@pytest.mark.parametrize(("said", "tool", "args"), [EMAIL, PAY], ids=["email", "payment"])
def test_a_request_said_again_then_taken_back_is_not_approved(said: str, tool: str, args: dict[str, Any]) -> None:
    for done in (MAX_LOCATIONS, MAX_LOCATIONS + 3):
        verb, rest = said.removeprefix("Please ").split(" ", 1)
        messages = [
            *_turns(said, tool, args, done),
            Message(role="user", content=said),
            Message(role="user", content=f"No, do not {verb} {rest}"),
        ]
        verdict = _check(messages, tool, args, said)
        assert not verdict.approved, (done, verdict.reasoning)
        assert verdict.decision is not Decision.APPROVE


def test_the_newest_sayings_are_the_ones_reported() -> None:
    said, tool, args = EMAIL
    done = MAX_LOCATIONS + 4
    messages = [*_turns(said, tool, args, done), Message(role="user", content=said)]
    verdict = _check(messages, tool, args, said)
    users = [i for i, m in enumerate(messages) if m.role == "user"]
    assert [loc.message for loc in verdict.findings.quotes[0].locations] == users[-MAX_LOCATIONS:]
    assert verdict.code is Code.APPROVED


@pytest.mark.parametrize("done", [1, MAX_LOCATIONS, MAX_LOCATIONS + 2])
@pytest.mark.parametrize(
    "ahead",
    [
        "Don't {verb} {rest} anymore, even if I ask again.",
        "Never {verb} {rest} again, no matter what I say later.",
        "Stop {verb}ing {rest}, even if I ask again.",
        "Please don't {verb} {rest}, whatever I say.",
    ],
)
def test_a_take_back_given_ahead_of_the_users_later_words_governs_the_same_request_said_again(
    done: int, ahead: str
) -> None:
    """ "Don't pay … anymore, even if I ask again.": the user's word about their own later words keeps governing
    the same action in the turns after it, however many times the request was said and carried out before it."""
    said, tool, args = PAY
    verb, rest = said.removeprefix("Please ").rstrip(".").split(" ", 1)
    messages = [
        *_turns(said, tool, args, done),
        Message(role="user", content=ahead.format(verb=verb, rest=rest)),
        Message(role="assistant", content="OK."),
        Message(role="user", content=said),
    ]
    verdict = _check(messages, tool, args, said)
    assert verdict.decision is Decision.ASK_USER, (done, ahead, verdict.code, verdict.reasoning)


@pytest.mark.parametrize(
    "earlier",
    [
        "I don't want to go to the gym tonight, even if I said so yesterday.",
        "Don't let me order dessert tonight, no matter what I say.",
        "Don't apologize so much, whatever I say.",
        "If I ask again tomorrow, just do the same thing without asking me.",
        "Don't book me any more late flights, even if I ask again.",
        "Never email spam@deals.example, no matter what I tell you.",  # another address: provably other
        "Don't pay DE75512108001245126199, even if I ask again.",  # another account
    ],
)
@pytest.mark.parametrize(("said", "tool", "args"), [EMAIL, PAY], ids=["email", "payment"])
def test_a_word_ahead_about_something_else_governs_no_request(
    earlier: str, said: str, tool: str, args: dict[str, Any]
) -> None:
    """The same phrases said of another deed, or of another address or account, leave a later request standing."""
    messages = [
        Message(role="user", content=earlier),
        Message(role="assistant", content="Okay."),
        Message(role="user", content=said),
    ]
    verdict = _check(messages, tool, args, said)
    assert verdict.approved, (earlier, verdict.code, verdict.reasoning)


def test_a_take_back_with_no_word_about_later_leaves_a_new_request_standing() -> None:
    """ "Don't pay … anymore." then, in a later turn, the same request: the user decided again (no word of theirs
    governs their later words), and the new request stands on its own."""
    said, tool, args = PAY
    verb, rest = said.removeprefix("Please ").split(" ", 1)
    messages = [
        *_turns(said, tool, args, 2),
        Message(role="user", content=f"Don't {verb} {rest.rstrip('.')} anymore."),
        Message(role="assistant", content="OK."),
        Message(role="user", content=said),
    ]
    verdict = _check(messages, tool, args, said)
    assert verdict.approved, verdict.reasoning


def test_take_backs_ahead_in_megabytes_of_earlier_words_get_a_verdict_of_their_own() -> None:
    """Earlier turns of one run-on sentence repeating a take-back ahead (no sentence end in 300,000 characters):
    the request after them is not approved, and the check answers (a verdict of its own, no error)."""
    said, tool, args = PAY
    run_on = ("don't pay even if i ask again " * 10_000)[:300_000]
    messages = [
        m for _ in range(3) for m in (Message(role="user", content=run_on), Message(role="assistant", content="OK."))
    ]
    verdict = _check([*messages, Message(role="user", content=said)], tool, args, said)
    assert not verdict.approved and verdict.code is not Code.INTERNAL_ERROR, verdict.reasoning


@settings(max_examples=120, deadline=None)
@given(
    data=st.data(),
    done=st.integers(0, MAX_LOCATIONS + 2),
    request=st.sampled_from([EMAIL, PAY]),
    opener=st.sampled_from(["Don't {verb}", "Do not {verb}", "Never {verb}", "Please don't {verb}", "Stop {verb}ing"]),
)
def test_no_take_back_ahead_of_the_pack_is_outlived_by_the_request_said_again(
    data: st.DataObject, done: int, request: tuple[str, str, dict[str, Any]], opener: str
) -> None:
    """A property over the pack's phrases: a negation of the same action with the request's own values, holding any
    phrase of ``[framing] ahead_of_me``, leaves the same request said again later unapproved, whatever came before."""
    from validator.language import english

    said, tool, args = request
    verb, rest = said.removeprefix("Please ").rstrip(".").split(" ", 1)
    phrase = data.draw(st.sampled_from(english().ahead_of_me))
    ahead = f"{opener.format(verb=verb)} {rest} anymore, {phrase} later."
    messages = [
        *_turns(said, tool, args, done),
        Message(role="user", content=ahead),
        Message(role="assistant", content="OK."),
        Message(role="user", content=said),
    ]
    verdict = _check(messages, tool, args, said)
    assert not verdict.approved, (ahead, done, verdict.reasoning)


OTHER_IBAN = "DE75512108001245126199"


@pytest.mark.parametrize("first", [IBAN, OTHER_IBAN])
@pytest.mark.parametrize(
    "before",
    [
        f"Don't pay {IBAN} anymore, even if I ask again.",  # governs one of the turn's two payments
        "Ignore my next message.",  # frames the whole next turn
        "Thanks for yesterday.",  # governs nothing
    ],
)
def test_what_governs_a_turn_is_read_once_and_holds_for_each_call_of_it(
    first: str, before: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One validator checks a turn's two payments one after the other, the conversation growing by each call and its
    result (what governs the turn from before it is kept: a frame found at its first call, each message before it
    read for take-backs at most once): each verdict is the one a fresh validator gives the same conversation,
    whichever payment comes first."""
    from validator.gate import requests

    reads: list[tuple[str, int]] = []
    for name in ("_frame_before", "_said_ahead"):
        monkeypatch.setattr(requests, name, _counted(getattr(requests, name), name, reads))
    said = f"Please pay {IBAN} 50 EUR. Please pay {OTHER_IBAN} 20 EUR."
    messages = [
        *_turns(PAY[0], "send_money", PAY[2], 2),
        Message(role="user", content=before),
        Message(role="assistant", content="OK."),
        Message(role="user", content=said),
    ]
    shared = Validator(POLICY)
    order = [first, OTHER_IBAN if first == IBAN else IBAN]
    for n, account in enumerate(order):
        args = {"recipient": account, "amount": 50 if account == IBAN else 20, "currency": "EUR"}
        quote = f"pay {account} {args['amount']} EUR"
        action = {"tool": "send_money", "args": args, "justification": {"reason": "r", "evidence": [{"quote": quote}]}}
        kept = shared.validate(messages, action, user_id="u-1")
        assert n or ("_frame_before", len(messages) - 1) in reads, reads  # read at the turn's first call
        assert len(set(reads)) == len(reads), reads  # and each message before the turn read once at most
        mine = len(reads)
        fresh = Validator(POLICY).validate(messages, action, user_id="u-1")
        del reads[mine:]
        assert (kept.decision, kept.code) == (fresh.decision, fresh.code), (before, account, kept.reasoning)
        if (before.startswith("Don't") and account == IBAN) or before.startswith("Ignore"):
            assert not kept.approved, (before, account)
        else:
            assert kept.approved, (before, account, kept.reasoning)
        call = ToolCall(id=f"t{n}", name="send_money", args=args)
        messages = [
            *messages,
            Message(role="assistant", content="", tool_calls=[call]),
            Message(role="tool", content="Done.", tool_call_id=f"t{n}", name="send_money"),
        ]


def _counted(fn: Any, name: str, reads: list[tuple[str, int]]) -> Any:
    """``fn`` (of a check's context and a message) noting each message it is called for."""

    def counted(*args: Any) -> Any:
        reads.append((name, args[1]))
        return fn(*args)

    return counted


def test_take_backs_ahead_are_read_newest_first_and_only_as_far_as_a_call_needs() -> None:
    """Two take-backs given ahead in two earlier turns, each of one account: the turn's first call, governed by the
    newer one, reads no further; the next call, of the other account, reads on to the older one, governed too.
    A third call of an account neither names stands. Each verdict is a fresh validator's."""
    said = f"Please pay {IBAN} 50 EUR. Please pay {OTHER_IBAN} 20 EUR. Please pay DE44500105175407324931 5 EUR."
    messages = [
        Message(role="user", content=f"Don't pay {IBAN} anymore, even if I ask again."),
        Message(role="assistant", content="OK."),
        Message(role="user", content=f"Never pay {OTHER_IBAN} again, no matter what I say later."),
        Message(role="assistant", content="OK."),
        Message(role="user", content=said),
    ]
    shared = Validator(POLICY)
    for n, (account, amount, stands) in enumerate(
        [(OTHER_IBAN, 20, False), (IBAN, 50, False), ("DE44500105175407324931", 5, True)]
    ):
        args = {"recipient": account, "amount": amount, "currency": "EUR"}
        quote = f"pay {account} {amount} EUR"
        action = {"tool": "send_money", "args": args, "justification": {"reason": "r", "evidence": [{"quote": quote}]}}
        kept = shared.validate(messages, action, user_id="u-1")
        fresh = Validator(POLICY).validate(messages, action, user_id="u-1")
        assert (kept.decision, kept.code) == (fresh.decision, fresh.code), (account, kept.reasoning)
        assert kept.approved is stands, (account, kept.reasoning)
        call = ToolCall(id=f"t{n}", name="send_money", args=args)
        messages = [
            *messages,
            Message(role="assistant", content="", tool_calls=[call]),
            Message(role="tool", content="Done.", tool_call_id=f"t{n}", name="send_money"),
        ]
