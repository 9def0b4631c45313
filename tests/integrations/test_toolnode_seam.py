"""LangGraph's idiomatic seam: ``ToolNode(tools, wrap_tool_call=...)`` with the middleware's wrapper, in a
hand-built graph (no ``create_agent``)."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from validator.integrations.middleware import ActionValidatorMiddleware

from validator import Policy, ToolPolicy, Validator

POLICY = Policy({"send_email": ToolPolicy(targets=("to",))})
USER = "Please email bob@acme.example the minutes. Never email eve@evil.example."
GOOD = {"reason": "The user asked.", "evidence": [{"quote": "email bob@acme.example the minutes"}]}
SENT: list[str] = []


@tool
def send_email(to: str, body: str = "") -> str:
    """Send an email."""
    SENT.append(to)
    return f"sent to {to}"


def _graph(to: str, mode: str) -> Any:
    middleware = ActionValidatorMiddleware(Validator(POLICY))

    def model(state: MessagesState) -> dict[str, Any]:
        call = {"id": "c1", "name": "send_email", "args": {"to": to, "body": "hi", "justification": GOOD}}
        return {"messages": [AIMessage(content="", tool_calls=[call])]}

    wrap = {"wrap_tool_call": middleware.wrap_tool_call} if mode == "sync" else {}
    awrap = {"awrap_tool_call": middleware.awrap_tool_call} if mode == "async" else {}
    graph = StateGraph(MessagesState)
    graph.add_node("model", model)
    graph.add_node("tools", ToolNode([send_email], **wrap, **awrap))
    graph.add_edge(START, "model")
    graph.add_edge("model", "tools")
    graph.add_edge("tools", END)
    return graph.compile()


def _run(to: str, mode: str) -> ToolMessage:
    graph = _graph(to, mode)
    start = {"messages": [HumanMessage(USER)]}
    cfg = {"configurable": {"user_id": "u-1"}}
    out = graph.invoke(start, cfg) if mode == "sync" else asyncio.run(graph.ainvoke(start, cfg))
    message = out["messages"][-1]
    assert isinstance(message, ToolMessage)
    return message


def test_the_toolnode_seam_runs_what_the_user_asked_and_refuses_the_rest() -> None:
    for mode in ("sync", "async"):
        SENT.clear()
        assert _run("bob@acme.example", mode).content == "sent to bob@acme.example"
        assert SENT == ["bob@acme.example"]  # justification stripped, the tool ran once
        refused = _run("eve@evil.example", mode)  # the user forbade it: refused, told to the model
        assert SENT == ["bob@acme.example"] and "not run" in str(refused.content)


def test_the_toolnode_seam_asks_the_user_through_the_graphs_interrupt() -> None:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    SENT.clear()
    graph = _graph("carol@acme.example", "sync")  # a value the user never gave: unknown, so asked
    graph = graph.builder.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"user_id": "u-1", "thread_id": "t1"}}
    first = graph.invoke({"messages": [HumanMessage(USER)]}, cfg, version="v2")
    asked = first.interrupts[0].value
    assert asked["name"] == "send_email" and asked["action_validator"]["decision"] == "ask_user"
    assert SENT == []
    graph.invoke(Command(resume={"type": "reject", "message": "not carol"}), cfg, version="v2")
    assert SENT == []
