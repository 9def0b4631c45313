"""A check input's messages as they were sent, and the digest that names a conversation's prefix.

The incremental form of the service's ``/v1/check`` sends only the messages the service has not seen:
the client names the conversation and the digest of the messages it believes the service holds, and
the service answers 409 when it holds something else (the client then sends the whole input). Both
ends compute the digest the same way, over each message's JSON exactly as it stood in a request body
(no re-encoding, so no canonical form to agree on): a running SHA-256 over each message's length and
bytes. Splitting a body into its messages is a ``msgspec`` decode into raw slices, which builds
nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping

import msgspec

__all__ = [
    "CONVERSATION",
    "CONVERSATION_AFTER",
    "CONVERSATION_COUNT",
    "CONVERSATION_DIGEST",
    "Chain",
    "Split",
    "fields",
    "joined",
    "split",
]

CONVERSATION = "validator-conversation"
"""Request header: the conversation a check belongs to; the service holds it for the next check."""
CONVERSATION_AFTER = "validator-conversation-after"
"""Request header: the digest of the messages the body's messages follow (the incremental form)."""
CONVERSATION_DIGEST = "validator-conversation-digest"
"""Response header: the digest of every message of the conversation the service now holds."""
CONVERSATION_COUNT = "validator-conversation-count"
"""Response header: how many messages that is."""

_FIELDS = msgspec.json.Decoder(dict[str, msgspec.Raw])
_LIST = msgspec.json.Decoder(list[msgspec.Raw])
_DOMAIN = b"validator-conversation/1\n"


class Split(msgspec.Struct, frozen=True):
    """A check input's top-level fields and its messages, each the raw JSON it was sent as."""

    fields: dict[str, msgspec.Raw]
    messages: list[msgspec.Raw]


def fields(body: bytes) -> dict[str, msgspec.Raw]:
    """``body``'s top-level fields as raw JSON (a repeated key keeps its last value: the strict reader refuses it).

    Raises:
        msgspec.DecodeError: ``body`` is not a JSON object, or nests too deep to be read (the strict reader refuses
        it, naming its depth: a caller reads it whole).
    """
    try:
        return _FIELDS.decode(body)
    except RecursionError:  # msgspec skips a value by recursing: a thousand levels exhaust the stack
        raise msgspec.DecodeError("JSON nests too deep to be split") from None


def split(body: bytes) -> Split:
    """``body``'s fields and messages as raw JSON.

    Raises:
        ValueError: ``body`` is not a JSON object whose ``messages`` is a list.
    """
    try:
        found = fields(body)
        messages = _LIST.decode(found["messages"])
    except (msgspec.DecodeError, KeyError, RecursionError) as exc:
        raise ValueError(f"not a check input with a list of messages ({exc})") from None
    return Split(found, messages)


def joined(fields: Mapping[str, msgspec.Raw], messages: Iterable[bytes]) -> bytes:
    """The body of ``fields`` with its messages replaced by ``messages`` (raw JSON each)."""
    parts = [
        msgspec.json.encode(k) + b":" + (b"[" + b",".join(messages) + b"]" if k == "messages" else bytes(v))
        for k, v in fields.items()
    ]
    return b"{" + b",".join(parts) + b"}"


class Chain:
    """The digest of a conversation's messages as sent, extended message by message (immutable)."""

    __slots__ = ("_hash", "count")

    def __init__(self) -> None:
        self._hash = hashlib.sha256(_DOMAIN)
        self.count = 0

    def extended(self, messages: Iterable[bytes]) -> Chain:
        """This chain with ``messages`` appended."""
        child = object.__new__(Chain)
        child._hash = self._hash.copy()
        child.count = self.count
        for raw in messages:
            child._hash.update(len(raw).to_bytes(8, "big"))
            child._hash.update(raw)
            child.count += 1
        return child

    @property
    def digest(self) -> str:
        """The hex digest of every message so far (what the next request's ``after`` must say)."""
        return self._hash.hexdigest()
