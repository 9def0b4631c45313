"""The conversation a pending action is checked against, with the author of every message.

Only ``user`` messages are the user's words. Tool messages carry the tool's name and, where
known, the outside party whose words the tool returned (``author``: an email's sender, a web
page's URL). Assistant messages are the agent's own words, and system messages the
developer's; neither can authorize anything.

Key components:

- :class:`Message`, :class:`ToolCall`: immutable records.
- :class:`Transcript`: an ordered, checked sequence of messages (every tool result answers an
  earlier tool call). Later stages keep what they derive from it (the gate's search index) with
  :meth:`Transcript.memo`, so it is computed once per transcript.

Adapters: :func:`validator.inputs.anthropic.transcript_from_anthropic` (Anthropic Messages API) and
``validator.integrations.langchain.transcript_from_langchain`` (LangChain messages).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar

from validator._json import utf8
from validator._types import ROLES, Role
from validator.exceptions import FieldProblem, InputError

__all__ = ["Message", "Role", "ToolCall", "Transcript", "content_text"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call the agent made (or proposes)."""

    id: str
    """The call's id; tool messages answer it through ``tool_call_id``."""
    name: str
    """The tool's name."""
    args: Mapping[str, Any] = field(default_factory=dict)
    """The arguments, as the model sent them."""


@dataclass(frozen=True, slots=True)
class Message:
    """One message of the transcript."""

    role: Role
    """``user`` (the only role whose words authorize), ``assistant``, ``tool`` or ``system``."""
    content: str = ""
    """The message text."""
    tool_calls: tuple[ToolCall, ...] = ()
    """Tool calls made by an assistant message."""
    tool_call_id: str | None = None
    """For a tool message: the id of the call it answers."""
    name: str | None = None
    """For a tool message: the tool's name."""
    author: str | None = None
    """For a tool message: the outside party whose words it returned, if known."""

    @property
    def speaker(self) -> str:
        """Who wrote this message, in words: ``user``, ``agent``, ``system`` or the tool's source."""
        if self.role == "user":
            return "user"
        if self.role == "assistant":
            return "agent"
        if self.role == "system":
            return "system"
        tool = f"tool {self.name}" if self.name else "tool"
        return f"{tool} (from {self.author})" if self.author else tool


@dataclass(frozen=True)
class Transcript:
    """An ordered, checked conversation.

    Raises:
        InputError: when the transcript is empty, or a tool message answers no earlier tool
            call, or a tool call id is used twice.
    """

    messages: tuple[Message, ...]
    _memo: dict[str, Any] = field(init=False, repr=False, compare=False)
    _memo_lock: threading.RLock = field(init=False, repr=False, compare=False)

    def __init__(self, messages: Iterable[Message]) -> None:
        object.__setattr__(self, "messages", tuple(messages))
        object.__setattr__(self, "_memo", {})
        object.__setattr__(self, "_memo_lock", threading.RLock())
        problems = _structure_problems(self.messages)
        if problems:
            raise InputError(problems, source="transcript")

    def __len__(self) -> int:
        return len(self.messages)

    def __iter__(self) -> Iterator[Message]:
        return iter(self.messages)

    def __getitem__(self, i: int) -> Message:
        return self.messages[i]

    @cached_property
    def digest(self) -> str:
        """SHA-256 over every message (role, author, text, tool calls), in order."""
        canonical = json.dumps(
            [
                [
                    m.role,
                    m.content,
                    m.name,
                    m.author,
                    m.tool_call_id,
                    [[c.id, c.name, dict(c.args)] for c in m.tool_calls],
                ]
                for m in self.messages
            ],
            separators=(",", ":"),
            ensure_ascii=False,
            default=str,
        )
        return hashlib.sha256(utf8(canonical)).hexdigest()

    def memo(self, key: str, build: Callable[[Transcript], T]) -> T:
        """What ``build(self)`` derives from this transcript, computed once and kept with it.

        Stages below the inputs (the gate's search index, the outside authors) keep their derived
        data here, so a transcript checked for several actions is indexed once.
        """
        memo = self._memo
        if key not in memo:
            with self._memo_lock:
                if key not in memo:
                    memo[key] = build(self)
        value: T = memo[key]
        return value


def _structure_problems(messages: tuple[Message, ...]) -> list[FieldProblem]:
    problems: list[FieldProblem] = []
    if not messages:
        return [FieldProblem("messages", "must hold at least one message")]
    seen_calls: dict[str, int] = {}
    for i, m in enumerate(messages):
        where = f"messages[{i}]"
        if m.role not in ROLES:
            problems.append(FieldProblem(f"{where}.role", f"must be one of {', '.join(ROLES)}, got {m.role!r}"))
        if not isinstance(m.content, str):
            problems.append(FieldProblem(f"{where}.content", "must be a string"))
        if m.tool_calls and m.role != "assistant":
            problems.append(FieldProblem(f"{where}.tool_calls", "only assistant messages carry tool calls"))
        for j, call in enumerate(m.tool_calls):
            if call.id in seen_calls:
                problems.append(
                    FieldProblem(
                        f"{where}.tool_calls[{j}].id",
                        f"{call.id!r} is already used by messages[{seen_calls[call.id]}]",
                    )
                )
            seen_calls[call.id] = i
        if m.role == "tool":
            if not m.tool_call_id:
                problems.append(FieldProblem(f"{where}.tool_call_id", "a tool message must name the call it answers"))
            elif m.tool_call_id not in seen_calls:
                problems.append(
                    FieldProblem(
                        f"{where}.tool_call_id",
                        f"{m.tool_call_id!r} matches no tool call of an earlier assistant message",
                    )
                )
        elif m.tool_call_id is not None:
            problems.append(FieldProblem(f"{where}.tool_call_id", "only tool messages answer a tool call"))
    return problems


def content_text(content: Any) -> str:
    """Flatten message content (a string or a list of content blocks) into plain text.

    Only text blocks count. Anything else (a ``tool_result``, an image) is left out: words that
    came from a tool must never be read as the words of the message's author.
    """
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        parts: list[str] = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping) and block.get("type") == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
        return "\n".join(parts)
    if content is None:
        return ""
    return json.dumps(content, default=str, ensure_ascii=False)
