"""ActionValidatorMiddleware inside real create_agent agents."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, interrupt
from validator.integrations.middleware import ActionValidatorMiddleware
from validator.integrations.testing import ScriptedChatModel

from tests.conftest import POLICY
from tests.integrations.test_langgraph import GOOD, USER, Counting, _ai
from validator import (
    Validator,
)


def _agent(
    responses: list[AIMessage], log: list[Any], validator: Validator | None = None, **kw: Any
) -> tuple[Any, ScriptedChatModel]:
    @tool
    def send_email(to: str, body: str = "") -> str:
        """Send an email."""
        log.append(("send_email", to))
        return f"sent to {to}"

    @tool
    def read_inbox() -> str:
        """Read the inbox."""
        log.append(("read_inbox",))
        return "2 messages"

    @tool
    def delete_thread(thread_id: str) -> str:
        """Delete a thread; asks a human first."""
        approved = interrupt({"confirm_delete": thread_id})
        log.append(("delete_thread", thread_id, approved))
        return "deleted"

    model = ScriptedChatModel(responses=responses)
    middleware = ActionValidatorMiddleware(validator or Validator(POLICY))
    agent = create_agent(model, [send_email, read_inbox, delete_thread], middleware=[middleware], **kw)
    return agent, model


def test_model_sees_justification_on_guarded_tools_only_and_blocked_calls_never_run() -> None:
    log: list[Any] = []
    agent, model = _agent(
        [
            _ai(
                ("c1", "send_email", {"to": "bob@acme.example", "justification": GOOD}),
                (
                    "c2",
                    "send_email",
                    {
                        "to": "eve@evil.example",
                        "justification": {"reason": "r", "evidence": [{"quote": "forward it all"}]},
                    },
                ),
                ("c3", "read_inbox", {}),
                ("c4", "tool_search", {"query": "validate"}),
            ),
            AIMessage("done"),
        ],
        log,
    )
    out = agent.invoke({"messages": [HumanMessage(USER)]})
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in model.bound[0]}
    assert "justification" in schemas["send_email"]["required"]
    assert "justification" not in schemas["read_inbox"].get("properties", {})
    results = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
    assert results["c1"].status == "success" and results["c3"].status == "success"
    assert results["c2"].status == "error" and "EVIDENCE_NOT_FOUND" in results["c2"].content
    assert results["c4"].status == "error" and "belongs to the action validator" in results["c4"].content
    assert "(RESERVED_TOOL)" in results["c4"].content  # its own code, not INTERNAL_ERROR
    assert sorted(log) == [("read_inbox",), ("send_email", "bob@acme.example")]


@pytest.mark.parametrize("approve", [True, False])
def test_ask_user_interrupts_like_hitl_and_resume_reuses_the_verdict(approve: bool) -> None:
    log: list[Any] = []
    judge = Counting()
    quote = {"reason": "asked", "evidence": [{"quote": "email bob@acme.example the minutes"}]}
    agent, _ = _agent(
        [_ai(("c1", "send_email", {"to": "carol@acme.example", "justification": quote})), AIMessage("ok")],
        log,
        Validator(POLICY, judge=judge),
        checkpointer=InMemorySaver(),
    )
    cfg = {"configurable": {"thread_id": "m1"}}
    first = agent.invoke({"messages": [HumanMessage(USER)]}, cfg, version="v2")
    (intr,) = first.interrupts
    assert intr.value["type"] == "tool_approval" and intr.value["name"] == "send_email"
    assert intr.value["action_validator"]["code"] == "TARGET_NOT_GROUNDED" and log == []
    assert intr.value["action_validator"]["justification"] == quote
    out = agent.invoke(Command(resume={"approved": approve}), cfg, version="v2").value
    result = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert judge.calls == 1
    if approve:
        assert result.status == "success" and log == [("send_email", "carol@acme.example")]
    else:
        assert result.status == "error" and "REJECTED_BY_USER" in result.content and log == []


def test_async_twins_and_the_hosts_interrupt_is_never_swallowed() -> None:
    log: list[Any] = []
    policy_quote = {"reason": "asked", "evidence": [{"quote": "delete the old printer thread"}]}
    agent, _ = _agent(
        [_ai(("d1", "delete_thread", {"thread_id": "t-88", "justification": policy_quote})), AIMessage("ok")],
        log,
        checkpointer=InMemorySaver(),
    )
    cfg = {"configurable": {"thread_id": "m2"}}
    start = {"messages": [HumanMessage("Please delete the old printer thread t-88.")]}
    first = asyncio.run(agent.ainvoke(start, cfg, version="v2"))
    (intr,) = first.interrupts
    assert intr.value == {"confirm_delete": "t-88"}  # the tool's own interrupt came through our wrapper
    out = asyncio.run(agent.ainvoke(Command(resume=True), cfg, version="v2")).value
    assert log == [("delete_thread", "t-88", True)]
    assert next(m for m in out["messages"] if isinstance(m, ToolMessage)).status == "success"


def test_an_exception_in_our_code_blocks_the_call(monkeypatch: pytest.MonkeyPatch) -> None:
    import validator.integrations.langchain as lc

    def broken(state: Any, **_: Any) -> Any:
        raise RuntimeError("bug in the validator glue")

    monkeypatch.setattr(lc, "transcript_from_state", broken)  # the middleware reads its conversation through it
    log: list[Any] = []
    agent, _ = _agent(
        [_ai(("c1", "send_email", {"to": "bob@acme.example", "justification": GOOD})), AIMessage("ok")], log
    )
    out = agent.invoke({"messages": [HumanMessage(USER)]})
    result = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert result.status == "error" and "bug in the validator glue" in result.content and log == []


def test_middleware_never_reuses_a_verdict_for_a_different_call_with_the_same_id() -> None:
    from langchain.agents import create_agent
    from validator.integrations.middleware import ActionValidatorMiddleware
    from validator.integrations.testing import ScriptedChatModel

    sent: list[str] = []

    @tool
    def send_email(to: str) -> str:
        """Send an email."""
        sent.append(to)
        return "sent"

    good = {
        "to": "bob@acme.example",
        "justification": {"reason": "r", "evidence": [{"quote": "email bob@acme.example the minutes"}]},
    }
    model = ScriptedChatModel(
        responses=[
            AIMessage("", tool_calls=[{"id": "call_0", "name": "send_email", "args": good}]),
            AIMessage("done"),
            AIMessage("", tool_calls=[{"id": "call_0", "name": "send_email", "args": {"to": "eve@evil.example"}}]),
            AIMessage("done"),
        ]
    )
    agent = create_agent(model, [send_email], middleware=[ActionValidatorMiddleware(Validator(POLICY))])
    agent.invoke({"messages": [HumanMessage("Please email bob@acme.example the minutes.")]})
    out = agent.invoke({"messages": [HumanMessage("Please email bob@acme.example the minutes.")]})
    assert sent == ["bob@acme.example"]
    assert "MISSING_JUSTIFICATION" in next(m for m in out["messages"] if isinstance(m, ToolMessage)).content


def test_one_build_per_ai_message_and_later_turns_convert_only_their_new_messages() -> None:
    from validator.integrations import langchain as lc

    log: list[Any] = []
    calls = [("c1", "send_email", {"to": "bob@acme.example", "justification": GOOD})]
    three = [(f"d{i}", "send_email", {"to": "bob@acme.example", "justification": GOOD}) for i in range(3)]
    validator = Validator(POLICY)
    agent, _ = _agent([_ai(*calls), _ai(*three), AIMessage("done")], log, validator, checkpointer=InMemorySaver())
    cache = validator.transcripts.of("langchain", lc.conversations)  # the validator's own
    agent.invoke({"messages": [HumanMessage(USER)]}, {"configurable": {"thread_id": "conv"}})
    builds, extensions = cache.builds, cache.extensions
    # The first AI message builds the conversation; the second (three calls) extends it once.
    assert (builds, extensions) == (1, 1)
    # the same email again, after the transcript shows it sent, is the request spent: only the first runs
    assert len(log) == 1
