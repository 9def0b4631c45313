"""Conversations held across checks, so a check of a long conversation reads only its new messages.

Two users: the service's incremental ``/v1/check`` (the client names the digest of the messages it
believes the service holds; see :mod:`validator.inputs.sent`), and :meth:`Validator.check` with a
``conversation`` name, for a host that sends the whole history as JSON with every request (a stateless
server): the messages of each new input that are, byte for byte, those of the conversation's last
input are not parsed, checked or indexed again (:func:`check_input`).

A conversation is held per tenant (no tenant can extend another's), the oldest are let go past a
budget of bytes, and what is held is a cache, never a source of truth: a conversation not held, or held
with other messages (an edited history), is parsed whole. The result always equals the whole parse.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from validator.inputs import sent, strictjson
from validator.inputs.checkinput import DEFAULT_LIMITS, CheckInput, Limits
from validator.inputs.sent import Chain
from validator.inputs.transcript import Transcript

__all__ = ["PER_BYTE", "PER_CONVERSATION", "Held", "HeldConversations", "check_input"]


PER_BYTE = 2
"""What a held conversation costs per byte of its messages' JSON as sent: a transcript and what the checks
derived from it measured 1.45x those bytes at 1,000 and 10,000 messages (tracemalloc), counted as 2x."""
PER_CONVERSATION = 4096
"""What each held conversation costs besides its messages (so empty messages do not hold for free)."""


@dataclass(frozen=True, slots=True)
class Held:
    """One conversation as it was last checked."""

    transcript: Transcript
    chain: Chain
    size: int
    """Bytes of its messages' JSON as sent (what the whole input's body holds of them, less the commas)."""

    @property
    def cost(self) -> int:
        return PER_BYTE * self.size + PER_CONVERSATION

    @staticmethod
    def of(transcript: Transcript, messages: Sequence[bytes], before: Held | None = None) -> Held:
        """``transcript`` held: the conversation ``before`` (none: from its start) followed by ``messages``,
        the raw JSON of the messages ``transcript`` adds to it."""
        chain = before.chain if before is not None else Chain()
        return Held(transcript, chain.extended(messages), (before.size if before else 0) + sum(map(len, messages)))


class HeldConversations:
    """Transcripts by ``(tenant, conversation id)``, the least recently used let go past ``max_bytes``
    (counted as :attr:`Held.cost`)."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._held: OrderedDict[tuple[str, str], Held] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, tenant: str, conversation: str, after: str) -> Held | None:
        """The conversation when it is held with exactly the digest ``after``, else ``None``."""
        held = self.latest(tenant, conversation)
        return held if held is not None and held.chain.digest == after else None

    def latest(self, tenant: str, conversation: str) -> Held | None:
        """The conversation as last held, whatever its digest."""
        with self._lock:
            held = self._held.get((tenant, conversation))
            if held is not None:
                self._held.move_to_end((tenant, conversation))
            return held

    def put(self, tenant: str, conversation: str, held: Held) -> bool:
        """Hold ``held`` as the conversation's latest; whether it is held (one over the whole budget is not)."""
        with self._lock:
            old = self._held.pop((tenant, conversation), None)
            self._bytes -= old.cost if old else 0
            if held.cost > self.max_bytes:
                return False
            self._held[(tenant, conversation)] = held
            self._bytes += held.cost
            while self._bytes > self.max_bytes:
                _, dropped = self._held.popitem(last=False)
                self._bytes -= dropped.cost
            return True

    def __len__(self) -> int:
        return len(self._held)


def check_input(
    held: HeldConversations, conversation: str, text: str | bytes, *, tenant: str = "", limits: Limits = DEFAULT_LIMITS
) -> CheckInput:
    """The check input of ``text``, a whole check input of ``conversation``, equal to
    ``CheckInput.from_json(text)``: when its messages begin, byte for byte, with those of the conversation's
    last input, only the rest are parsed onto the held transcript (the whole text is still read once by
    the strict JSON reader, which refuses what the whole parse refuses: a repeated key, ``NaN``, a lone
    surrogate); it is then held as the conversation's latest.

    Raises:
        InputError: what :meth:`CheckInput.from_json` raises for ``text``.
    """
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    try:
        parts = sent.split(raw)
    except ValueError:
        return CheckInput.from_json(raw, limits=limits)  # not a check input: raises its problems
    last = held.latest(tenant, conversation)
    count = last.chain.count if last is not None else 0
    same = (
        last is not None
        and count <= len(parts.messages)
        and len(raw) <= limits.max_bytes
        and sent.Chain().extended(parts.messages[:count]).digest == last.chain.digest
        and _strict(raw)
    )
    if same:
        rest = sent.joined(parts.fields, parts.messages[count:])
        item = CheckInput.from_json(rest, limits=limits, before=last.transcript if last else None)
        held.put(tenant, conversation, Held.of(item.transcript, parts.messages[count:], last))
    else:
        item = CheckInput.from_json(raw, limits=limits)
        held.put(tenant, conversation, Held.of(item.transcript, parts.messages))
    return item


def _strict(raw: bytes) -> bool:
    """Whether the strict JSON reader takes ``raw`` (else the whole parse is left to name its problems)."""
    try:
        strictjson.fast(raw)
    except ValueError:
        return False
    return True
