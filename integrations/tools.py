"""``@guarded``: a tool that validates itself before it runs.

For plain Python functions (sync and async) and LangChain tools (``@tool``, ``StructuredTool``,
any ``BaseTool``). The model-facing schema gains a required ``justification`` argument whose
description (``prompts/justification.md``) tells the agent that another AI reads it and rejects the
action unless it quotes the user's own words. Each call is validated first; ``justification`` is
stripped before the tool runs, so the tool never receives it, whatever its schema.

Where the conversation comes from:

- inside a LangGraph ``ToolNode`` (or ``create_agent``): the graph state, through a hidden
  ``ToolRuntime`` argument the node injects (the model never sees it; ``InjectedState``,
  ``InjectedToolCallId`` and ``ToolRuntime`` arguments of the tool keep working);
- in a hand-written loop: ``with validation_context(messages, user_id=...):``.

A call that is not approved does not run. Under LangGraph it returns a
``ToolMessage(status="error")`` with the reasoning and the suggested next step, so the agent can
recover; elsewhere it raises :class:`validator.ActionBlocked`. Without a conversation to check
against, the call is blocked too.

Typical usage::

    @guarded(validator=Validator(policy))
    def send_email(to: str, body: str) -> str: ...
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal, TypeVar, get_args, overload

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.prebuilt import ToolRuntime
from langgraph.types import interrupt
from pydantic import BaseModel, ConfigDict, Field, create_model
from validator.integrations._host import (
    JUSTIFICATION,
    JustificationArg,
    current_context,
    justification_description,
    justified_model,
    split_justification,
    user_id_from,
    validation_context,
)
from validator.integrations._lifecycle import GuardedCall, Outcome, ToolCallGuard
from validator.integrations.langchain import SIGNALS, model_fields, refusal_message, transcript_from_state, used_before

from validator import ActionBlocked, Decision, Validator, Verdict
from validator.exceptions import UsageError

__all__ = ["GuardedTool", "guarded", "validation_context"]

F = TypeVar("F", bound=Callable[..., Any])
OnAsk = Literal["tell_model", "interrupt"]
RUNTIME = "validator_runtime"
"""The hidden argument through which LangGraph hands the guard its runtime (state, config, call id)."""


class _Guard:
    """Validates one tool's calls; shared by the function and the LangChain tool wrappers."""

    def __init__(self, tool_name: str, validator: Validator, on_ask: OnAsk) -> None:
        self.tool_name = tool_name
        self.guard = ToolCallGuard(validator, signals=SIGNALS)
        self.on_ask = on_ask

    def _start(self, args: Mapping[str, Any], justification: Any, runtime: Any) -> GuardedCall:
        given = {**args, JUSTIFICATION: justification} if justification is not None else dict(args)
        if isinstance(runtime, ToolRuntime):
            state = runtime.state
            call_id = runtime.tool_call_id or ""
            messages = state.get("messages") if isinstance(state, Mapping) else getattr(state, "messages", None)
            return self.guard.start(
                self.tool_name,
                given,
                call_id=call_id,
                messages=lambda: transcript_from_state(state),
                user_id=lambda: user_id_from("user_id", (runtime.config or {}).get("configurable"), runtime.context),
                used=used_before(messages, call_id) if call_id else (),
            )
        ctx = current_context()
        if ctx is None:
            raise UsageError(
                f"`{self.tool_name}` is guarded but no conversation was given: run it in a LangGraph ToolNode, "
                "or call it inside `with validation_context(messages):`"
            )
        return self.guard.start(
            self.tool_name,
            given,
            call_id=None,
            messages=lambda: transcript_from_state(ctx.messages),
            user_id=ctx.user_id,
            agent_request=ctx.agent_request,
        )

    def _asks(self, verdict: Verdict, runtime: Any) -> bool:
        return verdict.decision is Decision.ASK_USER and self.on_ask == "interrupt" and isinstance(runtime, ToolRuntime)

    def check(self, args: Mapping[str, Any], justification: Any, runtime: Any) -> Outcome:
        """What happens to this call; under LangGraph with ``on_ask="interrupt"`` an ``ask_user`` verdict
        asks the person (``interrupt``, outside any try) and their answer decides."""
        call = self._start(args, justification, runtime)
        verdict = self.guard.decide(call)
        if self._asks(verdict, runtime):
            return self.guard.settle(call, verdict, interrupt(self.guard.request(call, verdict)))
        return self.guard.outcome(call, verdict)

    async def acheck(self, args: Mapping[str, Any], justification: Any, runtime: Any) -> Outcome:
        call = self._start(args, justification, runtime)
        verdict = await self.guard.adecide(call)
        if self._asks(verdict, runtime):
            return await self.guard.asettle(call, verdict, interrupt(self.guard.request(call, verdict)))
        return self.guard.outcome(call, verdict)

    def refusal(self, verdict: Verdict, runtime: Any) -> ToolMessage:
        """What a blocked call returns: an error the agent reads, or :class:`ActionBlocked` outside LangGraph."""
        if not isinstance(runtime, ToolRuntime):
            raise ActionBlocked(verdict)
        return refusal_message(verdict, runtime.tool_call_id or "", self.tool_name)


def _validator(validator: Validator | None) -> Validator:
    return validator if validator is not None else Validator()


# -- plain functions ---------------------------------------------------------------------------


def _guard_function(fn: F, validator: Validator, name: str | None, on_ask: OnAsk) -> F:
    signature = inspect.signature(fn)
    if JUSTIFICATION in signature.parameters or RUNTIME in signature.parameters:
        raise UsageError(f"{fn.__name__} already has a parameter named {JUSTIFICATION!r} or {RUNTIME!r}")
    guard = _Guard(name or fn.__name__, validator, on_ask)
    extra = [
        inspect.Parameter(JUSTIFICATION, inspect.Parameter.KEYWORD_ONLY, annotation=JustificationArg),
        inspect.Parameter(RUNTIME, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=ToolRuntime),
    ]
    params = list(signature.parameters.values())
    var_kw = [p for p in params if p.kind is inspect.Parameter.VAR_KEYWORD]
    params = [p for p in params if p.kind is not inspect.Parameter.VAR_KEYWORD] + extra + var_kw

    def _split(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[dict[str, Any], Any, Any]:
        runtime = kwargs.pop(RUNTIME, None)
        clean, justification = split_justification(kwargs)
        named = dict(signature.bind_partial(*args, **clean).arguments)
        return named, justification, runtime

    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def awrapper(*args: Any, **kwargs: Any) -> Any:
            named, justification, runtime = _split(args, kwargs)
            flat = _flat(named, signature)
            outcome = await guard.acheck(flat, justification, runtime)
            if not outcome.runs:
                return guard.refusal(outcome.verdict, runtime)
            if outcome.args != flat:  # the user's edit, validated again, is the call that runs
                pos, kw = _call_args(signature, outcome.args)
                return await fn(*pos, **kw)
            return await fn(*args, **{k: v for k, v in kwargs.items() if k not in (JUSTIFICATION, RUNTIME)})

        wrapper: Callable[..., Any] = awrapper
    else:

        @functools.wraps(fn)
        def swrapper(*args: Any, **kwargs: Any) -> Any:
            named, justification, runtime = _split(args, kwargs)
            flat = _flat(named, signature)
            outcome = guard.check(flat, justification, runtime)
            if not outcome.runs:
                return guard.refusal(outcome.verdict, runtime)
            if outcome.args != flat:
                pos, kw = _call_args(signature, outcome.args)
                return fn(*pos, **kw)
            return fn(*args, **{k: v for k, v in kwargs.items() if k not in (JUSTIFICATION, RUNTIME)})

        wrapper = swrapper
    wrapper.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {
        **getattr(fn, "__annotations__", {}),
        # the guidance goes in the parameter's description, never in the tool's
        JUSTIFICATION: Annotated[JustificationArg, Field(description=justification_description())],
        RUNTIME: ToolRuntime,
    }
    del wrapper.__wrapped__  # type: ignore[attr-defined]  # tools read our signature, not fn's
    return wrapper  # type: ignore[return-value]


def _flat(named: dict[str, Any], signature: inspect.Signature) -> dict[str, Any]:
    """Bound arguments as the action's args: ``**kwargs`` spread out, ``*args`` kept under its name."""
    out: dict[str, Any] = {}
    for key, value in named.items():
        param = signature.parameters.get(key)
        if param is not None and param.kind is inspect.Parameter.VAR_KEYWORD:
            out.update(value)
        else:
            out[key] = value
    return out


def _call_args(signature: inspect.Signature, flat: Mapping[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """Positional and keyword arguments calling a function with ``flat`` (the inverse of :func:`_flat`)."""
    rest = dict(flat)
    params = list(signature.parameters.values())
    star = next((i for i, p in enumerate(params) if p.kind is inspect.Parameter.VAR_POSITIONAL), None)
    positional: list[Any] = []
    for i, p in enumerate(params):
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            positional.extend(rest.pop(p.name, ()))
        elif (p.kind is inspect.Parameter.POSITIONAL_ONLY or (star is not None and i < star)) and p.name in rest:
            positional.append(rest.pop(p.name))
    return positional, rest


# -- LangChain tools ---------------------------------------------------------------------------


class _AllowRuntime(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)


class GuardedTool(StructuredTool):
    """A LangChain tool that validates each call; the model sees its tool's schema plus ``justification``."""

    facing_schema: type[BaseModel] = Field(exclude=True)

    @property
    def tool_call_schema(self) -> type[BaseModel]:
        return self.facing_schema


def _runtime_field(schema: type[BaseModel]) -> str | None:
    """The tool's own ``ToolRuntime`` argument, if it has one."""
    for name, info in schema.model_fields.items():
        annotation = info.annotation
        if name == "runtime" or annotation is ToolRuntime or ToolRuntime in get_args(annotation):
            return name
    return None


def _edited(
    clean: dict[str, Any], model_args: dict[str, Any], runs: dict[str, Any], injected: set[str]
) -> dict[str, Any]:
    """The tool's arguments with the model's replaced by the ones that were checked (an edit); the
    arguments the graph injects (state, call id) kept."""
    return clean if runs == model_args else {**{k: v for k, v in clean.items() if k in injected}, **runs}


def _guard_tool(tool: BaseTool, validator: Validator, on_ask: OnAsk) -> GuardedTool:
    schema = tool.args_schema
    facing_base = tool.tool_call_schema
    if not (isinstance(schema, type) and issubclass(schema, BaseModel)) or not (
        isinstance(facing_base, type) and issubclass(facing_base, BaseModel)
    ):
        raise UsageError(
            f"tool {tool.name!r} has a JSON-schema args_schema; give it a pydantic args_schema, or guard the function"
        )
    guard = _Guard(tool.name, validator, on_ask)
    injected = model_fields(tool.get_input_schema()) - model_fields(facing_base)
    facing = justified_model(facing_base, description=tool.description)
    # ToolNode injects one runtime argument a tool: the tool's own, when it has one, else ours.
    own_runtime = _runtime_field(schema)
    hidden: dict[str, Any] = {JUSTIFICATION: (Any, None)}  # a bad one reaches the validator, which says what is wrong
    if own_runtime is None:
        hidden[RUNTIME] = (ToolRuntime, None)  # invisible to the model
    lenient: type[BaseModel] = create_model(f"{schema.__name__}Guarded", __base__=(schema, _AllowRuntime), **hidden)

    def _split(kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], Any, Any]:
        runtime = kwargs.get(own_runtime) if own_runtime else kwargs.pop(RUNTIME, None)
        clean, justification = split_justification(kwargs)
        model_args = {k: v for k, v in clean.items() if k not in injected}
        return clean, model_args, justification, runtime

    def _call_input(clean: dict[str, Any], runtime: Any) -> Any:
        if isinstance(runtime, ToolRuntime) and runtime.tool_call_id:  # InjectedToolCallId needs a ToolCall
            return {"type": "tool_call", "id": runtime.tool_call_id, "name": tool.name, "args": clean}
        return clean

    def _answer(result: Any, runtime: Any) -> Any:
        """Our tool answers in "content" format (a refusal is a ToolMessage); the tool's own
        (content, artifact) pair becomes a ToolMessage carrying the artifact."""
        if tool.response_format != "content_and_artifact" or not isinstance(result, tuple) or len(result) != 2:
            return result
        content, artifact = result
        if isinstance(runtime, ToolRuntime) and runtime.tool_call_id:
            return ToolMessage(content=content, artifact=artifact, tool_call_id=runtime.tool_call_id, name=tool.name)
        return content

    def run(**kwargs: Any) -> Any:
        clean, model_args, justification, runtime = _split(kwargs)
        outcome = guard.check(model_args, justification, runtime)
        if not outcome.runs:
            return guard.refusal(outcome.verdict, runtime)
        clean = _edited(clean, model_args, outcome.args, injected)
        if isinstance(tool, StructuredTool) and tool.func is not None:
            return _answer(tool.func(**clean), runtime)
        return tool.invoke(_call_input(clean, runtime))

    async def arun(**kwargs: Any) -> Any:
        clean, model_args, justification, runtime = _split(kwargs)
        outcome = await guard.acheck(model_args, justification, runtime)
        if not outcome.runs:
            return guard.refusal(outcome.verdict, runtime)
        clean = _edited(clean, model_args, outcome.args, injected)
        if isinstance(tool, StructuredTool) and tool.coroutine is not None:
            return _answer(await tool.coroutine(**clean), runtime)
        return await tool.ainvoke(_call_input(clean, runtime))

    return GuardedTool(
        name=tool.name,
        description=tool.description,
        args_schema=lenient,
        facing_schema=facing,
        func=run,
        coroutine=arun,
        return_direct=tool.return_direct,
        response_format="content",  # see _answer
        handle_tool_error=tool.handle_tool_error,
        handle_validation_error=tool.handle_validation_error,
        metadata=tool.metadata,
        tags=tool.tags,
    )


# -- the decorator ------------------------------------------------------------------------------


@overload
def guarded(
    tool: BaseTool, *, validator: Validator | None = None, name: str | None = None, on_ask: OnAsk = "tell_model"
) -> GuardedTool: ...
@overload
def guarded(
    tool: F, *, validator: Validator | None = None, name: str | None = None, on_ask: OnAsk = "tell_model"
) -> F: ...
@overload
def guarded(
    tool: None = None, *, validator: Validator | None = None, name: str | None = None, on_ask: OnAsk = "tell_model"
) -> Callable[[Any], Any]: ...
def guarded(
    tool: Any = None, *, validator: Validator | None = None, name: str | None = None, on_ask: OnAsk = "tell_model"
) -> Any:
    """Guard a tool (a function or a LangChain tool); usable bare (``@guarded``) or configured.

    ``on_ask``: what an ``ask_user`` verdict does. ``"tell_model"`` (the default): the call is refused and
    the agent reads why (it can ask the user in the conversation). ``"interrupt"``: inside a LangGraph
    graph with a checkpointer, the person is asked through ``interrupt`` (LangChain's per-call approval
    request, with the validator's reasons) and their answer decides: approve, edit (validated again as a
    new call; the edit is what runs), reject; outside LangGraph it is refused as with ``"tell_model"``.
    """
    if on_ask not in ("tell_model", "interrupt"):
        raise UsageError(f"on_ask must be 'tell_model' or 'interrupt', got {on_ask!r}")
    if tool is None:
        return lambda t: guarded(t, validator=validator, name=name, on_ask=on_ask)
    if isinstance(tool, GuardedTool):
        return tool
    checker = _validator(validator)
    tool_name = name or getattr(tool, "name", None) or getattr(tool, "__name__", "")
    if checker.policy.for_tool(str(tool_name)).exempt:  # exempt by the policy: nothing to guard, nothing to add
        return tool
    if isinstance(tool, BaseTool):
        return _guard_tool(tool, checker, on_ask)
    if callable(tool):
        return _guard_function(tool, checker, name, on_ask)
    raise UsageError(f"cannot guard {type(tool).__name__}: expected a function or a LangChain tool")
