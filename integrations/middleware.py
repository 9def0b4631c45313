"""LangChain v1 agent middleware for ``create_agent``, the way ``HumanInTheLoopMiddleware`` plugs in.

- ``wrap_model_call`` gives every guarded tool the model sees a required ``justification``
  argument (exempt tools are left as they are). For a ChatAnthropic model it also adds the search
  tool and the deferred validator tool from the first turn and remembers each call's request body
  (built by langchain-anthropic itself), so an Anthropic judge can share the agent's prompt cache.
- ``wrap_tool_call`` validates the call, strips ``justification`` before the tool runs, answers a
  refused call with ``ToolMessage(status="error")`` (reasoning and suggested next step), and sends an
  ``ask_user`` verdict to the user through ``interrupt`` (resume with ``True``/``False`` or
  ``{"approved": bool, "reason": str}``). Verdicts are kept per tool call id, so the re-run that a
  resume causes does not call the judge again (in the same process).

Sync and async twins of both hooks exist. The host's control-flow exceptions (``GraphInterrupt``
and the rest of ``GraphBubbleUp``) always propagate; any other exception in the validation itself
blocks the call, it never runs it.

Typical usage::

    agent = create_agent(model, tools, middleware=[ActionValidatorMiddleware(Validator(policy))],
                         checkpointer=InMemorySaver())
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command, interrupt
from validator.integrations._host import (
    Remembered,
    interrupt_request,
    pending_from_call,
    read_answer,
    user_id_from,
)
from validator.integrations.claude import PayloadCapture, claude_request, is_claude, with_validator_tools
from validator.integrations.langchain import justified_tool, refusal_message, transcript_from_state

from validator import Decision, PendingAction, Validator, Verdict
from validator.exceptions import is_control_flow
from validator.judges.anthropic.tools import DEFAULT_SEARCH_TOOL, DEFAULT_VALIDATOR_TOOL
from validator.record.recorder import hash_args

__all__ = ["ActionValidatorMiddleware"]

ToolResult = ToolMessage | Command[Any]
REMEMBERED = 256


def _refusal(verdict: Verdict, call: Mapping[str, Any]) -> ToolMessage:
    return refusal_message(verdict, call["id"], call["name"])


def _failed(call: Mapping[str, Any], exc: Exception, what: str) -> ToolMessage:
    if is_control_flow(exc):
        raise exc
    return _refusal(Verdict.blocked(call["name"], f"{what}: {exc}"), call)


@dataclass(frozen=True, slots=True)
class _Call:
    call_id: str
    """The key of this very call (id, tool, arguments, justification, user, conversation)."""
    transcript: Any
    action: PendingAction
    user_id: str | None
    agent_request: Mapping[str, Any] | None
    known: Verdict | None


class ActionValidatorMiddleware(AgentMiddleware):
    """Validates every guarded tool call of a ``create_agent`` agent; see the module docstring."""

    def __init__(
        self,
        validator: Validator | None = None,
        *,
        user_id_key: str = "user_id",
        share_prefix: bool = True,
        validator_name: str = DEFAULT_VALIDATOR_TOOL,
        search_name: str = DEFAULT_SEARCH_TOOL,
    ) -> None:
        super().__init__()
        self.validator = validator if validator is not None else Validator()
        self.user_id_key = user_id_key
        self.share_prefix = share_prefix
        self._ours = {validator_name, search_name}
        self._names = {"validator_name": validator_name, "search_name": search_name}
        self._facing: dict[int, BaseTool] = {}
        self._requests: Remembered[str, dict[str, Any]] = Remembered(REMEMBERED)
        self._verdicts: Remembered[str, Verdict] = Remembered(REMEMBERED)

    # -- the model call ----------------------------------------------------------------------

    def _guarded(self, tool: Any) -> bool:
        return isinstance(tool, BaseTool) and not self.validator.policy.for_tool(tool.name).exempt

    def _tools(self, request: ModelRequest) -> list[Any]:
        tools: list[Any] = []
        for tool in request.tools:
            if isinstance(tool, BaseTool) and self._guarded(tool):
                key = id(tool)
                if key not in self._facing:
                    self._facing[key] = justified_tool(tool)
                tools.append(self._facing[key])
            else:
                tools.append(tool)
        if self.share_prefix and is_claude(request.model):
            tools = with_validator_tools(tools, **self._names)
        return tools

    def _remember(self, request: ModelRequest, response: ModelResponse, sent: dict[str, Any] | None) -> None:
        """Keep the body the agent's call really sent (after every other middleware), by its answer's id."""
        if not (self.share_prefix and is_claude(request.model)):
            return
        payload = sent
        if payload is None:  # another model answered in the end (a fallback): rebuild from what we saw
            messages = [request.system_message, *request.messages] if request.system_message else list(request.messages)
            payload = claude_request(
                request.model, messages, request.tools, tool_choice=request.tool_choice, **request.model_settings
            )
        for message in response.result:
            if isinstance(message, AIMessage) and message.id and payload is not None:
                self._requests.put(message.id, payload)

    def _prepared(self, request: ModelRequest) -> tuple[ModelRequest, PayloadCapture | None]:
        request = request.override(tools=self._tools(request))
        if not (self.share_prefix and is_claude(request.model)):
            return request, None
        capture = PayloadCapture(request.model)
        return request.override(model=capture.model), capture

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> ModelResponse:
        request, capture = self._prepared(request)
        response = handler(request)
        self._remember(request, response, capture.last if capture else None)
        return response

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        request, capture = self._prepared(request)
        response = await handler(request)
        self._remember(request, response, capture.last if capture else None)
        return response

    # -- the tool call -----------------------------------------------------------------------

    def _agent_request(self, state: Any, call_id: str) -> Mapping[str, Any] | None:
        for message in reversed(state.get("messages") or []):
            if isinstance(message, AIMessage) and any(c.get("id") == call_id for c in message.tool_calls):
                return self._requests.get(message.id or "")
        return None

    def _user_id(self, request: ToolCallRequest) -> str | None:
        runtime = request.runtime
        configurable = (getattr(runtime, "config", None) or {}).get("configurable")
        return user_id_from(self.user_id_key, configurable, getattr(runtime, "context", None))

    def _start(self, request: ToolCallRequest) -> _Call | ToolMessage:
        """What a tool call needs before the judge; a refusal when it cannot be checked at all."""
        call = request.tool_call
        call_id = str(call.get("id") or "")
        if call["name"] in self._ours:  # the agent never needs the validator's own tools
            return _refusal(
                Verdict.blocked(call["name"], "This tool belongs to the action validator; the agent cannot call it."),
                call,
            )
        try:
            action = pending_from_call(call["name"], call.get("args"), call.get("id"))
            transcript = transcript_from_state(request.state)
            user_id = self._user_id(request)
            # A kept verdict answers only this very call: same id, tool, arguments, justification, user and
            # conversation (a model may repeat call ids across runs; a resume repeats all of them).
            what = {"tool": action.tool, "args": action.args, "justification": action.justification}
            key = hash_args({"id": call_id, "action": what, "user": user_id, "transcript": transcript.digest})
            return _Call(
                call_id=key,
                transcript=transcript,
                action=action,
                user_id=user_id,
                agent_request=self._agent_request(request.state, call_id),
                known=self._verdicts.get(key),
            )
        except Exception as exc:
            return _failed(call, exc, "The validator could not check this call")

    def _settle(self, request: ToolCallRequest, c: _Call, verdict: Verdict) -> ToolCallRequest | ToolMessage:
        """The call to run (justification stripped), or the refusal; an ``ask_user`` verdict asks first."""
        call = request.tool_call
        if verdict.decision is Decision.ASK_USER:
            # outside any try: GraphInterrupt must reach the graph
            answer = interrupt(interrupt_request([(str(call["id"]), call["name"], c.action.args, verdict)]))
            approved, reason = read_answer(answer)
            verdict = self.validator.answer(
                verdict, approved, reason, messages=c.transcript, action=c.action, user_id=c.user_id
            )
            self._verdicts.pop(c.call_id)
        if not verdict.approved:
            return _refusal(verdict, call)
        return request.override(tool_call={**call, "args": dict(c.action.args)})

    def _verdict(self, c: _Call, judged: Callable[[], Verdict]) -> Verdict:
        """The kept verdict of this very call, or a new one; a failure of the validation blocks the call."""
        try:
            return c.known or self._verdicts.put(c.call_id, judged())
        except Exception as exc:
            return _validation_failed(c, exc)

    async def _averdict(self, c: _Call) -> Verdict:
        if c.known is not None:
            return c.known
        try:
            verdict = await self.validator.avalidate(
                c.transcript, c.action, user_id=c.user_id, agent_request=c.agent_request
            )
        except Exception as exc:
            return _validation_failed(c, exc)
        return self._verdicts.put(c.call_id, verdict)

    def wrap_tool_call(self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolResult]) -> ToolResult:
        c = self._start(request)
        if isinstance(c, ToolMessage):
            return c
        judge = lambda: self.validator.validate(  # noqa: E731
            c.transcript, c.action, user_id=c.user_id, agent_request=c.agent_request
        )
        settled = self._settle(request, c, self._verdict(c, judge))
        return settled if isinstance(settled, ToolMessage) else handler(settled)

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[ToolResult]]
    ) -> ToolResult:
        c = self._start(request)
        if isinstance(c, ToolMessage):
            return c
        settled = self._settle(request, c, await self._averdict(c))
        return settled if isinstance(settled, ToolMessage) else await handler(settled)


def _validation_failed(c: _Call, exc: Exception) -> Verdict:
    if is_control_flow(exc):
        raise exc
    return Verdict.blocked(c.action.tool, f"The validator failed on this call: {exc}")
