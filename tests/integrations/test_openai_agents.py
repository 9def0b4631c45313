"""ToolGuard inside real OpenAI Agents SDK runs, driven by the SDK's ScriptedModel (no network, no key)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, FunctionTool, Runner, WebSearchTool, function_tool, set_tracing_disabled
from agents.exceptions import ToolInputGuardrailTripwireTriggered
from agents.testing import ScriptedModel, assistant_message, function_call
from agents.tool_context import ToolContext
from validator.integrations._host import justification_description
from validator.integrations.openai_agents import ToolGuard, transcript_from_items

from validator import Code, MemoryRecorder, Policy, Validator, Verdict, examples
from validator.exceptions import UsageError

set_tracing_disabled(True)

ROOT = Path(__file__).resolve().parents[2]
POLICY = Policy.load(examples.policy_path())
INVOICE = json.loads(examples.check_path("vendor_invoice").read_text())
VENDOR_TEXT = INVOICE["messages"][2]["content"]
EMAIL_REQUEST = "Please email marta@acme.example that the Q3 report is ready."
EMAIL_QUOTE = {
    "reason": "The user asked me to tell Marta.",
    "evidence": [{"quote": "email marta@acme.example that the Q3 report is ready"}],
}
HIJACK = {**INVOICE["action"]["args"], "justification": INVOICE["action"]["justification"]}
UNGROUNDED = {
    "to": "carol@acme.example",
    "body": "The Q3 report is ready.",
    "justification": {"reason": "The user wants the team lead told.", "evidence": [{"quote": "email the Q3 report"}]},
}


class Tools:
    """The example assistant's tools; ``ran`` logs every call that really ran, with its arguments."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, dict[str, Any]]] = []

    def all(self) -> list[FunctionTool]:
        @function_tool
        def read_inbox() -> str:
            """Read the inbox."""
            self.ran.append(("read_inbox", {}))
            return str(VENDOR_TEXT)

        @function_tool
        def send_money(recipient: str, amount: float) -> str:
            """Send money to an IBAN."""
            self.ran.append(("send_money", {"recipient": recipient, "amount": amount}))
            return "paid"

        @function_tool
        def send_email(to: str, body: str) -> str:
            """Send an email."""
            self.ran.append(("send_email", {"to": to, "body": body}))
            return f"sent to {to}"

        return [read_inbox, send_money, send_email]


def validator() -> Validator:
    return Validator(POLICY, recorder=MemoryRecorder())


def events(v: Validator) -> list[Any]:
    assert isinstance(v.recorder, MemoryRecorder)
    return list(v.recorder.events)


def recorded(v: Validator) -> list[Code]:
    return [e.verdict.code for e in events(v)]


def agent(guard: ToolGuard, model: ScriptedModel, tools: Tools) -> Agent[Any]:
    return guard.agent(Agent(name="assistant", model=model, tools=list(tools.all())))


def outputs(model: ScriptedModel) -> dict[str, str]:
    """Every tool result the model was shown, by call id."""
    return {
        str(item["call_id"]): str(item["output"])
        for call in model.calls
        if isinstance(call.input, list)
        for item in call.input
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    }


def test_the_vendor_invoice_is_refused_and_the_model_reads_why() -> None:
    tools, v = Tools(), validator()
    model = ScriptedModel(
        [
            [function_call("read_inbox", {}, call_id="c1")],
            [function_call("send_money", HIJACK, call_id="c2")],
            [assistant_message("Invoice 443 is overdue.")],
        ]
    )
    result = Runner.run_sync(agent(ToolGuard(v, user_id="u-1"), model, tools), "Summarize my inbox, please.")
    assert result.final_output == "Invoice 443 is overdue."
    assert tools.ran == [("read_inbox", {})]  # the payment never ran
    assert outputs(model)["c2"].startswith("Action `send_money` was not run (EVIDENCE_NOT_FROM_USER)")
    assert recorded(v) == [Code.EXEMPT, Code.EVIDENCE_NOT_FROM_USER]  # the exempt read is checked (egress) too
    [check] = [r for r in result.tool_input_guardrail_results if r.output.behavior["type"] == "reject_content"]
    assert isinstance(check.output.output_info, Verdict) and not check.output.output_info.approved


def test_a_user_requested_email_runs_without_the_justification() -> None:
    tools, v = Tools(), validator()
    args = {"to": "marta@acme.example", "body": "The Q3 report is ready.", "justification": EMAIL_QUOTE}
    model = ScriptedModel([[function_call("send_email", args, call_id="c1")], [assistant_message("done")]])
    Runner.run_sync(agent(ToolGuard(v), model, tools), EMAIL_REQUEST, context={"user_id": "u-1"})
    assert tools.ran == [("send_email", {"to": "marta@acme.example", "body": "The Q3 report is ready."})]
    assert outputs(model)["c1"] == "sent to marta@acme.example"
    assert recorded(v) == [Code.APPROVED]
    assert events(v)[0].user_id == "u-1"


def test_the_model_sees_a_required_justification_on_guarded_tools_only() -> None:
    model = ScriptedModel([[assistant_message("hello")]])
    Runner.run_sync(agent(ToolGuard(validator()), model, Tools()), "hello")
    assert model.first_call is not None
    seen = {t.name: t for t in model.first_call.tools if isinstance(t, FunctionTool)}
    for name in ("send_money", "send_email"):
        schema = seen[name].params_json_schema
        assert "justification" in schema["required"] and schema["additionalProperties"] is False
        assert schema["properties"]["justification"]["description"] == justification_description()
    assert seen["send_email"].description == "Send an email."  # the guidance is never in the tool's
    assert "justification" not in seen["read_inbox"].params_json_schema["properties"]


def test_halt_stops_the_run_with_the_sdk_tripwire() -> None:
    tools = Tools()
    model = ScriptedModel(
        [[function_call("read_inbox", {}, call_id="c1")], [function_call("send_money", HIJACK, call_id="c2")]]
    )
    guard = ToolGuard(validator(), user_id="u-1", on_block="halt")
    with pytest.raises(ToolInputGuardrailTripwireTriggered) as raised:
        Runner.run_sync(agent(guard, model, tools), "Summarize my inbox, please.")
    assert tools.ran == [("read_inbox", {})]
    verdict = raised.value.output.output_info
    assert isinstance(verdict, Verdict) and verdict.code is Code.EVIDENCE_NOT_FROM_USER


def test_an_exception_in_our_code_refuses_the_call(monkeypatch: pytest.MonkeyPatch) -> None:
    import validator.integrations._lifecycle as lifecycle

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("bug in the validator glue")

    monkeypatch.setattr(lifecycle, "pending_from_call", broken)
    tools = Tools()
    args = {"to": "marta@acme.example", "body": "The Q3 report is ready.", "justification": EMAIL_QUOTE}
    model = ScriptedModel([[function_call("send_email", args, call_id="c1")], [assistant_message("done")]])
    Runner.run_sync(agent(ToolGuard(validator()), model, tools), EMAIL_REQUEST)
    assert tools.ran == []
    assert "(INTERNAL_ERROR)" in outputs(model)["c1"] and "bug in the validator glue" in outputs(model)["c1"]


def test_escalation_is_an_sdk_approval_and_the_approval_is_recorded() -> None:
    tools, v = Tools(), validator()
    guard = ToolGuard(v, user_id="u-1")
    model = ScriptedModel([[function_call("send_email", UNGROUNDED, call_id="c1")], [assistant_message("Sent.")]])
    guarded = agent(guard, model, tools)
    result = Runner.run_sync(guarded, "Please email the Q3 report status to the team lead.")
    [item] = result.interruptions
    request = guard.request(item)
    assert request is not None and request["name"] == "send_email"
    assert request["args"] == {"to": "carol@acme.example", "body": "The Q3 report is ready."}
    assert request["action_validator"]["decision"] == "ask_user"
    assert tools.ran == []
    state = result.to_state()
    state.approve(item)
    result = Runner.run_sync(guarded, state)
    assert result.final_output == "Sent."
    assert tools.ran == [("send_email", {"to": "carol@acme.example", "body": "The Q3 report is ready."})]
    assert recorded(v)[-1] is Code.APPROVED_BY_USER


def test_a_rejection_through_the_sdk_is_recorded_and_the_tool_never_runs() -> None:
    tools, v = Tools(), validator()
    guard = ToolGuard(v, user_id="u-1")
    model = ScriptedModel([[function_call("send_email", UNGROUNDED, call_id="c1")], [assistant_message("Not sent.")]])
    guarded = agent(guard, model, tools)
    result = Runner.run_sync(guarded, "Please email the Q3 report status to the team lead.")
    state = result.to_state()
    state.reject(result.interruptions[0], rejection_message="No, not Carol.")
    result = Runner.run_sync(guarded, state)
    assert tools.ran == [] and outputs(model)["c1"] == "No, not Carol."
    assert recorded(v)[-1] is Code.REJECTED_BY_USER
    assert "No, not Carol." in events(v)[-1].verdict.reasoning


def test_guarded_tools_with_run_hooks_or_without_them() -> None:
    for hooks in (True, False):
        tools, v = Tools(), validator()
        guard = ToolGuard(v, user_id="u-1")
        model = ScriptedModel(
            [
                [function_call("read_inbox", {}, call_id="c1")],
                [function_call("send_money", HIJACK, call_id="c2")],
                [assistant_message("done")],
            ]
        )
        plain = Agent(name="assistant", model=model, tools=guard.tools(tools.all()))
        Runner.run_sync(plain, "Summarize my inbox, please.", hooks=guard.hooks if hooks else None)
        assert tools.ran == [("read_inbox", {})]
        assert "Action `send_money` was not run" in outputs(model)["c2"]


def test_a_call_that_skipped_the_guardrail_is_checked_before_it_runs() -> None:
    tools = Tools()
    [_, _, send_email] = ToolGuard(validator(), user_id="u-1").tools(tools.all())
    assert isinstance(send_email, FunctionTool)
    args = json.dumps({"to": "carol@acme.example", "body": "Hi.", "justification": EMAIL_QUOTE})
    ctx = ToolContext(None, tool_name="send_email", tool_call_id="c9", tool_arguments=args, turn_input=[])
    ctx.turn_input = [{"role": "user", "content": "Hello."}]
    loop = asyncio.new_event_loop()  # not asyncio.run: that would unset the loop Runner.run_sync keeps
    try:
        out = loop.run_until_complete(send_email.on_invoke_tool(ctx, args))
    finally:
        loop.close()
    assert tools.ran == [] and str(out).startswith("Action `send_email` was not run")


def test_a_tool_the_validator_cannot_check_must_be_exempt() -> None:
    with pytest.raises(UsageError, match="not a function tool"):
        ToolGuard(validator()).tools([WebSearchTool()])


def test_the_transcript_keeps_tool_outputs_outside_the_users_words() -> None:
    transcript = transcript_from_items(
        [
            {"role": "user", "content": [{"type": "input_text", "text": "Summarize my inbox."}]},
            {"type": "function_call", "call_id": "c1", "name": "read_inbox", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": VENDOR_TEXT},
        ],
        instructions="Be brief.",
    )
    roles = [(m.role, m.content) for m in transcript.messages]
    assert roles == [
        ("system", "Be brief."),
        ("user", "Summarize my inbox."),
        ("assistant", ""),
        ("tool", VENDOR_TEXT),
    ]
    assert transcript.messages[3].name == "read_inbox"


def test_the_example_runs_offline() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")}
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "openai_agents_agent.py")],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=120,
        cwd=ROOT,
    )
    out = proc.stdout
    assert "tool send_money > Action `send_money` was not run (EVIDENCE_NOT_FROM_USER)" in out
    assert "asked (TARGET_NOT_GROUNDED) > send_email" in out
    assert out.strip().endswith("happened > EMAIL SENT to marta@acme.example; EMAIL SENT to carol@acme.example")
    assert "PAID" not in out
