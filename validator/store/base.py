"""The store seam: standing authorizations, the audit log, reusable verdicts and block-rate counters.

One protocol, two implementations: :class:`MemoryStore` (the embedded default, one process) and
:class:`~validator.store.redis.RedisStore` (shared by every worker). Every method raises
:class:`~validator.exceptions.StoreError` when the store cannot answer; callers decide what that
means, and none of them treats an unreadable record as an authorization.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, ValidationError

from ..authorizations import StandingAuthorization
from ..exceptions import StoreError

Entries = list[tuple[str, dict[str, Any]]]
Buckets = list[str]

__all__ = [
    "Buckets",
    "Entries",
    "MemoryStore",
    "Store",
    "authorization_from_json",
    "authorization_to_json",
    "minute",
    "hour",
]


class Store(Protocol):
    """What the validator keeps outside one check. Async twins exist for the per-check reads."""

    # standing authorizations (also the AuthorizationStore protocol)
    def get(self, auth_id: str) -> StandingAuthorization | None: ...
    def put(self, auth: StandingAuthorization) -> None: ...
    def list(self, user_id: str) -> list[StandingAuthorization]: ...
    def revoke(self, auth_id: str, when: datetime) -> StandingAuthorization: ...
    async def aget(self, auth_id: str) -> StandingAuthorization | None: ...

    # the audit log: append is idempotent by event id (False when the id was already there)
    def append_audit(self, event_id: str, payload: Mapping[str, Any], at: datetime) -> bool: ...
    def audit_after(self, after: str | None, count: int) -> Entries: ...
    def audit_tail(self, count: int) -> Entries: ...
    def audit_get(self, entry_id: str) -> dict[str, Any] | None: ...
    def audit_length(self) -> int: ...

    # verdicts kept for reuse
    def get_verdict(self, key: str) -> dict[str, Any] | None: ...
    def put_verdict(self, key: str, verdict: Mapping[str, Any], ttl: timedelta) -> None: ...
    async def aget_verdict(self, key: str) -> dict[str, Any] | None: ...
    async def aput_verdict(self, key: str, verdict: Mapping[str, Any], ttl: timedelta) -> None: ...

    # block-rate counters, in minute and hour buckets
    def count_outcome(self, scope: str, name: str, blocked: bool, at: datetime) -> None: ...
    def outcome_counts(self, scope: str, name: str, buckets: Buckets) -> tuple[int, int]: ...

    @property
    def identity(self) -> str:
        """Which store this is (a spool of audit records belongs to one store only)."""
        ...

    def health(self) -> dict[str, Any]: ...
    def close(self) -> None: ...
    async def aclose(self) -> None: ...


def revoke_in(store: Store, auth_id: str, when: datetime) -> StandingAuthorization:
    """Mark a standing authorization revoked (an earlier revocation time stands)."""
    auth = store.get(auth_id)
    if auth is None:
        raise StoreError(f"no standing authorization {auth_id!r}")
    revoked = replace(auth, revoked=auth.revoked or when)
    store.put(revoked)
    return revoked


def minute(at: datetime) -> str:
    return "m" + at.strftime("%Y%m%d%H%M")


def hour(at: datetime) -> str:
    return "h" + at.strftime("%Y%m%d%H")


class _AuthorizationRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    id: str
    user_id: str
    tool: str
    where: dict[str, str]
    quote: str
    created: str
    expires: str | None
    revoked: str | None


def authorization_to_json(auth: StandingAuthorization) -> str:
    import json

    return json.dumps(auth.to_dict(), ensure_ascii=False)


def _aware(text: str, field: str) -> datetime:
    at = datetime.fromisoformat(text)
    if at.tzinfo is None:
        raise ValueError(f"{field} {text!r} has no time zone")
    return at


def authorization_from_json(raw: str | bytes, where: str, expected_id: str | None = None) -> StandingAuthorization:
    """Parse a stored record; a corrupt one is a :class:`StoreError` naming it, never an authorization."""
    try:
        rec = _AuthorizationRecord.model_validate_json(raw)
        if expected_id is not None and rec.id != expected_id:
            raise ValueError(f"it says its id is {rec.id!r}")
        return StandingAuthorization(
            id=rec.id,
            user_id=rec.user_id,
            tool=rec.tool,
            where=dict(rec.where),
            quote=rec.quote,
            created=_aware(rec.created, "created"),
            expires=_aware(rec.expires, "expires") if rec.expires else None,
            revoked=_aware(rec.revoked, "revoked") if rec.revoked else None,
        )
    except (ValidationError, ValueError) as exc:
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise StoreError(f"stored record {where} is corrupt: {detail}") from None


def _entry_key(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


class MemoryStore:
    """Everything in dicts behind a lock: the embedded default, for one process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._auth: dict[str, str] = {}
        self._audit: list[tuple[str, dict[str, Any]]] = []
        self._audit_ids: set[str] = set()
        self._verdicts: dict[str, tuple[datetime, dict[str, Any]]] = {}
        self._counts: dict[tuple[str, str, str], list[int]] = {}
        self._seq = 0

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
            self._audit.append((f"{int(at.timestamp() * 1000)}-{self._seq}", {"event_id": event_id, **payload}))
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
        from datetime import UTC

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

    @property
    def identity(self) -> str:
        return f"memory:{id(self)}"

    def health(self) -> dict[str, Any]:
        return {"ok": True, "store": "memory", "audit_records": self.audit_length()}

    def close(self) -> None:
        pass

    async def aclose(self) -> None:
        pass
