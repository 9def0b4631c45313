"""LangChain v1 agent middleware for ``create_agent``, the way ``HumanInTheLoopMiddleware`` plugs in.

- ``wrap_model_call`` gives every guarded tool the model sees a required ``justification`` argument (exempt tools are
  left as they are). For a ChatAnthropic model it also adds the search tool and the deferred validator tool from the
  first turn and remembers each call's request body (built by langchain-anthropic itself), so an Anthropic judge can
  share the agent's prompt cache.
- ``wrap_tool_call`` validates the call, strips ``justification`` before the tool runs, answers a refused call with
  ``ToolMessage(status="error")`` (reasoning and suggested next step), or stops the run (``on_block="halt"``), and
  sends an ``ask_user`` verdict to the user through ``interrupt`` in LangChain's human-in-the-loop shapes
  (``interrupt_mode="per_call"``: a ``tool_approval`` request per call; ``"batched"``: one ``HITLRequest`` per model
  turn, from ``after_model``), with the validator's reasons under ``action_validator``. Resume with LangChain's
  decisions (approve, edit, reject, respond; ``{"decisions": [...]}`` batched; offered per tool by ``interrupt_on``);
  see :mod:`validator.integrations._review`. Verdicts are kept per tool call, so the re-run that a resume causes does
  not call the judge again (in the same process). An edit (ours, or a ``HumanInTheLoopMiddleware`` step's, in either
  order) is validated again as a new call; the tool node gets a wrapper of the tool that runs only the arguments that
  were checked.

Sync and async twins of both hooks exist. The host's control-flow exceptions (``GraphInterrupt`` and the rest of
``GraphBubbleUp``) always propagate; any other exception in the validation itself blocks the call, it never runs it.

Typical usage::

    agent = create_agent(model, tools, middleware=[ActionValidatorMiddleware(Validator(policy))],
                         checkpointer=InMemorySaver())
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal

from validator.extras import missing_extra

try:
    from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_core.tools import BaseTool
    from langgraph.config import get_config
    from langgraph.prebuilt.tool_node import ToolCallRequest
    from langgraph.types import Command, interrupt
except ImportError as exc:
    raise missing_extra("langchain", "validator.integrations.middleware", exc) from None
from validator.integrations._host import JUSTIFICATION, Remembered, split_justification, user_id_from
from validator.integrations._lifecycle import GuardedCall, Outcome, ToolCallGuard
from validator.integrations._review import batched_request
from validator.integrations.claude import PayloadCapture, claude_request, is_claude, with_validator_tools
from validator.integrations.langchain import (
    SIGNALS,
    conversation_of,
    justified_tool,
    model_fields,
    proposed_call,
    refusal_message,
)

from validator import BaseValidator, Decision, Validator, Verdict
from validator.exceptions import ActionBlocked, UsageError
from validator.judges.anthropic.tools import DEFAULT_SEARCH_TOOL, DEFAULT_VALIDATOR_TOOL

__all__ = ["ActionValidatorMiddleware"]

ToolResult = ToolMessage | Command[Any]
REMEMBERED = 256
HITL_EDITS = "hitl_edited_tool_calls"
"""The state key where LangChain's ``HumanInTheLoopMiddleware`` (batched) keeps a reviewer's edit by call id."""


class ActionValidatorMiddleware(AgentMiddleware):
    """Validates every guarded tool call of a ``create_agent`` agent; see the module docstring."""

    def __init__(
        self,
        validator: BaseValidator | None = None,
        *,
        user_id_key: str = "user_id",
        share_prefix: bool = True,
        validator_name: str = DEFAULT_VALIDATOR_TOOL,
        search_name: str = DEFAULT_SEARCH_TOOL,
        interrupt_mode: Literal["per_call", "batched"] = "per_call",
        on_block: Literal["tell_model", "halt"] = "tell_model",
        interrupt_on: Mapping[str, Any] | None = None,
    ) -> None:
        """``interrupt_mode``: ask the user one call at a time (LangChain's ``per_call`` request shape) or
        about every escalated call of a model turn at once (its ``batched`` shape). ``on_block``: a refused
        call is answered to the model (``tell_model``), or the run stops with :class:`ActionBlocked`
        (``halt``). ``interrupt_on``: LangChain's per-tool ``allowed_decisions`` and ``description`` for the
        calls the validator asks about (it decides whether to ask)."""
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
        self._facing: Remembered[int, tuple[BaseTool, BaseTool]] = Remembered(REMEMBERED)
        """Each guarded tool's justified twin, by the tool's id with the tool itself kept beside it (an id is
        only unique while its object lives), at most ``REMEMBERED`` of them."""
        self._requests: Remembered[str, dict[str, Any]] = Remembered(REMEMBERED)
        """The body the agent's own model call sent, by its answer's id (the judge shares its prompt cache)."""
        self.guard = ToolCallGuard(self.validator, reserved=self._ours, signals=SIGNALS, interrupt_on=interrupt_on)

    # -- the model call ----------------------------------------------------------------------

    def _guarded(self, tool: Any) -> bool:
        return isinstance(tool, BaseTool) and not self.validator.policy.for_tool(tool.name).exempt

    def _tools(self, request: ModelRequest) -> list[Any]:
        tools: list[Any] = []
        for tool in request.tools:
            if isinstance(tool, BaseTool) and self._guarded(tool):
                kept = self._facing.get(id(tool))
                if kept is None or kept[0] is not tool:
                    kept = self._facing.put(id(tool), (tool, justified_tool(tool)))
                tools.append(kept[1])
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

    def _start(self, call: Mapping[str, Any], state: Any, user: Callable[[], str | None]) -> GuardedCall:
        """The call as the guard sees it: what the model proposed tells a host step's edit apart."""
        call_id = str(call.get("id") or "")
        messages = state.get("messages") or [] if isinstance(state, Mapping) else []
        # the model's own call in the conversation (a human-in-the-loop step changes only the call that runs)
        model = proposed_call(messages, call_id)
        proposed = model[1] if model is not None and model[0] == call["name"] else None
        edit = _hitl_edit(state, call_id)
        if edit is not None and edit.get("name") == call["name"]:
            # LangChain's HumanInTheLoopMiddleware (batched) keeps the model's call in the message and swaps in
            # the reviewer's when the call runs: that one is checked, as their edit of the model's call
            call = {**call, "args": dict(edit["args"])}
            if model is not None and proposed is None:  # the reviewer switched the tool: all of it is theirs
                proposed = {JUSTIFICATION: model[1].get(JUSTIFICATION)}
        conversation, used = conversation_of(state, messages, call_id, self.validator)
        return self.guard.start(
            call["name"],
            call.get("args"),
            call_id=call_id,
            messages=conversation,
            user_id=user,
            agent_request=self._agent_request(state, call_id) if isinstance(state, Mapping) else None,
            used=used,
            proposed=proposed,
        )

    def _settled(self, request: ToolCallRequest, outcome: Outcome) -> ToolCallRequest | ToolMessage:
        """The call to run (the arguments that were checked), or the refusal; ``halt`` stops the run."""
        call = request.tool_call
        if not outcome.runs:
            return self._refusal(outcome, call)
        return request.override(tool_call={**call, "args": outcome.args})

    def _refusal(self, outcome: Outcome, call: Mapping[str, Any]) -> ToolMessage:
        """The refusal the agent reads for a call that does not run; with ``halt`` the run stops instead."""
        if self.on_block == "halt" and outcome.response is None:
            raise ActionBlocked(outcome.verdict)
        return refusal_message(outcome.verdict, call["id"], call["name"], outcome.response)

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

    def _ask_turn(self, judged: list[tuple[GuardedCall, Verdict]], host: tuple[Any, Any]) -> None:
        """One interrupt for every escalated call of the turn; each call's decision kept for its tool call."""
        asked = [(c, v) for c, v in judged if v.decision is Decision.ASK_USER and not self.guard.holds(c)]
        if not asked:
            return
        answer = interrupt(batched_request([self.guard.item(c, v, host) for c, v in asked]))
        for i, (c, _) in enumerate(asked):
            self.guard.hold(c, self.guard.review(c, answer, index=i))

    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        self._ask_turn([(c, self.guard.decide(c)) for c in self._turn(state, runtime)], (state, runtime))
        return None

    async def aafter_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        self._ask_turn([(c, await self.guard.adecide(c)) for c in self._turn(state, runtime)], (state, runtime))
        return None

    def wrap_tool_call(self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolResult]) -> ToolResult:
        c = self._start(request.tool_call, request.state, lambda: self._user_id(request))
        settled = self._settled(request, self.guard.run(c, interrupt))  # interrupt: outside any try
        return settled if isinstance(settled, ToolMessage) else handler(self._as_checked(settled, c))

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[ToolResult]]
    ) -> ToolResult:
        c = self._start(request.tool_call, request.state, lambda: self._user_id(request))
        settled = self._settled(request, await self.guard.arun(c, interrupt))
        return settled if isinstance(settled, ToolMessage) else await handler(self._as_checked(settled, c))

    # -- what runs is what was checked, whatever runs inside us --------------------------------------

    def _as_checked(self, request: ToolCallRequest, c: GuardedCall) -> ToolCallRequest:
        """The request with its tool (and every tool a step inside ours may switch to) in a wrapper that
        runs only the arguments that were checked: a middleware placed inside ours (LangChain's
        ``HumanInTheLoopMiddleware`` listed after ours) that changes the call makes it a new call,
        checked again as the person's edit before anything runs."""
        tool = request.tool
        if not isinstance(tool, BaseTool):
            return request
        checked = dict(request.tool_call.get("args") or {})
        runtime = request.runtime
        if dataclasses.is_dataclass(runtime) and isinstance(getattr(runtime, "tools", None), list):
            switch = _hitl_edit(request.state, c.call_id)  # a reviewer who switched the tool (batched)
            others = [_AsChecked.of(t, None, self, c, switched=switch) for t in runtime.tools]
            runtime = dataclasses.replace(runtime, tools=others)
            return dataclasses.replace(request, tool=_AsChecked.of(tool, checked, self, c), runtime=runtime)
        return request.override(tool=_AsChecked.of(tool, checked, self, c))

    def _again(
        self, running: _AsChecked, call: dict[str, Any]
    ) -> tuple[dict[str, Any], GuardedCall | None, dict[str, Any]]:
        """``(the call to run as it was checked, None, injected)``, or, when a step inside ours changed it,
        ``(the call, the new call to check, injected)``: the change is the person's edit (all of it, when
        they switched the tool)."""
        c, tool, checked, switched = running.call, running.inner, running.checked, running.switched
        given = dict(call.get("args") or {})
        facing = model_fields(tool.tool_call_schema) or set(given) | {JUSTIFICATION}
        injected = {k: v for k, v in given.items() if k not in facing}
        model_args, justification = split_justification({k: v for k, v in given.items() if k in facing})
        if checked is not None and tool.name == c.tool and model_args == checked:
            return {**call, "args": {**injected, **model_args}}, None, injected
        reason = c.action.justification
        if checked is not None and tool.name == c.tool:  # changed by a step inside ours: the change is the edit
            proposed: dict[str, Any] | None = {**checked, JUSTIFICATION: reason}
        elif switched is not None and switched.get("name") == tool.name and dict(switched["args"]) == model_args:
            proposed = {JUSTIFICATION: reason}  # the reviewer's own switch to this tool: all of it is theirs
        else:  # any other call (a tool calling another through its runtime): checked as the agent's, no credit
            proposed = None
        again = self.guard.start(
            tool.name,
            {**model_args, JUSTIFICATION: justification if justification is not None else reason},
            call_id=c.call_id,
            messages=c.transcript,
            user_id=c.user_id,
            agent_request=c.agent_request,
            proposed=proposed,
        )
        return call, again, injected

    def _ran(self, call: dict[str, Any], outcome: Outcome, injected: dict[str, Any]) -> dict[str, Any] | ToolMessage:
        if not outcome.runs:
            return self._refusal(outcome, {"id": call.get("id") or "", "name": call.get("name") or ""})
        return {**call, "args": {**injected, **outcome.args}}

    def _recheck(self, running: _AsChecked, call: dict[str, Any]) -> dict[str, Any] | ToolMessage:
        """The tool call to run, checked again when a step inside ours changed it (asked about through
        ``interrupt`` when it needs the user); else the refusal."""
        ready, again, injected = self._again(running, call)
        if again is None:
            return ready
        return self._ran({**ready, "name": running.inner.name}, self.guard.run(again, interrupt), injected)

    async def _arecheck(self, running: _AsChecked, call: dict[str, Any]) -> dict[str, Any] | ToolMessage:
        """Async twin of :meth:`_recheck`."""
        ready, again, injected = self._again(running, call)
        if again is None:
            return ready
        return self._ran({**ready, "name": running.inner.name}, await self.guard.arun(again, interrupt), injected)


class _AsChecked(BaseTool):
    """A tool that runs only as the validator checked it (see ``_as_checked``)."""

    inner: BaseTool
    checked: dict[str, Any] | None = None
    """The model-facing arguments that were checked; None: this tool was not the call that was checked."""
    owner: Any = None
    call: Any = None
    switched: Any = None
    """A reviewer's switch of the call to another tool (LangChain's batched edit), when there is one."""

    @classmethod
    def of(
        cls,
        tool: BaseTool,
        checked: dict[str, Any] | None,
        owner: ActionValidatorMiddleware,
        call: GuardedCall,
        *,
        switched: Mapping[str, Any] | None = None,
    ) -> BaseTool:
        tool = tool.inner if isinstance(tool, _AsChecked) else tool
        return cls(
            name=tool.name,
            description=tool.description,
            args_schema=tool.args_schema,
            inner=tool,
            checked=checked,
            owner=owner,
            call=call,
            switched=switched,
            return_direct=tool.return_direct,
        )

    @property
    def tool_call_schema(self) -> Any:
        return self.inner.tool_call_schema

    def _run(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover - invoke is overridden
        raise NotImplementedError

    def _input(self, input: Any) -> dict[str, Any]:
        if isinstance(input, Mapping) and input.get("type") == "tool_call":
            return dict(input)
        return {"type": "tool_call", "id": self.call.call_id, "name": self.name, "args": dict(input or {})}

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        call = self.owner._recheck(self, self._input(input))
        return call if isinstance(call, ToolMessage) else self.inner.invoke(call, config, **kwargs)

    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        call = await self.owner._arecheck(self, self._input(input))
        return call if isinstance(call, ToolMessage) else await self.inner.ainvoke(call, config, **kwargs)


def _hitl_edit(state: Any, call_id: str) -> Mapping[str, Any] | None:
    """The reviewer's edit of this call that LangChain's batched ``HumanInTheLoopMiddleware`` keeps in state."""
    edit = (state.get(HITL_EDITS) or {}).get(call_id) if isinstance(state, Mapping) else None
    if isinstance(edit, Mapping) and isinstance(edit.get("name"), str) and isinstance(edit.get("args"), Mapping):
        return edit
    return None
