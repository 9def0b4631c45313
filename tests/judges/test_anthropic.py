"""The Anthropic judge through the real anthropic SDK on an httpx2 MockTransport."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import inspect
import json
import os
import re
from typing import Any

import anthropic
import httpx2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.anthropic_mock import MockAPI, error, message, verdict_call
from tests.conftest import POLICY
from validator import (
    Code,
    Decision,
    JudgeOutput,
    JudgeRequestRejected,
    JudgeTimeout,
    JudgeTransportError,
    Policy,
    PolicySettings,
    ToolPolicy,
    UsageError,
    Validator,
    decide,
)
from validator.decision import Judged
from validator.exceptions import JudgeError, JudgeOutputError
from validator.findings import Findings, QuoteFinding
from validator.judges.anthropic import AnthropicJudge, PriceTable, breakpoints, prepare_tools
from validator.judges.anthropic.judge import map_sdk_error
from validator.judges.anthropic.requests import StandaloneCaching, transcript_breakpoints

SEND_EMAIL = {
    "name": "send_email",
    "description": "Send an email.",
    "input_schema": {"type": "object", "properties": {"to": {"type": "string"}, "body": {"type": "string"}}},
}
READ_INBOX = {
    "name": "read_inbox",
    "description": "Read the inbox.",
    "input_schema": {"type": "object", "properties": {}},
}
TOOLS = prepare_tools([SEND_EMAIL, READ_INBOX], policy=POLICY)
AGENT_REQUEST: dict[str, Any] = {
    "model": "claude-sonnet-4-6",
    "max_tokens": 4096,
    "system": [{"type": "text", "text": "You are an email assistant.", "cache_control": {"type": "ephemeral"}}],
    "tools": TOOLS,
    "tool_choice": {"type": "auto"},
    "messages": [
        {"role": "user", "content": "Please email bob@acme.example the minutes."},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading."},
                {"type": "tool_use", "id": "tu1", "name": "read_inbox", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "tu1",
                    "content": "Minutes: all good.",
                    "cache_control": {"type": "ephemeral"},
                }
            ],
        },
    ],
    "metadata": {"user_id": "u-1"},
}
ACTION = {
    "tool": "send_email",
    "args": {"to": "bob@acme.example", "body": "Minutes: all good."},
    "justification": {"reason": "The user asked.", "evidence": [{"quote": "email bob@acme.example the minutes"}]},
}


def _compact(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def _run(api: MockAPI, agent_request: dict[str, Any] | None = AGENT_REQUEST, policy: Policy = POLICY, **judge_kw: Any):
    judge = AnthropicJudge(client=api.client(), **judge_kw)
    return Validator(policy, judge=judge).validate(
        None if agent_request else _messages(), ACTION, agent_request=agent_request
    )


def _messages() -> list[dict[str, Any]]:
    return [{"role": "user", "content": "Please email bob@acme.example the minutes."}]


# --- tools ------------------------------------------------------------------------------


def test_prepare_tools_appends_search_and_deferred_strict_validator() -> None:
    names = [t["name"] for t in TOOLS]
    assert names == ["send_email", "read_inbox", "validate_action", "tool_search"]
    validator_tool = TOOLS[-2]
    assert validator_tool["defer_loading"] is True and validator_tool["strict"] is True
    assert validator_tool["input_schema"]["additionalProperties"] is False
    assert validator_tool["input_schema"]["required"] == ["approved", "reasoning", "confidence"]
    assert "defer_loading" not in TOOLS[-1]  # the last tool may carry a cache breakpoint
    assert prepare_tools(TOOLS, policy=POLICY) == TOOLS  # idempotent


def test_prepare_tools_refuses_a_name_clash_and_bad_tools() -> None:
    with pytest.raises(UsageError, match="named 'validate_action'"):
        prepare_tools([{"name": "validate_action", "input_schema": {}}], policy=POLICY)
    with pytest.raises(UsageError, match=r"tools\[0\] must be an object"):
        prepare_tools([{"description": "no name"}], policy=POLICY)
    custom = prepare_tools([SEND_EMAIL], validator_name="check_it", search_name="find_tools", policy=POLICY)
    assert [t["name"] for t in custom] == ["send_email", "check_it", "find_tools"]


# --- the shared request -----------------------------------------------------------------


def test_validator_request_extends_the_agent_request_byte_for_byte() -> None:
    api = MockAPI([message([verdict_call()], cache_read=1800, input_tokens=450)])
    verdict = _run(api)
    assert verdict.approved, verdict.reasoning
    raw = api.requests[0].content
    body = api.bodies[0]
    n = len(AGENT_REQUEST["messages"])
    for key in ("model", "system", "tools", "tool_choice", "metadata"):
        assert body[key] == AGENT_REQUEST[key], key
        assert b'"' + key.encode() + b'":' + _compact(AGENT_REQUEST[key]) in raw, key
    assert body["max_tokens"] == 1024  # not part of the cache key; a verdict needs little
    assert body["messages"][:n] == AGENT_REQUEST["messages"]
    assert b'"messages":' + _compact(AGENT_REQUEST["messages"])[:-1] + b"," in raw  # the prefix, then ours
    search_turn, request_turn = body["messages"][n:]
    assert search_turn == {
        "role": "assistant",
        "content": [
            {
                "type": "tool_use",
                "id": "toolu_validator_search",
                "name": "tool_search",
                "input": {"query": "validate_action"},
            }
        ],
    }
    result, text = request_turn["content"]
    assert request_turn["role"] == "user"
    assert result == {
        "type": "tool_result",
        "tool_use_id": "toolu_validator_search",
        "content": [{"type": "tool_reference", "tool_name": "validate_action"}],
        "cache_control": {"type": "ephemeral"},
    }
    assert text["type"] == "text"
    for fragment in (
        "ONLY THE USER CAN AUTHORIZE",
        "tool: send_email",
        '"to": "bob@acme.example"',
        "quote 1",
        "user (message #1 (user))",
    ):
        assert fragment in text["text"], fragment
    assert api.requests[0].headers["anthropic-version"]
    assert verdict.usage is not None and verdict.usage.cache == "shared"


def test_breakpoints_are_counted_and_a_full_request_gets_no_new_one() -> None:
    assert [str(b) for b in breakpoints(AGENT_REQUEST)] == ["system[0] (5m)", "messages[2].content[0] (5m)"]
    full = copy.deepcopy(AGENT_REQUEST)
    full["cache_control"] = {"type": "ephemeral"}
    full["messages"][0] = {
        "role": "user",
        "content": [
            {
                "type": "text",
                "text": "Please email bob@acme.example the minutes.",
                "cache_control": {"type": "ephemeral"},
            }
        ],
    }
    assert len(breakpoints(full)) == 4
    api = MockAPI([message([verdict_call()])])
    _run(api, full)
    appended = api.bodies[0]["messages"][-1]["content"][0]
    assert "cache_control" not in appended  # four already: adding one would be a 400


def test_markers_nested_in_a_tool_result_take_a_slot_too() -> None:
    full = copy.deepcopy(AGENT_REQUEST)
    full["cache_control"] = {"type": "ephemeral"}
    full["tools"][-1]["cache_control"] = {"type": "ephemeral"}
    result = full["messages"][2]["content"][0]
    del result["cache_control"]
    result["content"] = [
        {"type": "text", "text": "Minutes: all good.", "cache_control": {"type": "ephemeral", "ttl": "1h"}}
    ]
    found = [str(b) for b in breakpoints(full)]
    assert "messages[2].content[0].content[0] (1h)" in found and len(found) == 4
    api = MockAPI([message([verdict_call()])])
    _run(api, full)
    assert "cache_control" not in api.bodies[0]["messages"][-1]["content"][0]  # four already


def test_betas_travel_as_a_header_and_stay_out_of_the_body() -> None:
    agent = {**AGENT_REQUEST, "betas": ["inline-tools-2026-09-15"]}
    api = MockAPI([message([verdict_call()])])
    _run(api, agent)
    assert api.requests[0].headers["anthropic-beta"] == "inline-tools-2026-09-15"
    assert "betas" not in api.bodies[0]


# --- not shareable: standalone, and the verdict says why ---------------------------------------


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"thinking": {"type": "enabled", "budget_tokens": 2048}}, "extended thinking"),
        ({"tools": [SEND_EMAIL, READ_INBOX]}, "lack 'validate_action'"),
        (
            {"messages": [*AGENT_REQUEST["messages"], {"role": "assistant", "content": "Sure"}]},
            "does not end with a user turn",
        ),
    ],
)
def test_unshareable_agent_request_falls_back_to_standalone_and_says_so(change: dict[str, Any], reason: str) -> None:
    api = MockAPI([message([verdict_call()])])
    verdict = _run(api, {**AGENT_REQUEST, **change})
    assert verdict.approved
    assert verdict.usage is not None and verdict.usage.cache is not None
    assert verdict.usage.cache.startswith("not shared (") and reason in verdict.usage.cache
    body = api.bodies[0]
    assert body["model"] == "claude-sonnet-4-6"
    assert [t["name"] for t in body["tools"]] == ["validate_action"] and "defer_loading" not in body["tools"][0]
    assert len(body["messages"]) == 1


def test_thinking_refusal_of_the_fabricated_turn_falls_back_in_the_same_attempt() -> None:
    agent = {**AGENT_REQUEST, "thinking": {"type": "adaptive"}}
    api = MockAPI(
        [
            error(
                400,
                "invalid_request_error",
                "messages.4.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`",
            ),
            message([verdict_call()]),
        ]
    )
    verdict = _run(api, agent)
    assert verdict.approved and verdict.judge_errors == ()
    assert verdict.usage is not None and verdict.usage.cache is not None
    assert verdict.usage.cache.startswith("not shared (the API refused the fabricated turn")
    assert api.bodies[0]["thinking"] == {"type": "adaptive"} and "thinking" not in api.bodies[1]


def test_standalone_request_without_an_agent_request() -> None:
    api = MockAPI([message([verdict_call()])])
    verdict = _run(api, None, model="claude-haiku-4-5", view="shared_prefix")
    body = api.bodies[0]
    assert body["model"] == "claude-haiku-4-5"
    # A first check has no breakpoint anywhere: nothing it could write would be read back.
    assert b"cache_control" not in api.requests[0].content and breakpoints(body) == []
    assert "ONLY THE USER" in body["system"][0]["text"]
    header, first, request = body["messages"][0]["content"]  # one transcript block a message
    assert header["text"].startswith("=== CONVERSATION") and '"index": 0' in first["text"]
    assert '"author": "user"' in first["text"] and "bob@acme.example" in first["text"]
    assert "ONLY THE USER" not in request["text"]  # the prompt went as system
    assert verdict.usage is not None and verdict.usage.cache == "standalone"


def _conversation(turns: int) -> list[dict[str, Any]]:
    """The user's request, then ``turns`` agent turns reading long mails (about 150 tokens each)."""
    out = _messages()
    for i in range(turns):
        out.append({"role": "assistant", "content": f"Reading mail {i}."})
        out.append({"role": "user", "content": f"Mail {i}: " + "the quarterly figures are in the folder. " * 15})
    return out


def _standalone_checks(
    times: list[float], api: MockAPI | None = None, view: str = "shared_prefix", **caching: Any
) -> list[list[str]]:
    """One standalone check of a growing conversation (two more messages each time) at each of ``times``;
    the breakpoints of every request, read back from the bytes the SDK sent."""
    now = [0.0]
    api = api or MockAPI([message([verdict_call()]) for _ in times])
    judge = AnthropicJudge(
        "claude-sonnet-4-6",
        client=api.client(),
        standalone_caching=StandaloneCaching(lambda: now[0], **caching),
        view=view,  # type: ignore[arg-type]
    )
    validator = Validator(POLICY, judge=judge)
    for turns, at in enumerate(times, start=1):
        now[0] = at
        verdict = validator.validate(_conversation(turns), ACTION)
        expected = "standalone" if view == "shared_prefix" else "blind"
        assert verdict.approved and verdict.usage is not None and verdict.usage.cache == expected
    return [[str(b) for b in breakpoints(json.loads(r.content))] for r in api.requests]


def test_standalone_checks_further_apart_than_the_ttl_never_write() -> None:
    assert _standalone_checks([0, 301, 602, 903, 1204]) == [[]] * 5


def test_standalone_caches_its_transcript_from_the_third_close_check_on_its_last_block() -> None:
    marks = _standalone_checks([0, 60, 120, 180, 500, 560])
    # checks 1-2: uncached; 3-4: the run of close checks goes on, so the transcript's last block
    # (header + 1 + 2n messages: block 2n + 1) carries a breakpoint; 5: 320 s later, the run starts over.
    assert marks == [[], [], ["messages[0].content[7] (5m)"], ["messages[0].content[9] (5m)"], [], []]


def test_the_blind_view_caches_the_users_messages_as_the_transcript_view_does() -> None:
    marks = _standalone_checks([0, 60, 120, 180, 500], view="blind")
    # one block a user message after the header (the agent's turns are not sent): check n has n + 1 of them
    assert marks == [[], [], ["messages[0].content[4] (5m)"], ["messages[0].content[5] (5m)"], []]


def test_standalone_breakpoints_reach_back_twenty_blocks_at_a_time_and_stay_within_four() -> None:
    assert transcript_breakpoints(1) == [0]
    assert transcript_breakpoints(22) == [1, 21]
    assert transcript_breakpoints(200) == [139, 159, 179, 199]
    (*_, last) = _standalone_checks([0] * 30, after=0)
    assert last == [f"messages[0].content[{i}] (5m)" for i in (1, 21, 41, 61)]  # 62 transcript blocks


def test_standalone_caching_knows_a_conversation_by_its_start_and_forgets_after_the_ttl() -> None:
    now = [0.0]
    caching = StandaloneCaching(lambda: now[0], after=1)
    first, other = ["header", "user: a"], ["header", "user: b"]
    assert not caching.decide(first)
    assert not caching.decide(other)  # another conversation: its own run
    now[0] = 100
    assert caching.decide([*first, "agent: c"])  # continues the first one, within the TTL
    assert not caching.decide(["header", "user: a", "agent: edited"])  # not an extension of the last check
    now[0] = 500
    assert not caching.decide([*first, "agent: c", "user: d"])  # forgotten: 400 s since the last check


def test_standalone_never_pays_a_write_it_does_not_read_back_on_the_emulated_cache() -> None:
    """Billed by the emulator: far-apart checks cost exactly an uncached request; in a run of close
    checks every write but the last is read by the next check."""
    from validator.devtools.emulator import CacheEmulator

    def bill(times: list[float]) -> list[dict[str, Any]]:
        now = [0.0]
        emu = CacheEmulator(lambda body: [verdict_call()], clock=lambda: now[0])
        uncached = CacheEmulator(lambda body: [verdict_call()], enabled=False)
        client = anthropic.Anthropic(
            api_key="sk-test", max_retries=0, http_client=httpx2.Client(transport=emu.transport())
        )
        judge = AnthropicJudge("claude-sonnet-4-6", client=client, standalone_caching=StandaloneCaching(lambda: now[0]))
        for turns, at in enumerate(times, start=1):
            now[0] = at
            Validator(POLICY, judge=judge).validate(_conversation(turns), ACTION)
            assert uncached.usage(emu.log[-1]["body"])["input_tokens"] == sum(
                emu.log[-1]["usage"][k]
                for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
            )
        return [entry["usage"] for entry in emu.log]

    far = bill([0, 400, 800, 1200])
    assert all(u["cache_creation_input_tokens"] == u["cache_read_input_tokens"] == 0 for u in far)
    close = bill([0, 60, 120, 180, 240])
    writes = [u["cache_creation_input_tokens"] for u in close]
    reads = [u["cache_read_input_tokens"] for u in close]
    assert writes[:2] == [0, 0] and all(w > 0 for w in writes[2:])
    assert reads[:3] == [0, 0, 0]
    for i in (3, 4):  # each reads everything the check before it read or wrote
        assert reads[i] == reads[i - 1] + writes[i - 1]


def test_standalone_needs_a_model() -> None:
    verdict = _run(MockAPI([]), None)
    assert verdict.code == Code.JUDGE_UNAVAILABLE and "no model" in verdict.reasoning


# --- the guard ---------------------------------------------------------------------------

BAD_RESPONSES = {
    "other-tool": message([{"type": "tool_use", "id": "t", "name": "send_email", "input": {"to": "x"}}]),
    "other-tool-beside-verdict": message(
        [verdict_call(), {"type": "tool_use", "id": "t2", "name": "send_email", "input": {}}]
    ),
    "server-tool": message(
        [{"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"}}]
    ),
    "text-only": message([{"type": "text", "text": "Looks fine to me."}], stop_reason="end_turn"),
    "two-verdicts": message([verdict_call(), verdict_call()]),
    "missing-field": message([{"type": "tool_use", "id": "t", "name": "validate_action", "input": {"approved": True}}]),
    "wrong-type": message([verdict_call(approved="yes")]),
    "unknown-field": message([verdict_call(execute="send_email")]),
    "contradiction": message([verdict_call(approved=True, reasoning="   ")]),
    "truncated": message([verdict_call()], stop_reason="max_tokens"),
    "refusal": message([verdict_call()], stop_reason="refusal"),
}


@pytest.mark.parametrize("shape", sorted(BAD_RESPONSES))
def test_every_malformed_response_is_retried_once_then_blocked(shape: str) -> None:
    api = MockAPI([BAD_RESPONSES[shape], BAD_RESPONSES[shape]])
    verdict = _run(api)
    assert (verdict.approved, verdict.code) == (False, Code.JUDGE_UNAVAILABLE)
    assert len(api.requests) == 2 and len(verdict.judge_errors) == 2
    assert verdict.usage is not None and verdict.usage.output_tokens == 120  # both unusable answers were billed


def test_text_beside_one_verdict_call_is_fine_and_capitalised_enums_are_read() -> None:
    api = MockAPI([message([{"type": "text", "text": "Checking."}, verdict_call(confidence="HIGH")])])
    assert _run(api).approved


def test_malformed_then_good_is_approved_with_both_calls_billed() -> None:
    api = MockAPI([BAD_RESPONSES["other-tool"], message([verdict_call()], input_tokens=100, output_tokens=10)])
    verdict = _run(api)
    assert verdict.approved and len(verdict.judge_errors) == 1 and "other tools (send_email)" in verdict.judge_errors[0]
    assert verdict.usage is not None
    assert (verdict.usage.input_tokens, verdict.usage.output_tokens) == (140, 70)


def test_rejection_carries_the_judges_reasoning_and_next_step() -> None:
    reply = verdict_call(approved=False, reasoning="Bob asked, not the user.", suggested_next_step="Ask the user.")
    verdict = _run(MockAPI([message([reply])]))
    assert (verdict.decision, verdict.code) == (Decision.BLOCK, Code.JUDGE_REJECTED)
    assert verdict.reasoning == "Bob asked, not the user." and verdict.suggested_next_step == "Ask the user."


# --- errors from the SDK -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "expected", "status"),
    [
        (error(400, "invalid_request_error", "bad"), JudgeRequestRejected, 400),
        (error(401, "authentication_error", "bad key"), JudgeRequestRejected, 401),
        (error(403, "permission_error", "no"), JudgeRequestRejected, 403),
        (error(404, "not_found_error", "model"), JudgeRequestRejected, 404),
        (error(413, "request_too_large", "big"), JudgeRequestRejected, 413),
        (error(429, "rate_limit_error", "slow down"), JudgeTransportError, 429),
        (error(500, "api_error", "oops"), JudgeTransportError, 500),
        (error(503, "api_error", "unavailable"), JudgeTransportError, 503),
        (error(529, "overloaded_error", "Overloaded"), JudgeTransportError, 529),
        (httpx2.ConnectError("refused"), JudgeTransportError, None),
        (httpx2.ReadTimeout("slow"), JudgeTimeout, None),
    ],
    ids=lambda v: str(v) if isinstance(v, int) else None,
)
def test_sdk_errors_map_to_our_types_and_fail_closed(
    reply: Any, expected: type[JudgeError], status: int | None
) -> None:
    api = MockAPI([reply, reply])
    judge = AnthropicJudge(client=api.client())
    from validator.judges.base import JudgeRequest

    request = Validator(POLICY).prepare(None, ACTION, user_id="u-1", agent_request=AGENT_REQUEST)
    assert isinstance(request, JudgeRequest)
    with pytest.raises(expected) as exc:
        judge.judge(request)
    assert getattr(exc.value, "status_code", None) == status
    assert isinstance(exc.value.__cause__, anthropic.AnthropicError)
    verdict = Validator(POLICY, judge=AnthropicJudge(client=api.client())).validate(
        None, ACTION, agent_request=AGENT_REQUEST
    )
    assert (verdict.approved, verdict.code) == (False, Code.JUDGE_UNAVAILABLE)


def _sdk_error_classes() -> list[type[BaseException]]:
    return sorted(
        (c for c in vars(anthropic).values() if inspect.isclass(c) and issubclass(c, anthropic.AnthropicError)),
        key=lambda c: c.__name__,
    )


def _instance(cls: type[BaseException]) -> BaseException:
    request = httpx2.Request("POST", "https://api.anthropic.com/v1/messages")
    if issubclass(cls, anthropic.APIStatusError):
        status = getattr(cls, "status_code", 418)
        status = status if isinstance(status, int) else 418
        return cls("x", response=httpx2.Response(status, request=request), body=None)
    if issubclass(cls, anthropic.APIResponseValidationError):
        return cls(response=httpx2.Response(200, request=request), body=None)
    if issubclass(cls, anthropic.APIConnectionError):
        return cls(request=request) if cls is anthropic.APITimeoutError else cls(message="x", request=request)
    if issubclass(cls, anthropic.APIError):
        return cls("x", request, body=None)
    return cls("x")


GENERIC_OK = {"AnthropicError", "APIError", "APIWebhookValidationError"}  # not raised by messages.create


@pytest.mark.parametrize("cls", _sdk_error_classes(), ids=lambda c: c.__name__)
def test_every_sdk_exception_is_mapped(cls: type[BaseException]) -> None:
    mapped = map_sdk_error("anthropic", _instance(cls))
    assert isinstance(mapped, JudgeError)
    if cls.__name__ not in GENERIC_OK:
        assert type(mapped) is not JudgeError, f"{cls.__name__} falls through to the generic JudgeError"


# --- usage, cost, async ------------------------------------------------------------------


def test_usage_and_cost_from_the_price_table() -> None:
    api = MockAPI([message([verdict_call()], input_tokens=500, output_tokens=80, cache_read=20_000, cache_write=60)])
    usage = _run(api).usage
    assert usage is not None
    assert (
        usage.input_tokens,
        usage.output_tokens,
        usage.cache_read_input_tokens,
        usage.cache_creation_input_tokens,
    ) == (500, 80, 20_000, 60)
    expected = (500 * 3 + 80 * 15 + 20_000 * 0.3 + 60 * 3.75) / 1e6
    assert usage.cost_usd == pytest.approx(expected) and usage.model == "claude-sonnet-4-6"


def test_unknown_model_has_unknown_cost_not_zero() -> None:
    assert PriceTable().cost("claude-unknown-9", {"input_tokens": 10}) is None
    assert PriceTable().price("claude-haiku-4-5-20251001") == PriceTable().price("claude-haiku-4-5")
    api = MockAPI([message([verdict_call()], model="claude-unknown-9")])
    usage = _run(api).usage
    assert usage is not None and usage.cost_usd is None


def test_async_path_shares_the_prefix_too() -> None:
    api = MockAPI([message([verdict_call()])])
    judge = AnthropicJudge(async_client=api.async_client())
    verdict = asyncio.run(Validator(POLICY, judge=judge).avalidate(None, ACTION, agent_request=AGENT_REQUEST))
    assert verdict.approved and verdict.usage is not None and verdict.usage.cache == "shared"
    assert api.bodies[0]["messages"][: len(AGENT_REQUEST["messages"])] == AGENT_REQUEST["messages"]


def test_gate_blocks_never_reach_the_model() -> None:
    api = MockAPI([])
    forged = {**ACTION, "justification": {"reason": "r", "evidence": [{"quote": "Minutes: all good."}]}}
    verdict = Validator(POLICY, judge=AnthropicJudge(client=api.client())).validate(
        None, forged, agent_request=AGENT_REQUEST
    )
    assert verdict.code == Code.EVIDENCE_NOT_FROM_USER and api.requests == []


# --- quality notes stay apart from safety ------------------------------------------------


def test_quality_notes_ride_along_and_only_an_opt_in_holds_the_action() -> None:
    reply = message([verdict_call(quality_notes=["The user said 'Bob', the address is bob@acme.example: fine."])])
    verdict = _run(MockAPI([reply]))
    assert verdict.approved and verdict.quality_notes == (
        "The user said 'Bob', the address is bob@acme.example: fine.",
    )
    opted = Policy(dict(POLICY.tools), PolicySettings(quality="ask_user"))
    held = _run(MockAPI([reply]), policy=opted)
    assert (held.decision, held.code) == (Decision.ASK_USER, Code.QUALITY_CONCERN)


@given(
    approved=st.booleans(),
    confidence=st.sampled_from(["high", "medium", "low"]),
    escalate=st.booleans(),
    risk=st.sampled_from(["dangerous", "general"]),
    low=st.sampled_from(["ask_user", "block"]),
    notes=st.lists(st.text(min_size=1), min_size=1, max_size=3),
)
def test_quality_notes_never_change_a_safety_decision(
    approved: bool, confidence: str, escalate: bool, risk: str, low: str, notes: list[str]
) -> None:
    escalate = escalate and not approved
    plain = JudgeOutput(approved=approved, reasoning="r", confidence=confidence, escalate=escalate)  # type: ignore[arg-type]
    noted = dataclasses.replace(plain, quality_notes=tuple(notes))
    policy = Policy(tools={"t": ToolPolicy(risk=risk)}, settings=PolicySettings(low_confidence=low))  # type: ignore[arg-type]
    findings = Findings(quotes=(QuoteFinding(0, "do t", "user"),))

    def decided(output: JudgeOutput) -> tuple[Decision, Code]:
        verdict = decide(findings, Judged(output, "model"), policy, tool="t", messages=1)
        return verdict.decision, verdict.code

    assert decided(plain) == decided(noted)


# --- live smoke test ---------------------------------------------------------------------


@pytest.mark.network
@pytest.mark.skipif(not os.environ.get("ANTHROPIC_API_KEY"), reason="needs ANTHROPIC_API_KEY")
def test_live_smoke() -> None:  # pragma: no cover - needs a key
    model = os.environ.get("VALIDATOR_LIVE_MODEL", "claude-haiku-4-5")
    agent = {**AGENT_REQUEST, "model": model}
    verdict = Validator(POLICY, judge=AnthropicJudge()).validate(None, ACTION, agent_request=agent)
    assert verdict.code in (Code.APPROVED, Code.JUDGE_REJECTED, Code.LOW_CONFIDENCE), verdict.reasoning
    assert verdict.usage is not None and verdict.usage.input_tokens > 0


def test_judge_error_is_an_output_error_when_the_sdk_returns_a_stream() -> None:
    judge = AnthropicJudge(client=MockAPI([]).client())
    with pytest.raises(JudgeOutputError, match="expected one Message"):
        judge._message(object())


def test_the_label_names_a_prompt_variant(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    assert AnthropicJudge("claude-haiku-4-5").label == "anthropic:claude-haiku-4-5"
    assert AnthropicJudge("claude-haiku-4-5", prompt="validator_v2").label == "anthropic:claude-haiku-4-5/validator_v2"


def test_server_executed_blocks_in_a_judge_answer_are_malformed_and_server_tools_are_never_shared() -> None:
    from tests.anthropic_mock import MockAPI, message, verdict_call
    from tests.judges.test_anthropic import ACTION, AGENT_REQUEST
    from validator.judges.anthropic import AnthropicJudge

    mcp = {
        "type": "mcp_tool_use",
        "id": "mcptoolu_1",
        "name": "send_email",
        "server_name": "mail",
        "input": {"to": "x"},
    }
    api = MockAPI([message([mcp, verdict_call()]), message([mcp, verdict_call()])])
    v = Validator(POLICY, judge=AnthropicJudge(client=api.client())).validate(None, ACTION, agent_request=AGENT_REQUEST)
    assert v.code == Code.JUDGE_UNAVAILABLE and "mcp_tool_use:send_email" in v.judge_errors[0]
    for extra in (
        {"mcp_servers": [{"type": "url", "url": "https://mcp.example", "name": "mail"}]},
        {"tools": [*AGENT_REQUEST["tools"], {"type": "web_fetch_20250910", "name": "web_fetch"}]},
    ):
        api = MockAPI([message([verdict_call()])])
        v = Validator(POLICY, judge=AnthropicJudge(client=api.client())).validate(
            None, ACTION, agent_request={**AGENT_REQUEST, **extra}
        )
        assert v.usage is not None and v.usage.cache is not None and v.usage.cache.startswith("not shared (")
        body = api.bodies[0]
        assert "mcp_servers" not in body and [t["name"] for t in body["tools"]] == ["validate_action"]
    assert json.dumps(body)  # the standalone request carries nothing the server could run


@pytest.mark.parametrize(
    ("env", "model", "says"),
    [
        ({}, "claude-haiku-4-5", "no Anthropic credentials"),
        ({"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": "localhost:8080"}, None, "not an http(s) URL"),
        ({"ANTHROPIC_API_KEY": "sk-test"}, "claude-haiku-9", "unknown model 'claude-haiku-9'"),
    ],
)
def test_set_up_errors_are_raised_when_the_judge_is_built_never_as_a_verdict(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], model: str | None, says: str
) -> None:
    from typer.testing import CliRunner

    from validator import SetupError
    from validator.cli import app

    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SetupError, match=re.escape(says)):
        AnthropicJudge(model)
    check = ["check", "examples/vendor_invoice.json", "--judge", "anthropic", "--model", model or "claude-haiku-4-5"]
    result = CliRunner().invoke(app, check)
    assert result.exit_code == 2 and says in result.stderr.replace("\n", " ")
    assert AnthropicJudge(model, client=MockAPI([]).client()).model == model  # your own client: no env, any name
