"""Adapter: Anthropic Messages API ``messages`` (plain JSON data) to transcript messages.

Plain data in, no SDK import: the request body an agent sends is all it needs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from validator.exceptions import FieldProblem, InputError
from validator.inputs.conversations import Conversations, flat
from validator.inputs.transcript import Message, ToolCall, Transcript, content_text

__all__ = ["conversations", "convert", "convert_grouped", "transcript_from_anthropic"]

Authors = Mapping[str, str] | Callable[[str, str], str | None] | None


def _author(authors: Authors, tool_use_id: str, tool_name: str) -> str | None:
    if authors is None:
        return None
    if isinstance(authors, Mapping):
        return authors.get(tool_use_id)
    return authors(tool_use_id, tool_name)


def _assistant(blocks: Sequence[Any]) -> Message:
    texts, calls = [], []
    for block in blocks:
        kind = block.get("type") if isinstance(block, Mapping) else None
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind in ("tool_use", "server_tool_use"):
            calls.append(ToolCall(str(block.get("id")), str(block.get("name")), dict(block.get("input") or {})))
    return Message(role="assistant", content="\n".join(texts), tool_calls=tuple(calls))


def _user(blocks: Sequence[Any], names: Callable[[], dict[str, str]], authors: Authors) -> list[Message]:
    """A user turn: one tool message per ``tool_result`` (the tool's words), then the user's own text."""
    group: list[Message] = []
    texts = []
    for block in blocks:
        kind = block.get("type") if isinstance(block, Mapping) else None
        if kind == "tool_result":
            use_id = str(block.get("tool_use_id"))
            name = names().get(use_id, "")
            content = content_text(block.get("content", ""))
            author = _author(authors, use_id, name)
            failed = block.get("is_error") is True  # the call failed: it did not run
            group.append(Message("tool", content, (), use_id, name or None, author, failed))
        elif kind == "text":
            texts.append(str(block.get("text", "")))
    if texts:
        group.append(Message(role="user", content="\n".join(texts)))
    return group


def _groups(
    sources: Sequence[Any], start: int, before: Sequence[Message], authors: Authors = None
) -> list[list[Message]]:
    """The messages of each source: ``sources[0]`` of the conversation is its ``system``, the rest its messages.

    Raises:
        InputError: naming each message that is not an object or has a role other than user or assistant.
    """
    out: list[list[Message]] = []
    problems: list[FieldProblem] = []

    table: dict[str, str] | None = None  # tool names by call id, read from the messages so far when first asked

    def names() -> dict[str, str]:
        nonlocal table
        if table is None:
            table = {c.id: c.name for m in (*before, *flat(out)) for c in m.tool_calls}
        return table

    for i, msg in enumerate(sources, start):
        if i == 0:
            out.append([Message(role="system", content=content_text(msg))] if msg else [])
            continue
        where = f"messages[{i - 1}]"
        if not isinstance(msg, Mapping):
            problems.append(FieldProblem(where, "must be an object"))
            continue
        role, content = msg.get("role"), msg.get("content", "")
        blocks: Sequence[Any] = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if role == "assistant":
            out.append([_assistant(blocks)])
            if table is not None:
                table.update((c.id, c.name) for c in out[-1][0].tool_calls)
        elif role == "user":
            out.append(_user(blocks, names, authors))
        else:
            problems.append(FieldProblem(f"{where}.role", f"must be user or assistant, got {role!r}"))
    if problems:
        raise InputError(problems, source="anthropic messages")
    return out


def convert(
    messages: Sequence[Mapping[str, Any]],
    *,
    system: str | Sequence[Mapping[str, Any]] | None = None,
    authors: Authors = None,
) -> list[Message]:
    """Turn Anthropic ``messages`` into transcript messages; raises :class:`InputError`."""
    return flat(_groups([system, *messages], 0, (), authors))


def convert_grouped(messages: Sequence[Mapping[str, Any]], *, authors: Authors = None) -> list[list[Message]]:
    """The transcript messages of each of ``messages``, one list per message (a user turn with tool results
    gives several); raises :class:`InputError`."""
    return _groups([None, *messages], 0, (), authors)[1:]


def conversations() -> Conversations[Any]:
    """A cache of Messages API conversations, grown by each turn's new messages (a validator owns one:
    :attr:`validator.engine.BaseValidator.transcripts`)."""
    return Conversations(_groups, content=lambda m: m.get("content") if isinstance(m, Mapping) else m)


def transcript_from_anthropic(
    messages: Sequence[Mapping[str, Any]],
    *,
    system: str | Sequence[Mapping[str, Any]] | None = None,
    authors: Authors = None,
    cache: Conversations[Any] | None = None,
) -> Transcript:
    """A transcript from an Anthropic Messages API request's ``messages`` (and ``system``).

    A user turn holding ``tool_result`` blocks becomes one tool message per result (the tool's
    words, not the user's); text in a user turn is the user's. Thinking blocks are left out.
    ``authors`` names the outside party behind a tool result: a mapping from ``tool_use_id`` or a
    function ``(tool_use_id, tool_name) -> author``.

    With a ``cache`` (:func:`conversations`) and without ``authors``, a conversation checked again a few
    messages later converts only its new messages (:class:`~validator.inputs.conversations.Conversations`).
    """
    if cache is not None and authors is None and messages:
        return cache.transcript([system, *messages], key=("anthropic", id(messages[0])), anchor=messages[0])
    return Transcript(convert(messages, system=system, authors=authors))
