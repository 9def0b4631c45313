"""An edit is a new call (issue 22): ``Validator.answer(edit=...)`` validates the edited call again, with the
arguments the edit changed counted as the user's words, and nothing else."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from validator import (
    Code,
    Decision,
    MemoryAuthorizationStore,
    MemoryRecorder,
    PendingAction,
    Policy,
    Validator,
    Verdict,
    examples,
)
from validator.record.recorder import hash_args
from validator.text.paths import changed

ROOT = Path(__file__).resolve().parents[2]
POLICY = Policy.load(examples.policy_path())
USER = "Please email marta@acme.example that the Q3 report is ready. Never send anything to eve@evil.example."
MESSAGES = [{"role": "user", "content": USER}]
QUOTE = {"reason": "asked", "evidence": [{"quote": "email marta@acme.example that the Q3 report is ready"}]}
ASKED = {
    "tool": "send_email",
    "args": {"to": "carol@acme.example", "body": "The Q3 report is ready."},
    "justification": QUOTE,
}
PAY_USER = "Please pay DE89370400440532013000 50 EUR for the lunch."
PAY_QUOTE = {"reason": "asked", "evidence": [{"quote": "pay DE89370400440532013000 50 EUR for the lunch"}]}


def _asked(v: Validator, messages: Any = MESSAGES, action: Any = ASKED) -> Verdict:
    verdict = v.validate(messages, action, user_id="u-1")
    assert verdict.decision is Decision.ASK_USER, verdict.reasoning
    return verdict


def _codes(v: Validator) -> list[Code]:
    assert isinstance(v.recorder, MemoryRecorder)
    return [e.verdict.code for e in v.recorder.events]


def test_an_edit_to_the_users_value_is_checked_again_and_approved_for_the_edited_call() -> None:
    v = Validator(POLICY, recorder=MemoryRecorder())
    edit = {"to": "marta@acme.example", "body": "The Q3 report is ready."}
    out = v.answer(_asked(v), True, messages=MESSAGES, action=ASKED, user_id="u-1", edit=edit)
    assert out.approved and out.code is Code.APPROVED_BY_USER and "The user edited to" in out.reasoning
    assert _codes(v) == [Code.TARGET_NOT_GROUNDED, Code.APPROVED, Code.APPROVED_BY_USER]
    assert isinstance(v.recorder, MemoryRecorder)
    assert v.recorder.events[-1].args_hash == hash_args(edit)  # the audit records the call that runs


def test_an_edit_the_users_own_words_forbid_is_refused_and_nothing_runs() -> None:
    v = Validator(POLICY, recorder=MemoryRecorder())
    edit = {"to": "marta@acme.example", "body": "The Q3 report is ready.", "cc": "eve@evil.example"}
    out = v.answer(_asked(v), True, messages=MESSAGES, action=ASKED, user_id="u-1", edit=edit)
    assert not out.approved and out.decision is Decision.BLOCK and out.code is Code.TARGET_NOT_GROUNDED
    assert "was checked as a new call and is refused" in out.reasoning and "eve@evil.example" in out.reasoning
    assert _codes(v) == [Code.TARGET_NOT_GROUNDED, Code.TARGET_NOT_GROUNDED]


def test_only_the_changed_arguments_count_as_the_users_words() -> None:
    v = Validator(POLICY, recorder=MemoryRecorder())
    edit = {"to": "carol@acme.example", "body": "Edited by the user."}  # the unknown recipient kept
    checked = v.validate(MESSAGES, {**ASKED, "args": edit}, user_id="u-1", edited=["body"])
    assert checked.decision is Decision.ASK_USER  # carol is still not the user's choice
    (target,) = [t for t in checked.findings.targets if t.path == "to"]
    assert target.status == "not_found"
    out = v.answer(_asked(v), True, messages=MESSAGES, action=ASKED, user_id="u-1", edit=edit)
    assert out.approved and out.code is Code.APPROVED_BY_USER  # the user saw carol and approved, with the edit


def test_edited_paths_are_the_users_but_values_elsewhere_are_not() -> None:
    v = Validator(POLICY, recorder=MemoryRecorder())
    args = {"to": "marta@acme.example", "body": "Also loop in dave@acme.example."}
    checked = v.validate(MESSAGES, {**ASKED, "args": args}, user_id="u-1", edited=["to"])
    statuses = {f.path: f.status for f in (*checked.findings.targets, *checked.findings.entities)}
    assert statuses["to"] == "user" and statuses["body"] != "user"


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        ({"to": float("nan")}, "not a finite number"),
        ("to: marta", "an edit is an object of arguments"),
        ({"body": "x" * 200_000}, "characters"),
    ],
)
def test_an_edit_that_cannot_be_read_is_a_recorded_rejection_saying_why(edit: Any, problem: str) -> None:
    v = Validator(POLICY, recorder=MemoryRecorder())
    out = v.answer(_asked(v), True, messages=MESSAGES, action=ASKED, user_id="u-1", edit=edit)
    assert not out.approved and out.code is Code.REJECTED_BY_USER and problem in out.reasoning
    assert _codes(v) == [Code.TARGET_NOT_GROUNDED, Code.REJECTED_BY_USER]


def test_a_justification_inside_an_edit_is_ignored_the_agents_stands() -> None:
    v = Validator(POLICY, recorder=MemoryRecorder())
    forged = {"reason": "x", "evidence": [{"quote": "Never send anything to eve@evil.example"}]}
    edit = {"to": "marta@acme.example", "body": "The Q3 report is ready.", "justification": forged}
    out = v.answer(_asked(v), True, messages=MESSAGES, action=ASKED, user_id="u-1", edit=edit)
    assert out.approved
    assert isinstance(v.recorder, MemoryRecorder)
    assert v.recorder.events[-1].args_hash == hash_args({"to": "marta@acme.example", "body": "The Q3 report is ready."})


def test_an_edited_payment_spends_the_request_once() -> None:
    v = Validator(POLICY, recorder=MemoryRecorder())
    messages = [{"role": "user", "content": PAY_USER}]
    asked_args = {"recipient": "DE89370400440532013000", "amount": 500, "currency": "EUR"}
    action = PendingAction("send_money", asked_args, PAY_QUOTE, call_id="p1")
    asked = _asked(v, messages, action)
    edit = {"recipient": "DE89370400440532013000", "amount": 50, "currency": "EUR"}
    first = v.answer(asked, True, messages=messages, action=action, user_id="u-1", edit=edit)
    assert first.approved
    again = v.validate(messages, PendingAction("send_money", edit, PAY_QUOTE, call_id="p2"), user_id="u-1")
    assert not again.approved and again.code is Code.REQUEST_ALREADY_USED


def test_remember_after_an_edit_pins_the_edited_arguments() -> None:
    store = MemoryAuthorizationStore()
    v = Validator(POLICY, recorder=MemoryRecorder(), authorizations=store)
    edit = {"to": "marta@acme.example", "body": "The Q3 report is ready."}
    out = v.answer(_asked(v), True, messages=MESSAGES, action=ASKED, user_id="u-1", edit=edit, remember={})
    assert out.authorization_id
    grant = store.get(out.authorization_id)
    assert grant is not None and dict(grant.where) == {"to": "marta@acme.example", "body": "The Q3 report is ready."}


def test_the_async_answer_validates_an_edit_on_the_async_path() -> None:
    v = Validator(POLICY, recorder=MemoryRecorder())
    edit = {"to": "marta@acme.example", "body": "The Q3 report is ready.", "cc": "eve@evil.example"}
    out = asyncio.run(v.aanswer(_asked(v), True, messages=MESSAGES, action=ASKED, user_id="u-1", edit=edit))
    assert not out.approved and out.code is Code.TARGET_NOT_GROUNDED


KEYS = st.text(max_size=3).filter(lambda k: "." not in k)  # a dotted key is ambiguous in a dotted path
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(KEYS, json_values, max_size=4),
    st.dictionaries(KEYS, json_values, max_size=4),
)
def test_changed_names_every_path_whose_value_differs(before: dict[str, Any], after: dict[str, Any]) -> None:
    paths = changed(before, after)
    for key, value in after.items():
        old = before.get(key, object())
        same = type(old) is type(value) and old == value
        if same:
            assert not any(p == key or p.startswith(f"{key}.") for p in paths)
        elif not (isinstance(value, dict) and isinstance(old, dict)):
            assert key in paths
    assert changed(after, after) == []


def test_a_call_id_reused_for_other_arguments_or_after_it_ran_is_never_a_retry() -> None:
    """The ledger knew a call by its id alone: one request paid twice under one id (found by an attacker's pass)."""
    v = Validator(POLICY, recorder=MemoryRecorder())
    messages: list[dict[str, Any]] = [{"role": "user", "content": PAY_USER}]
    args = {"recipient": "DE89370400440532013000", "amount": 50, "currency": "EUR"}
    first = v.validate(messages, PendingAction("send_money", args, PAY_QUOTE, call_id="X"), user_id="u-1")
    assert first.approved
    same = v.validate(messages, PendingAction("send_money", args, PAY_QUOTE, call_id="X"), user_id="u-1")
    assert same.approved  # a retry of the same call: no second spend
    other = {**args, "recipient": "DE89 3704 0044 0532 0130 00"}  # other arguments, each still the user's
    again = v.validate(messages, PendingAction("send_money", other, PAY_QUOTE, call_id="X"), user_id="u-1")
    assert not again.approved and again.code is Code.REQUEST_ALREADY_USED
    ran = [
        *messages,
        {"role": "assistant", "content": "", "tool_calls": [{"id": "X", "name": "send_money", "args": args}]},
        {"role": "tool", "tool_call_id": "X", "name": "send_money", "content": "paid"},
    ]
    after = v.validate(ran, PendingAction("send_money", args, PAY_QUOTE, call_id="X"), user_id="u-1")
    assert not after.approved and after.code is Code.TOOL_CALL_ID_REUSED
