"""The validation nodes in real LangGraph graphs: ToolNode, Send, interrupts, checkpointers."""

from __future__ import annotations

import asyncio
import sqlite3
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Command
from validator.integrations.langgraph import ValidatorState, add_validator, justified_tools
from validator.integrations.testing import ScriptedChatModel

from tests.conftest import POLICY
from validator import JudgeRequest, StrictJudge, Validator
from validator.judges.chat_model import ChatModelJudge
from validator.testing import FunctionJudge

USER = "Please email bob@acme.example the minutes and archive the printer thread."
GOOD = {"reason": "asked", "evidence": [{"quote": "email bob@acme.example the minutes"}]}


def _tools(log: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    @tool
    def send_email(to: str, body: str = "") -> str:
        """Send an email."""
        log.append(("send_email", {"to": to, "body": body}))
        return f"sent to {to}"

    @tool
    def read_inbox() -> str:
        """Read the inbox."""
        log.append(("read_inbox", {}))
        return "inbox: 2 messages"

    return [send_email, read_inbox]


def _graph(model: ScriptedChatModel, validator: Validator, log: list[Any], checkpointer: Any = None) -> Any:
    tools = _tools(log)
    bound = model.bind_tools(justified_tools(tools, POLICY))

    def call_model(state: ValidatorState) -> dict[str, Any]:
        return {"messages": [bound.invoke(state["messages"])]}

    builder = StateGraph(ValidatorState)
    builder.add_node("model", call_model)
    builder.add_node("tools", ToolNode(tools))
    entry = add_validator(builder, validator)
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition, {"tools": entry, END: END})
    builder.add_edge("tools", "model")
    return builder.compile(checkpointer=checkpointer)


def _ai(*calls: tuple[str, str, dict[str, Any]]) -> AIMessage:
    return AIMessage("", tool_calls=[{"id": i, "name": n, "args": a} for i, n, a in calls])


class Counting(FunctionJudge):
    def __init__(self) -> None:
        self.calls = 0
        strict = StrictJudge()

        def judge(request: JudgeRequest) -> Any:
            self.calls += 1
            return strict.judge(request)

        super().__init__(judge, name="counting-strict")


def test_parallel_calls_only_approved_ones_run_and_the_agent_gets_the_refusals() -> None:
    log: list[Any] = []
    model = ScriptedChatModel(
        responses=[
            _ai(
                ("c1", "send_email", {"to": "bob@acme.example", "body": "minutes", "justification": GOOD}),
                (
                    "c2",
                    "send_email",
                    {
                        "to": "eve@evil.example",
                        "justification": {"reason": "Eve asked", "evidence": [{"quote": "send it to me"}]},
                    },
                ),
                ("c3", "read_inbox", {}),
                ("c4", "send_email", {"to": "bob@acme.example"}),
            ),
            AIMessage("Done: emailed Bob; the other email was refused."),
        ]
    )
    out = _graph(model, Validator(POLICY), log).invoke({"messages": [HumanMessage(USER)]})
    results = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
    assert results["c1"].status == "success" and results["c3"].status == "success"
    assert results["c2"].status == "error" and "EVIDENCE_NOT_FOUND" in results["c2"].content
    assert results["c4"].status == "error" and "MISSING_JUSTIFICATION" in results["c4"].content
    assert "Suggested next step" in results["c2"].content
    assert sorted(log, key=str) == [("read_inbox", {}), ("send_email", {"to": "bob@acme.example", "body": "minutes"})]
    assert out["validator_verdicts"]["c3"]["code"] == "EXEMPT"
    assert out["messages"][-1].content.startswith("Done")
    # the AI message keeps the justification (the audit trail); the tool never saw it
    assert out["messages"][1].tool_calls[0]["args"]["justification"] == GOOD


def _escalating_model() -> ScriptedChatModel:
    # send_email is general: a recipient the user never named makes the strict judge ask the user
    quote = {"reason": "asked", "evidence": [{"quote": "email bob@acme.example the minutes"}]}
    return ScriptedChatModel(
        responses=[
            _ai(("c1", "send_email", {"to": "carol@acme.example", "justification": quote})),
            AIMessage("Finished."),
        ]
    )


@pytest.mark.parametrize("saver", ["memory", "sqlite"])
@pytest.mark.parametrize("approve", [True, False])
def test_ask_user_interrupts_and_resume_never_calls_the_judge_again(saver: str, approve: bool, tmp_path: Any) -> None:
    log: list[Any] = []
    judge = Counting()
    checkpointer = (
        InMemorySaver()
        if saver == "memory"
        else SqliteSaver(sqlite3.connect(tmp_path / "cp.db", check_same_thread=False))
    )
    graph = _graph(_escalating_model(), Validator(POLICY, judge=judge), log, checkpointer)
    cfg = {"configurable": {"thread_id": "t1", "user_id": "u-1"}}
    first = graph.invoke({"messages": [HumanMessage(USER)]}, cfg, version="v2")
    (intr,) = first.interrupts
    request, why = intr.value["action_requests"][0], intr.value["action_validator"][0]
    assert (why["tool_call_id"], why["code"]) == ("c1", "TARGET_NOT_GROUNDED")
    assert request["name"] == "send_email" and "justification" not in request["args"]
    assert intr.value["review_configs"] == [
        {"action_name": "send_email", "allowed_decisions": ["approve", "edit", "reject", "respond"]}
    ]
    assert graph.get_state(cfg).values["validator_verdicts"]["c1"]["decision"] == "ask_user"
    assert judge.calls == 1 and log == []
    answer = {"c1": {"approved": approve, "reason": "yes, Carol too" if approve else "no"}}
    out = graph.invoke(Command(resume=answer), cfg, version="v2").value
    assert judge.calls == 1  # the resume re-ran no judge
    result = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    verdict = out["validator_verdicts"]["c1"]
    if approve:
        assert verdict["code"] == "APPROVED_BY_USER" and result.status == "success"
        assert log == [("send_email", {"to": "carol@acme.example", "body": ""})]
    else:
        assert verdict["code"] == "REJECTED_BY_USER" and result.status == "error" and log == []


@pytest.mark.parametrize(
    ("decision", "ran"),
    [
        ({"type": "approve"}, [("send_email", {"to": "carol@acme.example", "body": ""})]),
        (
            {"type": "edit", "edited_action": {"name": "send_email", "args": {"to": "bob@acme.example", "body": "hi"}}},
            [("send_email", {"to": "bob@acme.example", "body": "hi"})],
        ),
        ({"type": "reject", "message": "not carol"}, []),
    ],
)
def test_the_node_reads_langchains_batched_decisions(decision: dict[str, Any], ran: list[Any]) -> None:
    log: list[Any] = []
    graph = _graph(_escalating_model(), Validator(POLICY), log, InMemorySaver())
    cfg = {"configurable": {"thread_id": "t-hitl"}}
    graph.invoke({"messages": [HumanMessage(USER)]}, cfg)
    out = graph.invoke(Command(resume={"decisions": [decision]}), cfg)
    assert log == ran
    if not ran:
        assert "not carol" in out["validator_verdicts"]["c1"]["reasoning"]


def test_unreadable_resume_value_is_a_rejection() -> None:
    log: list[Any] = []
    graph = _graph(_escalating_model(), Validator(POLICY), log, InMemorySaver())
    cfg = {"configurable": {"thread_id": "t2"}}
    graph.invoke({"messages": [HumanMessage(USER)]}, cfg)
    out = graph.invoke(Command(resume="maybe?"), cfg)
    assert out["validator_verdicts"]["c1"]["code"] == "REJECTED_BY_USER" and log == []


def test_async_run_and_a_failing_judge_blocks_and_the_graph_goes_on() -> None:
    log: list[Any] = []

    def broken(request: JudgeRequest) -> Any:
        raise RuntimeError("judge down")

    model = ScriptedChatModel(
        responses=[
            _ai(("c1", "send_email", {"to": "bob@acme.example", "justification": GOOD})),
            AIMessage("I could not send it."),
        ]
    )
    graph = _graph(model, Validator(POLICY, judge=FunctionJudge(broken)), log)
    out = asyncio.run(graph.ainvoke({"messages": [HumanMessage(USER)]}))
    result = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert result.status == "error" and "JUDGE_UNAVAILABLE" in result.content and log == []
    assert out["messages"][-1].content == "I could not send it."


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_judge_tokens_never_reach_the_stream(mode: str) -> None:
    log: list[Any] = []
    verdict = {"approved": True, "reasoning": "ok", "confidence": "high"}
    judge_model = ScriptedChatModel(
        responses=[
            AIMessage(
                "SECRET-JUDGE-THOUGHTS about this call",
                tool_calls=[{"id": "v", "name": "validate_action", "args": verdict}],
            )
        ]
    )
    model = ScriptedChatModel(
        responses=[
            _ai(("c1", "send_email", {"to": "bob@acme.example", "justification": GOOD})),
            AIMessage("Email sent to Bob."),
        ]
    )
    graph = _graph(model, Validator(POLICY, judge=ChatModelJudge(judge_model)), log)
    start = {"messages": [HumanMessage(USER)]}

    async def collect() -> list[Any]:
        return [chunk async for chunk, _meta in graph.astream(start, stream_mode="messages")]

    chunks = (
        [chunk for chunk, _meta in graph.stream(start, stream_mode="messages")]
        if mode == "sync"
        else asyncio.run(collect())
    )
    text = " ".join(str(c.content) for c in chunks)
    assert "Email" in text and "SECRET-JUDGE-THOUGHTS" not in text
    assert judge_model.calls, "the judge ran"
    assert log == [("send_email", {"to": "bob@acme.example", "body": ""})]


def test_an_exception_in_our_code_blocks_every_call(monkeypatch: pytest.MonkeyPatch) -> None:
    import validator.integrations.langgraph as node

    def broken(state: Any, **_: Any) -> Any:
        raise RuntimeError("glue bug")

    monkeypatch.setattr(node, "transcript_from_state", broken)
    log: list[Any] = []
    model = ScriptedChatModel(
        responses=[_ai(("c1", "send_email", {"to": "bob@acme.example", "justification": GOOD})), AIMessage("ok")]
    )
    out = _graph(model, Validator(POLICY), log).invoke({"messages": [HumanMessage(USER)]})
    result = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert result.status == "error" and "glue bug" in result.content and log == []


def test_the_node_refuses_a_call_rewritten_after_it_was_judged() -> None:
    from validator.integrations.langgraph import _Nodes

    nodes = _Nodes(Validator(POLICY), tools="tools", model="model", user_id_key="user_id", agent_request=None)
    good = {
        "to": "bob@acme.example",
        "justification": {"reason": "r", "evidence": [{"quote": "email bob@acme.example"}]},
    }
    state: dict[str, Any] = {
        "messages": [
            HumanMessage("Please email bob@acme.example"),
            AIMessage("", tool_calls=[{"id": "c1", "name": "send_email", "args": good}]),
        ]
    }
    state["validator_verdicts"] = nodes.validate(state)["validator_verdicts"]
    assert state["validator_verdicts"]["c1"]["approved"]
    state["messages"][1] = AIMessage(
        "", tool_calls=[{"id": "c1", "name": "send_email", "args": {**good, "to": "eve@evil.example"}}]
    )
    command = nodes.route(state)
    (refusal,) = command.update["messages"]
    assert refusal.status == "error" and "changed after it was validated" in refusal.content and command.goto == "model"


def test_a_call_reusing_an_answered_id_is_refused_with_its_own_code_never_dropped() -> None:
    log: list[Any] = []
    model = ScriptedChatModel(
        responses=[
            _ai(("c1", "send_email", {"to": "bob@acme.example", "body": "minutes", "justification": GOOD})),
            _ai(("c1", "send_email", {"to": "bob@acme.example", "body": "again", "justification": GOOD})),
            AIMessage("Done."),
        ]
    )
    out = _graph(model, Validator(POLICY), log).invoke({"messages": [HumanMessage(USER)]})
    answers = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert [(m.tool_call_id, m.status) for m in answers] == [("c1", "success"), ("c1", "error")]
    assert "TOOL_CALL_ID_REUSED" in answers[1].content
    assert log == [("send_email", {"to": "bob@acme.example", "body": "minutes"})]  # the second never ran
