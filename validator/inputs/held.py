"""Conversations held across checks, so a check of a long conversation reads only its new messages.

Three users: the service's incremental ``/v1/check`` (the client names the digest of the messages it
believes the service holds; see :mod:`validator.inputs.sent`); :meth:`Validator.check` with a
``conversation`` name, for a host that sends the whole history as JSON with every request (a stateless
server): the messages of each new input that are, byte for byte, those of the conversation's last
input are not decoded, checked or indexed again (:func:`check_input`, :class:`NamedInputs`); and
:meth:`Validator.check` of JSON text with no name (``validator check --jsonl``, a batch of actions against one
conversation): the inputs it decoded lately are found by their messages' bytes (:class:`RecentInputs`). The
last two read an input onto one read before in one way (:func:`_read`).

A conversation is held per tenant (no tenant can extend another's), the oldest are let go past a
budget of bytes, and what is held is a cache, never a source of truth: a conversation not held, or held
with other messages (an edited history), is parsed whole. The result always equals the whole parse.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

import msgspec

from validator._json import utf8
from validator.inputs import sent
from validator.inputs.checkinput import DEFAULT_LIMITS, CheckInput, Limits
from validator.inputs.sent import Chain
from validator.inputs.transcript import Transcript

__all__ = [
    "PER_BYTE",
    "PER_CONVERSATION",
    "PER_MESSAGE",
    "Held",
    "HeldConversations",
    "NamedInputs",
    "RecentInputs",
    "check_input",
]


PER_BYTE = 2
"""What a held conversation costs per byte of its messages' JSON as sent: a transcript and what the checks
derived from it measured 1.45x those bytes at 1,000 and 10,000 messages (tracemalloc), counted as 2x."""
PER_CONVERSATION = 4096
"""What each held conversation costs besides its messages (so empty messages do not hold for free)."""
PER_MESSAGE = 128
"""What an input kept by its messages' bytes (:class:`RecentInputs`, :class:`NamedInputs`) costs per message besides
them: a message of a few bytes (``{"role":"user"}``) holds a transcript entry of about a hundred more (measured:
tiny messages 2.3x their counted bytes without this term)."""


class Held(msgspec.Struct, frozen=True):
    """One conversation as it was last checked."""

    transcript: Transcript
    chain: Chain
    size: int
    """Bytes of its messages' JSON as sent (what the whole input's body holds of them, less the commas)."""

    @property
    def cost(self) -> int:
        return PER_BYTE * self.size + PER_MESSAGE * len(self.transcript) + PER_CONVERSATION

    @staticmethod
    def of(transcript: Transcript, messages: Sequence[bytes], before: Held | None = None) -> Held:
        """``transcript`` held: the conversation ``before`` (none: from its start) followed by ``messages``,
        the raw JSON of the messages ``transcript`` adds to it."""
        chain = before.chain if before is not None else Chain()
        return Held(transcript, chain.extended(messages), (before.size if before else 0) + sum(map(len, messages)))


V = TypeVar("V")


class _ByConversation(Generic[V]):
    """Values by ``(tenant, conversation id)``, the least recently used let go past ``max_bytes`` (each counted as
    ``cost`` says); safe to share between threads."""

    def __init__(self, max_bytes: int, cost: Callable[[V], int]) -> None:
        self.max_bytes = max_bytes
        self._cost = cost
        self._held: OrderedDict[tuple[str, str], V] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def latest(self, tenant: str, conversation: str) -> V | None:
        """The conversation as last held."""
        with self._lock:
            held = self._held.get((tenant, conversation))
            if held is not None:
                self._held.move_to_end((tenant, conversation))
            return held

    def put(self, tenant: str, conversation: str, held: V) -> bool:
        """Hold ``held`` as the conversation's latest; whether it is held (one over the whole budget is not)."""
        with self._lock:
            old = self._held.pop((tenant, conversation), None)
            self._bytes -= self._cost(old) if old is not None else 0
            cost = self._cost(held)
            if cost > self.max_bytes:
                return False
            self._held[(tenant, conversation)] = held
            self._bytes += cost
            while self._bytes > self.max_bytes:
                _, dropped = self._held.popitem(last=False)
                self._bytes -= self._cost(dropped)
            return True

    def __len__(self) -> int:
        with self._lock:
            return len(self._held)


class HeldConversations(_ByConversation[Held]):
    """Transcripts by ``(tenant, conversation id)``, the least recently used let go past ``max_bytes``
    (counted as :attr:`Held.cost`)."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__(max_bytes, lambda held: held.cost)

    def get(self, tenant: str, conversation: str, after: str) -> Held | None:
        """The conversation when it is held with exactly the digest ``after``, else ``None``."""
        held = self.latest(tenant, conversation)
        return held if held is not None and held.chain.digest == after else None


def check_input(
    named: NamedInputs, conversation: str, text: str | bytes, *, tenant: str = "", limits: Limits = DEFAULT_LIMITS
) -> CheckInput:
    """The check input of ``text``, a whole check input of ``conversation``, equal to
    ``CheckInput.from_json(text, limits=limits)``: when its ``messages`` list begins, byte for byte, with that of
    the conversation's last input (of the same user, under the same limits), only its other bytes and the messages
    after those are decoded, onto the transcript read before (:func:`_read`: as :class:`RecentInputs` reads an
    input onto one read lately); it is then the conversation's latest, whoever's it is (two users taking turns
    under one name are each read whole). Anything else is read whole; what is refused leaves the last input held.

    Raises:
        InputError: what :meth:`CheckInput.from_json` raises for ``text``.
    """

    def last(user_id: str | None, messages: bytes, limits: Limits) -> tuple[_Decoded, bytes] | None:
        held = named.latest(tenant, conversation)
        if held is None or held.user_id != user_id or held.limits != limits or not held.transcript:
            return None
        new = _after(held.messages, messages)
        return None if new is None else (held, new)

    item, decoded, _ = _read(text, limits, last)
    if decoded is not None:
        named.put(tenant, conversation, decoded)
    return item


class NamedInputs(_ByConversation["_Decoded"]):
    """The last JSON check input of each named conversation (:func:`check_input`), by ``(tenant, conversation
    id)``, the least recently used let go past ``max_bytes`` (each counted as three times its messages' JSON, as
    :class:`RecentInputs` counts them, with :data:`PER_MESSAGE` each, and :data:`PER_CONVERSATION`). Two checks of
    one conversation at once may hold the shorter input last: later checks then read more, never otherwise."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__(max_bytes, lambda decoded: _cost(decoded) + PER_CONVERSATION)


def _cost(decoded: _Decoded) -> int:
    """What an input kept by its messages' bytes is counted as: three times their JSON, and each message's entry."""
    return _COST * len(decoded.messages) + PER_MESSAGE * len(decoded.transcript)


# -- inputs decoded lately, found by their messages' bytes -------------------------------------------------

_USER = msgspec.json.Decoder(str | None)
_SPACE = b" \t\r\n"
"""What JSON allows between tokens."""
_COST = PER_BYTE + 1
"""What an input kept costs per byte of its messages' JSON: its transcript and what was derived (:data:`PER_BYTE`),
and the bytes kept to compare."""
_ANCHOR = 64
"""The first bytes of an input's messages looked for to find where they stand in it."""


class _Decoded(msgspec.Struct, frozen=True):
    """An input's messages as sent (the raw JSON of its ``messages`` list) and the transcript read from them."""

    user_id: str | None
    messages: bytes
    transcript: Transcript
    limits: Limits


class RecentInputs:
    """The JSON check inputs a validator decoded lately (up to ``size`` of them and ``max_bytes``, each counted as
    three times its messages' JSON and 128 bytes a message: the transcript and what was derived, and the bytes
    kept), found again by their messages' bytes.

    A batch of checks of one conversation (``validator check --jsonl``: each line the whole history and one
    action) sends the same messages again, or the same followed by more. :meth:`read` equals
    :meth:`CheckInput.from_json`: an input whose ``messages`` list is, byte for byte, that of an input read
    lately, or that list with messages after it, has only the rest of its bytes decoded (its other fields and
    the new messages, by the same strict one-pass reader, with the limits held for the whole), onto the
    transcript read before; anything else, or anything that fails, is read whole. Per user: one user's input
    never finds another's. Only inputs the one-pass reader took whole are kept (another format's conversion
    may read a message by the ones before it)."""

    def __init__(self, *, size: int = 16, max_bytes: int = 64 * 1024 * 1024) -> None:
        self.size = size
        self.max_bytes = max_bytes
        self._kept: list[_Decoded] = []
        """Oldest first. A list, not a mapping: a key of a history's bytes would be hashed whole at each look."""
        self._bytes = 0
        self._lock = threading.Lock()
        self.found = 0
        """Inputs read onto a transcript read before."""

    def read(self, text: str | bytes, *, limits: Limits = DEFAULT_LIMITS) -> CheckInput:
        """The check input of ``text``, equal to ``CheckInput.from_json(text, limits=limits)``.

        Raises:
            InputError: what :meth:`CheckInput.from_json` raises for ``text``.
        """
        item, decoded, onto = _read(text, limits, self._find)
        if onto:
            with self._lock:
                self.found += 1
        if decoded is not None:
            self._keep(decoded)
        return item

    def _find(self, user_id: str | None, messages: bytes, limits: Limits) -> tuple[_Decoded, bytes] | None:
        """The input read lately (of ``user_id``, under ``limits``) whose messages are the first of ``messages``,
        the longest such, and the JSON list of the messages after them (``[]`` for none)."""
        with self._lock:
            mine = [d for d in self._kept if d.user_id == user_id and d.limits == limits and d.transcript]
        for d in sorted(mine, key=lambda d: len(d.messages), reverse=True):
            new = _after(d.messages, messages)
            if new is not None:
                return d, new
        return None

    def _keep(self, decoded: _Decoded) -> None:
        cost = _cost(decoded)
        if cost > self.max_bytes or not decoded.transcript:
            return
        with self._lock:
            same = [d for d in self._kept if d.user_id == decoded.user_id and d.messages == decoded.messages]
            for d in same:
                self._kept.remove(d)
                self._bytes -= _cost(d)
            self._kept.append(decoded)
            self._bytes += cost
            while len(self._kept) > self.size or self._bytes > self.max_bytes:
                dropped = self._kept.pop(0)
                self._bytes -= _cost(dropped)

    def __len__(self) -> int:
        return len(self._kept)


Finder = Callable[[str | None, bytes, Limits], "tuple[_Decoded, bytes] | None"]
"""The input read before (of the user, under the limits) whose messages are the first of the ``messages`` given,
and the JSON list of the messages after them (:func:`_after`); None: none."""


def _read(text: str | bytes, limits: Limits, find: Finder) -> tuple[CheckInput, _Decoded | None, bool]:
    """The check input of ``text``, equal to ``CheckInput.from_json(text, limits=limits)``, read onto the input
    ``find`` finds when there is one; what to keep of it (None: nothing; only an input the one-pass reader took,
    whole or in part, is kept: another format's conversion may read a message by the ones before it); and whether
    it was read onto one read before.

    Raises:
        InputError: what :meth:`CheckInput.from_json` raises for ``text``.
    """
    if len(text) > limits.max_bytes:  # counted as the whole parse counts it (a text's characters)
        return CheckInput.from_json(text, limits=limits), None, False  # refused by its size
    raw = utf8(text) if isinstance(text, str) else text
    try:
        top = sent.fields(raw)
        messages = bytes(top["messages"])
        user_id = _USER.decode(top["user_id"]) if "user_id" in top else None
    except (msgspec.DecodeError, KeyError):
        return CheckInput.from_json(text, limits=limits), None, False  # not a check input: the whole parse says why
    found = find(user_id, messages, limits)
    item = _onto(raw, messages, user_id, limits, *found) if found is not None else None
    onto = item is not None
    if item is None:
        try:
            item = CheckInput.decoded(raw, limits=limits)
        except Exception:  # another format, or refused: the whole parse of the very text given
            return CheckInput.from_json(text, limits=limits), None, False
    kept = _Decoded(user_id, messages, item.transcript, limits) if item.user_id == user_id else None
    return item, kept, onto


def _after(before: bytes, messages: bytes) -> bytes | None:
    """The JSON list of the messages ``messages`` (a list's JSON) holds after those of ``before`` (``[]``: none),
    when it begins, byte for byte, with them; else None."""
    if before == messages:
        return b"[]"
    # the list read before, open: its "[", its messages and the spaces after the last one
    if len(before) < len(messages) and messages.startswith(before[:-1]):
        after = messages[len(before) - 1 :].lstrip(_SPACE)
        if after.startswith(b","):  # more messages (the last one read before ended with its "}")
            return b"[" + after[1:]
    return None


def _onto(
    raw: bytes, messages: bytes, user_id: str | None, limits: Limits, before: _Decoded, new: bytes
) -> CheckInput | None:
    """``raw``, whose messages (``messages``) are ``before``'s followed by those of ``new``, read onto ``before``'s
    transcript; None when anything does not hold (then the input is read whole)."""
    # The messages' place in the input: the one place their bytes stand (standing twice, the input is read
    # whole). Every place they could stand begins within ``window`` (the input's other bytes), where their
    # first bytes are looked for: a history is not searched for itself.
    anchor = messages[:_ANCHOR]
    window = len(raw) - len(messages) + len(anchor)
    at = raw.find(anchor, 0, window)
    if at == -1 or not raw.startswith(messages, at) or raw.find(anchor, at + 1, window) != -1:
        return None
    rest = raw[:at] + new + raw[at + len(messages) :]
    try:  # the rest is read strictly (a repeated key anywhere, the "messages" key's too, refuses it)
        item = CheckInput.decoded(rest, limits=limits, before=before.transcript)
    except Exception:
        return None
    return item if item.user_id == user_id else None
