"""The conversations a service process holds for the incremental form of ``/v1/check``.

A check that names its conversation (the ``Validator-Conversation`` header) leaves the conversation's
transcript here, with the digest of its messages as sent (:class:`validator.inputs.sent.Chain`); the
next check of it may then send only the new messages, saying which digest they follow
(``Validator-Conversation-After``). What is held is a cache, never a source of truth: a conversation
is held per tenant (no tenant can extend another's), the oldest are let go past a budget of
bytes, and one the process does not hold, or holds with another digest, answers 409 so the
client sends the whole input (a restart, another process behind a load balancer, an edited history).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from validator.inputs.sent import Chain
from validator.inputs.transcript import Transcript

__all__ = ["PER_BYTE", "PER_CONVERSATION", "Held", "HeldConversations"]


PER_BYTE = 2
"""What a held conversation costs per byte of its messages' JSON as sent: a transcript and what the checks
derived from it measured 1.45x those bytes at 1,000 and 10,000 messages (tracemalloc), counted as 2x."""
PER_CONVERSATION = 4096
"""What each held conversation costs besides its messages (so empty messages do not hold for free)."""


@dataclass(frozen=True, slots=True)
class Held:
    """One conversation as the service last checked it."""

    transcript: Transcript
    chain: Chain
    size: int
    """Bytes of its messages' JSON as sent (what the whole input's body holds of them, less the commas)."""

    @property
    def cost(self) -> int:
        return PER_BYTE * self.size + PER_CONVERSATION


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
        with self._lock:
            held = self._held.get((tenant, conversation))
            if held is None or held.chain.digest != after:
                return None
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
