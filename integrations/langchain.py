"""What the LangChain-based integrations share: messages to a transcript, the refusal message, the
justified tool copy, and the registration of LangGraph's control-flow signals.

LangChain message objects to a validator transcript:

``HumanMessage`` is the user's; ``AIMessage`` the agent's (with its tool calls); ``ToolMessage``
a tool's output, whose outside author is read from ``additional_kwargs["author"]`` or
``response_metadata["author"]`` when the tool set it, or from ``authors`` (by tool call id);
``SystemMessage`` the developer's. Requires ``langchain-core`` (the ``langchain`` extra).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from operator import attrgetter
from typing import Any

from validator.extras import missing_extra

try:
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
    from langchain_core.tools import BaseTool
    from langgraph.errors import GraphBubbleUp
except ImportError as exc:
    raise missing_extra("langchain", "validator.integrations.langchain", exc) from None
from pydantic import BaseModel
from validator.integrations._host import ids_used_before, read_first
from validator.integrations._justified import justified_model

from validator.engine.base import BaseValidator
from validator.exceptions import FieldProblem, InputError
from validator.inputs.checkinput import parse_transcript
from validator.inputs.conversations import Conversations
from validator.inputs.transcript import Message, ToolCall, Transcript, content_text
from validator.verdict import Verdict

__all__ = [
    "conversation_of",
    "conversations",
    "justified_tool",
    "message_from_langchain",
    "model_fields",
    "proposed_call",
    "refusal_message",
    "SIGNALS",
    "transcript_from_langchain",
    "transcript_from_state",
    "used_before",
]

SIGNALS: tuple[type[BaseException], ...] = (GraphBubbleUp,)
"""LangGraph's interrupts and the rest of its control flow: never a failed check (each LangChain adapter
passes them to its lifecycle; a judge that may raise them needs ``ValidatorConfig(control_flow=SIGNALS)``)."""

Authors = Mapping[str, str] | Callable[[ToolMessage], str | None] | None


def _author(msg: ToolMessage, authors: Authors) -> str | None:
    for source in (msg.additional_kwargs, msg.response_metadata):
        value = source.get("author") if isinstance(source, Mapping) else None
        if isinstance(value, str) and value:
            return value
    if authors is None:
        return None
    if isinstance(authors, Mapping):
        return authors.get(msg.tool_call_id)
    return authors(msg)


def message_from_langchain(msg: BaseMessage, *, authors: Authors = None, index: int = 0) -> Message:
    """Convert one LangChain message; raises :class:`InputError` for a type with no author role."""
    text = content_text(msg.content)
    if isinstance(msg, HumanMessage):
        return Message(role="user", content=text)
    if isinstance(msg, AIMessage):
        calls = tuple(
            ToolCall(id=str(c.get("id") or f"call_{index}_{i}"), name=c["name"], args=dict(c["args"]))
            for i, c in enumerate(msg.tool_calls)
        )
        return Message(role="assistant", content=text, tool_calls=calls)
    if isinstance(msg, ToolMessage):
        return Message(
            role="tool",
            content=text,
            tool_call_id=msg.tool_call_id,
            name=msg.name,
            author=_author(msg, authors),
            is_error=msg.status == "error",
        )
    if isinstance(msg, SystemMessage):
        return Message(role="system", content=text)
    raise InputError(
        [
            FieldProblem(
                f"messages[{index}]",
                f"{type(msg).__name__} has no author role; expected Human, AI, Tool or System message",
            )
        ],
        source="langchain messages",
    )


def transcript_from_langchain(messages: Sequence[BaseMessage | Any], *, authors: Authors = None) -> Transcript:
    """Convert a LangChain message list (for example ``state["messages"]``) into a transcript."""
    return Transcript(message_from_langchain(m, authors=authors, index=i) for i, m in enumerate(messages))


def _convert(sources: Sequence[BaseMessage], start: int, before: Sequence[Message]) -> list[list[Message]]:
    return [[message_from_langchain(m, index=i)] for i, m in enumerate(sources, start)]


def _reads(msg: BaseMessage) -> object:
    """What :func:`message_from_langchain` reads of ``msg`` but its content, with the id LangChain gives it (a
    checkpointer's copy of a message has the same): equal reads and content convert alike. Read for every
    message a checkpointer hands back: exact types are tried first."""
    read: Any = msg  # its type is tested below (no ``cast``: a call each, for a thousand messages a turn)
    found = read.id
    if type(found) is not str and not isinstance(found, str):
        return None
    kind = type(msg)
    if kind is HumanMessage:  # the exact types first, the most common first: no subclass check for them
        return ("HumanMessage", found)
    if kind is AIMessage or (kind is not ToolMessage and isinstance(msg, AIMessage)):
        return ("ai", found, read.tool_calls)  # compared by value, never hashed
    if kind is ToolMessage or isinstance(msg, ToolMessage):
        # strings only: no host dict kept (two empty plain dicts, the usual tool message's, name no author; a host's
        # own mapping set on the message later is read, whatever it says of its truth)
        extra, meta = read.additional_kwargs, read.response_metadata
        bare = type(extra) is dict and not extra and type(meta) is dict and not meta
        author = None if bare else _author(read, None)
        return ("tool", found, read.tool_call_id, read.name, author, read.status)
    return (kind.__name__, found)


def conversations() -> Conversations[BaseMessage]:
    """A cache of LangChain conversations, grown by each turn's new messages (a validator owns one:
    :attr:`validator.engine.BaseValidator.transcripts`; :func:`transcript_from_state` reads through it)."""
    return Conversations(_convert, content=attrgetter("content"), reads=_reads)


def _conversation_key(messages: Sequence[BaseMessage]) -> Hashable:
    first = messages[0]
    return ("langchain", first.id if isinstance(first.id, str) else id(first))


def transcript_from_state(
    state: Any, messages_key: str = "messages", *, validator: BaseValidator | None = None
) -> Transcript:
    """The transcript from a LangGraph state, a list of LangChain messages, or check-input dicts; with a
    ``validator``, LangChain messages are read through its conversation cache (only a turn's new messages are
    converted)."""
    messages = state
    if isinstance(state, Mapping):
        messages = state.get(messages_key)
    elif hasattr(state, messages_key) and not isinstance(state, Sequence):
        messages = getattr(state, messages_key)
    if isinstance(messages, Transcript):
        return messages
    if isinstance(messages, Sequence) and messages and not isinstance(messages[0], Mapping | Message):
        if isinstance(messages[0], BaseMessage) and validator is not None:  # another type: the conversion names it
            cache = validator.transcripts.of("langchain", conversations)
            return cache.transcript(messages, key=_conversation_key(messages))
        return transcript_from_langchain(list(messages))
    if messages is None:
        raise InputError([FieldProblem(messages_key, "no messages in the state: nothing to validate against")])
    return parse_transcript(messages)


def refusal_message(verdict: Verdict, tool_call_id: str, name: str, response: str | None = None) -> ToolMessage:
    """The tool message a refused call gets: an error the agent reads, the whole verdict as artifact; or, when the
    person answered with ``respond``, their message as the tool's answer (a success, as LangChain's
    ``HumanInTheLoopMiddleware`` sends it)."""
    if isinstance(response, str):  # only a text: anything else read back from a saved state is a refusal
        return ToolMessage(
            content=response,
            tool_call_id=tool_call_id,
            name=name,
            status="success",
            artifact={"verdict": verdict.to_dict()},
        )
    return ToolMessage(
        content=verdict.message_for_agent(),
        tool_call_id=tool_call_id,
        name=name,
        status="error",
        artifact={"verdict": verdict.to_dict()},
    )


def justified_tool(tool: BaseTool) -> BaseTool:
    """A model-facing copy of ``tool`` whose schema requires ``justification`` (for ``bind_tools`` only)."""
    base = tool.tool_call_schema
    if not (isinstance(base, type) and issubclass(base, BaseModel)):
        return tool
    return tool.model_copy(update={"args_schema": justified_model(base, description=tool.description)})


def conversation_of(
    state: Any, messages: Any, call_id: str, validator: BaseValidator
) -> tuple[Transcript | Callable[[], Transcript], frozenset[str]]:
    """A call's conversation in a LangGraph state, read now through ``validator``'s cache, and the ids ``messages``
    used before the call, walked for only where the conversation does not read
    (:func:`~validator.integrations._host.read_first`)."""
    return read_first(lambda: transcript_from_state(state, validator=validator), lambda: used_before(messages, call_id))


def used_before(messages: Any, call_id: str) -> frozenset[str]:
    """The call's id when messages before its own AI message already used it (a call or its answer), as
    :func:`~validator.integrations._host.ids_used_before` reads them; else empty."""
    items = list(messages) if isinstance(messages, Sequence) and not isinstance(messages, str) else []
    return ids_used_before(items, call_id, _call_ids, _ids)


def _call_ids(message: Any) -> list[Any]:
    return [c.get("id") for c in message.tool_calls] if isinstance(message, AIMessage) else []


def _ids(message: Any) -> list[str]:
    """The ids a message used: a tool message's call, an AI message's calls (exact types are tried first)."""
    kind = type(message)
    if kind is ToolMessage or (kind is not AIMessage and isinstance(message, ToolMessage)):
        return [str(message.tool_call_id)]
    if (kind is AIMessage or isinstance(message, AIMessage)) and message.tool_calls:
        return [str(c.get("id")) for c in message.tool_calls]
    return []


def proposed_call(messages: Any, call_id: str) -> tuple[str, dict[str, Any]] | None:
    """``(tool, arguments)`` the model itself gave this call: its call in the last AI message holding the id
    (a human-in-the-loop step that changes the call that runs keeps the model's there), or None when no AI
    message holds exactly one call of that id."""
    items = list(messages) if isinstance(messages, Sequence) and not isinstance(messages, str) else []
    for message in reversed(items):
        if isinstance(message, AIMessage):
            mine = [c for c in message.tool_calls if c.get("id") == call_id]
            if mine:
                return (str(mine[0].get("name")), dict(mine[0].get("args") or {})) if len(mine) == 1 else None
    return None


def model_fields(schema: Any) -> set[str]:
    """The field names of a tool's pydantic argument schema (none for a JSON-schema one)."""
    return set(schema.model_fields) if isinstance(schema, type) and issubclass(schema, BaseModel) else set()
