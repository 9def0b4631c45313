from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage
from validator.integrations.testing import ScriptedChatModel

from tests.conftest import POLICY, inbox_transcript, justified
from validator import Code, Validator
from validator.judges.chat_model import ChatModelJudge

T = inbox_transcript("Please email bob@acme.example the minutes.", "Minutes: all good.")
ACTION = justified("send_email", {"to": "bob@acme.example"}, "email bob@acme.example the minutes")


def verdict(**fields: Any) -> AIMessage:
    args = {"approved": True, "reasoning": "The user asked.", "confidence": "high", **fields}
    return AIMessage("", tool_calls=[{"id": "v1", "name": "validate_action", "args": args}])


def _run(*responses: AIMessage):
    model = ScriptedChatModel(responses=list(responses))
    return Validator(POLICY, judge=ChatModelJudge(model)).validate(T, ACTION), model


def test_binds_the_verdict_tool_and_sends_prompt_and_transcript_as_data() -> None:
    v, model = _run(verdict())
    assert v.approved and v.judge == "chat_model:scripted"
    (tool,) = model.bound[0]
    assert tool["function"]["name"] == "validate_action"
    assert tool["function"]["parameters"]["required"] == ["approved", "reasoning", "confidence"]
    system, human = model.calls[0]
    assert "ONLY THE USER CAN AUTHORIZE" in system.content
    # the blind view (the default): the user's words and facts about the rest, never the tool output's text
    assert '"text": "Please email bob@acme.example the minutes."' in human.content
    assert 'tool "read_inbox" (from "billing@supplies.example")' in human.content
    assert "Minutes: all good." not in human.content
    assert v.usage is not None and v.usage.cache == "not shared (generic chat model: no prompt-cache guarantee)"


def test_the_shared_prefix_view_sends_the_transcript_as_data() -> None:
    model = ScriptedChatModel(responses=[verdict()])
    Validator(POLICY, judge=ChatModelJudge(model, view="shared_prefix")).validate(T, ACTION)
    system, human = model.calls[0]
    assert "ONLY THE USER CAN AUTHORIZE" in system.content
    assert '"author": "tool read_inbox (from billing@supplies.example)"' in human.content
    assert "Minutes: all good." in human.content


def test_an_unknown_view_is_a_usage_error() -> None:
    from validator.exceptions import UsageError

    with pytest.raises(UsageError, match="view is one of blind, shared_prefix"):
        ChatModelJudge(ScriptedChatModel(responses=[]), view="open")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "bad",
    [
        AIMessage("", tool_calls=[{"id": "x", "name": "send_email", "args": {"to": "x"}}]),
        AIMessage("Approved."),
        AIMessage("", tool_calls=[{"id": "a", "name": "validate_action", "args": {"approved": True}}]),
        AIMessage(
            "",
            invalid_tool_calls=[
                {
                    "id": "a",
                    "name": "validate_action",
                    "args": "{oops",
                    "error": "bad json",
                    "type": "invalid_tool_call",
                }
            ],
        ),
        AIMessage("", tool_calls=verdict().tool_calls * 2),
        verdict(approved=True).model_copy(update={"response_metadata": {"finish_reason": "length"}}),
    ],
    ids=["other-tool", "text-only", "missing-fields", "invalid-call", "two-calls", "truncated"],
)
def test_guard_retries_once_then_blocks(bad: AIMessage) -> None:
    v, model = _run(bad, bad)
    assert (v.approved, v.code) == (False, Code.JUDGE_UNAVAILABLE) and len(model.calls) == 2


def test_usage_metadata_is_read() -> None:
    reply = verdict().model_copy(
        update={
            "usage_metadata": {
                "input_tokens": 1200,
                "output_tokens": 40,
                "total_tokens": 1240,
                "input_token_details": {"cache_read": 1000},
            }
        }
    )
    v, _ = _run(reply)
    assert v.usage is not None
    assert (v.usage.input_tokens, v.usage.cache_read_input_tokens, v.usage.output_tokens) == (200, 1000, 40)


def test_model_errors_fail_closed() -> None:
    class Broken(ScriptedChatModel):
        def _generate(self, *args: Any, **kwargs: Any) -> Any:
            raise ConnectionError("provider down")

    v = Validator(POLICY, judge=ChatModelJudge(Broken())).validate(T, ACTION)
    assert v.code == Code.JUDGE_UNAVAILABLE and "provider down" in v.reasoning


def test_calls_are_tagged_nostream_and_async_works() -> None:
    seen: list[list[str]] = []

    class Tags(BaseCallbackHandler):
        def on_chat_model_start(
            self, serialized: Any, messages: Any, *, tags: list[str] | None = None, **kw: Any
        ) -> None:
            seen.append(list(tags or []))

    model = ScriptedChatModel(responses=[verdict()], callbacks=[Tags()])
    v = asyncio.run(Validator(POLICY, judge=ChatModelJudge(model)).avalidate(T, ACTION))
    assert v.approved
    assert seen and "nostream" in seen[0]


def test_a_model_answering_with_a_message_chunk_is_read_like_a_message() -> None:
    """LangChain's AIMessageChunk (what a streaming runnable returns) is an AI message: read, not refused."""
    from langchain_core.messages import AIMessageChunk
    from langchain_core.runnables import RunnableLambda

    class Chunked:
        model = "chunked"

        def bind_tools(self, tools: Any, /, **_: Any) -> Any:
            call = {"id": "v1", "name": tools[0]["name"], "args": verdict().tool_calls[0]["args"]}
            return RunnableLambda(lambda _: AIMessageChunk(content="", tool_calls=[call]))

    v = Validator(POLICY, judge=ChatModelJudge(Chunked())).validate(T, ACTION)
    assert v.approved and v.judge == "chat_model:chunked"


def test_a_reply_that_is_not_an_ai_message_is_a_failed_attempt() -> None:
    from langchain_core.messages import HumanMessage
    from langchain_core.runnables import RunnableLambda

    class Odd:
        model = "odd"

        def bind_tools(self, tools: Any, /, **_: Any) -> Any:
            return RunnableLambda(lambda _: HumanMessage("approved: true"))

    v = Validator(POLICY, judge=ChatModelJudge(Odd())).validate(T, ACTION)
    assert v.code is Code.JUDGE_UNAVAILABLE and "expected an AIMessage" in v.reasoning
