"""``@guarded`` on LangChain tools, and the LangGraph side of guarded plain functions (the ``[langchain]``
extra): a ``GuardedTool`` whose model-facing schema gains ``justification``, the hidden ``ToolRuntime``
argument through which a ``ToolNode`` hands a guarded function its conversation, LangGraph's ``interrupt``
for ``on_ask="interrupt"``, and the refusal a graph's agent reads. :mod:`validator.integrations.tools` is the
decorator itself, which needs none of this for a plain function in a hand-written loop.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, get_args

from validator.extras import missing_extra

try:
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import BaseTool, StructuredTool
    from langgraph.prebuilt import ToolRuntime
    from langgraph.types import interrupt
except ImportError as exc:
    raise missing_extra("langchain", "validator.integrations.langchain_tools", exc) from None
from pydantic import BaseModel, ConfigDict, Field, create_model
from validator.integrations._host import JUSTIFICATION, RUNTIME, split_justification, user_id_from
from validator.integrations._justified import justified_model
from validator.integrations._lifecycle import GuardedCall, ToolCallGuard
from validator.integrations.langchain import SIGNALS, conversation_of, model_fields, refusal_message

from validator import Verdict
from validator.exceptions import UsageError

if TYPE_CHECKING:
    from validator.integrations._guard import Guard

__all__ = ["SIGNALS", "GuardedTool", "ToolRuntime", "ask", "guard_tool", "is_runtime", "refusal", "start"]


def is_runtime(value: Any) -> bool:
    return isinstance(value, ToolRuntime)


def start(guard: ToolCallGuard, tool_name: str, given: dict[str, Any], runtime: ToolRuntime) -> GuardedCall:
    """A guarded call inside a ``ToolNode``: the conversation, the call id and the user from the graph."""
    state = runtime.state
    call_id = runtime.tool_call_id or ""
    messages = state.get("messages") if isinstance(state, Mapping) else getattr(state, "messages", None)
    conversation, used = conversation_of(state, messages, call_id, guard.validator)
    return guard.start(
        tool_name,
        given,
        call_id=call_id,
        messages=conversation,
        user_id=lambda: user_id_from("user_id", (runtime.config or {}).get("configurable"), runtime.context),
        used=used if call_id else (),
    )


def ask(request: Any) -> Any:
    """Ask the person through LangGraph's ``interrupt`` (outside any try): their answer."""
    return interrupt(request)


def refusal(verdict: Verdict, runtime: ToolRuntime, tool_name: str) -> ToolMessage:
    """What a refused call returns inside a graph: an error the agent reads."""
    return refusal_message(verdict, runtime.tool_call_id or "", tool_name)


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


def guard_tool(tool: BaseTool, guard: Guard) -> GuardedTool:
    """``tool`` validating each call through ``guard`` (the decorator's, for this tool's name)."""
    schema = tool.args_schema
    facing_base = tool.tool_call_schema
    if not (isinstance(schema, type) and issubclass(schema, BaseModel)) or not (
        isinstance(facing_base, type) and issubclass(facing_base, BaseModel)
    ):
        raise UsageError(
            f"tool {tool.name!r} has a JSON-schema args_schema; give it a pydantic args_schema, or guard the function"
        )
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
