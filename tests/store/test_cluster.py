"""The store on a Redis Cluster of three primaries (made by the test): a tenant's keys share one slot, the checks of
persistence and eviction ask every primary, and a late script writes nothing there as on one Redis."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import redis

from tests.redis_server import a_late_append_writes_nothing
from validator.exceptions import SetupError
from validator.store import open_store, tenant_url
from validator.store.base import ReadAhead
from validator.store.records import StandingAuthorization
from validator.store.redis import RedisStore


def _every_key(cluster: Any, pattern: str) -> dict[str, int]:
    """Each key matching ``pattern`` on any primary, with the port of the node that holds it."""
    found: dict[str, int] = {}
    for node in cluster.nodes:
        client = redis.Redis(port=node.port, decode_responses=True)
        found |= dict.fromkeys(client.scan_iter(pattern, count=1000), node.port)
        client.close()
    return found


def test_every_key_of_a_tenant_carries_its_hash_tag_and_shares_one_slot(redis_cluster: Any) -> None:
    url = tenant_url(redis_cluster.url, "acme")
    store = open_store(url)
    assert isinstance(store, RedisStore) and store.cluster and store.ns == "validator:acme"
    now = datetime.now(UTC)
    try:
        check = store.session(ReadAhead(carry_spends=True, user_id="u-1", block_key="b", verdict_key="v"))
        assert check.spend("request-1", "send_money c1", timedelta(days=1)) is None
        assert check.append_audit("event-1", {"verdict": {"code": "APPROVED"}}, now)
        store.put(StandingAuthorization(id="auth-1", user_id="u-1", tool="send_email", quote="Always.", created=now))
        store.put_verdict("v", {"approved": True}, timedelta(minutes=5))
        store.add_block("b", timedelta(minutes=5))
        store.count_outcome("tool", "send_email", True, now)
        assert store.hold(100, 10_000, now, timedelta(hours=1)) is None
        keys = _every_key(redis_cluster, "{validator:acme}:*")
        assert len(keys) >= 8, keys  # audit, ids, spent, auth, the user's set, verdict, blocked, stats, held
        client = redis.Redis(port=redis_cluster.nodes[0].port, decode_responses=True)
        slots = {int(client.cluster("keyslot", key)) for key in keys}
        client.close()
        assert len(slots) == 1 and len(set(keys.values())) == 1, (slots, keys)  # one slot, one primary
        assert not _every_key(redis_cluster, "validator:acme:*")  # no key without the tag
        other = open_store(tenant_url(redis_cluster.url, "globex"))
        assert other.audit_length() == 0 and store.audit_length() == 1  # a tenant sees only its own
        other.close()
    finally:
        store.close()


async def _ahealth(store: RedisStore) -> dict[str, Any]:
    try:
        return await store.ahealth()
    finally:
        await store.aclose()


def test_persistence_and_eviction_are_checked_on_every_primary(redis_cluster: Any) -> None:
    store = open_store(tenant_url(redis_cluster.url, "checks"))
    assert isinstance(store, RedisStore)
    holder = redis_cluster.holder(store._key("audit"))
    other = next(n for n in redis_cluster.nodes if n is not holder)  # a primary the tenant's keys are not on
    client = redis.Redis(port=other.port, decode_responses=True)
    try:
        assert store.persistence() is True and store.eviction() == "noeviction" and store.health()["ok"]
        assert asyncio.run(_ahealth(store))["ok"] is True
        client.config_set("maxmemory-policy", "volatile-lru")
        assert store.eviction() == "volatile-lru" and store.health()["ok"] is False
        assert asyncio.run(_ahealth(store))["ok"] is False  # what /readyz reads
        from validator.integrations.service import ServiceConfig
        from validator.integrations.service.app import check_persistence

        with pytest.raises(SetupError, match="volatile-lru"):
            check_persistence(ServiceConfig(store_url=redis_cluster.url))
        client.config_set("maxmemory-policy", "noeviction")
        client.config_set("appendonly", "no")
        assert store.persistence() is False
        with pytest.raises(SetupError):
            check_persistence(ServiceConfig(store_url=redis_cluster.url))
    finally:
        client.config_set("appendonly", "yes")
        client.config_set("maxmemory-policy", "noeviction")
        client.close()
        store.close()
    assert store.persistence() is True


def test_a_late_script_on_the_primary_of_the_tenants_slot_writes_nothing(redis_cluster: Any) -> None:
    """As on one Redis: the primary that holds the tenant's slot frozen past the client's timeout while the script
    that records an approval and spends its request is queued: no record, no spent request."""
    store = RedisStore(redis_cluster.url.partition("?")[0], namespace="late-cluster", timeout=0.5, cluster=True)
    holder = redis_cluster.holder(store._key("audit"))
    try:
        assert holder.process is not None
        a_late_append_writes_nothing(store, holder.process.pid)
    finally:
        store.close()


def test_a_cluster_namespace_holds_no_brace_and_a_bad_cluster_flag_is_refused(redis_cluster: Any) -> None:
    from validator.exceptions import StoreError

    with pytest.raises(StoreError, match="no braces"):
        RedisStore(redis_cluster.url.partition("?")[0], namespace="a{b}", cluster=True)
    with pytest.raises(StoreError, match="cluster=true or cluster=false"):
        open_store(redis_cluster.url.replace("cluster=true", "cluster=yes"))
