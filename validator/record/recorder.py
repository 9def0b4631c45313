"""The recorder seam: every verdict, approvals and exempt passes included, is recorded once.

An :class:`AuditEvent` holds the verdict with hashes of the arguments and the transcript (the
transcript itself is not copied into the audit trail). :class:`MemoryRecorder` is the embedded
default; a shared store plugs in behind the same two methods.
"""

from __future__ import annotations

import hashlib
import json
import threading
import uuid
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from validator._json import utf8
from validator.inputs.action import PendingAction
from validator.inputs.transcript import Transcript
from validator.verdict import Verdict

__all__ = ["AuditEvent", "MemoryRecorder", "Recorder", "Recorders", "hash_args"]


def _digest(data: Any) -> str:
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(utf8(canonical)).hexdigest()


def hash_args(args: Mapping[str, Any]) -> str:
    """SHA-256 of the arguments' canonical JSON."""
    return _digest(dict(args))


@dataclass(frozen=True, kw_only=True)
class AuditEvent:
    """One recorded verdict."""

    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    """Unique per event: appends are idempotent by it (a replayed spool never duplicates)."""
    time: datetime
    user_id: str | None
    tool: str
    args_hash: str
    transcript_hash: str
    policy_version: str
    verdict: Verdict
    call_id: str | None = None
    """The host's id of the call the verdict is on (None when it sent none)."""

    @classmethod
    def of(
        cls,
        *,
        time: datetime,
        user_id: str | None,
        action: PendingAction,
        transcript: Transcript,
        policy_version: str,
        verdict: Verdict,
    ) -> AuditEvent:
        """The event recording ``verdict`` on ``action`` in ``transcript`` (hashes, not copies); the verdict it
        records carries the event's id (``audit_id``), so a caller can find its record."""
        event_id = uuid.uuid4().hex
        return cls(
            id=event_id,
            time=time,
            user_id=user_id,
            tool=action.tool,
            args_hash=hash_args(action.args),
            transcript_hash=transcript.digest,
            policy_version=policy_version,
            verdict=replace(verdict, audit_id=event_id),
            call_id=action.call_id,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "time": self.time.isoformat(),
            "user_id": self.user_id,
            "tool": self.tool,
            "args_hash": self.args_hash,
            "transcript_hash": self.transcript_hash,
            "policy_version": self.policy_version,
            "call_id": self.call_id,
            "verdict": self.verdict.to_dict(),
        }


class Recorder(ABC):
    """Where verdicts go. Raising means "not recorded": the engine then refuses to run the action.

    A base class: a recorder implements :meth:`record`; the async twin runs it in a worker thread unless
    the recorder overrides it. A recorder that appends to a store (the audit log) overrides
    :meth:`appends_to` and :meth:`through`, so a check's spend of the user's request goes with its record."""

    @abstractmethod
    def record(self, event: AuditEvent) -> None: ...

    async def arecord(self, event: AuditEvent) -> None:
        import asyncio

        await asyncio.to_thread(self.record, event)

    def through(self, store: object, view: object) -> Recorder:
        """This recorder writing through ``view``, one check's session of ``store``, where it writes to
        ``store``; itself otherwise."""
        return self

    def appends_to(self, store: object) -> bool:
        """Whether this recorder appends each record to ``store`` before any other recorder sees it (so a
        check's spend of the user's request can be made with its record, in one transaction)."""
        return False


class Recorders(Recorder):
    """Several recorders as one, in order; the first that raises stops the rest and fails the record."""

    def __init__(self, *recorders: Recorder) -> None:
        self.recorders = recorders

    def through(self, store: object, view: object) -> Recorders:
        """These recorders, each writing through ``view`` where it writes to ``store``."""
        return Recorders(*(r.through(store, view) for r in self.recorders))

    def appends_to(self, store: object) -> bool:
        """Whether the first recorder appends to ``store`` (a recorder that raises stops the rest)."""
        return bool(self.recorders) and self.recorders[0].appends_to(store)

    def record(self, event: AuditEvent) -> None:
        for r in self.recorders:
            r.record(event)

    async def arecord(self, event: AuditEvent) -> None:
        for r in self.recorders:
            await r.arecord(event)


class MemoryRecorder(Recorder):
    """Keeps the last ``maxlen`` events in memory (the embedded default)."""

    def __init__(self, maxlen: int | None = 10_000) -> None:
        self._events: deque[AuditEvent] = deque(maxlen=maxlen)
        self._lock = threading.Lock()

    @property
    def events(self) -> list[AuditEvent]:
        with self._lock:
            return list(self._events)

    def record(self, event: AuditEvent) -> None:
        with self._lock:
            self._events.append(event)

    async def arecord(self, event: AuditEvent) -> None:
        self.record(event)
