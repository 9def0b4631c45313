"""A judge over any LangChain chat model with tool calling (ChatAnthropic, ChatOpenAI, ChatOllama).

It binds the verdict tool, sends the validator prompt as a system message and, in the default
``blind`` view, the user's messages, the call and code's facts (never a tool output or the agent's
prose: :mod:`validator.judges.blind`), or in the ``shared_prefix`` view the conversation as data, with
the validation request as a user message, and applies the same guard as every
model judge: exactly one call, to the verdict tool, with a verdict that parses. Its calls are
tagged ``nostream`` so its tokens never reach the user through LangGraph's ``stream_mode="messages"``.
It makes no prompt-cache guarantee, and each verdict says so (``usage.cache``).

It imports no framework: it speaks to the model through LangChain's chat-model interface (``bind_tools``,
``invoke``/``ainvoke`` with ``(role, text)`` messages, an AI message with ``tool_calls`` back), so the
judge lives with the other judges and the application brings ``langchain-core`` and the model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Protocol

from validator.exceptions import JudgeError, JudgeOutputError, JudgeServiceError, JudgeTimeout
from validator.judges.base import Judge, JudgeOutput, JudgeRequest
from validator.judges.blind import View, check_view, render_blind
from validator.judges.model import (
    DEFAULT_VALIDATOR_TOOL,
    VERDICT_DESCRIPTION,
    guard_calls,
    parse_verdict,
    render_request,
    render_transcript,
    verdict_schema,
)
from validator.prompts import load_prompt
from validator.telemetry.tracing import ModelSpan, model_call
from validator.verdict import Usage

__all__ = ["NOSTREAM", "ChatModel", "ChatModelJudge"]

NOSTREAM = "nostream"
"""LangGraph's tag (``langgraph.constants.TAG_NOSTREAM``) that keeps a model's tokens out of the stream."""
CACHE_NOTE = "not shared (generic chat model: no prompt-cache guarantee)"
_STOPPED = {"length", "max_tokens", "refusal", "content_filter"}


class ChatModel(Protocol):
    """A tool-calling LangChain chat model (``BaseChatModel``): what this judge needs of it."""

    def bind_tools(self, tools: Sequence[Mapping[str, Any]], /) -> Any: ...


class ChatModelJudge(Judge):
    """Judge with any tool-calling LangChain chat model; see the module docstring."""

    name: ClassVar[str] = "chat_model"

    def __init__(
        self,
        model: ChatModel,
        *,
        tool_name: str = DEFAULT_VALIDATOR_TOOL,
        quality: bool = True,
        prompt: str = "validator",
        view: View = "blind",
        blind_prompt: str = "validator_blind",
        provider: str | None = None,
    ) -> None:
        """``view``: ``blind`` (the default: the user's words, the call and code's facts, never a tool output
        or the agent's prose; with ``blind_prompt``), or ``shared_prefix`` (the whole transcript as data, with
        ``prompt``: a chat model shares no prefix with the agent). ``provider``: ``gen_ai.provider.name`` of the
        call's span (``openai``, ``anthropic``; default: the model's LangChain type)."""
        check_view(view)
        self.model = model
        self.provider = provider or str(getattr(model, "_llm_type", None) or "langchain")
        self.view = view
        self.blind_prompt = blind_prompt
        self.prompt = prompt
        self.tool_name = tool_name
        self.quality = quality
        tool = {"name": tool_name, "description": VERDICT_DESCRIPTION, "input_schema": verdict_schema(quality=quality)}
        self._runnable = model.bind_tools([tool]).with_config(tags=[NOSTREAM], run_name="action_validator")

    @property
    def _model_name(self) -> str | None:
        named = getattr(self.model, "model", None) or getattr(self.model, "model_name", None)
        return str(named) if named else None

    @property
    def label(self) -> str:
        return f"chat_model:{self._model_name or getattr(self.model, '_llm_type', type(self.model).__name__)}"

    def _messages(self, request: JudgeRequest) -> list[tuple[str, str]]:
        if self.view == "blind":
            lines, ask = render_blind(request, tool_name=self.tool_name, quality=self.quality)
            return [("system", load_prompt(self.blind_prompt)), ("human", "\n".join(lines) + "\n\n" + ask)]
        text = (
            render_transcript(request.transcript)
            + "\n\n"
            + render_request(request, tool_name=self.tool_name, quality=self.quality, prompt=None)
        )
        return [("system", load_prompt(self.prompt)), ("human", text)]

    def _read(self, reply: Any, span: ModelSpan) -> JudgeOutput:
        kind = getattr(reply, "type", None)
        if kind not in ("ai", "AIMessageChunk") or not isinstance(getattr(reply, "tool_calls", None), list):
            raise JudgeOutputError(self.label, f"expected an AIMessage, got {type(reply).__name__}")
        usage = _usage(reply)
        metadata = reply.response_metadata or {}
        stop = metadata.get("stop_reason") or metadata.get("finish_reason")
        span.response(
            response_id=getattr(reply, "id", None),
            model=usage.model if usage else None,
            finish_reason=str(stop) if stop else None,
            usage=usage if reply.usage_metadata else None,
        )
        calls: list[tuple[str, Any]] = [(c["name"], c["args"]) for c in reply.tool_calls]
        calls += [(str(c.get("name")), c.get("args")) for c in reply.invalid_tool_calls]
        try:
            if reply.invalid_tool_calls:
                raise JudgeOutputError(
                    self.label,
                    f"the model sent a tool call that does not parse: {reply.invalid_tool_calls[0].get('error')}",
                )
            data = guard_calls(
                self.label, calls, self.tool_name, stop_reason="max_tokens" if stop in _STOPPED else None
            )
            return parse_verdict(self.label, data, usage, view=self.view)
        except JudgeError as exc:
            exc.usage = usage
            raise

    def _failed(self, exc: Exception) -> JudgeError:
        if isinstance(exc, JudgeError):
            return exc
        if isinstance(exc, TimeoutError):
            return JudgeTimeout(self.label, 0)
        status = getattr(exc, "status_code", None)
        return JudgeServiceError(
            self.label, f"{type(exc).__name__}: {exc}", status if isinstance(status, int) else None
        )

    def judge(self, request: JudgeRequest) -> JudgeOutput:
        with model_call(request.telemetry, self.provider, self._model_name) as span:
            try:
                reply = self._runnable.invoke(self._messages(request))
            except Exception as exc:
                raise self._failed(exc) from exc
            return self._read(reply, span)

    async def ajudge(self, request: JudgeRequest) -> JudgeOutput:
        with model_call(request.telemetry, self.provider, self._model_name) as span:
            try:
                reply = await self._runnable.ainvoke(self._messages(request))
            except Exception as exc:
                raise self._failed(exc) from exc
            return self._read(reply, span)


def _usage(reply: Any) -> Usage | None:
    meta = reply.usage_metadata
    if not meta:
        return Usage(cache=CACHE_NOTE)
    details: Mapping[str, Any] = meta.get("input_token_details") or {}
    read = int(details.get("cache_read") or 0)
    written = int(details.get("cache_creation") or 0)
    return Usage(
        input_tokens=max(int(meta.get("input_tokens") or 0) - read - written, 0),  # LangChain counts cache in input
        output_tokens=int(meta.get("output_tokens") or 0),
        cache_read_input_tokens=read,
        cache_creation_input_tokens=written,
        model=str(
            (reply.response_metadata or {}).get("model_name") or (reply.response_metadata or {}).get("model") or ""
        )
        or None,
        cache=CACHE_NOTE,
    )
