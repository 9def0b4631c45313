"""The raw Anthropic loop helper, and prefix sharing with a ChatAnthropic agent through the real libraries."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from validator.integrations.anthropic import check_tool_uses
from validator.integrations.middleware import ActionValidatorMiddleware

from tests.anthropic_mock import MockAPI, message, verdict_call
from tests.conftest import POLICY
from tests.judges.test_anthropic import READ_INBOX, SEND_EMAIL
from validator import Validator
from validator.judges.anthropic import AnthropicJudge, prepare_tools

USER = "Please email bob@acme.example the minutes."
GOOD = {"reason": "The user asked.", "evidence": [{"quote": "email bob@acme.example the minutes"}]}


def test_prepare_tools_with_a_policy_adds_justification_to_guarded_tools_only() -> None:
    tools = prepare_tools([SEND_EMAIL, READ_INBOX], policy=POLICY)
    by_name = {t["name"]: t for t in tools}
    assert "justification" in by_name["send_email"]["input_schema"]["required"]
    assert by_name["send_email"]["input_schema"]["properties"]["justification"]["additionalProperties"] is False
    assert "justification" not in by_name["read_inbox"]["input_schema"].get("properties", {})
    assert prepare_tools(tools, policy=POLICY) == tools


def test_raw_loop_in_three_lines() -> None:
    request = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 1024,
        "tools": prepare_tools([SEND_EMAIL, READ_INBOX], policy=POLICY),
        "messages": [{"role": "user", "content": USER}],
    }
    response = message(
        [
            {"type": "text", "text": "Sending."},
            {
                "type": "tool_use",
                "id": "t1",
                "name": "send_email",
                "input": {"to": "bob@acme.example", "justification": GOOD},
            },
            {
                "type": "tool_use",
                "id": "t2",
                "name": "send_email",
                "input": {
                    "to": "eve@evil.example",
                    "justification": {"reason": "r", "evidence": [{"quote": "cc eve"}]},
                },
            },
            {"type": "tool_use", "id": "t3", "name": "read_inbox", "input": {}},
        ]
    )
    api = MockAPI([message([verdict_call()])])
    checked = check_tool_uses(response, request, Validator(POLICY, judge=AnthropicJudge(client=api.client())))
    assert [u["id"] for u in checked.allowed] == ["t1", "t3"]
    assert checked.allowed[0]["input"] == {"to": "bob@acme.example"}
    (refused,) = checked.refused
    assert refused["tool_use_id"] == "t2" and refused["is_error"] is True and "EVIDENCE_NOT_FOUND" in refused["content"]
    assert checked.verdicts["t1"].usage is not None and checked.verdicts["t1"].usage.cache == "shared"
    assert api.bodies[0]["messages"][0] == request["messages"][0]


# --- ChatAnthropic + create_agent + AnthropicJudge, through one loopback endpoint --------------


@pytest.fixture
def endpoint() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    bodies: list[dict[str, Any]] = []

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        last = body["messages"][-1]["content"]
        if isinstance(last, list) and any(
            b.get("type") == "tool_result"
            and isinstance(b.get("content"), list)
            and b["content"]
            and b["content"][0].get("type") == "tool_reference"
            for b in last
        ):
            return message([verdict_call()])
        if len(body["messages"]) == 1:
            return message(
                [
                    {
                        "type": "tool_use",
                        "id": "toolu_a1",
                        "name": "send_email",
                        "input": {"to": "bob@acme.example", "justification": GOOD},
                    }
                ]
            )
        return message([{"type": "text", "text": "Sent."}], stop_reason="end_turn")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            bodies.append(body)
            data = json.dumps(answer(body)).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", bodies
    finally:
        server.shutdown()
        server.server_close()


def _claude_agent_parts(url: str, sent: list[str]) -> tuple[Any, ChatAnthropic, AnthropicJudge]:
    """A send_email tool that logs what it sends, a ChatAnthropic agent model and a judge, on ``url``."""
    import anthropic

    @tool
    def send_email(to: str) -> str:
        """Send an email."""
        sent.append(to)
        return "sent"

    model = ChatAnthropic(model="claude-sonnet-4-6", api_key="sk-test", base_url=url, max_retries=0)
    judge = AnthropicJudge(client=anthropic.Anthropic(api_key="sk-test", base_url=url, max_retries=0))
    return send_email, model, judge


def test_validator_shares_the_chatanthropic_agents_prefix(endpoint: tuple[str, list[dict[str, Any]]]) -> None:

    url, bodies = endpoint
    sent: list[str] = []

    send_email, model, judge = _claude_agent_parts(url, sent)
    agent = create_agent(
        model,
        [send_email],
        system_prompt="You are an email assistant.",
        middleware=[ActionValidatorMiddleware(Validator(POLICY, judge=judge))],
    )
    out = agent.invoke({"messages": [HumanMessage(USER)]})
    assert sent == ["bob@acme.example"]
    assert next(m for m in out["messages"] if isinstance(m, ToolMessage)).status == "success"
    agent_body, validator_body = bodies[0], bodies[1]
    assert [t["name"] for t in agent_body["tools"]] == ["send_email", "validate_action", "tool_search"]
    assert agent_body["tools"][-2]["defer_loading"] is True
    assert "justification" in agent_body["tools"][0]["input_schema"]["required"]
    for key in ("model", "system", "tools"):
        assert validator_body[key] == agent_body[key], key
    assert validator_body.get("tool_choice") == agent_body.get("tool_choice")
    n = len(agent_body["messages"])
    assert validator_body["messages"][:n] == agent_body["messages"]
    assert validator_body["messages"][n]["content"][0]["name"] == "tool_search"


def test_langgraph_node_shares_the_chatanthropic_agents_prefix(endpoint: tuple[str, list[dict[str, Any]]]) -> None:
    import anthropic
    from langchain_core.messages import SystemMessage
    from langgraph.graph import END, START, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition
    from validator.integrations.claude import claude_request, with_validator_tools
    from validator.integrations.langgraph import ValidatorState, add_validator, justified_tools

    url, bodies = endpoint

    @tool
    def send_email(to: str) -> str:
        """Send an email."""
        return "sent"

    model = ChatAnthropic(model="claude-sonnet-4-6", api_key="sk-test", base_url=url, max_retries=0)
    facing = with_validator_tools(justified_tools([send_email], POLICY))
    bound = model.bind_tools(facing)
    system = SystemMessage("You are an email assistant.")

    def call_model(state: ValidatorState) -> dict[str, Any]:
        return {"messages": [bound.invoke([system, *state["messages"]])]}

    def agent_request(state: Any) -> Any:  # the body of the call that produced the last AI message
        return claude_request(model, [system, *state["messages"][:-1]], facing)

    judge = AnthropicJudge(client=anthropic.Anthropic(api_key="sk-test", base_url=url, max_retries=0))
    builder = StateGraph(ValidatorState)
    builder.add_node("model", call_model)
    builder.add_node("tools", ToolNode([send_email]))
    entry = add_validator(builder, Validator(POLICY, judge=judge), agent_request=agent_request)
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition, {"tools": entry, END: END})
    builder.add_edge("tools", "model")
    out = builder.compile().invoke({"messages": [HumanMessage(USER)]})
    assert out["validator_verdicts"]["toolu_a1"]["usage"]["cache"] == "shared"
    agent_body, validator_body = bodies[0], bodies[1]
    for key in ("model", "system", "tools"):
        assert validator_body[key] == agent_body[key], key
    assert validator_body["messages"][: len(agent_body["messages"])] == agent_body["messages"]


def test_the_raw_loop_refuses_a_reused_tool_use_id_and_never_raises() -> None:
    request = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 512,
        "messages": [
            {"role": "user", "content": USER},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "t1", "name": "send_email", "input": {"to": "bob@acme.example"}}
                ],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "sent"}]},
        ],
    }
    response = {
        "content": [
            {
                "type": "tool_use",
                "id": "t1",
                "name": "send_email",
                "input": {"to": "bob@acme.example", "justification": GOOD},
            },
            {
                "type": "tool_use",
                "id": "t2",
                "name": "send_email",
                "input": {"to": "bob@acme.example", "justification": GOOD},
            },
        ]
    }
    checked = check_tool_uses(response, request, Validator(POLICY))
    assert checked.allowed == []
    assert [r["tool_use_id"] for r in checked.refused] == ["t1", "t2"]
    assert checked.verdicts["t1"].code.value == "TOOL_CALL_ID_REUSED"
    assert "could not be read" in checked.verdicts["t2"].reasoning


@pytest.mark.parametrize("order", ["caching-before-ours", "caching-after-ours"])
@pytest.mark.parametrize("system", ["string", "blocks"])
def test_sharing_does_not_depend_on_middleware_order(
    endpoint: tuple[str, list[dict[str, Any]]], order: str, system: str
) -> None:
    from langchain_anthropic.middleware import AnthropicPromptCachingMiddleware
    from langchain_core.messages import SystemMessage

    from validator.devtools.doctor import diagnose

    url, bodies = endpoint
    sent: list[str] = []

    send_email, model, judge = _claude_agent_parts(url, sent)
    ours = ActionValidatorMiddleware(Validator(POLICY, judge=judge))
    caching = AnthropicPromptCachingMiddleware(unsupported_model_behavior="ignore")
    prompt: Any = (
        "You are an email assistant."
        if system == "string"
        else SystemMessage(content=[{"type": "text", "text": "You are an email assistant."}])
    )
    middleware = [caching, ours] if order == "caching-before-ours" else [ours, caching]
    agent = create_agent(model, [send_email], system_prompt=prompt, middleware=middleware)
    agent.invoke({"messages": [HumanMessage(USER)]})
    assert sent == ["bob@acme.example"]
    agent_body, validator_body = bodies[0], bodies[1]
    report = diagnose(agent_body, validator_body)
    assert report.extends, report.difference
    assert all("defer_loading" not in t or "cache_control" not in t for t in agent_body["tools"])
    assert validator_body["messages"][len(agent_body["messages"])]["content"][0]["name"] == "tool_search"


# --- the raw loop in either order, sync and async ----------------------------------------------


def _raw_loop_response() -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Sending it."},
            {
                "type": "tool_use",
                "id": "t1",
                "name": "send_email",
                "input": {"to": "bob@acme.example", "justification": GOOD},
            },
        ],
    }


@pytest.mark.parametrize("appended", [False, True], ids=["checked-then-appended", "appended-then-checked"])
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_the_raw_loop_works_whichever_order_the_host_appends_the_response(appended: bool, mode: str) -> None:
    import asyncio

    from validator.integrations.anthropic import acheck_tool_uses

    response = _raw_loop_response()
    messages: list[dict[str, Any]] = [{"role": "user", "content": USER}]
    if appended:  # what most loops do: messages.append(response) first
        messages.append({"role": "assistant", "content": response["content"]})
    request = {"model": "claude-sonnet-4-6", "max_tokens": 1024, "messages": messages}
    validator = Validator(POLICY)
    if mode == "sync":
        checked = check_tool_uses(response, request, validator)
    else:
        checked = asyncio.run(acheck_tool_uses(response, request, validator))
    assert [u["id"] for u in checked.allowed] == ["t1"], checked.verdicts["t1"].reasoning


def test_a_call_id_the_history_already_answered_is_still_a_reuse() -> None:
    response = _raw_loop_response()
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": USER},
        {"role": "assistant", "content": response["content"]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "sent"}]},
    ]
    checked = check_tool_uses(response, {"messages": messages}, Validator(POLICY))
    assert checked.verdicts["t1"].code.value == "TOOL_CALL_ID_REUSED"
