"""Adapter: Anthropic Messages API ``messages`` (plain JSON data) to transcript messages.

Plain data in, no SDK import: the request body an agent sends is all it needs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from validator.exceptions import FieldProblem, InputError
from validator.inputs.transcript import Message, ToolCall, Transcript, content_text

__all__ = ["convert", "transcript_from_anthropic"]

Authors = Mapping[str, str] | Callable[[str, str], str | None] | None


def _author(authors: Authors, tool_use_id: str, tool_name: str) -> str | None:
    if authors is None:
        return None
    if isinstance(authors, Mapping):
        return authors.get(tool_use_id)
    return authors(tool_use_id, tool_name)


def convert(
    messages: Sequence[Mapping[str, Any]],
    *,
    system: str | Sequence[Mapping[str, Any]] | None = None,
    authors: Authors = None,
) -> list[Message]:
    """Turn Anthropic ``messages`` into transcript messages; raises :class:`InputError`."""
    out: list[Message] = []
    if system:
        out.append(Message(role="system", content=content_text(system)))
    names: dict[str, str] = {}
    problems: list[FieldProblem] = []
    for i, msg in enumerate(messages):
        if not isinstance(msg, Mapping):
            problems.append(FieldProblem(f"messages[{i}]", "must be an object"))
            continue
        role, content = msg.get("role"), msg.get("content", "")
        blocks: Sequence[Any] = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if role == "assistant":
            texts, calls = [], []
            for block in blocks:
                kind = block.get("type") if isinstance(block, Mapping) else None
                if kind == "text":
                    texts.append(str(block.get("text", "")))
                elif kind in ("tool_use", "server_tool_use"):
                    call = ToolCall(
                        id=str(block.get("id")), name=str(block.get("name")), args=dict(block.get("input") or {})
                    )
                    names[call.id] = call.name
                    calls.append(call)
            out.append(Message(role="assistant", content="\n".join(texts), tool_calls=tuple(calls)))
        elif role == "user":
            texts = []
            for block in blocks:
                kind = block.get("type") if isinstance(block, Mapping) else None
                if kind == "tool_result":
                    use_id = str(block.get("tool_use_id"))
                    name = names.get(use_id, "")
                    out.append(
                        Message(
                            role="tool",
                            content=content_text(block.get("content", "")),
                            tool_call_id=use_id,
                            name=name or None,
                            author=_author(authors, use_id, name),
                        )
                    )
                elif kind == "text":
                    texts.append(str(block.get("text", "")))
            if texts:
                out.append(Message(role="user", content="\n".join(texts)))
        else:
            problems.append(FieldProblem(f"messages[{i}].role", f"must be user or assistant, got {role!r}"))
    if problems:
        raise InputError(problems, source="anthropic messages")
    return out


def transcript_from_anthropic(
    messages: Sequence[Mapping[str, Any]],
    *,
    system: str | Sequence[Mapping[str, Any]] | None = None,
    authors: Authors = None,
) -> Transcript:
    """A transcript from an Anthropic Messages API request's ``messages`` (and ``system``).

    A user turn holding ``tool_result`` blocks becomes one tool message per result (the tool's
    words, not the user's); text in a user turn is the user's. Thinking blocks are left out.
    ``authors`` names the outside party behind a tool result: a mapping from ``tool_use_id`` or a
    function ``(tool_use_id, tool_name) -> author``.
    """
    return Transcript(convert(messages, system=system, authors=authors))
