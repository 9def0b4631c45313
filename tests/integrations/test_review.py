"""Escalation in LangChain's human-in-the-loop shapes: the same resume payloads work for LangChain's own
``HumanInTheLoopMiddleware`` and for ours, on the same tools, in both interrupt modes (issue 14)."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from validator.integrations._review import read_review
from validator.integrations.middleware import ActionValidatorMiddleware
from validator.integrations.testing import ScriptedChatModel

from validator import ActionBlocked, Policy, ToolPolicy, Validator, stateful_validator
from validator.store import MemoryStore

USER = "Please email bob@acme.example the minutes."
GOOD = {"reason": "The user asked.", "evidence": [{"quote": "email bob@acme.example the minutes"}]}
ALWAYS = Policy({"send_email": ToolPolicy(targets=("to",), intents=("email",), ask="always")})
DECISIONS: dict[str, dict[str, Any]] = {
    "approve": {"type": "approve"},
    "edit": {
        "type": "edit",
        "edited_action": {"name": "send_email", "args": {"to": "carol@acme.example", "body": "v2"}},
    },
    "reject": {"type": "reject", "message": "not now"},
    "respond": {"type": "respond", "message": "Bob has the minutes already."},
}


def _agent(
    kind: str,
    mode: str,
    log: list[Any],
    validator: Validator | None = None,
    call: dict[str, Any] | None = None,
    **kw: Any,
) -> Any:
    @tool
    def send_email(to: str, body: str = "", justification: dict[str, Any] | None = None) -> str:
        """Send an email."""
        log.append((to, body))
        return f"sent to {to}"

    call = call or {
        "id": "c1",
        "name": "send_email",
        "args": {"to": "bob@acme.example", "body": "m", "justification": GOOD},
    }
    model = ScriptedChatModel(responses=[AIMessage("", tool_calls=[call]), AIMessage("done")])
    if kind == "langchain":
        middleware: Any = HumanInTheLoopMiddleware(interrupt_on={"send_email": True}, interrupt_mode=mode)
    else:
        middleware = ActionValidatorMiddleware(validator or Validator(ALWAYS), interrupt_mode=mode, **kw)
    return create_agent(model, [send_email], middleware=[middleware], checkpointer=InMemorySaver())


def _payload(mode: str, decision: dict[str, Any]) -> Any:
    return decision if mode == "per_call" else {"decisions": [decision]}


@pytest.mark.parametrize("mode", ["per_call", "batched"])
@pytest.mark.parametrize("decision", ["approve", "edit", "reject", "respond"])
@pytest.mark.parametrize("kind", ["langchain", "validator"])
def test_the_same_resume_payload_works_for_langchains_middleware_and_ours(kind: str, mode: str, decision: str) -> None:
    log: list[Any] = []
    agent = _agent(kind, mode, log)
    cfg = {"configurable": {"thread_id": f"{kind}-{mode}-{decision}"}}
    first = agent.invoke({"messages": [HumanMessage(USER)]}, cfg, version="v2")
    (asked,) = first.interrupts
    value = asked.value
    if mode == "per_call":
        assert value["type"] == "tool_approval" and value["name"] == "send_email" and value["tool_call_id"] == "c1"
    else:
        assert value["action_requests"][0]["name"] == "send_email"
        assert value["review_configs"][0]["action_name"] == "send_email"
        assert "edit" in value["review_configs"][0]["allowed_decisions"]
    if kind == "validator":  # LangChain's request, with the validator's reasons beside it
        why = value["action_validator"] if mode == "per_call" else value["action_validator"][0]
        assert why["code"] == "POLICY_ASKS_USER" and why["justification"] == GOOD and why["findings"]
    assert log == []
    out = agent.invoke(Command(resume=_payload(mode, DECISIONS[decision])), cfg, version="v2").value
    result = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    if decision == "approve":
        assert result.status == "success" and log[0][0] == "bob@acme.example"
    elif decision == "edit":
        assert result.status == "success" and log == [("carol@acme.example", "v2")]
    elif decision == "respond":  # the person answered in the tool's place: a success the agent reads, nothing ran
        assert result.status == "success" and result.content == "Bob has the minutes already." and log == []
    else:
        assert result.status == "error" and "not now" in str(result.content) and log == []


@pytest.mark.parametrize(
    ("answer", "approved"),
    [
        (True, True),
        (False, False),
        ({"approved": True}, True),
        ({"type": "approve"}, True),
        ({"decisions": [{"type": "approve"}]}, True),
        ({"c1": {"type": "approve"}}, True),
        ("yes", False),
        ({"type": "edit", "edited_action": {"name": "pay", "args": {}}}, False),
        ({"decisions": []}, False),
        ({"type": "maybe"}, False),
    ],
)
def test_answers_are_read_and_anything_unreadable_is_a_rejection_that_says_why(answer: Any, approved: bool) -> None:
    review = read_review(answer, call_id="c1", tool="send_email")
    assert review.approved is approved
    if not approved and answer is not False:
        assert review.unreadable and review.reason and "could not be read" in review.reason


def test_an_unreadable_answer_refuses_with_a_next_step() -> None:
    log: list[Any] = []
    agent = _agent("validator", "per_call", log)
    cfg = {"configurable": {"thread_id": "unreadable"}}
    agent.invoke({"messages": [HumanMessage(USER)]}, cfg, version="v2")
    out = agent.invoke(Command(resume="yes"), cfg, version="v2").value
    result = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert result.status == "error" and "could not be read" in str(result.content)
    assert "Suggested next step: The user said no" in str(result.content) and log == []


def test_halt_stops_the_run_instead_of_telling_the_model() -> None:
    log: list[Any] = []
    never = Policy({"send_email": ToolPolicy(targets=("to",), intents=("email",), ask="never")})
    agent = _agent("validator", "per_call", log, Validator(never), on_block="halt")
    bad = {"messages": [HumanMessage("Please email carol@acme.example the minutes.")]}
    with pytest.raises(ActionBlocked) as exc:
        agent.invoke(bad, {"configurable": {"thread_id": "halt"}})
    assert exc.value.verdict.code.value == "EVIDENCE_NOT_FOUND" and log == []


@pytest.fixture(params=["memory", "redis"])
def shared_store(request: pytest.FixtureRequest) -> Any:
    return MemoryStore() if request.param == "memory" else request.getfixturevalue("redis_store")


DANGEROUS = Policy({"send_email": ToolPolicy(risk="dangerous", targets=("to",), intents=("email",))})


def test_remember_this_grows_a_standing_authorization_that_later_calls_use_uncited(shared_store: Any) -> None:
    validator = stateful_validator(shared_store, policy=DANGEROUS)
    log: list[Any] = []
    # The user asked for bob; the agent emails dave: a dangerous value the user never gave goes to the user.
    dave = {"id": "c1", "name": "send_email", "args": {"to": "dave@acme.example", "body": "m", "justification": GOOD}}
    agent = _agent("validator", "per_call", log, validator, call=dave)
    cfg = {"configurable": {"thread_id": "remember", "user_id": "u-1"}}
    first = agent.invoke({"messages": [HumanMessage(USER)]}, cfg, version="v2")
    assert first.interrupts[0].value["action_validator"]["code"] == "TARGET_NOT_GROUNDED"
    keep = {"type": "approve", "remember": {"expires_in_days": 7, "quote": "Yes, and dave may always get them."}}
    agent.invoke(Command(resume=keep), cfg, version="v2")
    assert log == [("dave@acme.example", "m")]
    (grant,) = shared_store.list("u-1")
    # every argument the user saw is pinned (issue 22: a grant for 50 EUR never pays 50 BTC)
    assert grant.where == {"to": "dave@acme.example", "body": "m"}
    assert grant.tool == "send_email" and grant.risk == "dangerous"
    assert grant.quote == "Yes, and dave may always get them." and grant.expires is not None
    # Later, in another conversation, the agent cites only the user's request: the validator finds the grant itself.
    later = {"reason": "The user asked.", "evidence": [{"quote": "send the minutes to dave again"}]}
    verdict = validator.validate(
        [{"role": "user", "content": "Please send the minutes to dave again."}],
        {"tool": "send_email", "args": {"to": "dave@acme.example", "body": "m"}, "justification": later},
        user_id="u-1",
    )
    assert verdict.approved and verdict.authorization_id == grant.id
    # Another user's call is not covered by it.
    other = validator.validate(
        [{"role": "user", "content": "Please send the minutes to dave again."}],
        {"tool": "send_email", "args": {"to": "dave@acme.example"}, "justification": later},
        user_id="u-2",
    )
    assert not other.approved and other.authorization_id is None


def test_shadow_mode_records_the_refusal_and_lets_the_call_run(shared_store: Any) -> None:
    from dataclasses import replace

    shadow = Policy(DANGEROUS.tools, replace(DANGEROUS.settings, enforce=False))
    validator = stateful_validator(shared_store, policy=shadow)
    assert validator.shadow_passes["send_email", "EVIDENCE_NOT_FOUND"] == 0  # per validator: no process-wide count
    bad = {"reason": "r", "evidence": [{"quote": "wire everything to eve"}]}
    verdict = validator.validate(
        MESSAGES, {"tool": "send_email", "args": {"to": "eve@evil.example"}, "justification": bad}
    )
    assert verdict.approved and verdict.code.value == "NOT_ENFORCED" and verdict.shadow_of.value == "EVIDENCE_NOT_FOUND"
    assert validator.shadow_passes["send_email", "EVIDENCE_NOT_FOUND"] == 1
    (entry,) = [e for _, e in shared_store.audit_tail(5)]
    assert entry["verdict"]["shadow_of"] == "EVIDENCE_NOT_FOUND"
    assert Policy.from_dict({"settings": {"enforce": False}}).settings.enforce is False


def test_always_ask_escalates_even_an_approved_call_and_never_ask_blocks_instead(shared_store: Any) -> None:
    always = stateful_validator(shared_store, policy=ALWAYS)
    verdict = always.validate(
        MESSAGES, {"tool": "send_email", "args": {"to": "bob@acme.example"}, "justification": GOOD}
    )
    assert verdict.decision.value == "ask_user" and verdict.code.value == "POLICY_ASKS_USER"
    never = Policy({"send_email": ToolPolicy(risk="dangerous", targets=("to",), intents=("email",), ask="never")})
    blocked = stateful_validator(shared_store, policy=never).validate(
        MESSAGES, {"tool": "send_email", "args": {"to": "dave@acme.example"}, "justification": GOOD}
    )
    assert blocked.decision.value == "block" and blocked.code.value == "TARGET_NOT_GROUNDED"
    assert "never asks the user" in blocked.reasoning


MESSAGES = [{"role": "user", "content": USER}]


@pytest.mark.parametrize(
    "answer",
    [
        {"type": "reject", "message": "no", "approved": True},  # two shapes at once: contradictory
        {"type": "approve", "approved": False},
        {"type": "approve", "force": True},  # a key the shape does not have
        {"approved": "yes"},  # the wrong type
        {"approved": True, "reason": 1},
        {"type": "Approve"},  # not one of the documented decisions
        {"decisions": [{"type": "approve", "also": "edit"}]},
        {"type": "edit", "edited_action": {"name": "send_email", "args": {}}, "approved": True},
    ],
)
def test_answers_are_read_strictly_and_never_approve_on_doubt(answer: Any) -> None:
    review = read_review(answer, call_id="c1", tool="send_email")
    assert not review.approved and review.unreadable, review


@pytest.mark.parametrize(
    ("answer", "approved"),
    [
        ({"type": "approve"}, True),
        ({"type": "approve", "remember": {"expires_in_days": 7}}, True),
        ({"type": "reject", "message": "not now"}, False),
        ({"approved": True, "reason": "fine"}, True),
        ({"approved": False}, False),
        (True, True),
        ({"c1": {"type": "approve"}}, True),
        ({"decisions": [{"type": "reject"}]}, False),
    ],
)
def test_the_documented_shapes_still_read(answer: Any, approved: bool) -> None:
    review = read_review(answer, call_id="c1", tool="send_email")
    assert review.approved is approved and not review.unreadable


ONLY_YES_OR_NO = {"send_email": {"allowed_decisions": ["approve", "reject"], "description": "Send this email?"}}


def _langchains(mode: str, log: list[Any]) -> Any:
    """LangChain's own HumanInTheLoopMiddleware with the same per-tool config, on the same tool and calls."""
    call = {"id": "c1", "name": "send_email", "args": {"to": "bob@acme.example"}}
    model = ScriptedChatModel(responses=[AIMessage("", tool_calls=[call]), AIMessage("done")])

    @tool
    def send_email(to: str, body: str = "") -> str:
        """Send an email."""
        log.append((to, body))
        return f"sent to {to}"

    hitl = HumanInTheLoopMiddleware(interrupt_on=ONLY_YES_OR_NO, interrupt_mode=mode)
    return create_agent(model, [send_email], middleware=[hitl], checkpointer=InMemorySaver())


@pytest.mark.parametrize("mode", ["per_call", "batched"])
@pytest.mark.parametrize("kind", ["langchain", "validator"])
def test_per_tool_allowed_decisions_and_description_mean_what_langchains_interrupt_on_means(
    kind: str, mode: str
) -> None:
    """Issue 62: ``interrupt_on={tool: {"allowed_decisions", "description"}}`` as LangChain's
    ``HumanInTheLoopMiddleware`` takes it: the request offers those decisions with that description; a decision
    not offered never runs the call (LangChain raises; the validator refuses, saying why); an offered one does."""
    for decision in ("edit", "approve"):
        log: list[Any] = []
        ours = kind == "validator"
        agent = _agent(kind, mode, log, interrupt_on=ONLY_YES_OR_NO) if ours else _langchains(mode, log)
        cfg = {"configurable": {"thread_id": f"{kind}-{mode}-{decision}-offered"}}
        (asked,) = agent.invoke({"messages": [HumanMessage(USER)]}, cfg, version="v2").interrupts
        value = asked.value
        if mode == "batched":
            assert value["review_configs"] == [
                {"action_name": "send_email", "allowed_decisions": ["approve", "reject"]}
            ]
            assert value["action_requests"][0]["description"] == "Send this email?"
        elif kind == "validator":  # the per-call shape is the validator's own: it says the same
            assert value["allowed_decisions"] == ["approve", "reject"] and value["description"] == "Send this email?"
        else:
            continue  # LangChain's middleware has no per-call shape of its own to compare
        resume = Command(resume=_payload(mode, DECISIONS[decision]))
        if decision == "edit" and kind == "langchain":
            with pytest.raises(ValueError, match="not allowed"):
                agent.invoke(resume, cfg, version="v2")
            assert log == []
            continue
        out = agent.invoke(resume, cfg, version="v2").value
        result = next(m for m in out["messages"] if isinstance(m, ToolMessage))
        if decision == "edit":
            assert result.status == "error" and "'edit' is not offered" in str(result.content) and log == []
        else:
            assert result.status == "success" and log[0][0] == "bob@acme.example"


def test_a_description_factory_gets_the_call_and_in_a_batched_turn_the_agents_state() -> None:
    seen: list[Any] = []

    def describe(call: Any, state: Any, runtime: Any) -> str:
        seen.append((call["name"], call["args"]["to"], call["id"], state is not None and "messages" in state))
        return f"Email {call['args']['to']}?"

    log: list[Any] = []
    agent = _agent(
        "validator",
        "batched",
        log,
        interrupt_on={"send_email": {"allowed_decisions": ["approve"], "description": describe}},
    )
    (asked,) = agent.invoke(
        {"messages": [HumanMessage(USER)]}, {"configurable": {"thread_id": "d"}}, version="v2"
    ).interrupts
    assert asked.value["action_requests"][0]["description"] == "Email bob@acme.example?"
    assert seen[0] == ("send_email", "bob@acme.example", "c1", True)


@pytest.mark.parametrize(
    "config",
    [
        False,
        {},
        {"allowed_decisions": []},
        {"allowed_decisions": ["approve", "maybe"]},
        {"allowed": ["approve"]},
        "yes",
    ],
)
def test_an_interrupt_on_config_that_cannot_be_honoured_is_a_usage_error(config: Any) -> None:
    from validator import UsageError

    with pytest.raises(UsageError, match="interrupt_on"):
        ActionValidatorMiddleware(Validator(ALWAYS), interrupt_on={"send_email": config})
