"""The embedded default store: everything in dicts behind a lock, for one process."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from validator.exceptions import StoreError
from validator.store.base import (
    AuthorizationStore,
    Buckets,
    Entries,
    RequestLedger,
    Store,
    authorization_from_json,
    authorization_to_json,
    held_buckets,
    hour,
    minute,
    revoke_in,
)
from validator.store.records import StandingAuthorization

__all__ = ["MemoryAuthorizationStore", "MemoryLedger", "MemoryStore"]


def _entry_key(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


class MemoryLedger(RequestLedger):
    """Spent requests and repeated blocks, in dicts behind a lock (one process)."""

    def __init__(self) -> None:
        self._spent: dict[str, tuple[str, datetime]] = {}
        self._blocks: dict[str, tuple[int, datetime]] = {}
        self._ledger_lock = threading.Lock()

    def add_block(self, key: str, ttl: timedelta) -> None:
        now = datetime.now(UTC)
        with self._ledger_lock:
            count, until = self._blocks.get(key, (0, now))
            self._blocks[key] = (count + 1 if until > now else 1, now + ttl)

    def blocks(self, key: str) -> int:
        with self._ledger_lock:
            count, until = self._blocks.get(key, (0, datetime.now(UTC)))
            return count if until > datetime.now(UTC) else 0

    def spend(self, key: str, action: str, ttl: timedelta) -> str | None:
        now = datetime.now(UTC)
        with self._ledger_lock:
            held = self._spent.get(key)
            if held is not None and held[1] > now and held[0] != action:
                return held[0]
            self._spent[key] = (action, now + ttl)
            if len(self._spent) > 100_000:  # expired entries go first
                for k in [k for k, (_, until) in self._spent.items() if until <= now]:
                    del self._spent[k]
            return None


class MemoryStore(MemoryLedger, Store):
    """Everything in dicts behind a lock: the embedded default, for one process."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._auth: dict[str, str] = {}
        self._audit: list[tuple[str, dict[str, Any]]] = []
        self._audit_ids: set[str] = set()
        self._verdicts: dict[str, tuple[datetime, dict[str, Any]]] = {}
        self._counts: dict[tuple[str, str, str], list[int]] = {}
        self._seq = 0
        self._last_ms = 0

    # authorizations
    def get(self, auth_id: str) -> StandingAuthorization | None:
        with self._lock:
            raw = self._auth.get(auth_id)
        return None if raw is None else authorization_from_json(raw, f"auth:{auth_id}", auth_id)

    async def aget(self, auth_id: str) -> StandingAuthorization | None:
        return self.get(auth_id)

    def put(self, auth: StandingAuthorization) -> None:
        with self._lock:
            self._auth[auth.id] = authorization_to_json(auth)

    def list(self, user_id: str) -> list[StandingAuthorization]:
        with self._lock:
            items = list(self._auth.items())
        found = [authorization_from_json(raw, f"auth:{i}", i) for i, raw in items]
        return sorted((a for a in found if a.user_id == user_id), key=lambda a: a.created)

    def revoke(self, auth_id: str, when: datetime) -> StandingAuthorization:
        return revoke_in(self, auth_id, when)

    # audit
    def append_audit(self, event_id: str, payload: Mapping[str, Any], at: datetime) -> bool:
        with self._lock:
            if event_id in self._audit_ids:
                return False
            self._seq += 1
            # ids only grow, as a Redis stream's do: records of concurrent checks arrive out of their times'
            # order, and a page after an id must never hold one it already gave.
            self._last_ms = max(self._last_ms, int(at.timestamp() * 1000))
            self._audit.append((f"{self._last_ms}-{self._seq}", {"event_id": event_id, **payload}))
            self._audit_ids.add(event_id)
            return True

    def audit_after(self, after: str | None, count: int) -> Entries:
        """Up to ``count`` entries with ids after ``after`` (from the start when None), oldest first."""
        with self._lock:
            items = list(self._audit)
        if after is not None:
            key = _entry_key(after)
            items = [e for e in items if _entry_key(e[0]) > key]
        return items[:count]

    def audit_tail(self, count: int) -> Entries:
        with self._lock:
            return list(self._audit[-count:]) if count > 0 else []

    def audit_get(self, entry_id: str) -> dict[str, Any] | None:
        with self._lock:
            return next((dict(p) for i, p in self._audit if i == entry_id), None)

    def audit_length(self) -> int:
        with self._lock:
            return len(self._audit)

    # verdicts
    def get_verdict(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            item = self._verdicts.get(key)
        if item is None or item[0] <= datetime.now(item[0].tzinfo):
            return None
        return dict(item[1])

    def put_verdict(self, key: str, verdict: Mapping[str, Any], ttl: timedelta) -> None:
        with self._lock:
            self._verdicts[key] = (datetime.now(UTC) + ttl, dict(verdict))

    async def aget_verdict(self, key: str) -> dict[str, Any] | None:
        return self.get_verdict(key)

    async def aput_verdict(self, key: str, verdict: Mapping[str, Any], ttl: timedelta) -> None:
        self.put_verdict(key, verdict, ttl)

    # counters
    def count_outcome(self, scope: str, name: str, blocked: bool, at: datetime) -> None:
        with self._lock:
            for bucket in (minute(at), hour(at)):
                cell = self._counts.setdefault((scope, name, bucket), [0, 0])
                cell[0] += 1
                cell[1] += int(blocked)

    def outcome_counts(self, scope: str, name: str, buckets: Buckets) -> tuple[int, int]:
        with self._lock:
            cells = [self._counts.get((scope, name, b), [0, 0]) for b in buckets]
        return sum(c[0] for c in cells), sum(c[1] for c in cells)

    def hold(self, size: int, quota: int, at: datetime, ttl: timedelta) -> int | None:
        buckets = held_buckets(at, ttl)
        with self._lock:
            total = sum(self._counts.get(("held", "bytes", b), [0, 0])[0] for b in buckets)
            if total + size > quota:
                return total
            self._counts.setdefault(("held", "bytes", buckets[0]), [0, 0])[0] += size
        return None

    @property
    def identity(self) -> str:
        return f"memory:{id(self)}"

    def health(self) -> dict[str, Any]:
        return {"ok": True, "store": "memory", "audit_records": self.audit_length()}

    async def ahealth(self) -> dict[str, Any]:
        return self.health()

    def close(self) -> None:
        pass

    async def aclose(self) -> None:
        pass


class MemoryAuthorizationStore(AuthorizationStore):
    """The embedded default: a dict behind a lock, for one process."""

    def __init__(self) -> None:
        self._items: dict[str, StandingAuthorization] = {}
        self._lock = threading.Lock()

    def get(self, auth_id: str) -> StandingAuthorization | None:
        with self._lock:
            return self._items.get(auth_id)

    async def aget(self, auth_id: str) -> StandingAuthorization | None:
        return self.get(auth_id)

    def put(self, auth: StandingAuthorization) -> None:
        with self._lock:
            self._items[auth.id] = auth

    def list(self, user_id: str) -> list[StandingAuthorization]:
        with self._lock:
            return sorted((a for a in self._items.values() if a.user_id == user_id), key=lambda a: a.created)

    def revoke(self, auth_id: str, when: datetime) -> StandingAuthorization:
        with self._lock:
            auth = self._items.get(auth_id)
            if auth is None:
                raise StoreError(f"no standing authorization {auth_id!r}")
            revoked = replace(auth, revoked=auth.revoked or when)
            self._items[auth_id] = revoked
            return revoked
