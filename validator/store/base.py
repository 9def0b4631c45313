"""The store seam: standing authorizations, the audit log, reusable verdicts and block-rate counters.

One base class per concern, two implementations: :class:`~validator.store.memory.MemoryStore` (the
embedded default, one process) and :class:`~validator.store.redis.RedisStore` (shared by every
worker). Every method raises :class:`~validator.exceptions.StoreError` when the store cannot answer;
callers decide what that means, and none of them treats an unreadable record as an authorization.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, ClassVar, Literal, Self

import msgspec

from validator.exceptions import StoreError
from validator.store.records import StandingAuthorization

Entries = list[tuple[str, dict[str, Any]]]
Buckets = list[str]

__all__ = [
    "DEFAULT_NAMESPACE",
    "AuditLog",
    "AuthorizationStore",
    "ReadAhead",
    "SpendLost",
    "Buckets",
    "Counters",
    "Entries",
    "RequestLedger",
    "Store",
    "VerdictCache",
    "authorization_from_json",
    "redact_in",
    "redacted",
    "authorization_to_json",
    "minute",
    "hour",
    "held_buckets",
]

DEFAULT_NAMESPACE = "validator"
"""The prefix of every key of a store whose URL names no ``?namespace=``."""


class AuthorizationStore(ABC):
    """Where standing authorizations live. ``get`` raises :class:`StoreError` when it cannot read.

    A base class, like httpx's transports: a store implements the four sync methods, and the async read
    runs the sync one in a worker thread unless the store reads without blocking (Redis overrides it)."""

    @abstractmethod
    def get(self, auth_id: str) -> StandingAuthorization | None: ...
    @abstractmethod
    def put(self, auth: StandingAuthorization) -> None: ...
    @abstractmethod
    def list(self, user_id: str) -> list[StandingAuthorization]: ...
    @abstractmethod
    def revoke(self, auth_id: str, when: datetime) -> StandingAuthorization: ...

    async def aget(self, auth_id: str) -> StandingAuthorization | None:
        """:meth:`get` without blocking the event loop."""
        import asyncio

        return await asyncio.to_thread(self.get, auth_id)


class AuditLog(ABC):
    """The audit log: ``append_audit`` is idempotent by event id (False when the id was already there)."""

    @abstractmethod
    def append_audit(self, event_id: str, payload: Mapping[str, Any], at: datetime) -> bool: ...
    @abstractmethod
    def audit_after(self, after: str | None, count: int) -> Entries: ...
    @abstractmethod
    def audit_tail(self, count: int) -> Entries: ...
    @abstractmethod
    def audit_get(self, entry_id: str) -> dict[str, Any] | None: ...
    @abstractmethod
    def audit_length(self) -> int: ...


class VerdictCache(ABC):
    """Verdicts kept for reuse, with a time to live (the async twins run the sync ones in a worker thread
    unless the store overrides them)."""

    @abstractmethod
    def get_verdict(self, key: str) -> dict[str, Any] | None: ...
    @abstractmethod
    def put_verdict(self, key: str, verdict: Mapping[str, Any], ttl: timedelta) -> None: ...

    async def aget_verdict(self, key: str) -> dict[str, Any] | None:
        import asyncio

        return await asyncio.to_thread(self.get_verdict, key)

    async def aput_verdict(self, key: str, verdict: Mapping[str, Any], ttl: timedelta) -> None:
        import asyncio

        await asyncio.to_thread(self.put_verdict, key, verdict, ttl)


class Counters(ABC):
    """Block-rate counters, in minute and hour buckets."""

    @abstractmethod
    def count_outcome(self, scope: str, name: str, blocked: bool, at: datetime) -> None: ...
    @abstractmethod
    def outcome_counts(self, scope: str, name: str, buckets: Buckets) -> tuple[int, int]: ...

    def hold(self, size: int, quota: int, at: datetime, ttl: timedelta) -> int | None:
        """Count ``size`` bytes of a question held for ``ttl`` against ``quota``: the bytes of the questions asked
        in the last ``ttl`` (by hour: a question's record lives that long, answered or not). None when they fit
        (and are counted, atomically with the check), else the bytes held already (nothing is counted). A store
        that keeps no such count holds every question."""
        return None


class ReadAhead(msgspec.Struct, frozen=True):
    """What one check will read from a store, named before it reads any of it."""

    auth_ids: Sequence[str] = ()
    """Standing authorizations, by id."""
    block_key: str | None = None
    """The retry cap's count of this action."""
    verdict_key: str | None = None
    """A verdict kept for reuse."""
    user_id: str | None = None
    """Whose standing authorizations are listed."""
    carry_spends: bool = False
    """The check's record is appended through the session: the request ledger's spends wait for it and are
    made with it, in one transaction, or not at all (:class:`SpendLost`)."""


class SpendLost(Exception):
    """The record of an approval carried the spend of the user's request, and the store made neither: another
    action spent the request first (``held`` names it), or the store failed (``reason``). Nothing was spent
    and nothing recorded. Not a :class:`StoreError`, so a recorder never spools such a record: the approval
    does not run."""

    def __init__(self, held: str | None, reason: str = "") -> None:
        super().__init__(f"the request was spent by {held}" if held else reason)
        self.held = held
        self.reason = reason

    def __reduce__(self) -> tuple[type[SpendLost], tuple[str | None, str]]:
        return type(self), (self.held, self.reason)


class RequestLedger(ABC):
    """Which action spent which user request (one request authorizes the actions it names, once), how often
    one action was blocked in one conversation (the retry cap), and one check's session of that traffic.

    A base class: a ledger implements :meth:`spend`; the retry cap's count and the session have defaults for
    a store in this process (no count kept: no retry cap; no session: every step reads as it goes). A store
    across the network (Redis) overrides them to send a check's traffic in two round trips."""

    reads_ahead: ClassVar[bool] = False
    """Whether :meth:`session` reads ahead (a store that overrides it says so; the check then opens one)."""

    @abstractmethod
    def spend(self, key: str, action: str, ttl: timedelta) -> str | None:
        """Record that ``action`` spends request ``key``; the action that spent it first when that was another
        (then nothing changes), or None. Atomic: two workers can never both spend one request."""

    def add_block(self, key: str, ttl: timedelta) -> None:
        """Count one more block of ``key`` (a store may send it with the check's other writes)."""
        return None

    def blocks(self, key: str) -> int:
        """How often ``key`` was blocked within its time to live (0 where no count is kept)."""
        return 0

    def session(self, reads: ReadAhead) -> Self:
        """This store for one check: it reads ``reads`` ahead now, and queues the writes nobody waits for."""
        return self

    def end_session(self) -> None:
        """Send the writes the check's store still holds (call it on the store :meth:`session` returned)."""
        return None

    def carries_spends(self) -> bool:
        """Whether the next audit append through this session carries a spend of the user's request (that
        record is then the store's or nothing: never spooled)."""
        return False

    def drop_spends(self) -> None:
        """Forget the spends waiting for the record: the verdict it records does not approve."""
        return None


class Store(AuthorizationStore, AuditLog, VerdictCache, Counters, RequestLedger):
    """Everything the validator keeps outside one check: one base class per concern, one object."""

    @property
    @abstractmethod
    def identity(self) -> str:
        """Which store this is (a spool of audit records belongs to one store only)."""

    @abstractmethod
    def health(self) -> dict[str, Any]: ...

    async def ahealth(self) -> dict[str, Any]:
        """:meth:`health` without blocking the event loop (the service's readiness probe)."""
        import asyncio

        return await asyncio.to_thread(self.health)

    def close(self) -> None:
        """Release what the store holds (connections); nothing by default."""

    async def aclose(self) -> None:
        import asyncio

        await asyncio.to_thread(self.close)


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


def held_buckets(at: datetime, ttl: timedelta) -> Buckets:
    """The hour buckets a question asked within ``ttl`` before ``at`` is counted in, the current one first."""
    hours = math.ceil(ttl.total_seconds() / 3600) + 1
    return [hour(at - timedelta(hours=n)) for n in range(hours)]


class _AuthorizationRecord(msgspec.Struct, forbid_unknown_fields=True):
    """A stored authorization as JSON holds it: every field of its type (no coercion), none other."""

    id: str
    user_id: str
    tool: str
    where: dict[str, str]
    quote: str
    created: str
    expires: str | None
    revoked: str | None
    risk: Literal["dangerous", "general"] = "general"


def authorization_to_json(auth: StandingAuthorization) -> str:
    import json

    return json.dumps(auth.to_dict(), ensure_ascii=True)


def _aware(text: str, field: str) -> datetime:
    at = datetime.fromisoformat(text)
    if at.tzinfo is None:
        raise ValueError(f"{field} {text!r} has no time zone")
    return at


def authorization_from_json(raw: str | bytes, where: str, expected_id: str | None = None) -> StandingAuthorization:
    """Parse a stored record; a corrupt one is a :class:`StoreError` naming it, never an authorization."""
    try:
        rec = msgspec.json.decode(raw, type=_AuthorizationRecord)
        if expected_id is not None and rec.id != expected_id:
            raise ValueError(f"it says its id is {rec.id!r}")
        return StandingAuthorization(
            id=rec.id,
            user_id=rec.user_id,
            tool=rec.tool,
            where=dict(rec.where),
            quote=rec.quote,
            created=_aware(rec.created, "created"),
            expires=_aware(rec.expires, "expires") if rec.expires is not None else None,  # "": corrupt, not never
            revoked=_aware(rec.revoked, "revoked") if rec.revoked is not None else None,
            risk=rec.risk,
        )
    except (msgspec.ValidationError, msgspec.DecodeError, ValueError) as exc:
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise StoreError(f"stored record {where} is corrupt: {detail}") from None


def redacted(url: str) -> str:
    """``url`` as it may be shown (readiness, errors, logs): any password (``redis://:PASS@host``,
    ``redis://user:PASS@host``, ``redis://PASS@host``, ``?password=PASS``) replaced by ``***``."""
    from urllib.parse import parse_qsl, urlencode, urlsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return "<a store URL that does not parse>"
    netloc = parts.netloc
    if "@" in netloc:
        who, _, where = netloc.rpartition("@")
        user, colon, _ = who.partition(":")
        netloc = (f"{user}:***" if colon else "***") + f"@{where}"
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    query = urlencode([(k, "***" if k.lower() in _SECRET_KEYS else v) for k, v in pairs], safe="*:")
    shown = f"{parts.scheme}://{netloc}{parts.path}" if "://" in url else f"{parts.scheme}:{parts.path}"
    return shown + (f"?{query}" if query else "") + (f"#{parts.fragment}" if parts.fragment else "")


_SECRET_KEYS = frozenset({"password", "passwd", "pass", "token", "secret", "auth"})


def redact_in(text: str, url: str) -> str:
    """``text`` (an error message that may quote the URL or its password) with the URL's secrets masked."""
    from urllib.parse import parse_qsl, unquote, urlsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return text
    secrets = [parts.password] if parts.password else []
    if parts.username and not parts.password and "@" in parts.netloc:
        secrets.append(parts.username)  # redis://PASS@host
    secrets += [v for k, v in parse_qsl(parts.query) if k.lower() in _SECRET_KEYS]
    for secret in {s for s in secrets if s}:
        text = text.replace(secret, "***").replace(unquote(secret), "***")
    return text.replace(url, redacted(url))
