"""Bearer tokens of the decision service: each names a tenant; only the token's SHA-256 is ever stored.

A token is ``vt_`` and 43 URL-safe characters (256 random bits), printed once when it is made. The
store keeps ``sha256(token) -> tenant``: in memory for one process, or in Redis (``{ns}:tokens``) so
every service process behind a load balancer accepts the same tokens, and a revocation reaches all
of them at once.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import threading
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from validator.exceptions import StoreError, UsageError
from validator.store.base import redact_in

T = TypeVar("T")

__all__ = ["MemoryTenants", "RedisTenants", "Tenants", "check_tenant", "new_token", "tenants_for", "token_hash"]

TOKEN_PREFIX = "vt_"
_TENANT = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")


def new_token() -> str:
    """A fresh bearer token (shown once; only its hash is kept)."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    """What is stored of a token: its SHA-256 (a token is 256 random bits, so no salt or stretching is needed)."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def check_tenant(name: str) -> str:
    """``name`` if it is a valid tenant name (it becomes a store namespace); else :class:`UsageError`."""
    if not _TENANT.match(name):
        raise UsageError(
            f"tenant names are 1-63 of a-z, 0-9, '_' and '-', starting with a letter or digit; got {name!r}"
        )
    return name


class Tenants(Protocol):
    """Where the service looks up which tenant a token belongs to."""

    def create(self, tenant: str) -> str:
        """A new token for ``tenant`` (returned once)."""
        ...

    def tenant_of(self, token: str) -> str | None: ...

    def revoke(self, token_or_hash: str) -> bool:
        """End a token (given itself or its hash); whether it existed."""
        ...


def _key(token_or_hash: str) -> str:
    return token_hash(token_or_hash) if token_or_hash.startswith(TOKEN_PREFIX) else token_or_hash


class MemoryTenants:
    """Tokens of one service process (the embedded default)."""

    def __init__(self) -> None:
        self._tenants: dict[str, str] = {}
        self._lock = threading.Lock()

    def create(self, tenant: str) -> str:
        token = new_token()
        with self._lock:
            self._tenants[token_hash(token)] = check_tenant(tenant)
        return token

    def tenant_of(self, token: str) -> str | None:
        with self._lock:
            return self._tenants.get(token_hash(token))

    def revoke(self, token_or_hash: str) -> bool:
        with self._lock:
            return self._tenants.pop(_key(token_or_hash), None) is not None


class RedisTenants:
    """Tokens shared by every service process on one Redis (a hash ``{namespace}:tokens``)."""

    def __init__(self, url: str, *, namespace: str = "validator-service", timeout: float = 1.0) -> None:
        import redis

        self._redis = redis.Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=timeout, decode_responses=True
        )
        self._key = f"{namespace}:tokens"
        self._url = url

    def create(self, tenant: str) -> str:
        token = new_token()
        self._call(lambda: self._redis.hset(self._key, token_hash(token), check_tenant(tenant)))
        return token

    def tenant_of(self, token: str) -> str | None:
        found: Any = self._call(lambda: self._redis.hget(self._key, token_hash(token)))
        return str(found) if found else None

    def revoke(self, token_or_hash: str) -> bool:
        return bool(self._call(lambda: self._redis.hdel(self._key, _key(token_or_hash))))

    def _call(self, fn: Callable[[], T]) -> T:
        import redis

        try:
            return fn()
        except redis.RedisError as exc:
            raise StoreError(f"token store: {type(exc).__name__}: {redact_in(str(exc), self._url)}") from exc


def tenants_for(store_url: str) -> Tenants:
    """The token store that goes with the service's store: Redis beside Redis, else in memory."""
    if store_url.startswith(("redis://", "rediss://", "unix://")):
        return RedisTenants(store_url.split("?", 1)[0])
    return MemoryTenants()
