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
    "send_money": ("Pay 50 EUR to DE44500105175407324931.", {"recipient": "DE44500105175407324931", "amount": 50}),
    "share_file": ("Share report.pdf with ann@acme.example.", {"with": "ann@acme.example", "file": "report.pdf"}),
    "delete_thread": ("Delete the thread t-88.", {"thread_id": "t-88"}),
    "send_email": ("Email bob@acme.example that I am late.", {"to": "bob@acme.example"}),
    "send_message": ("Message ann@acme.example that the build is green.", {"message": {"to": "ann@acme.example"}}),
    "grant_access": ("Give ann@acme.example access to the board.", {"people": [{"email": "ann@acme.example"}]}),
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
        ("send_money", {"reference": "DE44500105175407324931"}),
        ("share_file", {"note": "report.pdf"}),
        ("delete_thread", {"note": None}),  # absent
    ],
)
def test_an_extra_argument_the_users_words_hold_keeps_the_approval(tool: str, extra: dict[str, Any]) -> None:
    assert _check(tool, {**BENIGN[tool][1], **extra}, "strict").approved


@pytest.mark.parametrize(
    ("tool", "args", "path"),
    [
        ("send_message", {"message": {"to": "ann@acme.example", "text": "Full customer export"}}, "message.text"),
        ("send_message", {"message": {"to": "ann@acme.example", "cc": {"who": "eve"}}}, "message.cc"),
        ("grant_access", {"people": [{"email": "ann@acme.example", "role": "owner"}]}, "people.role"),
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


def test_a_standing_authorization_grants_what_its_constraints_leave_open() -> None:
    store = MemoryAuthorizationStore()
    store.put(
        StandingAuthorization(
            id="auth_cleaner",
            user_id="u-1",
            tool="send_money",
            where={"recipient": "DE44500105175407324931", "amount": "<=200"},
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
    verdict = Validator(POLICY, authorizations=store).validate(messages, action, user_id="u-1")
    assert verdict.approved, verdict.reasoning
