"""Shared state: standing authorizations, the audit log, verdict reuse, block-rate counters.

:func:`open_store` opens a store from a URL: ``memory://`` (the embedded default) or
``redis://host:port/db`` (``rediss://`` for TLS; ``?namespace=NAME`` prefixes the keys, default
``validator``; ``?retention_days=N`` keeps N days of audit records, default 30; ``?cluster=true`` for a
Redis Cluster, named by any of its nodes: every key of a namespace, so of a tenant, carries the namespace as
its hash tag and stays in one slot).
``VALIDATOR_STORE_URL`` is read when no URL is given. The store sits below every stage and imports
none of them; :func:`validator.stateful_validator` wires one into a :class:`~validator.Validator`.
"""

from __future__ import annotations

import os
import re
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from validator._types import STORE_URL_ENV
from validator.exceptions import StoreError, UsageError
from validator.extras import install_hint
from validator.store.base import (
    DEFAULT_NAMESPACE,
    AuditLog,
    AuthorizationStore,
    Counters,
    RequestLedger,
    Store,
    VerdictCache,
    redact_in,
    redacted,
)
from validator.store.memory import MemoryAuthorizationStore, MemoryStore

__all__ = [
    "RequestLedger",
    "AuditLog",
    "AuthorizationStore",
    "Counters",
    "MemoryAuthorizationStore",
    "MemoryStore",
    "Store",
    "VerdictCache",
    "check_tenant",
    "open_store",
    "tenant_url",
    "url_cluster",
    "url_namespace",
]

DEFAULT_URL = "memory://"
_TENANT = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")


def check_tenant(name: str) -> str:
    """``name`` if it is a valid tenant name (it becomes a store namespace); else :class:`UsageError`."""
    if not _TENANT.match(name):
        raise UsageError(
            f"tenant names are 1-63 of a-z, 0-9, '_' and '-', starting with a letter or digit; got {name!r}"
        )
    return name


def url_namespace(url: str) -> str:
    """The namespace a store URL names (``?namespace=NAME``; :data:`DEFAULT_NAMESPACE` when it names none).
    Named twice or empty, it is a :class:`StoreError`: the store, its tenants and its tokens must all read
    the same one."""
    given = [v for k, v in parse_qsl(url.partition("?")[2], keep_blank_values=True) if k == "namespace"]
    if len(given) > 1 or (given and not given[0]):
        raise StoreError(f"a store URL names one non-empty namespace; {redacted(url)!r} names {given!r}")
    return given[0] if given else DEFAULT_NAMESPACE


def url_cluster(url: str) -> bool:
    """Whether a store URL names a Redis Cluster (``?cluster=true``; ``false`` or absent: one Redis); any other
    value is a :class:`StoreError`."""
    given = [v.lower() for k, v in parse_qsl(url.partition("?")[2], keep_blank_values=True) if k == "cluster"]
    if len(given) > 1 or (given and given[0] not in ("true", "false")):
        raise StoreError(f"a store URL says cluster=true or cluster=false once; {redacted(url)!r} says {given!r}")
    return given == ["true"]


def tenant_url(url: str, tenant: str) -> str:
    """The store URL of one tenant of the decision service: the same server, the namespace
    ``NAMESPACE:TENANT`` under the one ``url`` names (:func:`url_namespace`), the other options kept: two
    services on one Redis under two namespaces share no tenant's data. The service opens each tenant's
    store so, and ``--tenant`` on the state commands reads the same one. (An operator namespace with a
    colon in it, ``acme:prod``, is what tenant ``prod`` of namespace ``acme`` reads: do not name one so.)"""
    check_tenant(tenant)
    if url.startswith("memory:"):
        return "memory://"
    namespace = url_namespace(url)
    base, _, query = url.partition("?")
    kept = [(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if k != "namespace"]
    return f"{base}?{urlencode([('namespace', f'{namespace}:{tenant}'), *kept], safe=':')}"


def open_store(url: str | None = None, **options: Any) -> Store:
    """The store at ``url`` (or ``$VALIDATOR_STORE_URL``, or ``memory://``)."""
    url = url or os.environ.get(STORE_URL_ENV) or DEFAULT_URL
    if url.startswith("memory:"):
        return MemoryStore()
    if url.startswith(("redis://", "rediss://", "unix://")):
        try:
            from validator.store.redis import RedisStore
        except ImportError:  # pragma: no cover - depends on the environment
            raise StoreError(f"a Redis store needs: {install_hint('redis')}") from None
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 - raises on a bad port
        except ValueError as exc:
            raise StoreError(f"bad store URL {redacted(url)!r}: {exc}") from None
        query = parse_qsl(parts.query, keep_blank_values=True)
        ours = {k: v for k, v in query if k in ("namespace", "retention_days", "cluster")}
        if "namespace" in ours:  # ?namespace=NAME prefixes every key
            options.setdefault("namespace", url_namespace(url))
        if "cluster" in ours:  # ?cluster=true: a Redis Cluster
            options.setdefault("cluster", url_cluster(url))
        if "retention_days" in ours:  # ?retention_days=N keeps N days of audit records
            try:
                options.setdefault("retention", timedelta(days=float(ours["retention_days"])))
            except (ValueError, OverflowError):
                raise StoreError(f"retention_days must be a number, got {ours['retention_days']!r}") from None
        if ours:  # ours, not redis-py's
            url = urlunsplit(parts._replace(query=urlencode([(k, v) for k, v in query if k not in ours])))
        try:
            return RedisStore(url, **options)
        except (ValueError, TypeError) as exc:
            raise StoreError(f"bad store URL {redacted(url)!r}: {redact_in(str(exc), url)}") from None
    raise StoreError(f"unknown store URL {redacted(url)!r}: use memory:// or redis://host:port/db")
