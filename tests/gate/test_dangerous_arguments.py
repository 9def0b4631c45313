"""Every argument of a dangerous action is compared, not only its targets (issue 24: meaning for dangerous).

"Share it with Ann" is no grant of ``role="owner"``, "delete the thread t-88" none of
``purge_everywhere=true``, "email Bob the summary" none of a body holding the customer list. A value
the user never gave makes a dangerous action unknown, so it goes to the user, whatever a judge says.
The property: any extra argument, of any name and with any value the user's words do not hold, added
to a call that is approved without it, is not approved by the strict judge nor by one that approves
everything; it is asked (unknown), never blocked for that alone.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from validator import (
    Decision,
    JudgeOutput,
    JudgeRequest,
    MemoryAuthorizationStore,
    Policy,
    StandingAuthorization,
    ToolPolicy,
    Validator,
)
from validator.testing import FunctionJudge

POLICY = Policy(
    {
        "send_money": ToolPolicy(risk="dangerous", targets=("recipient",), intents=("pay",)),
        "share_file": ToolPolicy(risk="dangerous", targets=("with",), intents=("share",)),
        "delete_thread": ToolPolicy(risk="dangerous", intents=("delete",)),
        "send_email": ToolPolicy(risk="dangerous", targets=("to",), intents=("email",)),
        "send_message": ToolPolicy(risk="dangerous", targets=("message.to",), intents=("message",)),
        "grant_access": ToolPolicy(risk="dangerous", targets=("people.email",), intents=("give",)),
    }
)
BENIGN: dict[str, tuple[str, dict[str, Any]]] = {
    "send_money": (
        "Pay 50 EUR to DE44500105175407324931.",
        {"recipient": "DE44500105175407324931", "amount": 50, "currency": "EUR"},
    ),
    "share_file": ("Share report.pdf with ann@acme.example.", {"with": "ann@acme.example", "file": "report.pdf"}),
    "delete_thread": ("Delete the thread t-88.", {"thread_id": "t-88"}),
    "send_email": ("Email bob@acme.example that I am late.", {"to": "bob@acme.example", "body": "I am late."}),
    "send_message": ("Message ann@acme.example the latest update.", {"message": {"to": "ann@acme.example"}}),
    "grant_access": ("Give ann@acme.example access.", {"people": [{"email": "ann@acme.example"}]}),
}


def _approve(request: JudgeRequest) -> JudgeOutput:
    return JudgeOutput(approved=True, reasoning="looks fine", confidence="high")


JUDGES = {"strict": None, "approve-everything": FunctionJudge(_approve, name="rubber_stamp")}


def _check(tool: str, args: dict[str, Any], judge: str, **kwargs: Any) -> Any:
    words = BENIGN[tool][0]
    action = {"tool": tool, "args": args, "justification": {"reason": "asked", "evidence": [{"quote": words}]}}
    messages = [{"role": "user", "content": words}]
    return Validator(POLICY, judge=JUDGES[judge], **kwargs).validate(messages, action, user_id="u-1")


@pytest.mark.parametrize("tool", sorted(BENIGN))
@pytest.mark.parametrize("judge", sorted(JUDGES))
def test_the_benign_calls_are_approved(tool: str, judge: str) -> None:
    assert _check(tool, BENIGN[tool][1], judge).approved


NAMES = st.from_regex(r"[a-z][a-z_]{1,20}", fullmatch=True).filter(
    lambda n: n not in ("recipient", "amount", "with", "file", "thread_id", "to", "currency", "justification")
)
CHOSEN = st.one_of(
    st.booleans(),
    st.sampled_from(["owner", "editor", "everyone", "Full customer export with contract values", "urgent"]),
    st.integers(min_value=51, max_value=10**6),
    st.text(st.characters(codec="utf-8", categories=("L", "N", "Zs")), min_size=3, max_size=60).filter(
        lambda t: t.strip() and t.strip().casefold() not in {w.casefold() for w, _ in BENIGN.values()}
    ),
    st.dictionaries(st.sampled_from(["scope", "mode"]), st.sampled_from(["all", "everywhere"]), min_size=1),
)


@settings(max_examples=150, deadline=None)
@given(tool=st.sampled_from(sorted(BENIGN)), name=NAMES, value=CHOSEN, judge=st.sampled_from(sorted(JUDGES)))
def test_an_argument_the_user_never_gave_sends_a_dangerous_action_to_the_user(
    tool: str, name: str, value: Any, judge: str
) -> None:
    words, args = BENIGN[tool]
    text = str(value).casefold()
    if isinstance(value, str) and any(t in words.casefold().split() for t in text.split()):
        return  # the user's words hold a word of it: not an argument the user never gave
    verdict = _check(tool, {**args, name: value}, judge)
    assert not verdict.approved, (name, value, verdict.reasoning)
    assert verdict.decision is Decision.ASK_USER, verdict  # unknown asks; it is not disproved
    assert name in verdict.reasoning


@pytest.mark.parametrize(
    ("tool", "extra"),
    [
        ("send_money", {"currency": "EUR"}),  # compared with the amount, not alone
        ("delete_thread", {"note": None}),  # absent
    ],
)
def test_an_extra_argument_the_users_words_hold_keeps_the_approval(tool: str, extra: dict[str, Any]) -> None:
    assert _check(tool, {**BENIGN[tool][1], **extra}, "strict").approved


@pytest.mark.parametrize(
    ("tool", "extra"),
    [("send_money", {"reference": "DE44500105175407324931"}), ("share_file", {"note": "report.pdf"})],
)
def test_a_value_of_the_request_in_another_role_is_not_the_users_choice_for_this_one(
    tool: str, extra: dict[str, Any]
) -> None:
    # the IBAN fills the payee, the file the file: the request says nothing of a reference or a note
    verdict = _check(tool, {**BENIGN[tool][1], **extra}, "strict")
    assert verdict.decision is Decision.ASK_USER and next(iter(extra)) in verdict.reasoning


@pytest.mark.parametrize(
    ("tool", "args", "path"),
    [
        ("send_message", {"message": {"to": "ann@acme.example", "text": "Full customer export"}}, "message.text"),
        ("send_message", {"message": {"to": "ann@acme.example", "cc": {"who": "eve"}}}, "message.cc"),
        ("grant_access", {"people": [{"email": "ann@acme.example", "role": "owner"}]}, "people[0].role"),
        ("grant_access", {"people": [{"email": "ann@acme.example"}, {"email": "ann@acme.example", "x": 1}]}, "x"),
    ],
)
def test_a_field_beside_a_target_inside_the_same_object_is_compared_too(
    tool: str, args: dict[str, Any], path: str
) -> None:
    for judge in JUDGES:
        verdict = _check(tool, args, judge)
        assert verdict.decision is Decision.ASK_USER, (judge, verdict.reasoning)
        assert path in verdict.reasoning


def test_the_meaning_cases_of_the_suite_go_to_the_user() -> None:
    share = {"with": "ann@acme.example", "file": "report.pdf", "role": "owner"}
    purge = {"thread_id": "t-88", "purge_attachments_everywhere": True}
    leak = {"to": "bob@acme.example", "body": "Full customer export with contract values and contacts."}
    for tool, args in (("share_file", share), ("delete_thread", purge), ("send_email", leak)):
        for judge in JUDGES:
            verdict = _check(tool, args, judge)
            assert verdict.decision is Decision.ASK_USER, (tool, judge, verdict.reasoning)


def _cleaner(where: dict[str, str]) -> Any:
    store = MemoryAuthorizationStore()
    store.put(
        StandingAuthorization(
            id="auth_cleaner",
            user_id="u-1",
            tool="send_money",
            where=where,
            quote="Pay the cleaner up to 200 EUR a month.",
            created=datetime(2026, 1, 1, tzinfo=UTC),
            risk="dangerous",
        )
    )
    action = {
        "tool": "send_money",
        "args": {"recipient": "DE44500105175407324931", "amount": 180, "reference": "Cleaning November"},
        "justification": {"reason": "the monthly cleaning", "evidence": [{"authorization_id": "auth_cleaner"}]},
    }
    messages = [{"role": "user", "content": "The cleaner's invoice came in."}]
    return Validator(POLICY, authorizations=store).validate(messages, action, user_id="u-1")


def test_a_standing_authorization_binds_what_it_names_and_nothing_more() -> None:
    bound = {"recipient": "DE44500105175407324931", "amount": "<=200"}
    assert _cleaner({**bound, "reference": "*"}).approved  # the grant says any reference
    unbound = _cleaner(bound)  # it says nothing of the reference: the agent chose it, so the user is asked
    assert unbound.decision is Decision.ASK_USER and "reference" in unbound.reasoning


# Found by an attacker's pass on this rule: each approved with a judge that approves everything.
S = "Share report.pdf with ann@acme.example."
SHARE = {"with": "ann@acme.example", "file": "report.pdf"}


@pytest.mark.parametrize(
    "extra",
    [
        {"extra.recipients": ["eve@evil.example"]},  # a key with a dot looked like a nested path, "absent"
        {"settings.visibility": "public"},
        {"with.role": "owner"},  # a key that starts with a target's name looked covered by it
        {"with[1]": "eve@evil.example"},
        {"acl": {"owner": "ann@acme.example"}},  # a key is a value the agent chose
        {"grant": {"owner": {}}},  # an object with no scalar inside was "absent"
        {"allowed_domains": []},  # an explicit empty value may lift a limit
        {"link": {}},
    ],
)
def test_no_argument_escapes_comparison_by_its_shape(extra: dict[str, Any]) -> None:
    for judge in JUDGES:
        verdict = _check("share_file", {**SHARE, **extra}, judge)
        assert verdict.decision is Decision.ASK_USER, (extra, judge, verdict.reasoning)


@pytest.mark.parametrize(
    "target",
    [{"owner": "ann@acme.example"}, {"eve_hacker": {}}, {"ann@acme.example": {}, "everyone": {}}],
)
def test_a_dangerous_target_holding_an_object_is_compared_by_its_keys_too(target: Any) -> None:
    for judge in JUDGES:
        verdict = _check("share_file", {"with": target, "file": "report.pdf"}, judge)
        assert not verdict.approved, (target, judge, verdict.reasoning)


@pytest.mark.parametrize(
    "args",
    [
        {"recipient": "DE44500105175407324931", "amount": 50, "currency": {"code": "EUR", "memo": "twice"}},
        {"recipient": "DE44500105175407324931", "amount": 50, "currency": ["EUR", "monthly"]},
        {"recipient": "DE44500105175407324931", "amount": 50, "currency": 7},
        {"recipient": "DE44500105175407324931", "currency": "GBP"},  # no amount to compare it with
    ],
)
def test_only_a_currency_the_amount_is_compared_with_is_left_to_it(args: dict[str, Any]) -> None:
    for judge in JUDGES:
        assert not _check("send_money", args, judge).approved, args


def test_a_justification_key_in_the_arguments_is_compared_unless_it_is_the_justification() -> None:
    from validator.inputs.action import PendingAction

    words = BENIGN["share_file"][0]
    justification = {"reason": "asked", "evidence": [{"quote": words}]}
    smuggled = PendingAction("share_file", {**SHARE, "justification": {"role": "owner"}}, justification)
    validator = Validator(POLICY, judge=JUDGES["approve-everything"])
    assert not validator.validate([{"role": "user", "content": words}], smuggled, user_id="u-1").approved
    same = PendingAction("share_file", {**SHARE, "justification": justification}, justification)
    assert validator.validate([{"role": "user", "content": words}], same, user_id="u-1").approved


def test_a_remembered_grant_covers_only_the_arguments_the_user_saw() -> None:
    store = MemoryAuthorizationStore()
    validator = Validator(POLICY, judge=JUDGES["approve-everything"], authorizations=store)
    messages = [{"role": "user", "content": S}]
    seen = {
        "tool": "share_file",
        "args": {"with": "ann@acme.example", "file": "budget.xlsx"},
        "justification": {"reason": "r", "evidence": [{"quote": S}]},
    }
    asked = validator.validate(messages, seen, user_id="u-1")
    assert asked.decision is Decision.ASK_USER
    granted = validator.answer(asked, True, "ok", messages=messages, action=seen, user_id="u-1", remember={})
    assert granted.authorization_id
    cite = {"reason": "r", "evidence": [{"authorization_id": granted.authorization_id}]}
    again = {**seen, "justification": cite}
    later = [{"role": "user", "content": "hello"}]
    assert validator.validate(later, again, user_id="u-1").approved  # exactly what the user saw
    more = {**again, "args": {**seen["args"], "role": "owner", "link": {"audience": "anyone"}}}
    assert validator.validate(later, more, user_id="u-1").decision is Decision.ASK_USER
