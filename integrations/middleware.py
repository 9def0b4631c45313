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

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.config import get_config
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command, interrupt
from validator.integrations._host import Remembered, user_id_from
from validator.integrations._lifecycle import GuardedCall, Outcome, ToolCallGuard
from validator.integrations._review import Review, batched_request
from validator.integrations.claude import PayloadCapture, claude_request, is_claude, with_validator_tools
from validator.integrations.langchain import justified_tool, refusal_message, transcript_from_state, used_before

from validator import Decision, Validator, Verdict
from validator.exceptions import ActionBlocked, UsageError
from validator.judges.anthropic.tools import DEFAULT_SEARCH_TOOL, DEFAULT_VALIDATOR_TOOL

__all__ = ["ActionValidatorMiddleware"]

ToolResult = ToolMessage | Command[Any]
REMEMBERED = 256


def _refusal(verdict: Verdict, call: Mapping[str, Any]) -> ToolMessage:
    return refusal_message(verdict, call["id"], call["name"])


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
        self._proposed: Remembered[str, dict[str, Any]] = Remembered(REMEMBERED)
        """The arguments the model proposed, by tool call id: a host step's edit is told apart by them."""
        self._reviews: Remembered[str, Review] = Remembered(REMEMBERED)
        self.guard = ToolCallGuard(self.validator, reserved=self._ours, remembered=REMEMBERED)

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

    def _propose(self, response: ModelResponse) -> None:
        """Keep the calls as the model made them (a human-in-the-loop step may edit them before they run)."""
        for message in response.result:
            if isinstance(message, AIMessage):
                for call in message.tool_calls:
                    if call.get("id"):
                        self._proposed.put(str(call["id"]), dict(call.get("args") or {}))

    def _prepared(self, request: ModelRequest) -> tuple[ModelRequest, PayloadCapture | None]:
        request = request.override(tools=self._tools(request))
        if not (self.share_prefix and is_claude(request.model)):
            return request, None
        capture = PayloadCapture(request.model)
        return request.override(model=capture.model), capture

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> ModelResponse:
        request, capture = self._prepared(request)
        response = handler(request)
        self._propose(response)
        self._remember(request, response, capture.last if capture else None)
        return response

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        request, capture = self._prepared(request)
        response = await handler(request)
        self._propose(response)
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

    def _start(self, call: Mapping[str, Any], state: Any, user: Callable[[], str | None]) -> GuardedCall:
        """The call as the guard sees it: what the model proposed tells a host step's edit apart."""
        call_id = str(call.get("id") or "")
        messages = state.get("messages") or [] if isinstance(state, Mapping) else []
        return self.guard.start(
            call["name"],
            call.get("args"),
            call_id=call_id,
            messages=lambda: transcript_from_state(state),
            user_id=user,
            agent_request=self._agent_request(state, call_id) if isinstance(state, Mapping) else None,
            used=used_before(messages, call_id),
            proposed=self._proposed.get(call_id),
        )

    def _settled(self, request: ToolCallRequest, outcome: Outcome) -> ToolCallRequest | ToolMessage:
        """The call to run (the arguments that were checked), or the refusal; ``halt`` stops the run."""
        call = request.tool_call
        if not outcome.runs:
            if self.on_block == "halt":
                raise ActionBlocked(outcome.verdict)
            return _refusal(outcome.verdict, call)
        return request.override(tool_call={**call, "args": outcome.args})

    def _answer(self, c: GuardedCall, verdict: Verdict) -> Any:
        """The person's answer: given with the whole turn (batched), else asked now (outside any try:
        GraphInterrupt must reach the graph)."""
        review = self._reviews.get(c.key)
        if review is not None:
            self._reviews.pop(c.key)
            return review
        return interrupt(self.guard.request(c, verdict))

    # -- a whole model turn at once (batched) --------------------------------------------------------

    def _turn(self, state: Any, runtime: Any) -> list[GuardedCall]:
        """The guarded calls of the model turn just made, ready for validation."""
        messages = state.get("messages") or [] if isinstance(state, Mapping) else []
        last = messages[-1] if messages else None
        if self.interrupt_mode != "batched" or not isinstance(last, AIMessage):
            return []
        configurable = (get_config() or {}).get("configurable")
        user = lambda: user_id_from(self.user_id_key, configurable, getattr(runtime, "context", None))  # noqa: E731
        return [c for c in (self._start(call, state, user) for call in last.tool_calls) if c.refusal is None]

    def _ask_turn(self, judged: list[tuple[GuardedCall, Verdict]]) -> None:
        """One interrupt for every escalated call of the turn; each call's decision kept for its tool call."""
        asked = [(c, v) for c, v in judged if v.decision is Decision.ASK_USER and self._reviews.get(c.key) is None]
        if not asked:
            return
        answer = interrupt(batched_request([self.guard.item(c, v) for c, v in asked]))
        for i, (c, _) in enumerate(asked):
            self._reviews.put(c.key, self.guard.review(c, answer, index=i))

    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        self._ask_turn([(c, self.guard.decide(c)) for c in self._turn(state, runtime)])
        return None

    async def aafter_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        self._ask_turn([(c, await self.guard.adecide(c)) for c in self._turn(state, runtime)])
        return None

    def wrap_tool_call(self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolResult]) -> ToolResult:
        c = self._start(request.tool_call, request.state, lambda: self._user_id(request))
        verdict = self.guard.decide(c)
        answer = self._answer(c, verdict) if verdict.decision is Decision.ASK_USER else None
        settled = self._settled(request, self.guard.settle(c, verdict, answer))
        return settled if isinstance(settled, ToolMessage) else handler(settled)

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[ToolResult]]
    ) -> ToolResult:
        c = self._start(request.tool_call, request.state, lambda: self._user_id(request))
        verdict = await self.guard.adecide(c)
        answer = self._answer(c, verdict) if verdict.decision is Decision.ASK_USER else None
        settled = self._settled(request, await self.guard.asettle(c, verdict, answer))
        return settled if isinstance(settled, ToolMessage) else await handler(settled)
