"""Bearer tokens of the decision service: each names a tenant; only the token's SHA-256 is ever stored.

A token is ``vt_`` and 43 URL-safe characters (256 random bits), printed once when it is made. The
store keeps ``sha256(token) -> tenant|scopes`` (``tenant|scopes|users``, bound to users): in memory
for one process, or in Redis (``{ns}:tokens``) so every service process behind a load balancer accepts
the same tokens, and a revocation reaches all of them at once. The service reads it on the event loop
(``aidentity_of``, ``atake``: the redis asyncio client, with one-second timeouts), never in a worker
thread that a hung Redis could hold.

Scopes (:data:`SCOPES`) say what a token may do: ``check`` (``/v1/check``, ``/v1/check:batch``),
``answer`` (record the user's answer to an ``ask_user`` verdict), ``grant`` (create, list and revoke
standing authorizations), ``admin`` (the audit and ``/metrics``). A token made without scopes gets
``check`` only (:data:`DEFAULT_SCOPES`), and so does a token stored before scopes existed: the token an
agent checks with can never grant itself a standing authorization.

A token may be bound to one user or a set of users (:attr:`Identity.users`; ``check`` and ``answer`` scopes
only): a check naming another user is refused (403), and it sees and answers only those users' questions (the
person's own device or inbox link). An unbound token may name any user only where the operator trusts its
tenant to say who the user is (``validator serve --trust-user-id TENANT``); else a check naming a user is a 403:
the user is whoever the token vouches for, never whoever the body says.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from validator.exceptions import StoreBusy, StoreError, UsageError
from validator.store import check_tenant, url_cluster, url_namespace
from validator.store.base import redact_in
from validator.store.loops import PerLoop

T = TypeVar("T")

__all__ = [
    "BOUND_SCOPES",
    "DEFAULT_SCOPES",
    "SCOPES",
    "Identity",
    "MemoryTenants",
    "RedisTenants",
    "Tenants",
    "check_scopes",
    "check_tenant",
    "check_user",
    "new_token",
    "tenants_for",
    "token_hash",
    "token_key",
]

TOKEN_PREFIX = "vt_"
SCOPES = ("check", "answer", "grant", "admin")
DEFAULT_SCOPES: tuple[str, ...] = ("check",)


def new_token() -> str:
    """A fresh bearer token (shown once; only its hash is kept)."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    """What is stored of a token: its SHA-256 (a token is 256 random bits, so no salt or stretching is needed)."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def check_scopes(scopes: Iterable[str]) -> tuple[str, ...]:
    """The scopes, known and in order; else :class:`UsageError` naming the unknown one."""
    given = list(dict.fromkeys(scopes))
    unknown = [s for s in given if s not in SCOPES]
    if unknown or not given:
        raise UsageError(f"a token's scopes are some of {', '.join(SCOPES)}; got {', '.join(unknown) or 'none'}")
    return tuple(s for s in SCOPES if s in given)


@dataclass(frozen=True, slots=True)
class Identity:
    """Who a token is: its tenant, what it may do, and the users it vouches for."""

    tenant: str
    scopes: frozenset[str]
    users: frozenset[str] = frozenset()
    """The users this token checks and answers for (empty: not bound; see the module docstring)."""

    @property
    def bound(self) -> bool:
        return bool(self.users)

    def speaks_for(self, user_id: str | None, trusted: bool) -> bool:
        """Whether a call of this token may name ``user_id``: one of its users; for an unbound token, any user
        where its tenant is ``trusted`` to say who the user is, or none."""
        if self.users:
            return user_id in self.users
        return trusted or user_id is None


BOUND_SCOPES = frozenset({"check", "answer"})
"""What a token bound to users may do: check calls and answer questions for them, nothing of the tenant's."""
_USERS_SEPARATOR = "\n"  # never in a user id: ids are printable


def check_user(user: str, scopes: Iterable[str]) -> str:
    """A user a token is bound to: 1-256 printable characters, on a token that only checks or answers; else
    :class:`UsageError` saying which."""
    if not 1 <= len(user) <= 256 or not user.isprintable():
        raise UsageError("a token's user is 1 to 256 printable characters")
    if not set(scopes) <= BOUND_SCOPES:
        raise UsageError("a token bound to users may only check and answer (scopes check, answer)")
    return user


def _record(tenant: str, scopes: Iterable[str], users: Iterable[str] = ()) -> str:
    granted = check_scopes(scopes)
    named = tuple(dict.fromkeys(check_user(u, granted) for u in users))
    bound = f"|{_USERS_SEPARATOR.join(named)}" if named else ""
    return f"{check_tenant(tenant)}|{','.join(granted)}{bound}"


def _identity(record: str | None) -> Identity | None:
    if not record:
        return None
    tenant, _, rest = record.partition("|")
    scopes, bound, users = rest.partition("|")  # the users last: they may hold a "|" of their own
    granted = frozenset(s for s in scopes.split(",") if s in SCOPES) if scopes else frozenset(DEFAULT_SCOPES)
    if bound:
        return Identity(tenant, granted & BOUND_SCOPES, frozenset(users.split(_USERS_SEPARATOR)))
    return Identity(tenant, granted)


def _bound_users(user: str | None, users: Iterable[str]) -> tuple[str, ...]:
    return (*((user,) if user is not None else ()), *users)


class Tenants(Protocol):
    """Where the service looks up which tenant a token belongs to, and what it may do."""

    def create(
        self, tenant: str, scopes: Iterable[str] = DEFAULT_SCOPES, user: str | None = None, users: Iterable[str] = ()
    ) -> str:
        """A new token for ``tenant`` with ``scopes`` (returned once); ``user`` and ``users``: the users it is
        bound to (it checks and answers for them only)."""
        ...

    def identity_of(self, token: str) -> Identity | None: ...

    def revoke(self, token_or_hash: str) -> bool:
        """End a token (given itself or its hash); whether it existed."""
        ...

    def list(self) -> list[tuple[str, Identity]]:
        """Every token as its hash (the store keeps nothing else of it) and who it is, by tenant then hash."""
        ...

    def describe(self, token_or_hash: str) -> Identity | None:
        """Who a token (given itself or its hash) is; None when there is no such token."""
        ...

    def take(self, token: str, cost: int, rate: float, burst: int) -> bool:
        """Spend ``cost`` checks from the token's bucket (``rate`` a second, ``burst`` at most); whether it had
        them. Shared by every service process on the same token store."""
        ...

    async def aidentity_of(self, token: str) -> Identity | None:
        """:meth:`identity_of` without blocking the event loop."""
        ...

    async def atake(self, token: str, cost: int, rate: float, burst: int) -> bool:
        """:meth:`take` without blocking the event loop."""
        ...

    async def aclose(self) -> None:
        """Close what the async methods opened on this event loop."""
        ...


def _listed(records: dict[str, str]) -> list[tuple[str, Identity]]:
    found = [(digest, who) for digest, record in records.items() if (who := _identity(record)) is not None]
    return sorted(found, key=lambda item: (item[1].tenant, item[0]))


def token_key(token_or_hash: str) -> str:
    """The key a token is kept under, given the token itself or that key (its SHA-256)."""
    return token_hash(token_or_hash) if token_or_hash.startswith(TOKEN_PREFIX) else token_or_hash


class MemoryTenants:
    """Tokens of one service process (the embedded default)."""

    def __init__(self) -> None:
        self._tenants: dict[str, str] = {}
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def create(
        self, tenant: str, scopes: Iterable[str] = DEFAULT_SCOPES, user: str | None = None, users: Iterable[str] = ()
    ) -> str:
        token = new_token()
        record = _record(tenant, scopes, _bound_users(user, users))
        with self._lock:
            self._tenants[token_hash(token)] = record
        return token

    def identity_of(self, token: str) -> Identity | None:
        with self._lock:
            return _identity(self._tenants.get(token_hash(token)))

    def revoke(self, token_or_hash: str) -> bool:
        with self._lock:
            return self._tenants.pop(token_key(token_or_hash), None) is not None

    def list(self) -> list[tuple[str, Identity]]:
        with self._lock:
            return _listed(self._tenants)

    def describe(self, token_or_hash: str) -> Identity | None:
        with self._lock:
            return _identity(self._tenants.get(token_key(token_or_hash)))

    def take(self, token: str, cost: int, rate: float, burst: int) -> bool:
        now = time.monotonic()
        key = token_hash(token)
        with self._lock:
            tokens, at = self._buckets.get(key, (float(burst), now))
            tokens = min(float(burst), tokens + (now - at) * rate)
            granted = tokens >= cost
            self._buckets[key] = (tokens - cost if granted else tokens, now)
        return granted

    async def aidentity_of(self, token: str) -> Identity | None:
        return self.identity_of(token)  # a dict read: nothing to wait for

    async def atake(self, token: str, cost: int, rate: float, burst: int) -> bool:
        return self.take(token, cost, rate, burst)

    async def aclose(self) -> None:
        return None


class RedisTenants:
    """Tokens shared by every service process on one Redis (a hash ``{namespace}:tokens``)."""

    def __init__(
        self, url: str, *, namespace: str = "validator-service", timeout: float = 1.0, cluster: bool = False
    ) -> None:
        import redis

        from validator.store.redis import client_options, sync_client

        self._options: dict[str, Any] = client_options(timeout)
        self._cluster = cluster
        try:
            self._redis = sync_client(url, self._options, cluster)
        except (ValueError, redis.RedisError) as exc:
            raise StoreError(f"token store: bad URL: {redact_in(str(exc), url)}") from None
        self._key = f"{namespace}:tokens"
        self._url = url
        self._take = self._redis.register_script(_TAKE)
        self._async: PerLoop[tuple[Any, Any]] = PerLoop(self._new_client)
        """Each event loop's redis.asyncio client and its bucket script (EVALSHA, loaded on first use)."""

    def create(
        self, tenant: str, scopes: Iterable[str] = DEFAULT_SCOPES, user: str | None = None, users: Iterable[str] = ()
    ) -> str:
        token = new_token()
        record = _record(tenant, scopes, _bound_users(user, users))
        self._call(lambda: self._redis.hset(self._key, token_hash(token), record))
        return token

    def identity_of(self, token: str) -> Identity | None:
        found: Any = self._call(lambda: self._redis.hget(self._key, token_hash(token)))
        return _identity(str(found)) if found else None

    def revoke(self, token_or_hash: str) -> bool:
        return bool(self._call(lambda: self._redis.hdel(self._key, token_key(token_or_hash))))

    def list(self) -> list[tuple[str, Identity]]:
        found: Any = self._call(lambda: self._redis.hgetall(self._key))
        return _listed({str(k): str(v) for k, v in found.items()})

    def describe(self, token_or_hash: str) -> Identity | None:
        found: Any = self._call(lambda: self._redis.hget(self._key, token_key(token_or_hash)))
        return _identity(str(found)) if found else None

    def take(self, token: str, cost: int, rate: float, burst: int) -> bool:
        key = f"{self._key}:bucket:{token_hash(token)}"
        return bool(self._call(lambda: self._take(keys=[key], args=[rate, burst, cost])))

    async def aidentity_of(self, token: str) -> Identity | None:
        client, _ = self._aclient()
        found: Any = await self._acall(lambda: client.hget(self._key, token_hash(token)))
        return _identity(str(found)) if found else None

    async def atake(self, token: str, cost: int, rate: float, burst: int) -> bool:
        (_, take), key = self._aclient(), f"{self._key}:bucket:{token_hash(token)}"
        return bool(await self._acall(lambda: take(keys=[key], args=[rate, burst, cost])))

    def _aclient(self) -> tuple[Any, Any]:
        return self._async.get()

    def _new_client(self) -> tuple[Any, Any]:
        from validator.store.redis import async_client

        client = async_client(self._url, self._options, self._cluster)
        return client, client.register_script(_TAKE)

    async def aclose(self) -> None:
        """Close this event loop's async connections (the service does at shutdown)."""
        kept = self._async.pop()
        if kept is not None:
            await kept[0].aclose()

    def _call(self, fn: Callable[[], T]) -> T:
        import redis

        try:
            return fn()
        except redis.RedisError as exc:
            raise self._fail(exc) from exc

    async def _acall(self, fn: Callable[[], Awaitable[T]]) -> T:
        import redis

        try:
            return await fn()
        except redis.RedisError as exc:
            raise self._fail(exc) from exc

    def _fail(self, exc: Exception) -> StoreError:
        from validator.store.redis import busy

        kind = StoreBusy if busy(exc) else StoreError
        return kind(f"token store: {type(exc).__name__}: {redact_in(str(exc), self._url)}")


_TAKE = """
local rate, burst, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local b = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(b[1]) or burst
local at = tonumber(b[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate)
local granted = 0
if tokens >= cost then
  tokens = tokens - cost
  granted = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('EXPIRE', KEYS[1], math.ceil(burst / rate) + 60)
return granted
"""
"""A token bucket in one Redis hash, refilled by the server's clock: every process spends from the same one."""


def tenants_for(store_url: str) -> Tenants:
    """The token store that goes with the service's store: Redis beside Redis (the hash
    ``NAMESPACE-service:tokens``, ``validator-service:tokens`` when the URL names no namespace: a service
    under another namespace has tokens of its own), else in memory."""
    if store_url.startswith(("redis://", "rediss://", "unix://")):
        namespace, cluster = f"{url_namespace(store_url)}-service", url_cluster(store_url)
        return RedisTenants(store_url.partition("?")[0], namespace=namespace, cluster=cluster)
    return MemoryTenants()
