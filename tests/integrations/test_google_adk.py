"""Google ADK: the plugin and the agent callback in a real Runner, with a scripted model (offline)."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.tools.function_tool import FunctionTool
from validator.integrations import google_adk
from validator.integrations.google_adk import AdkGuard, ValidatorPlugin, transcript_from_adk

from validator import Code, Decision, Policy, Validator, examples
from validator.record.recorder import MemoryRecorder

ROOT = Path(__file__).resolve().parents[2]


def _example() -> Any:
    spec = importlib.util.spec_from_file_location("google_adk_example", ROOT / "examples" / "google_adk_agent.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["google_adk_example"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture()
def ex() -> Any:
    module = _example()
    module.HAPPENED.clear()
    return module


def _validator() -> Validator:
    return Validator(Policy.load(examples.policy_path()), recorder=MemoryRecorder())


def _codes(v: Validator) -> list[Code]:
    assert isinstance(v.recorder, MemoryRecorder)
    return [e.verdict.code for e in v.recorder.events]


async def _session(ex: Any, script: list[dict[str, Any]], v: Validator, prompt: str) -> tuple[Any, Any, list[Any]]:
    run, sessions = ex.runner(script, v)
    session = await sessions.create_session(app_name="mail", user_id="u-1")
    parts = await ex.turn(run, "u-1", session.id, ex.said(prompt))
    return run, session, parts


def test_the_vendors_payment_is_refused_and_the_users_email_runs(ex: Any) -> None:
    v = _validator()
    prompt = "Summarize my inbox, then email marta@acme.example the summary."
    _, _, parts = asyncio.run(_session(ex, ex.HIJACKED, v, prompt))
    assert ex.HAPPENED == ["EMAIL SENT to marta@acme.example: Inbox"]
    refused = ex.refusals(parts)
    assert len(refused) == 1 and "EVIDENCE_NOT_FROM_USER" in refused[0]
    assert Code.EVIDENCE_NOT_FROM_USER in _codes(v) and _codes(v)[-1] is Code.APPROVED


def test_the_justified_tools_declare_the_argument_and_their_functions_never_get_it(ex: Any) -> None:
    declaration = google_adk.justified(ex.send_email)._get_declaration()
    assert declaration is not None
    schema = declaration.parameters_json_schema
    assert isinstance(schema, dict) and "justification" in schema["required"]
    assert "justification" in schema["properties"] and "to" in schema["properties"]


@pytest.mark.parametrize("confirmed", [True, False])
def test_ask_user_becomes_adks_tool_confirmation_and_the_answer_is_recorded(ex: Any, confirmed: bool) -> None:
    v = _validator()

    async def scenario() -> list[Any]:
        run, session, parts = await _session(ex, ex.PAYMENT, v, "Pay the invoice in my inbox.")
        asked = [
            p.function_call for p in parts if p.function_call and p.function_call.name == "adk_request_confirmation"
        ]
        assert len(asked) == 1
        assert ex.HAPPENED == []  # nothing ran while the question was open
        original = asked[0].args["originalFunctionCall"]
        assert original["name"] == "send_money"
        payload = asked[0].args["toolConfirmation"]["payload"]
        assert payload["action_validator"]["decision"] == "ask_user"
        return await ex.turn(run, "u-1", session.id, ex.confirmation(asked[0].id, confirmed))

    asyncio.run(scenario())
    if confirmed:
        assert [f"PAID 4800 EUR to {ex.IBAN}"] == ex.HAPPENED
        assert _codes(v)[-1] is Code.APPROVED_BY_USER
    else:
        assert ex.HAPPENED == []
        assert _codes(v)[-1] is Code.REJECTED_BY_USER


def _plain_runner(ex: Any, script: list[dict[str, Any]], v: Validator, *, callback: bool = False) -> tuple[Runner, Any]:
    """Tools the application did not extend (no justification argument), guarded by the plugin or the callback."""
    tools = [FunctionTool(ex.read_inbox), FunctionTool(ex.send_email), FunctionTool(ex.send_money)]
    guard = AdkGuard(v)
    agent = LlmAgent(
        name="assistant",
        model=ex.ScriptedModel(script=script),
        tools=tools,
        before_tool_callback=guard.before_tool_callback if callback else None,
    )
    sessions = InMemorySessionService()
    plugins = [] if callback else [ValidatorPlugin(v)]
    return Runner(app=App(name="mail", root_agent=agent, plugins=plugins), session_service=sessions), sessions


@pytest.mark.parametrize("callback", [False, True])
def test_tools_without_a_justification_are_read_for_the_users_words(ex: Any, callback: bool) -> None:
    v = _validator()
    script = [
        {"tool": "read_inbox", "args": {}},
        {"tool": "send_money", "args": {"recipient": ex.IBAN, "amount": 4800, "currency": "EUR"}},
        {"tool": "send_email", "args": {"to": "marta@acme.example", "subject": "Inbox", "body": "Invoice 443."}},
        {"text": "Done."},
    ]

    async def scenario() -> list[Any]:
        run, sessions = _plain_runner(ex, script, v, callback=callback)
        session = await sessions.create_session(app_name="mail", user_id="u-1")
        return await ex.turn(
            run, "u-1", session.id, ex.said("Summarize my inbox, then email marta@acme.example the summary.")
        )

    parts = asyncio.run(scenario())
    assert ex.HAPPENED == ["EMAIL SENT to marta@acme.example: Inbox"]
    # no word of the user's names the payment, the invoice in the inbox does: blocked, never put to the user
    assert not any(p.function_call and p.function_call.name == "adk_request_confirmation" for p in parts)
    assert isinstance(v.recorder, MemoryRecorder)
    paid = [e.verdict for e in v.recorder.events if e.verdict.tool == "send_money"]
    assert [(x.decision, x.code) for x in paid] == [(Decision.BLOCK, Code.INJECTION_SIGNATURE)]
    last = v.recorder.events[-1].verdict
    assert last.approved and last.findings.evidence == "found"


def test_a_crash_in_our_code_answers_the_call_with_an_error(ex: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    async def crash(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr(google_adk.AdkGuard, "_decide", crash)
    v = _validator()
    prompt = "Summarize my inbox, then email marta@acme.example the summary."
    _, _, parts = asyncio.run(_session(ex, ex.HIJACKED, v, prompt))
    assert ex.HAPPENED == []
    errors = [
        p.function_response.response["error"]
        for p in parts
        if p.function_response and "error" in (p.function_response.response or {})
    ]
    assert errors and all("a bug" in e for e in errors)


def test_the_transcript_keeps_the_users_words_apart_and_leaves_out_the_confirmation(ex: Any) -> None:
    v = _validator()

    async def scenario() -> Any:
        run, session, _ = await _session(ex, ex.PAYMENT, v, "Pay the invoice in my inbox.")
        return await run.session_service.get_session(app_name="mail", user_id="u-1", session_id=session.id)

    session = asyncio.run(scenario())
    t = transcript_from_adk(session)
    roles = [m.role for m in t]
    assert roles[0] == "user" and t[0].content == "Pay the invoice in my inbox."
    assert "tool" in roles and all("adk_request_confirmation" not in str(m.tool_calls) for m in t)
    assert all(m.role != "user" or m.content == "Pay the invoice in my inbox." for m in t)
    call = next(m for m in t if m.tool_calls and m.tool_calls[0].name == "send_money").tool_calls[0]
    pending = transcript_from_adk(session, pending=call.id)
    assert not pending.answered(call.id) and t.answered(call.id)
