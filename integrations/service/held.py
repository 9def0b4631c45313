"""The conversations a service process holds for the incremental form of ``/v1/check``.

A check that names its conversation (the ``Validator-Conversation`` header) leaves the conversation's
transcript here, with the digest of its messages as sent (:class:`validator.inputs.sent.Chain`); the
next check of it may then send only the new messages, saying which digest they follow
(``Validator-Conversation-After``). What is held is a cache, never a source of truth: a conversation
is held per tenant (no tenant can extend another's), the oldest are let go past a budget of
characters, and one the process does not hold, or holds with another digest, answers 409 so the
client sends the whole input (a restart, another process behind a load balancer, an edited history).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from validator.inputs.sent import Chain
from validator.inputs.transcript import Transcript

__all__ = ["Held", "HeldConversations"]


@dataclass(frozen=True, slots=True)
class Held:
    """One conversation as the service last checked it."""

    transcript: Transcript
    chain: Chain
    chars: int


class HeldConversations:
    """Transcripts by ``(tenant, conversation id)``, the least recently used let go past ``max_chars``."""

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        self._held: OrderedDict[tuple[str, str], Held] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def get(self, tenant: str, conversation: str, after: str) -> Held | None:
        """The conversation when it is held with exactly the digest ``after``, else ``None``."""
        with self._lock:
            held = self._held.get((tenant, conversation))
            if held is None or held.chain.digest != after:
                return None
            self._held.move_to_end((tenant, conversation))
            return held

    def put(self, tenant: str, conversation: str, transcript: Transcript, chain: Chain, chars: int) -> bool:
        """Hold ``transcript`` (``chars`` characters of content) as the conversation's latest; whether it is
        held (a conversation over the whole budget is not)."""
        with self._lock:
            old = self._held.pop((tenant, conversation), None)
            self._chars -= old.chars if old else 0
            if chars > self.max_chars:
                return False
            self._held[(tenant, conversation)] = Held(transcript, chain, chars)
            self._chars += chars
            while self._chars > self.max_chars:
                _, dropped = self._held.popitem(last=False)
                self._chars -= dropped.chars
            return True

    def __len__(self) -> int:
        return len(self._held)
