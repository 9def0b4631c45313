"""Transcripts that grow with their conversation: each turn converts, checks and indexes only its new messages.

An agent loop checks every guarded call against the whole conversation, which is the previous
turn's plus a few messages. :class:`Conversations` keeps the last transcript of each conversation
(a bounded, least-recently-used set) with the host's message objects it was built from, and on the
next check:

1. walks the host's messages while they are the very objects (and the very contents) it saw;
2. for a host whose messages carry stable ids (LangChain's), goes on while they are messages of the
   same id, with what the conversion reads and their content equal (a checkpointer's copies);
3. converts the rest, and compares them with what it built before from the same places (a host
   that copies its messages between steps without ids);
4. extends the transcript by what is new (:meth:`Transcript.extend`), or, when an earlier message
   changed, builds it whole.

So the result always equals ``Transcript(convert(all messages))``; only the work differs. Three
calls of one AI message get the same transcript object, and its indexes, built once.

A conversation the host does not name (keyed only by its first message object) is kept only once that
object comes back: a server that parses every request afresh keeps nothing.

Host messages that can be referred to weakly (LangChain's) are: the cache never keeps them alive, and
one the host has let go is simply not the very object any more (step 2 or 3 then finds it). Messages
that cannot (the Messages API's dicts) are kept, within the cache's bounds.

A host message edited in place (same object, same content object, a nested part changed) is not
seen by step 1; hosts built on LangGraph and the Messages API replace messages, they do not edit them.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from itertools import accumulate, compress, count, repeat
from operator import eq, is_, not_
from typing import Any, Generic, TypeVar

import msgspec
from msgspec import structs

from validator.inputs.transcript import CHARS, Message, Transcript

__all__ = ["Conversations", "Convert", "Reads", "Seen", "TranscriptCaches", "flat"]

S = TypeVar("S")

Convert = Callable[[Sequence[S], int, Sequence[Message]], list[list[Message]]]
"""``convert(sources, start, before)``: for each host message of ``sources`` (the conversation's
``start``-th on), the transcript messages it makes; ``before`` are the messages of those before it
(context such as a tool's name by call id)."""


Reads = Callable[[S], object]
"""``reads(source)``: everything the conversion reads of a host message but its content, with the stable
id the host gives it (None: the host gave it none, so it is compared by converting it)."""


_DEREF: Callable[[Any], object] = weakref.ref.__call__


class _Entry(msgspec.Struct, Generic[S], frozen=True):
    sources: tuple[object, ...]
    """The host messages it was built from: weak references to them (``weak``), else the messages."""
    weak: bool
    contents: tuple[Any, ...]
    reads: tuple[object, ...]
    ends: tuple[int, ...]
    """``ends[i]``: how many transcript messages ``sources[: i + 1]`` made."""
    transcript: Transcript
    chars: int


class Conversations(Generic[S]):
    """The latest transcript of up to ``size`` conversations (and ``max_chars`` of text), least recent evicted.

    ``convert`` turns host messages into transcript messages; ``content`` reads a host message's
    content object (compared by identity on the fast path). ``reads`` (hosts whose messages carry stable
    ids, as LangChain's do): a message that is a new object (a checkpointer deserialised it) but has the
    same id, the same reads and an equal content is the same message, without converting it again.
    """

    def __init__(
        self,
        convert: Convert[S],
        *,
        content: Callable[[S], Any],
        reads: Reads[S] | None = None,
        size: int = 128,
        max_chars: int = 100_000_000,
    ) -> None:
        self._convert = convert
        self._content = content
        self._reads = reads
        self.size = size
        self.max_chars = max_chars
        self._entries: OrderedDict[Hashable, _Entry[S]] = OrderedDict()
        self._sightings: OrderedDict[Hashable, object] = OrderedDict()
        """The first message of each unnamed conversation seen once: kept whole only when it comes back."""
        self._chars = 0
        self._lock = threading.Lock()
        self.builds = 0
        """Whole builds so far (a conversation's first check, or an earlier message changed)."""
        self.extensions = 0
        """Checks that converted only the new messages."""

    def __len__(self) -> int:
        return len(self._entries)

    def transcript(self, sources: Sequence[S], *, key: Hashable, anchor: object = None) -> Transcript:
        """The transcript of ``sources``, the host's messages of conversation ``key`` so far.

        ``anchor``: the host object whose identity ``key`` is, when the host named no conversation (its first
        message). Such a conversation is kept only once it comes back with that very object (a loop that
        grows its own list); a server that parses each request afresh never does, so nothing of its
        requests is kept but that one object per key (``size`` of them at most).

        Raises:
            InputError: what :class:`Transcript` raises for these messages.
        """
        first_sight = False
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
            elif anchor is not None and self._sightings.pop(key, None) is not anchor:
                first_sight = True
                self._sightings[key] = anchor
                while len(self._sightings) > self.size:
                    self._sightings.popitem(last=False)
        if first_sight:
            return Transcript(flat(self._convert(tuple(sources), 0, ())))
        sources = tuple(sources)
        contents = tuple(map(self._content, sources))  # C loops when ``content`` is an ``attrgetter``
        if entry is None:
            self.builds += 1
            groups = self._convert(sources, 0, ())
            transcript = Transcript(flat(groups))
            chars = transcript.fact(CHARS)
            self._keep(key, _Entry(*_held(sources), contents, self._read(sources), _ends(groups, 0), transcript, chars))
            return transcript
        ident, same, reads = self._same_prefix(sources, contents, entry)
        if same == len(entry.sources) == len(sources):
            if reads is not entry.reads:  # new objects, the same messages: the next check finds them by identity
                held, weak = _held(sources, entry, ident)
                self._keep(key, structs.replace(entry, sources=held, weak=weak, contents=contents, reads=reads))
            return entry.transcript
        transcript, ends, chars = self._grow(entry, sources, same)
        self._keep(key, _Entry(*_held(sources, entry, ident), contents, reads, ends, transcript, chars))
        return transcript

    def _read(self, sources: Sequence[S]) -> tuple[object, ...]:
        """What the conversion reads of each of ``sources`` (a message without an id reads as a fresh object,
        equal to nothing: it is compared by converting it)."""
        if self._reads is None:
            return ()
        reads = tuple(map(self._reads, sources))
        if any(map(is_, reads, repeat(None))):
            reads = tuple(object() if r is None else r for r in reads)
        return reads

    def _same_prefix(
        self, sources: tuple[S, ...], contents: tuple[Any, ...], entry: _Entry[S]
    ) -> tuple[int, int, tuple[object, ...]]:
        """How many of ``sources`` are, from the first, the very objects ``entry`` saw with the very contents;
        how many are those or (with ``reads``) messages of the same id, reads and an equal content; and the reads
        of ``sources`` (read only from the first that is not the very object)."""
        n = min(len(sources), len(entry.sources))
        ident = n
        seen = tuple(map(_DEREF, entry.sources[:n])) if entry.weak else entry.sources[:n]  # None: let go
        if not (all(map(is_, sources[:n], seen)) and all(map(is_, contents[:n], entry.contents[:n]))):
            ident = next(i for i in range(n) if sources[i] is not seen[i] or contents[i] is not entry.contents[i])
        if self._reads is None:
            return ident, ident, ()
        if ident == len(sources) == len(entry.sources):
            return ident, ident, entry.reads
        reads = (*entry.reads[:ident], *self._read(sources[ident:]))
        # the first place from ``ident`` whose reads are not equal (by ``==``), then whose contents are not before it
        same = next(compress(count(ident), map(not_, map(eq, reads[ident:n], entry.reads[ident:n]))), n)
        same = next(compress(count(ident), map(not_, map(eq, contents[ident:same], entry.contents[ident:same]))), same)
        return ident, same, reads

    def _grow(self, entry: _Entry[S], sources: tuple[S, ...], same: int) -> tuple[Transcript, tuple[int, ...], int]:
        """The transcript of ``sources``, whose first ``same`` are those ``entry`` was built from."""
        old = entry.transcript.messages
        kept = entry.ends[same - 1] if same else 0
        groups = self._convert(sources[same:], same, old[:kept])
        converted = flat(groups)
        ends = (*entry.ends[:same], *_ends(groups, kept))
        tail = len(old) - kept
        grew = len(sources) >= len(entry.sources) and ends[len(entry.sources) - 1] == len(old)
        if grew and tuple(converted[:tail]) == old[kept:]:
            self.extensions += 1
            new = converted[tail:]
            longer = entry.transcript.extend(new)
            return longer, ends, longer.fact(CHARS)
        self.builds += 1
        transcript = Transcript([*old[:kept], *converted])
        return transcript, ends, transcript.fact(CHARS)

    def _keep(self, key: Hashable, entry: _Entry[S]) -> None:
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._chars -= old.chars
            self._entries[key] = entry
            self._chars += entry.chars
            while len(self._entries) > 1 and (len(self._entries) > self.size or self._chars > self.max_chars):
                _, evicted = self._entries.popitem(last=False)
                self._chars -= evicted.chars


def _held(sources: tuple[S, ...], entry: _Entry[S] | None = None, ident: int = 0) -> tuple[tuple[object, ...], bool]:
    """Weak references to ``sources`` and ``True``, or (when they cannot be referred to weakly) themselves.
    ``entry``'s own for the first ``ident`` of them, the very objects it saw."""
    try:
        if entry is not None and entry.weak and ident:
            return (*entry.sources[:ident], *map(weakref.ref, sources[ident:])), True
        return tuple(map(weakref.ref, sources)), True
    except TypeError:
        return sources, False


def flat(groups: list[list[Message]]) -> list[Message]:
    """The messages of every group, in order."""
    return [m for group in groups for m in group]


def _ends(groups: list[list[Message]], offset: int) -> tuple[int, ...]:
    return tuple(accumulate((len(g) for g in groups), initial=offset))[1:]


class Seen:
    """The transcripts a validator checked lately (up to ``size`` of them and ``max_chars`` of text), each with
    what its checks derived from it (its :class:`~validator.inputs.transcript.Fact` values: the user's
    sentences read, the indexes, the secrets).

    A host that decodes each check afresh (``validator check --jsonl``, a stateless server, the service)
    sends the same conversation, or the same one a few messages longer, as new objects every time.
    :meth:`adopt` finds it: the very transcript seen (equal messages, equal digest), or the one seen extended
    by the new messages only (:meth:`Transcript.extend`). Kept per user: one user's checks never find
    another's conversation, even by its time. What is kept is a cache: the result equals the transcript
    given, and a transcript not found is simply kept as it is."""

    def __init__(self, *, size: int = 16, max_chars: int = 32_000_000) -> None:
        self.size = size
        self.max_chars = max_chars
        self._kept: OrderedDict[tuple[Hashable, str], Transcript] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()
        self.found = 0
        """Checks that found their transcript, or a shorter one of their conversation, among those kept."""

    def adopt(self, transcript: Transcript, scope: Hashable) -> Transcript:
        """``transcript``, or an equal one seen before with what was derived from it, for user ``scope``."""
        first = transcript.messages[0]
        with self._lock:
            kept = [
                (key, t)
                for key, t in self._kept.items()
                if key[0] == scope and len(t) <= len(transcript) and t.messages[0] == first
            ]
        for known in sorted((t for _, t in kept), key=len, reverse=True):
            if known is transcript or transcript.begins_with(known):
                adopted = known if len(known) == len(transcript) else known.extend(transcript.messages[len(known) :])
                self.found += 1
                self._keep((scope, adopted.digest), adopted)  # the shorter one stays: a branch from it finds it
                return adopted
        self._keep((scope, transcript.digest), transcript)
        return transcript

    def _keep(self, key: tuple[Hashable, str], transcript: Transcript) -> None:
        with self._lock:
            old = self._kept.pop(key, None)
            if old is not None:
                self._chars -= old.fact(CHARS)
            self._kept[key] = transcript
            self._chars += transcript.fact(CHARS)
            while len(self._kept) > 1 and (len(self._kept) > self.size or self._chars > self.max_chars):
                _, evicted = self._kept.popitem(last=False)
                self._chars -= evicted.fact(CHARS)


class TranscriptCaches:
    """The conversation caches one validator owns, one per host's message format, each made on its first use
    (:class:`Conversations`), and the transcripts its checks read lately (:attr:`seen`): a validator's checks
    share them, and nothing outlives the validator."""

    def __init__(self) -> None:
        self._made: dict[str, Conversations[Any]] = {}
        self._lock = threading.Lock()
        self.seen = Seen()

    def of(self, kind: str, make: Callable[[], Conversations[Any]]) -> Conversations[Any]:
        """The cache of the ``kind`` messages (made by ``make`` the first time)."""
        with self._lock:
            found = self._made.get(kind)
            if found is None:
                found = self._made[kind] = make()
            return found
