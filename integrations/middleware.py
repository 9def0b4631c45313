"""LangChain v1 agent middleware for ``create_agent``, the way ``HumanInTheLoopMiddleware`` plugs in.

- ``wrap_model_call`` gives every guarded tool the model sees a required ``justification``
  argument (exempt tools are left as they are). For a ChatAnthropic model it also adds the search
  tool and the deferred validator tool from the first turn and remembers each call's request body
  (built by langchain-anthropic itself), so an Anthropic judge can share the agent's prompt cache.
- ``wrap_tool_call`` validates the call, strips ``justification`` before the tool runs, answers a
  refused call with ``ToolMessage(status="error")`` (reasoning and suggested next step), or stops the
  run (``on_block="halt"``), and sends an ``ask_user`` verdict to the user through ``interrupt`` in
  LangChain's human-in-the-loop shapes (``interrupt_mode="per_call"``: a ``tool_approval`` request per
  call; ``"batched"``: one ``HITLRequest`` per model turn, from ``after_model``), with the
  validator's reasons under ``action_validator``. Resume with LangChain's decisions (approve, edit,
  reject; ``{"decisions": [...]}`` when batched) or ``True``/``False``; see
  :mod:`validator.integrations._review`. Verdicts are kept per tool call, so the re-run that a
  resume causes does not call the judge again (in the same process).

Sync and async twins of both hooks exist. The host's control-flow exceptions (``GraphInterrupt``
and the rest of ``GraphBubbleUp``) always propagate; any other exception in the validation itself
blocks the call, it never runs it.

Typical usage::

    agent = create_agent(model, tools, middleware=[ActionValidatorMiddleware(Validator(policy))],
                         checkpointer=InMemorySaver())
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.config import get_config
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command, interrupt
from validator.integrations._host import Remembered, pending_from_call, user_id_from
from validator.integrations._review import Review, approval_request, batched_request, read_review
from validator.integrations.claude import PayloadCapture, claude_request, is_claude, with_validator_tools
from validator.integrations.langchain import justified_tool, refusal_message, transcript_from_state

from validator import Decision, PendingAction, Validator, Verdict
from validator.exceptions import ActionBlocked, UsageError, is_control_flow
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
        interrupt_mode: Literal["per_call", "batched"] = "per_call",
        on_block: Literal["tell_model", "halt"] = "tell_model",
    ) -> None:
        """``interrupt_mode``: ask the user one call at a time (LangChain's ``per_call`` request shape) or
        about every escalated call of a model turn at once (its ``batched`` shape). ``on_block``: a refused
        call is answered to the model (``tell_model``), or the run stops with :class:`ActionBlocked`
        (``halt``)."""
        super().__init__()
        if interrupt_mode not in ("per_call", "batched"):
            raise UsageError(f"interrupt_mode must be 'per_call' or 'batched', got {interrupt_mode!r}")
        if on_block not in ("tell_model", "halt"):
            raise UsageError(f"on_block must be 'tell_model' or 'halt', got {on_block!r}")
        self.interrupt_mode = interrupt_mode
        self.on_block = on_block
        self.validator = validator if validator is not None else Validator()
        self.user_id_key = user_id_key
        self.share_prefix = share_prefix
        self._ours = {validator_name, search_name}
        self._names = {"validator_name": validator_name, "search_name": search_name}
        self._facing: dict[int, BaseTool] = {}
        self._requests: Remembered[str, dict[str, Any]] = Remembered(REMEMBERED)
        self._verdicts: Remembered[str, Verdict] = Remembered(REMEMBERED)
        self._reviews: Remembered[str, Review] = Remembered(REMEMBERED)

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
        return self._start_call(request.tool_call, request.state, lambda: self._user_id(request))

    def _start_call(self, call: Mapping[str, Any], state: Any, user: Callable[[], str | None]) -> _Call | ToolMessage:
        """What a tool call needs before the judge; a refusal when it cannot be checked at all."""
        call_id = str(call.get("id") or "")
        if call["name"] in self._ours:  # the agent never needs the validator's own tools
            return _refusal(
                Verdict.blocked(call["name"], "This tool belongs to the action validator; the agent cannot call it."),
                call,
            )
        try:
            action = pending_from_call(call["name"], call.get("args"), call.get("id"))
            transcript = transcript_from_state(state)
            user_id = user()
            # A kept verdict answers only this very call: same id, tool, arguments, justification, user and
            # conversation (a model may repeat call ids across runs; a resume repeats all of them).
            what = {"tool": action.tool, "args": action.args, "justification": action.justification}
            key = hash_args({"id": call_id, "action": what, "user": user_id, "transcript": transcript.digest})
            return _Call(
                call_id=key,
                transcript=transcript,
                action=action,
                user_id=user_id,
                agent_request=self._agent_request(state, call_id),
                known=self._verdicts.get(key),
            )
        except Exception as exc:
            return _failed(call, exc, "The validator could not check this call")

    def _settle(self, request: ToolCallRequest, c: _Call, verdict: Verdict) -> ToolCallRequest | ToolMessage:
        """The call to run (justification stripped), or the refusal; an ``ask_user`` verdict asks first."""
        call = request.tool_call
        action = c.action
        if verdict.decision is Decision.ASK_USER:
            review = self._reviews.get(c.call_id)  # answered with the whole turn (batched)
            if review is None:  # outside any try: GraphInterrupt must reach the graph
                name, call_id = call["name"], str(call["id"])
                answer = interrupt(approval_request(call_id, name, action.args, verdict, action.justification))
                review = read_review(answer, call_id=call_id, tool=name)
            if review.edited_args is not None:  # the user's edit is the call that runs
                action = pending_from_call(action.tool, review.edited_args, action.call_id)
            verdict = self.validator.answer(
                verdict,
                review.approved,
                review.reason,
                messages=c.transcript,
                action=action,
                user_id=c.user_id,
                remember=review.remember,
            )
            self._verdicts.pop(c.call_id)
            self._reviews.pop(c.call_id)
        if not verdict.approved:
            if self.on_block == "halt":
                raise ActionBlocked(verdict)
            return _refusal(verdict, call)
        return request.override(tool_call={**call, "args": dict(action.args)})

    # -- a whole model turn at once (batched) --------------------------------------------------------

    def _turn(self, state: Any, runtime: Any) -> list[tuple[_Call, Mapping[str, Any]]]:
        """The guarded calls of the model turn just made, ready for validation."""
        messages = state.get("messages") or [] if isinstance(state, Mapping) else []
        last = messages[-1] if messages else None
        if self.interrupt_mode != "batched" or not isinstance(last, AIMessage):
            return []
        configurable = (get_config() or {}).get("configurable")
        user = lambda: user_id_from(self.user_id_key, configurable, getattr(runtime, "context", None))  # noqa: E731
        out: list[tuple[_Call, Mapping[str, Any]]] = []
        for call in last.tool_calls:
            c = self._start_call(call, state, user)
            if isinstance(c, _Call):
                out.append((c, call))
        return out

    def _ask_turn(self, judged: list[tuple[_Call, Mapping[str, Any], Verdict]]) -> None:
        """One interrupt for every escalated call of the turn; each call's decision kept for its tool call."""
        asked = [
            (c, call, v)
            for c, call, v in judged
            if v.decision is Decision.ASK_USER and self._reviews.get(c.call_id) is None
        ]
        if not asked:
            return
        answer = interrupt(
            batched_request(
                [(str(call["id"]), call["name"], c.action.args, v, c.action.justification) for c, call, v in asked]
            )
        )
        for i, (c, call, _) in enumerate(asked):
            self._reviews.put(c.call_id, read_review(answer, call_id=str(call["id"]), tool=call["name"], index=i))

    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        judged = []
        for c, call in self._turn(state, runtime):
            judge = lambda c=c: self.validator.validate(  # noqa: E731
                c.transcript, c.action, user_id=c.user_id, agent_request=c.agent_request
            )
            judged.append((c, call, self._verdict(c, judge)))
        self._ask_turn(judged)
        return None

    async def aafter_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        judged = [(c, call, await self._averdict(c)) for c, call in self._turn(state, runtime)]
        self._ask_turn(judged)
        return None

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
        verdict = await self._averdict(c)
        # the user's answer is recorded in the store (I/O): off the event loop, in the graph's context
        # (asyncio.to_thread copies the context variables, so the host's interrupt still works)
        settled = await asyncio.to_thread(self._settle, request, c, verdict)
        return settled if isinstance(settled, ToolMessage) else await handler(settled)


def _validation_failed(c: _Call, exc: Exception) -> Verdict:
    if is_control_flow(exc):
        raise exc
    return Verdict.blocked(c.action.tool, f"The validator failed on this call: {exc}")
