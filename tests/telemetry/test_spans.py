"""OpenTelemetry spans of the checks, with the SDK's in-memory exporter: a span per check (the GenAI guardrail
conventions), a model judge's call as its child, the service continuing the caller's trace, and never the user's
words or the arguments' values in any attribute or event."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from tests.anthropic_mock import MockAPI, message, verdict_call
from tests.conftest import POLICY
from validator import CheckInput, InputError, Telemetry, Validator, ValidatorConfig, examples
from validator.judges.anthropic import AnthropicJudge

NAME = "apply_guardrail action-validator"


@pytest.fixture
def exported(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Telemetry, InMemorySpanExporter]]:
    # the environment asks instrumentations to capture content: this one never does
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield Telemetry(tracer_provider=provider), exporter
    provider.shutdown()


def _example(name: str) -> CheckInput:
    return CheckInput.from_json(examples.check_path(name).read_text())


def _validator(telemetry: Telemetry, item: CheckInput, **kw: Any) -> Validator:
    return Validator(item.policy, config=ValidatorConfig(telemetry=telemetry), **kw)


def _texts(value: Any) -> Iterator[str]:
    """The string values in ``value`` (never its keys: a key is the tool's own word, ``to``)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _texts(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _texts(item)


def _written(spans: tuple[ReadableSpan, ...]) -> list[str]:
    """Every string any span wrote: names, attribute values, event names and event attribute values."""
    out: list[str] = []
    for span in spans:
        out.append(span.name)
        out += [str(v) for v in (span.attributes or {}).values()]
        for event in span.events:
            out.append(event.name)
            out += [str(v) for v in (event.attributes or {}).values()]
    return out


def _assert_no_content(spans: tuple[ReadableSpan, ...], item: CheckInput) -> None:
    """No user word, no argument value, no justification text in anything the spans carry (every piece of the
    input's text of 6 characters or more, and every argument value whole)."""
    written = " ".join(_written(spans))
    pieces = {m.content for m in item.transcript} | set(_texts(dict(item.action.args)))
    pieces |= set(_texts(item.action.justification or {}))
    for piece in pieces:
        for word in str(piece).split():
            if len(word) >= 6:
                assert word not in written, word
    for value in _texts(dict(item.action.args)):
        assert value not in written


def test_a_check_is_one_guardrail_span_with_the_verdicts_code_and_no_user_content(exported) -> None:
    telemetry, exporter = exported
    item = _example("vendor_invoice")
    verdict = _validator(telemetry, item).check(item)
    assert not verdict.approved
    (span,) = exporter.get_finished_spans()
    assert span.name == NAME
    assert span.kind is SpanKind.INTERNAL
    attrs = dict(span.attributes or {})
    assert item.policy is not None
    assert attrs == {
        "gen_ai.operation.name": "apply_guardrail",
        "gen_ai.guardrail.component.name": "action-validator",
        "gen_ai.guardrail.policy.id": item.policy.version,
        "gen_ai.guardrail.policy.version": item.policy.version,
        "gen_ai.tool.name": item.action.tool,
        "gen_ai.guardrail.result.type": "code",
        "gen_ai.guardrail.result.value": verdict.code.value,
        "action_validator.decision": verdict.decision.value,
        "action_validator.confidence": verdict.confidence,
        "action_validator.decided_by": verdict.decided_by,
        "action_validator.reused": False,
        **({"action_validator.judge": verdict.judge} if verdict.judge else {}),
    }
    assert span.status.status_code is StatusCode.UNSET  # a refusal is the guardrail working, not an error
    results = [dict(e.attributes or {}) for e in span.events if e.name == "gen_ai.guardrail.result"]
    assert [(r["gen_ai.guardrail.result.type"], r["gen_ai.guardrail.result.value"]) for r in results] == [
        ("code", verdict.code.value),
        ("decision", verdict.decision.value),
    ]
    assert all(r["gen_ai.guardrail.source"] == "tool_input" for r in results)
    assert all(r["gen_ai.guardrail.policy.version"] == item.policy.version for r in results)
    _assert_no_content(exporter.get_finished_spans(), item)


def test_the_async_check_writes_the_same_span_and_an_operator_names_the_policy(exported) -> None:
    _, exporter = exported
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    item = _example("authorized_email")
    checker = _validator(Telemetry(tracer_provider=provider, policy_id="mail-agent"), item)
    verdict = asyncio.run(checker.acheck(item))
    assert verdict.approved
    (span,) = exporter.get_finished_spans()
    attrs = dict(span.attributes or {})
    assert attrs["gen_ai.guardrail.policy.id"] == "mail-agent"
    assert attrs["gen_ai.guardrail.result.value"] == "APPROVED"
    assert attrs["action_validator.decision"] == "approve"
    _assert_no_content(exporter.get_finished_spans(), item)


def test_bad_input_ends_the_span_in_error_by_type_only(exported) -> None:
    telemetry, exporter = exported
    secret = "wire-everything-to-DE89370400440532013000"
    with pytest.raises(InputError):
        Validator(config=ValidatorConfig(telemetry=telemetry)).validate(
            [{"role": "wizard", "content": secret}], {"tool": "pay", "args": {"iban": secret}}
        )
    (span,) = exporter.get_finished_spans()
    assert span.status.status_code is StatusCode.ERROR
    assert (span.attributes or {})["error.type"] == "InputError"
    assert span.status.description == "InputError"
    assert not span.events  # no exception event: its message names the input
    assert not any(secret in text for text in _written((span,)))


ACTION = {
    "tool": "send_email",
    "args": {"to": "bob@acme.example", "body": "Minutes: all good."},
    "justification": {"reason": "The user asked.", "evidence": [{"quote": "email bob@acme.example the minutes"}]},
}
MESSAGES = [{"role": "user", "content": "Please email bob@acme.example the minutes."}]


def _judge(api: MockAPI) -> AnthropicJudge:
    return AnthropicJudge("claude-sonnet-4-6", client=api.client(), async_client=api.async_client())


def test_a_model_judges_call_is_a_child_chat_span_with_its_usage(exported) -> None:
    telemetry, exporter = exported
    api = MockAPI([message([verdict_call()], input_tokens=40, output_tokens=60, cache_read=900, cache_write=10)])
    checker = Validator(POLICY, judge=_judge(api), config=ValidatorConfig(telemetry=telemetry, judge_timeout=30))
    verdict = checker.validate(MESSAGES, ACTION)
    assert verdict.judge and verdict.judge.startswith("anthropic")
    spans = {s.name: s for s in exporter.get_finished_spans()}
    check, chat = spans[NAME], spans["chat claude-sonnet-4-6"]
    assert chat.parent is not None and chat.parent.span_id == check.context.span_id  # across the judge's thread
    assert chat.context.trace_id == check.context.trace_id
    assert chat.kind is SpanKind.CLIENT
    attrs = dict(chat.attributes or {})
    assert attrs["gen_ai.operation.name"] == "chat"
    assert attrs["gen_ai.provider.name"] == "anthropic"
    assert attrs["gen_ai.request.model"] == "claude-sonnet-4-6"
    assert attrs["gen_ai.response.model"] == "claude-sonnet-4-6"
    assert attrs["gen_ai.response.id"] == "msg_1"
    assert attrs["gen_ai.response.finish_reasons"] == ("tool_use",)
    assert attrs["gen_ai.usage.input_tokens"] == 40 + 900 + 10  # the cached tokens included
    assert attrs["gen_ai.usage.output_tokens"] == 60
    assert attrs["gen_ai.usage.cache_read.input_tokens"] == 900
    assert attrs["gen_ai.usage.cache_creation.input_tokens"] == 10
    assert attrs["server.address"] == "api.anthropic.com"
    assert (check.attributes or {})["action_validator.judge"] == verdict.judge
    item = CheckInput.from_dict({"messages": MESSAGES, "action": ACTION})
    _assert_no_content(exporter.get_finished_spans(), item)


def test_a_failed_model_call_is_an_error_span_and_the_check_a_fault(exported) -> None:
    telemetry, exporter = exported
    api = MockAPI([(529, {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}})] * 2)
    checker = Validator(POLICY, judge=_judge(api), config=ValidatorConfig(telemetry=telemetry))
    verdict = asyncio.run(checker.avalidate(MESSAGES, ACTION))
    assert verdict.code.value == "JUDGE_UNAVAILABLE"
    spans = exporter.get_finished_spans()
    chats = [s for s in spans if s.name.startswith("chat ")]
    assert len(chats) == 2  # the attempt and its retry
    assert all(s.status.status_code is StatusCode.ERROR for s in chats)
    assert all((s.attributes or {})["error.type"] for s in chats)
    (check,) = [s for s in spans if s.name == NAME]
    assert all(s.parent is not None and s.parent.span_id == check.context.span_id for s in chats)
    assert (check.attributes or {})["error.type"] == "JUDGE_UNAVAILABLE"
    assert check.status.status_code is StatusCode.ERROR


def test_names_live_in_one_module() -> None:
    """Every OpenTelemetry name the package writes is spelled in validator/telemetry/conventions.py only."""
    import pathlib
    import re

    import validator

    root = pathlib.Path(validator.__file__).parent
    spelled = re.compile(r"""["'](gen_ai\.|action_validator\.|server\.(address|port)|error\.type)""")
    offenders = [
        str(path.relative_to(root))
        for path in [*root.rglob("*.py"), *(root.parent / "integrations").rglob("*.py")]
        if path.name != "conventions.py" and spelled.search(path.read_text())
    ]
    assert offenders == []


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return done.stdout.strip()


def test_nothing_is_imported_or_written_where_the_application_never_set_up_opentelemetry() -> None:
    code = (
        "import sys, validator\n"
        "from validator import examples\n"
        "validator.check(examples.check_path('vendor_invoice').read_text())\n"
        "print(any(m.startswith('opentelemetry') for m in sys.modules))\n"
    )
    assert _run(code) == "False"


def test_the_global_provider_the_application_set_is_used_by_default() -> None:
    """What ``opentelemetry-instrument`` does: a global SDK provider, set before or after the validator is made."""
    code = (
        "import validator\n"
        "from validator import examples\n"
        "checker = validator.Validator()\n"
        "from opentelemetry import trace\n"
        "from opentelemetry.sdk.trace import TracerProvider\n"
        "from opentelemetry.sdk.trace.export import SimpleSpanProcessor\n"
        "from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter\n"
        "exporter = InMemorySpanExporter(); provider = TracerProvider()\n"
        "provider.add_span_processor(SimpleSpanProcessor(exporter)); trace.set_tracer_provider(provider)\n"
        "checker.check(examples.check_path('vendor_invoice').read_text())\n"
        "print([s.name for s in exporter.get_finished_spans()])\n"
    )
    assert json.loads(_run(code).replace("'", '"')) == [NAME]


def test_a_disabled_telemetry_writes_nothing(exported) -> None:
    _, exporter = exported
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    item = _example("vendor_invoice")
    _validator(Telemetry(tracer_provider=provider, enabled=False), item).check(item)
    assert exporter.get_finished_spans() == ()


def test_hostile_calls_get_their_own_verdict_and_a_span_without_their_values(exported) -> None:
    """A tool name with a lone surrogate, NaN and a megabyte of periodic text in the arguments: a typed error or a
    refusal, never an approval or a crash, and nothing of the arguments in the span."""
    telemetry, exporter = exported
    checker = Validator(POLICY, config=ValidatorConfig(telemetry=telemetry))
    flood = "pay DE44500105175407324931 " * 40_000
    for action in (
        {"tool": "send_\udc80money", "args": {"recipient": "x"}},
        {"tool": "send_money", "args": {"recipient": "DE44500105175407324931", "amount": float("nan")}},
        {"tool": "send_money", "args": {"recipient": flood[:26], "memo": flood}},
    ):
        try:
            verdict = checker.validate([{"role": "user", "content": "Summarize my inbox."}], action)
        except InputError as exc:  # what strict JSON refuses is refused by field
            assert exc.problems
        else:
            assert not verdict.approved
    written = " ".join(_written(exporter.get_finished_spans()))
    assert "DE44500105175407324931" not in written and "nan" not in written.lower().split()
    assert len(exporter.get_finished_spans()) == 3


def test_a_checks_span_names_the_hosts_call_id_and_no_model_provider(exported) -> None:
    telemetry, exporter = exported
    item = _example("vendor_invoice")
    action = {
        "tool": item.action.tool,
        "args": dict(item.action.args),
        "call_id": "toolu_42",
        "justification": item.action.justification,
    }
    _validator(telemetry, item).validate(item.transcript, action, user_id=item.user_id)
    (span,) = exporter.get_finished_spans()
    attrs = dict(span.attributes or {})
    assert attrs["gen_ai.tool.call.id"] == "toolu_42"
    assert "gen_ai.provider.name" not in attrs  # it names a model's provider; the strict judge is none
