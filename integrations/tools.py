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
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Any, ParamSpec, Protocol, TypeAlias, TypeVar, overload

from pydantic import Field
from validator.integrations._guard import Guard, OnAsk
from validator.integrations._host import (
    JUSTIFICATION,
    RUNTIME,
    justification_description,
    split_justification,
    validation_context,
)
from validator.integrations._justified import JustificationArg

from validator import BaseValidator, Validator
from validator.exceptions import UsageError

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool
    from validator.integrations.langchain_tools import GuardedTool

__all__ = ["GuardedFunction", "GuardedTool", "guarded", "validation_context"]

P = ParamSpec("P")
R = TypeVar("R")

GuardedFunction: TypeAlias = Callable[..., R]
"""A guarded function: it returns what the function returns, and takes the function's arguments plus the
keyword ``justification`` (which the type system cannot add to a signature, hence ``...``)."""


# -- plain functions ---------------------------------------------------------------------------


def _guard_function(
    fn: Callable[..., R], validator: BaseValidator, name: str | None, on_ask: OnAsk
) -> Callable[..., R]:
    signature = inspect.signature(fn)
    if JUSTIFICATION in signature.parameters or RUNTIME in signature.parameters:
        raise UsageError(f"{fn.__name__} already has a parameter named {JUSTIFICATION!r} or {RUNTIME!r}")
    guard = Guard(name or fn.__name__, validator, on_ask)
    extra = [inspect.Parameter(JUSTIFICATION, inspect.Parameter.KEYWORD_ONLY, annotation=JustificationArg)]
    if guard.graph is not None:  # a ToolNode injects the runtime into the parameter so annotated
        runtime_type = guard.graph.ToolRuntime
        extra.append(inspect.Parameter(RUNTIME, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=runtime_type))
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
        **({RUNTIME: guard.graph.ToolRuntime} if guard.graph is not None else {}),
    }
    del wrapper.__wrapped__  # type: ignore[attr-defined]  # tools read our signature, not fn's
    return wrapper


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


# -- the decorator ------------------------------------------------------------------------------


class Guarding(Protocol):
    """What ``guarded(validator=..., ...)`` returns: the decorator, configured."""

    @overload
    def __call__(self, tool: Callable[P, R], /) -> GuardedFunction[R]: ...
    @overload
    def __call__(self, tool: BaseTool, /) -> GuardedTool: ...
    def __call__(self, tool: Any, /) -> Any: ...


@overload
def guarded(
    tool: Callable[P, R],
    *,
    validator: BaseValidator | None = None,
    name: str | None = None,
    on_ask: OnAsk = "tell_model",
) -> GuardedFunction[R]: ...
@overload
def guarded(
    tool: BaseTool, *, validator: BaseValidator | None = None, name: str | None = None, on_ask: OnAsk = "tell_model"
) -> GuardedTool: ...
@overload
def guarded(
    tool: None = None, *, validator: BaseValidator | None = None, name: str | None = None, on_ask: OnAsk = "tell_model"
) -> Guarding: ...
def guarded(
    tool: Any = None, *, validator: BaseValidator | None = None, name: str | None = None, on_ask: OnAsk = "tell_model"
) -> Any:
    """Guard a tool: a plain function (sync or async; the base install) or a LangChain tool (the
    ``[langchain]`` extra); usable bare (``@guarded``) or configured (``@guarded(validator=...)``).

    A guarded function takes the function's arguments plus the keyword ``justification`` and returns what
    the function returns; a call that is not approved does not run: it raises :class:`validator.ActionBlocked`
    (its ``verdict`` says why: code, reasoning, the suggested next step), or, inside a LangGraph ``ToolNode``,
    returns the refusal the agent reads. An exempt tool (by the policy) is returned as it is.

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
    langchain_tool = _is_langchain_tool(tool)
    if langchain_tool:
        from validator.integrations.langchain_tools import GuardedTool, guard_tool

        if isinstance(tool, GuardedTool):
            return tool
    if langchain_tool and name is not None and name != tool.name:
        raise UsageError(f"name= renames a guarded function; the LangChain tool {tool.name!r} is guarded under its own")
    checker = validator if validator is not None else Validator()
    # the name the guard checks under: a LangChain tool's own (its calls carry it), else ``name`` or the function's
    tool_name = tool.name if langchain_tool else name or getattr(tool, "__name__", "")
    if checker.policy.for_tool(str(tool_name)).exempt:  # exempt by the policy: nothing to guard, nothing to add
        return tool
    if langchain_tool:
        return guard_tool(tool, Guard(tool.name, checker, on_ask))
    if callable(tool):
        return _guard_function(tool, checker, name, on_ask)
    raise UsageError(f"cannot guard {type(tool).__name__}: expected a function or a LangChain tool")


def _is_langchain_tool(tool: Any) -> bool:
    """Whether ``tool`` is a LangChain ``BaseTool``: only when LangChain is loaded can anything be one."""
    loaded = sys.modules.get("langchain_core.tools")
    return loaded is not None and isinstance(tool, loaded.BaseTool)


def __getattr__(name: str) -> Any:
    if name == "GuardedTool":  # the LangChain half's, imported only when asked for
        from validator.integrations.langchain_tools import GuardedTool

        return GuardedTool
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
