"""The conversation a pending action is checked against, with the author of every message.

Only ``user`` messages are the user's words. Tool messages carry the tool's name and, where
known, the outside party whose words the tool returned (``author``: an email's sender, a web
page's URL). Assistant messages are the agent's own words, and system messages the
developer's; neither can authorize anything.

Key components:

- :class:`Message`, :class:`ToolCall`: immutable records.
- :class:`Transcript`: an ordered, checked sequence of messages (every tool result answers an
  earlier tool call). Later stages keep what they derive from it (the gate's search index) as a
  :class:`Fact` each owns, read with :meth:`Transcript.fact`, so it is computed once per transcript.

Adapters: :func:`validator.inputs.anthropic.transcript_from_anthropic` (Anthropic Messages API) and
``validator.integrations.langchain.transcript_from_langchain`` (LangChain messages).
"""

from __future__ import annotations

import hashlib
import json
import operator
import threading
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import msgspec

from validator._types import ROLES, Role
from validator.exceptions import FieldProblem, InputError

if TYPE_CHECKING:
    from hashlib import _Hash

__all__ = [
    "CHARS",
    "DIGEST_SCHEME",
    "Fact",
    "Message",
    "Role",
    "ToolCall",
    "Transcript",
    "call_of",
    "content_text",
    "is_users",
]

T = TypeVar("T")


class ToolCall(msgspec.Struct, frozen=True):
    """A tool call the agent made (or proposes)."""

    id: str
    """The call's id; tool messages answer it through ``tool_call_id``."""
    name: str
    """The tool's name."""
    args: Mapping[str, Any] = msgspec.field(default_factory=dict)
    """The arguments, as the model sent them."""


class Message(msgspec.Struct, frozen=True):
    """One message of the transcript (an immutable record, built in C: a long transcript converts fast)."""

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
    is_error: bool = False
    """For a tool message: the host says the call failed. It did not run when its text is also the validator's
    own refusal; any other answered call counts as carried out (a tool's error text may say it went through),
    and a request it carried out is spent (:mod:`validator.state.ledger`)."""

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


DIGEST_SCHEME = "transcript-digest/3"
"""The name of the digest's canonical form; it changes whenever the form does (see :func:`_lines`)."""

_ENCODER = msgspec.json.Encoder(order="sorted", enc_hook=str)


def _line(m: Message) -> bytes:
    try:
        return _ENCODER.encode(m) + b"\n"
    except UnicodeEncodeError:  # a lone surrogate: the same object, every non-ASCII character escaped
        plain = msgspec.to_builtins(m, order="sorted", enc_hook=str)
        return json.dumps(plain, ensure_ascii=True, sort_keys=True, separators=(",", ":")).encode() + b"\n"


def _lines(messages: Sequence[Message]) -> bytes:
    """The digest's canonical form of ``messages``: one line of JSON each.

    A line is the message as an object with its keys sorted (``author``, ``content``, ``name``,
    ``is_error``, ``role``, ``tool_call_id``, ``tool_calls``, each call's ``args``, ``id`` and ``name``), absent
    values as ``null``, no spaces, UTF-8, numbers in their shortest round-trip form, anything not
    JSON as its ``str``. It depends on the values only: not on dict order or how the input was
    spelled. msgspec writes it in one C pass; a test pins it to a hand-written vector, so a
    change in any library that alters a byte fails there and must come with a new
    :data:`DIGEST_SCHEME`.
    """
    try:
        return _ENCODER.encode_lines(messages)
    except UnicodeEncodeError:
        return b"".join(map(_line, messages))


def _hash_of(messages: Sequence[Message], start: _Hash | None = None) -> _Hash:
    running = hashlib.sha256(DIGEST_SCHEME.encode() + b"\n") if start is None else start.copy()
    running.update(_lines(messages))
    return running


@dataclass(frozen=True, eq=False)
class Fact(Generic[T]):
    """Something a stage derives from a transcript and keeps with it, declared once by the module that owns it.

    ``build(transcript, key)`` computes it (``key``: a parameter of the fact, such as a user id, or None);
    with ``extend``, :meth:`Transcript.extend` carries it over: ``extend(value, longer, start, key)`` must
    return what ``build(longer, key)`` would, looking only at ``longer.messages[start:]``. A fact is known
    by its identity, never by a string two modules could both pick."""

    name: str
    build: Callable[[Transcript, Hashable], T]
    extend: Callable[[T, Transcript, int, Hashable], T] | None = None


class Transcript:
    """An ordered, checked conversation.

    A transcript is immutable. :meth:`extend` makes the transcript of the same conversation a few
    messages later, checking and indexing only the new messages; what later stages derived from this
    one (its :class:`Fact` values) is carried over where they said how.

    Raises:
        InputError: when the transcript is empty, or a tool message answers no earlier tool
            call, or a tool call id is used twice.
    """

    __slots__ = ("_calls", "_extenders", "_hash", "_lock", "_memo", "messages")

    messages: tuple[Message, ...]

    def __init__(self, messages: Iterable[Message]) -> None:
        self.messages = tuple(messages)
        self._calls: dict[str, int] = {}
        self._memo: dict[tuple[Fact[Any], Hashable], Any] = {}
        self._extenders: dict[tuple[Fact[Any], Hashable], Callable[[Any, Transcript, int, Hashable], Any]] = {}
        self._lock = threading.RLock()
        self._hash: _Hash | None = None
        problems = _structure_problems(self.messages, 0, self._calls)
        if not self.messages:
            problems.insert(0, FieldProblem("messages", "must hold at least one message"))
        if problems:
            raise InputError(problems, source="transcript")

    def __len__(self) -> int:
        return len(self.messages)

    def __iter__(self) -> Iterator[Message]:
        return iter(self.messages)

    def __getitem__(self, i: int) -> Message:
        return self.messages[i]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Transcript) and self.messages == other.messages

    def __hash__(self) -> int:
        return hash(self.digest)

    def __repr__(self) -> str:
        return f"Transcript({len(self.messages)} messages)"

    def _running(self) -> _Hash:
        if self._hash is None:
            self._hash = _hash_of(self.messages)
        return self._hash

    @property
    def digest(self) -> str:
        """SHA-256 over every message (role, author, text, tool calls), in order, in the canonical
        form :data:`DIGEST_SCHEME` names: equal for equal transcripts however they were built."""
        return self._running().hexdigest()

    def begins_with(self, other: Transcript) -> bool:
        """Whether ``other``'s messages are this transcript's first ones: equal, and equal in the digest's
        canonical form (which tells ``1`` from ``1.0`` and ``True``, as equality does not)."""
        n = len(other.messages)
        if n > len(self.messages):
            return False
        if all(map(operator.is_, self.messages[:n], other.messages)):  # one extended from the other
            return True
        if self.messages[:n] != other.messages:
            return False
        if n == len(self.messages):
            return self.digest == other.digest
        return _hash_of(self.messages[:n]).hexdigest() == other.digest

    def extend(self, messages: Iterable[Message]) -> Transcript:
        """This conversation with ``messages`` appended: only they are checked, hashed and indexed.

        Equal, digest and derived data included, to ``Transcript([*self, *messages])``.

        Raises:
            InputError: naming the new messages' problems by their place in the whole transcript.
        """
        new = tuple(messages)
        if not new:
            return self
        calls = dict(self._calls)
        problems = _structure_problems(new, len(self.messages), calls)
        if problems:
            raise InputError(problems, source="transcript")
        child = object.__new__(Transcript)
        child.messages = self.messages + new
        child._calls = calls
        child._lock = threading.RLock()
        child._hash = None if self._hash is None else _hash_of(new, self._hash)
        with self._lock:
            carried = [(k, self._memo[k], f) for k, f in self._extenders.items()]
        child._memo = {}
        child._extenders = {}
        for key, value, extend in carried:
            child._memo[key] = extend(value, child, len(self.messages), key[1])
            child._extenders[key] = extend
        return child

    def answered(self, call_id: str) -> bool:
        """Whether a tool message of this transcript answers call ``call_id`` (the call ran)."""
        return call_id in self.fact(ANSWERED)

    def fact(self, fact: Fact[T], key: Hashable = None) -> T:
        """The value of ``fact`` for this transcript (and ``key``), computed once and kept with it: stages
        below the inputs (the gate's search indexes, the outside authors) keep their derived data here, so
        a transcript checked for several actions is indexed once."""
        slot = (fact, key)
        memo = self._memo
        if slot not in memo:
            with self._lock:
                if slot not in memo:
                    memo[slot] = fact.build(self, key)
                    if fact.extend is not None:
                        self._extenders[slot] = fact.extend
        value: T = memo[slot]
        return value


def is_users(message: Message, user_id: str | None) -> bool:
    """Whether a message is the check's user's own: role ``user``, and no other ``author`` named."""
    return message.role == "user" and (message.author is None or message.author == user_id)


def call_of(transcript: Transcript, message: int) -> tuple[int, ToolCall] | None:
    """The assistant message and the call a tool message answers."""
    call_id = transcript.messages[message].tool_call_id
    if not call_id:
        return None
    for i in range(message - 1, -1, -1):
        for call in transcript.messages[i].tool_calls:
            if call.id == call_id:
                return i, call
    return None


def _answered(transcript: Transcript, key: Hashable = None, start: int = 0) -> frozenset[str]:
    return frozenset(m.tool_call_id for m in transcript.messages[start:] if m.role == "tool" and m.tool_call_id)


def _answered_more(found: frozenset[str], longer: Transcript, start: int, key: Hashable) -> frozenset[str]:
    more = _answered(longer, key, start)
    return found | more if more else found


def _chars(transcript: Transcript, key: Hashable = None, start: int = 0) -> int:
    return sum(len(m.content) for m in transcript.messages[start:])


CHARS: Fact[int] = Fact("characters", _chars, lambda found, longer, start, key: found + _chars(longer, key, start))
"""The characters of content of the transcript's messages (what the limits and the caches count)."""

ANSWERED: Fact[frozenset[str]] = Fact("answered", _answered, _answered_more)
"""The call ids a tool message of the transcript answers (those calls ran)."""


_PLAIN = frozenset({"user", "assistant", "system"})


def _structure_problems(messages: tuple[Message, ...], offset: int, seen_calls: dict[str, int]) -> list[FieldProblem]:
    """Problems of ``messages`` (at ``offset`` in their transcript); adds their calls to ``seen_calls``."""
    problems: list[FieldProblem] = []
    for i, m in enumerate(messages, offset):
        if (
            m.role in _PLAIN
            and not m.tool_calls
            and m.tool_call_id is None
            and type(m.content) is str
            and m.is_error is False
        ):
            continue  # the common case, checked in one line
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
        if m.is_error is not False and (m.role != "tool" or m.is_error is not True):
            problems.append(FieldProblem(f"{where}.is_error", "only a tool message can be an error (true or false)"))
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
