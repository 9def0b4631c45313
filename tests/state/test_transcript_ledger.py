"""The transcript is the ledger: a request the transcript shows carried out is spent, with no store at all."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from validator import Code, Decision, Message, Policy, ToolPolicy, Transcript, Validator
from validator.exceptions import InputError
from validator.inputs.checkinput import parse_transcript
from validator.inputs.transcript import ToolCall

POLICY = Policy(
    {
        "send_money": ToolPolicy(risk="dangerous", targets=("recipient",), amounts=("amount",)),
        "delete_file": ToolPolicy(risk="dangerous", targets=("path",)),
    }
)
IBAN = "DE44500105175407324931"
OTHER = "DE89370400440532013000"
RENT = {"recipient": IBAN, "amount": 900, "currency": "EUR"}
FEE = {"recipient": OTHER, "amount": 50, "currency": "EUR"}
ASK = "Pay 900 EUR to DE44500105175407324931."


def _ran(call: str, args: dict[str, Any], result: str = "Transfer executed", *, error: bool = False) -> list[Message]:
    return [
        Message("assistant", "", (ToolCall(call, "send_money", args),)),
        Message("tool", result, (), call, "send_money", is_error=error),
    ]


def _check(messages: list[Message], args: dict[str, Any], quote: str, call: str = "c9") -> Any:
    action = {
        "tool": "send_money",
        "args": args,
        "call_id": call,
        "justification": {"reason": "The user asked.", "evidence": [{"quote": quote}]},
    }
    # a fresh validator each time, its ledger empty: the CLI, a stateless service
    return Validator(POLICY).validate(Transcript(messages), action, user_id="u-1")


def test_a_payment_the_transcript_shows_done_is_not_approved_again() -> None:
    assert _check([Message("user", ASK)], RENT, ASK).approved
    verdict = _check([Message("user", ASK), *_ran("c1", RENT), Message("user", "Thanks!")], RENT, ASK)
    assert verdict.decision == Decision.ASK_USER
    assert verdict.code == Code.REQUEST_ALREADY_USED
    assert "call c1" in verdict.reasoning


def test_the_same_values_however_spelled_are_the_same_action() -> None:
    spelled = {"recipient": IBAN.lower(), "amount": "900.00", "currency": "eur", "justification": "x"}
    verdict = _check([Message("user", ASK), *_ran("c1", spelled)], RENT, ASK)
    assert verdict.code == Code.REQUEST_ALREADY_USED


def test_a_call_the_validator_kept_from_running_did_not_run() -> None:
    refused = _ran("c1", RENT, "Action `send_money` was not run (LOW_CONFIDENCE): unsure.", error=True)
    assert _check([Message("user", ASK), *refused], RENT, ASK).approved
    hook = _ran("c1", RENT, "The action validator could not read this call, so it does not run: x", error=True)
    assert _check([Message("user", ASK), *hook], RENT, ASK).approved


def test_a_call_in_flight_counts_as_done() -> None:
    unanswered = [Message("user", ASK), Message("assistant", "", (ToolCall("c1", "send_money", RENT),))]
    verdict = _check(unanswered, RENT, ASK)  # it may be running now: another one pays twice
    assert verdict.code == Code.REQUEST_ALREADY_USED and "call c1" in verdict.reasoning
    assert _check(unanswered, RENT, ASK, call="c1").approved  # its own check, again


def test_the_call_being_checked_without_an_id_is_not_another() -> None:
    pending = [Message("user", ASK), Message("assistant", "", (ToolCall("c1", "send_money", RENT),))]
    action = {
        "tool": "send_money",
        "args": RENT,
        "justification": {"reason": "The user asked.", "evidence": [{"quote": ASK}]},
    }
    assert Validator(POLICY).validate(Transcript(pending), action, user_id="u-1").approved


@pytest.mark.parametrize(
    "result",
    [
        "Error: timeout, but the transfer went through",
        "ERROR 504 - payment processed",
        "Failed to notify; transfer completed",
        "Transfer settled",
        "Insufficient funds",  # the tool's words: whether it ran, code cannot tell
        '{"transferCompleted": true}',
    ],
)
def test_an_error_result_counts_as_done_whatever_it_says(result: str) -> None:
    verdict = _check([Message("user", ASK), *_ran("c1", RENT, result, error=True)], RENT, ASK)
    assert verdict.code == Code.REQUEST_ALREADY_USED


def test_the_validators_own_refusal_did_not_run() -> None:
    refused = "Action `send_money` was not run (TARGET_NOT_GROUNDED): the payment was not sent; confirm the IBAN."
    assert _check([Message("user", ASK), *_ran("c1", RENT, refused, error=True)], RENT, ASK).approved


def test_the_same_payee_in_any_form_the_request_binds_is_the_same_action() -> None:
    ask = "Pay Bob 500 EUR, his IBAN is DE89370400440532013000."
    by_name = {"recipient": "Bob", "amount": 500, "currency": "EUR"}
    by_iban = {"recipient": OTHER, "amount": 500, "currency": "EUR"}
    assert _check([Message("user", ask)], by_iban, ask).approved
    assert _check([Message("user", ask), *_ran("c1", by_name)], by_iban, ask).code == Code.REQUEST_ALREADY_USED
    assert _check([Message("user", ask), *_ran("c1", by_iban)], by_name, ask).code == Code.REQUEST_ALREADY_USED


@pytest.mark.parametrize("ran_first", [True, False])
def test_a_retyped_correction_leaves_the_second_request_to_the_user(ran_first: bool) -> None:
    first = "Transfer 900 EUR to DE44500105175407324931 for the rent."
    second = "Transfer 950 EUR to DE44500105175407324931 for the rent."
    between = _ran("c1", RENT) if ran_first else [Message("assistant", "On it.")]
    messages = [Message("user", first), *between, Message("user", second)]
    verdict = _check(messages, {**RENT, "amount": 950}, second)
    assert verdict.decision == Decision.ASK_USER and "corrects that one or adds a second" in verdict.reasoning
    assert not _check(messages, RENT, first).approved  # the first, after a correction: unknown too
    again = "Also transfer 950 EUR to DE44500105175407324931."
    assert _check([Message("user", first), *between, Message("user", again)], {**RENT, "amount": 950}, again).approved


def test_a_new_request_after_the_call_is_a_new_request() -> None:
    again = "Pay 900 EUR to DE44500105175407324931 again, please."
    messages = [Message("user", ASK), *_ran("c1", RENT), Message("user", again)]
    assert _check(messages, RENT, again).approved
    assert not _check(messages, RENT, ASK).approved  # the old one, restated later, is no proof on its own


def test_a_request_for_two_payments_approves_each_once() -> None:
    both = "Pay 900 EUR to DE44500105175407324931 and pay 50 EUR to DE89370400440532013000."
    messages = [Message("user", both), *_ran("c1", RENT)]
    assert _check(messages, FEE, both).approved
    assert _check(messages, RENT, both).code == Code.REQUEST_ALREADY_USED
    done = [*messages, *_ran("c2", FEE)]
    assert _check(done, FEE, both).code == Code.REQUEST_ALREADY_USED


def test_a_call_of_the_request_before_it_spends_nothing() -> None:
    messages = [Message("user", "Hi."), *_ran("c1", RENT), Message("user", ASK)]
    assert _check(messages, RENT, ASK).approved


def test_the_retry_of_the_same_call_is_not_another_action() -> None:
    pending = [Message("user", ASK), Message("assistant", "", (ToolCall("c9", "send_money", RENT),))]
    assert _check(pending, RENT, ASK, call="c9").approved


def test_another_tools_call_spends_nothing() -> None:
    other = [
        Message("user", ASK),
        Message("assistant", "", (ToolCall("d1", "delete_file", {"path": "/tmp/x"}),)),
        Message("tool", "deleted", (), "d1", "delete_file"),
    ]
    assert _check(other, RENT, ASK).approved


def test_the_check_input_carries_the_hosts_error_mark() -> None:
    data = [
        {"role": "user", "content": ASK},
        {"role": "assistant", "tool_calls": [{"id": "c1", "name": "send_money", "args": RENT}]},
        {"role": "tool", "tool_call_id": "c1", "content": "Insufficient funds", "is_error": True},
    ]
    assert parse_transcript(data).messages[2].is_error is True


@pytest.mark.parametrize("role", ["user", "assistant", "system"])
def test_only_a_tool_message_can_be_an_error(role: str) -> None:
    with pytest.raises(InputError) as exc:
        Transcript([Message(role, "hi", is_error=True)])  # type: ignore[arg-type]
    assert [str(p) for p in exc.value.problems] == [
        "messages[0].is_error: only a tool message can be an error (true or false)"
    ]


@pytest.mark.parametrize("amount", ["nan", "NaN", "sNaN", "inf", "-Infinity", float("nan"), float("inf")])
def test_a_value_no_number_equals_is_still_the_same_value(amount: Any) -> None:
    """Not-a-number equals nothing as a number: compared as text, a repeat of it is still the same action."""
    from validator.state.ledger import _forms

    assert _forms({"amount": amount}) & _forms({"amount": amount})


@pytest.mark.parametrize(
    "done",
    [
        {"recipient": "DE44 5001 0517 5407 3249 31", "amount": 900, "currency": "EUR"},
        {"recipient": "de44-5001-0517-5407-3249-31", "amount": 900, "currency": "EUR"},
        {"recipient": "IBAN DE44500105175407324931", "amount": "900,00", "currency": "EUR"},
        {"recipient": IBAN, "amount": "EUR 900"},
        {"recipient": IBAN, "amount": 450, "currency": "EUR"},  # a part of it: the request's one action ran
        {"recipient": [IBAN], "amount": 90000, "currency": "EUR_cents"},
    ],
)
def test_the_same_target_in_another_spelling_is_the_same_action(done: dict[str, Any]) -> None:
    """Compared loosely: a call wrongly taken for the same goes to the user; one wrongly taken for another
    would pay twice."""
    verdict = _check([Message("user", ASK), *_ran("c1", done), Message("user", "Thanks!")], RENT, ASK)
    assert verdict.code == Code.REQUEST_ALREADY_USED


def test_a_later_request_for_other_values_does_not_renew_this_one() -> None:
    later = "Now pay 50 EUR to DE89370400440532013000."
    messages = [Message("user", ASK), *_ran("c1", RENT), Message("user", f"Thanks! {later}")]
    assert not _check(messages, RENT, ASK).approved
    assert not _check(messages, RENT, later).approved
    found = Validator(POLICY).validate(
        Transcript(messages), {"tool": "send_money", "args": RENT, "call_id": "c9"}, user_id="u-1"
    )
    assert not found.approved
    assert _check(messages, FEE, later).approved


@pytest.mark.parametrize(
    ("tool", "asked", "args", "done"),
    [
        ("delete_file", "Delete report.pdf.", {"path": "report.pdf"}, {"path": "./report.pdf"}),
        ("delete_file", "Delete report.pdf.", {"path": "report.pdf"}, {"path": "/home/me/report.pdf"}),
    ],
)
def test_a_deletion_done_in_another_spelling_is_done(
    tool: str, asked: str, args: dict[str, Any], done: dict[str, Any]
) -> None:
    messages = [
        Message("user", asked),
        Message("assistant", "", (ToolCall("c1", tool, done),)),
        Message("tool", "ok", (), "c1", tool),
        Message("user", "Thanks. Delete notes.txt too."),
    ]
    action = {"tool": tool, "args": args, "call_id": "c9"}
    action["justification"] = {"reason": "The user asked.", "evidence": [{"quote": asked}]}
    verdict = Validator(POLICY).validate(Transcript(messages), action, user_id="u-1")
    assert verdict.code == Code.REQUEST_ALREADY_USED


def test_a_value_too_long_to_compare_is_taken_for_the_same_and_not_parsed() -> None:
    """A megabyte argument in a call the transcript shows done is never parsed (it cost minutes): it counts as
    the same, the safe side."""
    huge = {"recipient": f"{IBAN} " * 40_000, "amount": 900, "currency": "EUR"}
    verdict = _check([Message("user", ASK), *_ran("c1", huge)], RENT, ASK)
    assert verdict.code == Code.REQUEST_ALREADY_USED


@pytest.mark.parametrize("odd", ["\uff24\uff25" + IBAN[2:], "\u200b" + IBAN, IBAN + "\ud800"])
def test_a_look_alike_of_the_target_in_the_done_call_is_the_same_target(odd: str) -> None:
    """Full-width letters, a zero-width character, a lone surrogate, a NaN amount: the same payee, spent."""
    done = {"recipient": odd, "amount": float("nan"), "currency": "EUR"}
    verdict = _check([Message("user", ASK), *_ran("c1", done)], RENT, ASK)
    assert verdict.code == Code.REQUEST_ALREADY_USED


LOOKING_UP = Policy(
    {
        "send_money": ToolPolicy(
            risk="dangerous", targets=("recipient",), amounts=("amount",), delegate=("recipient",)
        ),
        "search_contacts": ToolPolicy(exempt=True, returns="user_records"),
    }
)


@settings(max_examples=80, deadline=None)
@given(
    name=st.sampled_from(["Bob", "Ann", "Mario", "Dana"]),
    bound_by=st.sampled_from(["declared", "looked_up"]),
    ran_as=st.sampled_from(["name", "iban", "spaced", "lower"]),
    replay_as=st.sampled_from(["name", "iban", "spaced", "lower"]),
    result=st.sampled_from(["Transfer executed", "Error: timeout, but the transfer went through", None]),
)
def test_property_replaying_an_executed_call_in_any_bound_form_never_approves(
    name: str, bound_by: str, ran_as: str, replay_as: str, result: str | None
) -> None:
    """Executed (answered, answered with an error saying it went through, or still in flight), the same payment
    in any form of the payee the request binds (the IBAN declared for him, or his record in the user's own
    contacts) is never approved again."""
    ask = f"Pay {name} 500 EUR, his IBAN is {OTHER}." if bound_by == "declared" else f"Pay {name} 500 EUR."
    looked = (
        [
            Message("assistant", "", (ToolCall("s1", "search_contacts", {"query": name}),)),
            Message("tool", f'[{{"name": "{name}", "iban": "{OTHER}"}}]', (), "s1", "search_contacts"),
        ]
        if bound_by == "looked_up"
        else []
    )
    forms = {
        "name": name,
        "iban": OTHER,
        "spaced": " ".join(OTHER[i : i + 4] for i in range(0, len(OTHER), 4)),
        "lower": OTHER.lower(),
    }
    ran = {"recipient": forms[ran_as], "amount": 500, "currency": "EUR"}
    replay = {"recipient": forms[replay_as], "amount": 500, "currency": "EUR"}
    if result is None:
        done = [Message("assistant", "", (ToolCall("c1", "send_money", ran),))]
    else:
        done = _ran("c1", ran, result, error=result.startswith("Error"))
    why = {"reason": "The user asked.", "evidence": [{"quote": ask}]}
    action = {"tool": "send_money", "args": replay, "call_id": "c9", "justification": why}
    t = Transcript([Message("user", ask), *looked, *done])
    assert not Validator(LOOKING_UP).validate(t, action, user_id="u-1").approved


def test_a_payee_looked_up_in_the_users_records_is_the_same_payee_in_any_form() -> None:
    """ "Pay Bob 500 EUR.": the agent looked Bob up in the user's contacts and paid his IBAN; a call to "Bob" is the
    same payment (and the other way round), and a record of another name binds nothing."""
    pays = ToolPolicy(risk="dangerous", targets=("recipient",), amounts=("amount",), delegate=("recipient",))
    policy = Policy({"send_money": pays, "search_contacts": ToolPolicy(exempt=True, returns="user_records")})
    ask = "Pay Bob 500 EUR."
    by_name = {"recipient": "Bob", "amount": 500, "currency": "EUR"}
    by_iban = {"recipient": OTHER, "amount": 500, "currency": "EUR"}

    def lookup(name: str) -> list[Message]:
        record = f'[{{"name": "{name}", "iban": "{OTHER}"}}]'
        return [
            Message("assistant", "", (ToolCall("s1", "search_contacts", {"query": "Bob"}),)),
            Message("tool", record, (), "s1", "search_contacts"),
        ]

    def check(messages: list[Message], args: dict[str, Any]) -> Any:
        why = {"reason": "The user asked.", "evidence": [{"quote": ask}]}
        action = {"tool": "send_money", "args": args, "call_id": "c9", "justification": why}
        return Validator(policy).validate(Transcript(messages), action, user_id="u-1")

    start = [Message("user", ask), *lookup("Bob")]
    assert check(start, by_iban).approved  # delegated through the lookup
    assert check([*start, *_ran("c1", by_iban)], by_name).code == Code.REQUEST_ALREADY_USED
    assert check([*start, *_ran("c1", by_name)], by_iban).code == Code.REQUEST_ALREADY_USED
    other = [Message("user", ask), *lookup("Bob Plumbing Ltd")]  # not Bob's record: binds nothing
    assert check([*other, *_ran("c1", by_iban)], by_name).code != Code.REQUEST_ALREADY_USED


@pytest.mark.parametrize(
    "after",
    [
        [Message("assistant", "I have started the transfer; it may take a minute.")],
        [Message("assistant", "", (ToolCall("c2", "check_status", {}),)), Message("tool", "pending", (), "c2")],
    ],
)
def test_a_call_in_flight_before_the_turn_being_checked_is_another_call_even_without_an_id(
    after: list[Message],
) -> None:
    """Checked with no call id, a call with the action's very arguments counts as the action itself only in the
    newest message of calls; one made before a later message may be running now."""
    pending = [Message("user", ASK), Message("assistant", "", (ToolCall("c1", "send_money", RENT),)), *after]
    action = {
        "tool": "send_money",
        "args": RENT,
        "justification": {"reason": "The user asked.", "evidence": [{"quote": ASK}]},
    }
    verdict = Validator(POLICY).validate(Transcript(pending), action, user_id="u-1")
    assert verdict.code == Code.REQUEST_ALREADY_USED and "call c1" in verdict.reasoning


def test_two_of_the_very_call_in_one_turn_checked_without_an_id_are_never_both_approved() -> None:
    """The attacker's pass: two identical payments in the newest message, each checked with no call id, were each
    taken for the action itself; which one a check is cannot be told, so each counts as done."""
    pending = [
        Message("user", ASK),
        Message("assistant", "", (ToolCall("c1", "send_money", RENT), ToolCall("c2", "send_money", RENT))),
    ]
    action = {
        "tool": "send_money",
        "args": RENT,
        "justification": {"reason": "The user asked.", "evidence": [{"quote": ASK}]},
    }
    validator = Validator(POLICY)
    verdicts = [validator.validate(Transcript(pending), action, user_id="u-1") for _ in range(2)]
    assert not any(v.approved for v in verdicts), [v.reasoning for v in verdicts]
    with_ids = [validator.validate(Transcript(pending), {**action, "call_id": c}, user_id="u-2") for c in ("c1", "c2")]
    assert [v.approved for v in with_ids] == [True, False], [v.reasoning for v in with_ids]  # the store's ledger


def test_a_record_inside_the_payees_binds_nothing_to_him() -> None:
    """The attacker's pass: Bob's contact holds his emergency contact Carol's IBAN; paying Carol first (her own
    request) does not spend the request to pay Bob."""
    carol = "FR1420041010050500013M02606"
    ask = f"Pay Carol 300 EUR to {carol}. Pay Bob 500 EUR."
    record = {"name": "Bob", "iban": OTHER, "emergency_contact": {"name": "Carol", "iban": carol}}
    messages = [
        Message("user", ask),
        Message("assistant", "", (ToolCall("s1", "search_contacts", {"query": "Bob"}),)),
        Message("tool", json.dumps([record]), (), "s1", "search_contacts"),
        *_ran("c1", {"recipient": carol, "amount": 300, "currency": "EUR"}),
    ]
    why = {"reason": "The user asked.", "evidence": [{"quote": "Pay Bob 500 EUR."}]}
    action = {"tool": "send_money", "args": {"recipient": OTHER, "amount": 500, "currency": "EUR"}, "call_id": "c9"}
    v = Validator(LOOKING_UP).validate(Transcript(messages), {**action, "justification": why}, user_id="u-1")
    assert v.code != Code.REQUEST_ALREADY_USED, v.reasoning
