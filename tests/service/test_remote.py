"""RemoteValidator: a create_agent agent whose checks and the user's answers go to a live service (issue 23)."""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from validator.integrations.middleware import ActionValidatorMiddleware
from validator.integrations.service import RemoteValidator, ServiceConfig
from validator.integrations.testing import ScriptedChatModel

from tests.service.conftest import free_port, start
from tests.service.test_service import call
from validator import Policy, examples

POLICY = Policy.load(examples.policy_path())
USER = "Please email marta@acme.example that the Q3 report is ready."
QUOTE = {"reason": "asked", "evidence": [{"quote": "email marta@acme.example that the Q3 report is ready"}]}


def _agent(validator: Any, to: str, sent: list[str]) -> Any:
    @tool
    def send_email(to: str, body: str) -> str:
        """Send an email."""
        sent.append(to)
        return "sent"

    args = {"to": to, "body": "The Q3 report is ready.", "justification": QUOTE}
    model = ScriptedChatModel(
        responses=[AIMessage("", tool_calls=[{"id": "c1", "name": "send_email", "args": args}]), AIMessage("ok")]
    )
    middleware = [ActionValidatorMiddleware(validator)]
    return create_agent(model, [send_email], middleware=middleware, checkpointer=InMemorySaver())


def test_checks_and_answers_go_to_the_service_and_what_it_refuses_never_runs() -> None:
    running = start(ServiceConfig(policy=POLICY))
    try:
        agent_token = running.tenants.create("acme", ["check"])
        answering = running.tenants.create("acme", ["answer"])
        remote = RemoteValidator(running.url, agent_token, policy=POLICY, answer_token=answering)
        cfg = {"configurable": {"thread_id": "t", "user_id": "u-1"}}
        sent: list[str] = []
        _agent(remote, "marta@acme.example", sent).invoke({"messages": [HumanMessage(USER)]}, cfg)
        assert sent == ["marta@acme.example"]  # approved by the service
        asked: list[str] = []
        agent = _agent(remote, "carol@acme.example", asked)
        first = agent.invoke(
            {"messages": [HumanMessage(USER)]}, cfg | {"configurable": {"thread_id": "t2"}}, version="v2"
        )
        assert first.interrupts and asked == []
        agent.invoke(Command(resume={"type": "approve"}), cfg | {"configurable": {"thread_id": "t2"}}, version="v2")
        assert asked == ["carol@acme.example"]
        status, entries = call(running.url, "/v1/audit", running.token)
        assert status == 200 and entries[-1]["verdict"]["code"] == "APPROVED_BY_USER"  # recorded by the service
    finally:
        running.stop()


def test_a_service_that_cannot_be_reached_refuses_every_call() -> None:
    remote = RemoteValidator(f"http://127.0.0.1:{free_port()}", "vt_x", policy=POLICY, timeout=2)
    sent: list[str] = []
    out = _agent(remote, "marta@acme.example", sent).invoke(
        {"messages": [HumanMessage(USER)]}, {"configurable": {"thread_id": "d"}}
    )
    (refusal,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert sent == [] and refusal.status == "error" and "SERVICE_UNAVAILABLE" in str(refusal.content)
