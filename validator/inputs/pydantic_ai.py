"""Pydantic AI's message history (``RunContext.messages``) as a validator transcript, read by each part's kind.

Read as Pydantic AI documents its messages, by their own tags (the core imports no framework): a message is a
``request`` or a ``response``; of a request's parts, ``system-prompt`` is the system's, ``user-prompt`` the
user's typed text and ``tool-return`` a tool's answer to the call it names; of a response's, ``text`` is the
agent's words and ``tool-call`` its calls. Any other part (a retry prompt, a native tool's call or return, a
thought) is left out: it never authorizes.

After a tool return, a user part is content the tool attached (``ToolReturn(content=...)``): an outside word,
kept with the return, unless it is the request's last part and the run's own prompt (a resumed run's new one).
A tool return's ``metadata={"author": ...}`` names its outside author.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from validator.inputs.transcript import Message, ToolCall, Transcript, content_text

__all__ = ["transcript_from_pydantic_ai", "user_text"]


def user_text(content: str | Sequence[Any]) -> str:
    """A user part's text: a string, or its text items (``TextContent``'s ``content``) among images and files."""
    if isinstance(content, str):
        return content
    return content_text([_text_item(c) for c in content])


def _text_item(item: Any) -> Any:
    kind = getattr(item, "kind", None)
    return item.content if kind in ("text-content", "structured-content") else item


def _tool_return(part: Any) -> Message:
    meta = part.metadata if isinstance(part.metadata, Mapping) else {}
    author = meta.get("author")
    return Message(
        role="tool",
        content=part.model_response_str(wrap_if_error=False),
        tool_call_id=part.tool_call_id,
        name=part.tool_name,
        author=author if isinstance(author, str) else None,
    )


def _request(request: Any, prompt: str | None) -> list[Message]:
    out: list[Message] = []
    last = len(request.parts) - 1
    for i, part in enumerate(request.parts):
        kind = getattr(part, "part_kind", None)
        if kind == "system-prompt":
            out.append(Message(role="system", content=part.content))
        elif kind == "tool-return":
            out.append(_tool_return(part))
        elif kind == "user-prompt":
            text = user_text(part.content)
            if out and out[-1].role == "tool" and not (i == last and text == prompt):
                prev = out[-1]
                out[-1] = Message(
                    role="tool",
                    content=f"{prev.content}\n{text}",
                    tool_call_id=prev.tool_call_id,
                    name=prev.name,
                    author=prev.author,
                )
            else:
                out.append(Message(role="user", content=text))
    return out


def _response(response: Any, index: int) -> Message:
    parts = response.parts
    text = "\n".join(p.content for p in parts if getattr(p, "part_kind", None) == "text")
    calls = tuple(
        ToolCall(id=p.tool_call_id or f"call_{index}_{i}", name=p.tool_name, args=p.args_as_dict())
        for i, p in enumerate(parts)
        if getattr(p, "part_kind", None) == "tool-call"
    )
    return Message(role="assistant", content=text, tool_calls=calls)


def transcript_from_pydantic_ai(messages: Sequence[Any], *, prompt: str | None = None) -> Transcript:
    """A validator transcript from Pydantic AI's message history (``RunContext.messages``); ``prompt`` is the
    run's own prompt (``RunContext.prompt``), which may follow the tool returns a resumed run answers."""
    out: list[Message] = []
    for index, message in enumerate(messages):
        kind = getattr(message, "kind", None)
        if kind == "request":
            out.extend(_request(message, prompt))
        elif kind == "response":
            out.append(_response(message, index))
    return Transcript(out)
