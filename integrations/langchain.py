"""LangChain message objects to a validator transcript.

``HumanMessage`` is the user's; ``AIMessage`` the agent's (with its tool calls); ``ToolMessage``
a tool's output, whose outside author is read from ``additional_kwargs["author"]`` or
``response_metadata["author"]`` when the tool set it, or from ``authors`` (by tool call id);
``SystemMessage`` the developer's. Requires ``langchain-core`` (the ``langchain`` extra).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from validator.exceptions import FieldProblem, InputError
from validator.transcript import Message, ToolCall, Transcript, content_text

__all__ = ["message_from_langchain", "transcript_from_langchain"]

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
            role="tool", content=text, tool_call_id=msg.tool_call_id, name=msg.name, author=_author(msg, authors)
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
