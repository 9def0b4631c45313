"""Standing authorizations spend the one-request ledger, and "remember this" pins every argument."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from validator import Code, Decision, Message, Policy, ToolCall, ToolPolicy, Transcript, Validator, ValidatorConfig
from validator.gate.authorizations import grant_from_answer, scope_problems
from validator.inputs.action import PendingAction
from validator.store.memory import MemoryAuthorizationStore
from validator.store.records import StandingAuthorization

POLICY = Policy({"send_money": ToolPolicy(risk="dangerous", targets=("recipient",), amounts=("amount",))})
IBAN = "DE89370400440532013000"
NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)


def _store(quote: str) -> MemoryAuthorizationStore:
    store = MemoryAuthorizationStore()
    store.put(
        StandingAuthorization(
            id="auth_1",
            user_id="u-1",
            tool="send_money",
            where={"recipient": IBAN, "amount": "12", "currency": "EUR"},
            quote=quote,
            created=NOW - timedelta(days=1),
            expires=NOW + timedelta(days=400),
            risk="dangerous",
        )
    )
    return store


def _pay(validator: Validator, call: str) -> Any:
    t = Transcript([Message(role="user", content="Thanks for lunch.")])
    action = PendingAction(
        tool="send_money",
        args={"recipient": IBAN, "amount": 12, "currency": "EUR"},
        justification={"reason": "The user's standing authorization.", "evidence": []},
        call_id=call,
    )
    return validator.validate(t, action, user_id="u-1")


def _validator(store: MemoryAuthorizationStore, now: datetime = NOW) -> Validator:
    return Validator(POLICY, authorizations=store, config=ValidatorConfig(clock=lambda: now))


def test_a_grant_for_one_lunch_pays_once() -> None:
    validator = _validator(_store("Pay Bob 12 EUR for today's lunch."))
    first = _pay(validator, "c1")
    assert first.approved and [a.period for a in first.findings.authorizations] == ["once"]
    again = _pay(validator, "c2")
    assert (again.decision, again.code) == (Decision.ASK_USER, Code.REQUEST_ALREADY_USED)
    assert _pay(validator, "c1").approved  # the same call again (a retry) spends nothing new


def test_a_monthly_grant_pays_once_a_month() -> None:
    store = _store("Pay Bob 12 EUR every month for the parking spot.")
    validator = _validator(store)
    first = _pay(validator, "c1")
    assert first.approved and [a.period for a in first.findings.authorizations] == ["month"]
    assert _pay(validator, "c2").code is Code.REQUEST_ALREADY_USED
    later = Validator(
        POLICY,
        authorizations=store,
        ledger=validator.ledger,
        config=ValidatorConfig(clock=lambda: NOW + timedelta(days=31)),
    )
    assert _pay(later, "c3").approved


def test_a_grant_for_every_time_is_not_spent() -> None:
    validator = _validator(_store("Whenever Bob pays for lunch, pay him back 12 EUR."))
    assert [a.period for a in _pay(validator, "c0").findings.authorizations] == ["unlimited"]
    assert all(_pay(validator, f"c{i}").approved for i in range(3))


@pytest.mark.parametrize(("arg", "value"), [("currency", "BTC"), ("memo", "other"), ("amount", 13)])
def test_remember_this_pins_every_argument_the_user_saw(arg: str, value: Any) -> None:
    seen = PendingAction(tool="send_money", args={"recipient": IBAN, "amount": 50, "currency": "EUR", "memo": "lunch"})
    grant = grant_from_answer(seen, POLICY.for_tool("send_money"), "u-1", {}, None, NOW)
    assert grant.where["currency"] and grant.where["memo"]
    changed = {**seen.args, arg: value}
    assert scope_problems(grant, "send_money", changed, tool_risk="dangerous", targets=("recipient",))
    assert not scope_problems(grant, "send_money", dict(seen.args), tool_risk="dangerous", targets=("recipient",))


def test_a_dangerous_action_the_user_approves_when_asked_spends_the_request_it_cites() -> None:
    """The user's yes is an approval like any other: a second payment citing the same request goes to the user."""
    from validator.testing import FunctionJudge

    policy = Policy(
        {"send_money": ToolPolicy(risk="dangerous", targets=("recipient",), amounts=("amount",), intents=("pay",))}
    )
    answers = iter(["medium", "high"])  # the first check is unsure (it asks); the second would approve

    def judge(request: Any) -> dict[str, Any]:
        return {"approved": True, "reasoning": "The user asked to pay.", "confidence": next(answers)}

    validator = Validator(policy, judge=FunctionJudge(judge))
    messages = [Message(role="user", content=f"Please pay {IBAN} 50 EUR for the lunch.")]

    def pay(call: str) -> PendingAction:
        quote = {"reason": "asked", "evidence": [{"quote": f"pay {IBAN} 50 EUR"}]}
        return PendingAction("send_money", {"recipient": IBAN, "amount": 50, "currency": "EUR"}, quote, call)

    asked = validator.validate(messages, pay("c1"), user_id="u-1")
    assert asked.decision is Decision.ASK_USER and asked.code is Code.LOW_CONFIDENCE
    yes = validator.answer(asked, True, messages=messages, action=pay("c1"), user_id="u-1")
    assert yes.code is Code.APPROVED_BY_USER
    again = validator.validate(messages, pay("c2"), user_id="u-1")
    assert (again.approved, again.code) == (False, Code.REQUEST_ALREADY_USED)


def test_an_answer_whose_spend_cannot_be_computed_is_still_recorded() -> None:
    """The user's yes is recorded whatever the ledger's step meets (here, a verdict citing a message the answer's
    conversation does not hold): the spend is logged as not made, nothing raises."""
    from dataclasses import replace as changed

    from validator.findings import Findings, IntentFinding, RequestSentence
    from validator.state.ledger import spend_answered
    from validator.store.memory import MemoryLedger
    from validator.verdict import Verdict

    policy = ToolPolicy(risk="dangerous", targets=("recipient",), intents=("pay",))
    findings = Findings(
        requests=(RequestSentence(message=5, start=0, end=3, text="Pay", quote_index=0),),
        intent=IntentFinding(intents=("pay",), matched="pay", proof="proved"),
    )
    asked = Verdict.blocked("send_money", "asked", code=Code.LOW_CONFIDENCE, decision=Decision.ASK_USER)
    decided = changed(asked.answered_by_user(True), findings=findings)
    action = PendingAction("send_money", {"recipient": IBAN}, None, "c1")
    spend_answered(decided, Transcript([Message(role="user", content="Pay.")]), action, policy, "u-1", MemoryLedger())


# -- the calls carried out, kept with the transcript -------------------------------------------------


def _carried_whole(transcript: Transcript) -> tuple[tuple[int, ToolCall], ...]:
    """The definition, read over the whole transcript: a call answered, and never with an error saying it did not
    run."""
    from validator.state.ledger import did_not_run

    failed = {m.tool_call_id for m in transcript.messages if m.role == "tool" and did_not_run(m)}
    return tuple(
        (i, call)
        for i, m in enumerate(transcript.messages)
        if m.role == "assistant"
        for call in m.tool_calls
        if transcript.answered(call.id) and call.id not in failed
    )


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_the_calls_carried_out_of_a_longer_transcript_are_those_of_a_whole_read(data: st.DataObject) -> None:
    """A transcript extended piece by piece (its facts carried) finds the calls a fresh whole read finds: calls
    answered late, answered with an error after a success, several calls in one message, two branches."""
    from validator.state.ledger import CALLS

    messages: list[Message] = [Message(role="user", content="Go.")]
    open_calls: list[str] = []
    for n in range(data.draw(st.integers(1, 14))):
        if open_calls and data.draw(st.booleans()):
            call = data.draw(st.sampled_from(open_calls))
            error = data.draw(st.booleans())
            said = data.draw(st.sampled_from(["ok", "Action `t` was not run (X): y"]))  # ran, or the validator refused
            messages.append(Message(role="tool", content=said, tool_call_id=call, name="t", is_error=error))
            if data.draw(st.booleans()):
                open_calls.remove(call)
        else:
            ids = [f"c{n}.{k}" for k in range(data.draw(st.integers(1, 3)))]
            messages.append(Message(role="assistant", content="", tool_calls=tuple(ToolCall(i, "t") for i in ids)))
            open_calls += ids
    cuts = sorted(set(data.draw(st.lists(st.integers(1, len(messages)), max_size=4))))
    kept = Transcript(messages[: cuts[0]] if cuts else messages)
    kept.fact(CALLS)
    for cut in [*cuts[1:], len(messages)]:
        longer = kept.extend(messages[len(kept.messages) : cut])
        other = kept.extend(messages[len(kept.messages) : cut][:1])  # a second branch, read too
        assert other.fact(CALLS).carried == _carried_whole(Transcript(list(other.messages)))
        kept = longer
        assert kept.fact(CALLS).carried == _carried_whole(Transcript(list(kept.messages)))


def test_a_verdict_recorded_before_findings_held_the_period_spends_by_the_grants_words() -> None:
    """A verdict rebuilt from data saved before authorization findings carried their period (a question waiting
    in the service, LangGraph's saved state, the reuse cache) spends a monthly grant once a month, as it did."""
    from dataclasses import replace

    from validator.state.ledger import _grants_of

    store = _store("Pay Bob 12 EUR every month for the parking spot.")
    verdict = _pay(_validator(store), "c1")
    (finding,) = verdict.findings.authorizations
    old = replace(verdict.findings, authorizations=(replace(finding, period=None),))
    assert finding.period == "month"
    assert _grants_of(old, "u-1", NOW) == _grants_of(verdict.findings, "u-1", NOW) != []


def test_a_value_as_long_as_a_body_is_compared_but_never_kept() -> None:
    """The ledger keeps each short value's compared forms (every check compares the calls after the request
    again); a value longer than a value is, an email's body, is read each time and held by no cache."""
    import uuid

    from validator.state import ledger

    body = "Hi Ann, the invoice DE89370400440532013000 is attached. " * 40
    before = ledger._kept_forms.cache_info().currsize
    assert ledger._forms(body) == {ledger.ANY}
    assert ledger._kept_forms.cache_info().currsize == before
    spaced, plain = ledger._forms("DE89 3704 0044 0532 0130 00"), ledger._forms("DE89370400440532013000")
    assert spaced & plain  # one account however it is written
    short = f"ref {uuid.uuid4().hex}"  # a value no other test compared
    misses = ledger._kept_forms.cache_info().misses
    assert ledger._forms(short) == ledger._forms(short)
    assert ledger._kept_forms.cache_info().misses == misses + 1  # read once, then kept


def test_a_judged_verdict_is_kept_per_language() -> None:
    """A stored verdict judged for a validator reading one language is never reused by one reading another: the
    pack's digest is in the key (and the shipped English pack keeps the keys it always had)."""
    from validator.inputs.action import parse_justification
    from validator.language import english, load_pack
    from validator.state.keys import verdict_key

    transcript = Transcript([Message("user", "Email ann@acme.example the notes.")])
    action = PendingAction("send_email", {"to": "ann@acme.example"})
    justification, problems = parse_justification({"reason": "asked", "evidence": [{"quote": "Email ann"}]})
    assert justification is not None and not problems

    def key(language: str = "") -> str:
        return verdict_key(
            transcript, action, justification, user_id="u", agent_request=None, policy_version="1", language=language
        )

    other = load_pack((english_toml := _english_toml()).replace('PLEASE = ["please", "kindly"', 'PLEASE = ["please"'))
    assert english().digest and other.digest and english().digest != other.digest
    assert key() != key(english().digest) != key(other.digest) and key() == key("")
    assert load_pack(english_toml).digest == english().digest  # the same texts, the same digest


def _english_toml() -> str:
    from importlib import resources

    return resources.files("validator.language").joinpath("english.toml").read_text(encoding="utf-8")
