"""A scripted tool-calling chat model for tests (the stock fakes cannot bind tools).

``ScriptedChatModel(responses=[AIMessage(...), ...])`` answers each call with the next message,
records every call's messages in ``calls`` and every ``bind_tools`` in ``bound`` (as OpenAI-style
tool dicts), and streams each answer word by word so ``stream_mode="messages"`` sees tokens.
Requires ``langchain-core``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from validator.extras import missing_extra

try:
    from langchain_core.callbacks import CallbackManagerForLLMRun
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
    from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
    from langchain_core.runnables import Runnable
    from langchain_core.utils.function_calling import convert_to_openai_tool
except ImportError as exc:
    raise missing_extra("langchain", "validator.integrations.testing", exc) from None
from pydantic import Field

__all__ = ["ScriptedChatModel"]


class ScriptedChatModel(BaseChatModel):
    """Answers from a script; see the module docstring."""

    __test__ = False
    responses: list[AIMessage] = Field(default_factory=list)
    calls: list[list[BaseMessage]] = Field(default_factory=list)
    bound: list[list[dict[str, Any]]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(
        self, tools: Sequence[Any], *, tool_choice: str | None = None, **kwargs: Any
    ) -> Runnable[Any, AIMessage]:
        self.bound.append([convert_to_openai_tool(t) for t in tools])
        return self

    def _next(self, messages: list[BaseMessage]) -> AIMessage:
        self.calls.append(list(messages))
        if not self.responses:
            raise AssertionError(f"ScriptedChatModel called {len(self.calls)} times; the script is empty")
        return self.responses.pop(0)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._next(messages))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        reply = self._next(messages)
        words = str(reply.content).split(" ") if reply.content else []
        for i, word in enumerate(words):
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=word if i == 0 else " " + word, id=reply.id))
            if run_manager:
                run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk
        last = AIMessageChunk(
            content="",
            id=reply.id,
            tool_call_chunks=[
                {"name": c["name"], "args": json.dumps(c["args"]), "id": c["id"], "index": i}
                for i, c in enumerate(reply.tool_calls)
            ],
            usage_metadata=reply.usage_metadata,
            response_metadata=reply.response_metadata,
        )
        yield ChatGenerationChunk(message=last)
