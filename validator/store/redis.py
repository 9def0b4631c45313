"""The shared store on Redis (redis-py, sync and asyncio), for several agent workers.

Keys, all under a namespace (``validator`` by default):

==============================================  =================================================
``{ns}:auth:{id}``                              a standing authorization (JSON string)
``{ns}:auth:user:{user_id}``                    set of that user's authorization ids
``{ns}:audit``                                  the audit log (a stream; one entry per verdict)
``{ns}:audit:ids``                              sorted set of audit event ids (exactly-once appends)
``{ns}:verdict:{key}``                          a verdict kept for reuse (JSON string, with a TTL)
``{ns}:spent:{key}``                            the action that spent a user request (with a TTL)
``{ns}:blocked:{key}``                          how often one action was blocked in one conversation
``{ns}:stats:{scope}:{name}:{bucket}``          block-rate counters (hash ``total``, ``blocked``);
                                                minute buckets ``mYYYYmmddHHMM`` live 2 hours,
                                                hour buckets ``hYYYYmmddHH`` live 8 days
==============================================  =================================================

On a Redis Cluster (``cluster=True``; ``?cluster=true`` in the URL) every key carries the namespace as its
hash tag (``{validator:acme}:audit``): a tenant's keys share one slot, so the scripts that read and write
several of them (the append that spends, the listing) run on one primary; the persistence and eviction
checks ask every primary.

Appends to the audit log are idempotent: a Lua script adds the event id to ``{ns}:audit:ids`` and
the entry to the stream in one step, only when the id is new, and trims both to the retention. The
record of an approval that spends a user's request carries the spend (``{ns}:spent:{key}``) into the
same script: the request is spent exactly when the record is written, and a record that cannot be
written spends nothing (see :meth:`RedisStore.spend`).
Timeouts are short (one second) so an outage fails fast; every Redis error becomes
:class:`~validator.exceptions.StoreError`.
"""

from __future__ import annotations

import copy
import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from validator.extras import missing_extra

try:
    import redis
    import redis.asyncio
    import redis.asyncio.cluster
    import redis.cluster
except ImportError as exc:
    raise missing_extra("redis", "validator.store.redis", exc) from None

from validator.exceptions import StoreBusy, StoreError
from validator.store.base import (
    DEFAULT_NAMESPACE,
    Buckets,
    Entries,
    ReadAhead,
    SpendLost,
    Store,
    authorization_from_json,
    authorization_to_json,
    held_buckets,
    hour,
    minute,
    redact_in,
    redacted,
    revoke_in,
)
from validator.store.loops import PerLoop
from validator.store.records import StandingAuthorization

__all__ = ["RedisStore"]

_APPEND = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local deadline = tonumber(ARGV[4])
if deadline > 0 and now > deadline then return {2, deadline} end
local spends = (#ARGV - 4) / 2
local fresh = {}
for i = 1, spends do
  local held = redis.call('GET', KEYS[2 + i])
  if held and held ~= ARGV[3 + 2 * i] then return {0, held} end
  if not held then fresh[#fresh + 1] = KEYS[2 + i] end
end
for i = 1, spends do
  redis.call('SET', KEYS[2 + i], ARGV[3 + 2 * i], 'PX', ARGV[4 + 2 * i])
end
local added = redis.pcall('ZADD', KEYS[2], 'NX', now, ARGV[1])
if type(added) == 'table' and added.err then
  for _, key in ipairs(fresh) do redis.call('DEL', key) end
  return added
end
if added == 0 then return {1, 0} end
local entry = redis.pcall('XADD', KEYS[1], '*', 'event_id', ARGV[1], 'data', ARGV[2])
if type(entry) == 'table' and entry.err then
  redis.call('ZREM', KEYS[2], ARGV[1])
  for _, key in ipairs(fresh) do redis.call('DEL', key) end
  return entry
end
local oldest = now - tonumber(ARGV[3])
redis.call('XTRIM', KEYS[1], 'MINID', oldest)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. oldest)
return {1, 1}
"""
_SPEND = """
local held = redis.call('GET', KEYS[1])
if held and held ~= ARGV[1] then return held end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false
"""
_TIME = "return redis.call('TIME')"
_HOLD = """
local total = 0
for i = 1, #KEYS do total = total + (tonumber(redis.call('GET', KEYS[i])) or 0) end
if total + tonumber(ARGV[1]) > tonumber(ARGV[2]) then return total end
redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return -1
"""
log = logging.getLogger("validator.store.redis")
_LIST = """
local out = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  out[#out + 1] = id
  out[#out + 1] = redis.call('GET', ARGV[1] .. id) or ''
end
return out
"""
_LATE = 2
"""The append script's answer when it ran after its deadline: it wrote nothing."""
_REPLY_MARGIN_MS = 100
"""What the append's deadline keeps back from the socket timeout for the reply's way back to this process."""
MINUTE_TTL = 2 * 3600
HOUR_TTL = 8 * 24 * 3600

Queued = Callable[[Any], Any]
"""A write queued in a check's session: it adds its commands to a pipeline."""


@dataclass
class _Session:
    """One check's round trips: what was read ahead, and the writes nobody waits for."""

    reads: dict[str, Any]
    """Raw values by Redis key, or the exception the read ahead raised."""
    carry: bool = False
    """Whether the check's spends of the request ledger go with its audit append (:meth:`RedisStore.spend`)."""
    writes: list[tuple[str, Queued]] = field(default_factory=list)
    spends: list[tuple[str, str, int]] = field(default_factory=list)
    """``(key, action, ttl in ms)`` of each spend waiting for the record of the approval that makes it."""
    clock: tuple[int, float] | None = None
    """The server's clock read with the read-ahead (ms) and this process's monotonic clock then: the append's
    deadline is on the server's clock (:meth:`RedisStore.append_audit`)."""


ASYNC_CONNECTIONS = 64
"""Connections each event loop's client keeps to the server at most: a burst of requests waits for one of them
instead of opening a connection each (400 at once timed out connecting, and read as a store that is down)."""
POOL_WAIT = 10.0
"""Seconds a request waits for a pooled connection before the store is called busy (:class:`StoreBusy`)."""
HEALTH_CHECK_SECONDS = 5
"""A pooled connection idle this long is pinged before use (one left from before a server restart is replaced,
not failed on)."""


def client_options(timeout: float) -> dict[str, Any]:
    """The options of every client: short socket timeouts, and one retry of a command whose connection broke
    (a pooled connection the server closed in a restart), after reconnecting; never of a timeout (a hung
    server is answered for within the timeout, not twice it)."""
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    return {
        "socket_timeout": timeout,
        "socket_connect_timeout": timeout,
        "decode_responses": True,
        "retry_on_timeout": False,
        "retry": Retry(NoBackoff(), 1, supported_errors=(redis.exceptions.ConnectionError,)),
        "retry_on_error": [redis.exceptions.ConnectionError],
        "health_check_interval": HEALTH_CHECK_SECONDS,
    }


def sync_client(url: str, options: dict[str, Any], cluster: bool = False) -> Any:
    """The blocking client of one Redis, or of a Redis Cluster (redis-py's cluster client, which finds every
    node from the one the URL names and sends each command to the primary of its key's slot)."""
    if cluster:
        return redis.cluster.RedisCluster.from_url(url, **options)
    return redis.Redis.from_url(url, **options)


def async_client(url: str, options: dict[str, Any], cluster: bool = False) -> Any:
    """An event loop's client: at most :data:`ASYNC_CONNECTIONS` connections, each request waiting up to
    :data:`POOL_WAIT` for one, and the same one retry (the asyncio kind). On a cluster: at most as many
    connections to each node (redis-py's cluster client keeps no waiting pool: one over the bound is busy)."""
    from redis.asyncio.retry import Retry
    from redis.backoff import NoBackoff

    if cluster:
        kept = {k: v for k, v in options.items() if k not in ("retry_on_timeout", "retry_on_error", "retry")}
        retry = Retry(NoBackoff(), 1, supported_errors=(redis.exceptions.ConnectionError,))
        return redis.asyncio.cluster.RedisCluster.from_url(url, max_connections=ASYNC_CONNECTIONS, retry=retry, **kept)
    pool = redis.asyncio.BlockingConnectionPool.from_url(
        url,
        max_connections=ASYNC_CONNECTIONS,
        timeout=POOL_WAIT,
        **{**options, "retry": Retry(NoBackoff(), 1, supported_errors=(redis.exceptions.ConnectionError,))},
    )
    return redis.asyncio.Redis.from_pool(pool)  # it owns the pool: closing the client closes its connections


def busy(exc: BaseException) -> bool:
    """Whether a failure says every pooled connection stayed in use (busy), not that the server failed."""
    if isinstance(exc, redis.exceptions.MaxConnectionsError):  # a cluster node's bound reached
        return True
    return isinstance(exc, redis.exceptions.ConnectionError) and "No connection available" in str(exc)


class RedisStore(Store):
    """The :class:`~validator.store.base.Store` on a Redis server; see the module docstring."""

    reads_ahead = True

    def __init__(
        self,
        url: str = "redis://127.0.0.1:6379/0",
        *,
        namespace: str = DEFAULT_NAMESPACE,
        retention: timedelta = timedelta(days=30),
        timeout: float = 1.0,
        cluster: bool = False,
    ) -> None:
        if not timedelta(minutes=1) <= retention <= timedelta(days=36_500):
            raise StoreError(f"audit retention must be between a minute and 100 years, got {retention}")
        if cluster and ("{" in namespace or "}" in namespace):
            raise StoreError(f"on a cluster the namespace is the keys' hash tag: no braces in it, got {namespace!r}")
        self.url = url
        self.ns = namespace
        self.cluster = cluster
        self.retention = retention
        self._timeout = timeout
        options = client_options(timeout)
        self._options = options
        try:
            self._redis = sync_client(url, options, cluster)
        except (ValueError, redis.RedisError) as exc:
            raise StoreError(f"bad store URL {redacted(url)!r}: {redact_in(str(exc), url)}") from None
        self._async_clients: PerLoop[Any] = PerLoop(lambda: async_client(url, options, cluster))
        self._append = self._redis.register_script(_APPEND)
        self._list = self._redis.register_script(_LIST)
        self._loaded: set[str] = set()
        self._spend = self._redis.register_script(_SPEND)
        self._hold = self._redis.register_script(_HOLD)
        self._time = self._redis.register_script(_TIME)
        self._current: _Session | None = None
        """One check's session, on the store :meth:`session` returned for it (None on the store itself)."""

    @property
    def identity(self) -> str:
        """The server (without credentials), the database and the namespace."""
        parts = urlsplit(self.url)
        host = parts.hostname or parts.path
        return f"redis://{host}:{parts.port or 6379}{parts.path if parts.hostname else ''}#{self.ns}"

    def _aclient(self) -> Any:
        return self._async_clients.get()

    async def aclose(self) -> None:
        """Close this event loop's async connections (call it before the loop ends)."""
        client = self._async_clients.pop()
        if client is not None:
            await client.aclose()

    def _key(self, *parts: str) -> str:
        if self.cluster:  # the namespace is the hash tag: every key of it in one slot
            return ":".join(("{" + self.ns + "}", *parts))
        return ":".join((self.ns, *parts))

    def _fail(self, what: str, exc: Exception) -> StoreError:
        kind = StoreBusy if busy(exc) else StoreError
        return kind(
            f"redis {what} failed ({redacted(self.url)}): {type(exc).__name__}: {redact_in(str(exc), self.url)}"
        )

    # -- one check, two round trips ------------------------------------------------------------

    def session(self, reads: ReadAhead) -> RedisStore:
        """This store for one check, whose traffic then takes two round trips: everything the check will read,
        read ahead in one pipeline now; the writes it does not wait for (block count, kept verdict), queued
        and sent with its audit append (or by :meth:`end_session`).

        The check uses the returned store (it shares this one's connections) and nothing else sees its
        session. A read-ahead that fails is not an error here: each read then fails (or is retried) on its
        own, as without a session. Queued writes that fail are logged, as they are without one.
        """
        keys = [self._key("auth", a) for a in reads.auth_ids]
        keys += [self._key("blocked", reads.block_key)] if reads.block_key else []
        keys += [self._key("verdict", reads.verdict_key)] if reads.verdict_key else []
        read: dict[str, Any] = {}
        clock: tuple[int, float] | None = None
        listed = self._key("auth", "user", reads.user_id) if reads.user_id is not None else None
        timed = reads.carry_spends  # the check's record goes through it: its deadline is on the server's clock
        try:
            pipe = self._redis.pipeline(transaction=False)
            if timed:
                self._clock(pipe)
            for key in keys:  # one GET each: a cluster's pipeline takes no MGET (the same one round trip)
                pipe.get(key)
            if listed:
                self._ensure_loaded(self._list)
                pipe.evalsha(self._list.sha, 1, listed, self._key("auth", ""))
            results = pipe.execute(raise_on_error=False) if timed or keys or listed else []
            now = results.pop(0) if timed else None
            if now is not None and not isinstance(now, Exception):
                clock = (int(now[0]) * 1000 + int(now[1]) // 1000, time.monotonic())
            read = dict(zip(keys, results[: len(keys)], strict=True))
            del results[: len(keys)]
            if listed and not isinstance(results[0], Exception):
                read[listed] = results[0]
        except redis.RedisError as exc:
            read = dict.fromkeys(keys, exc)
        view = copy.copy(self)
        view._current = _Session(read, carry=reads.carry_spends, clock=clock)
        return view

    def _clock(self, pipe: Any) -> None:
        """Queue a read of the server's clock: on a cluster, of the primary that holds the namespace's slot (a
        script keyed by it), the one that runs the append whose deadline it sets."""
        if self.cluster:
            self._ensure_loaded(self._time)
            pipe.evalsha(self._time.sha, 1, self._key("clock"))
        else:
            pipe.time()

    def end_session(self) -> None:
        """Send the writes this check's session still holds (none outside a session)."""
        self.drop_spends()  # a spend no record took is not made: that verdict was not recorded
        session = self._current
        if session is not None and session.writes:
            writes, session.writes = session.writes, []
            self._send(writes)

    def carries_spends(self) -> bool:
        return self._current is not None and bool(self._current.spends)

    def drop_spends(self) -> None:
        if self._current is not None:
            self._current.spends = []

    def _ahead(self, key: str, what: str) -> tuple[bool, Any]:
        """``(True, value)`` when the session read ``key`` ahead (once: a later read goes out)."""
        session = self._current
        if session is None or key not in session.reads:
            return False, None
        raw = session.reads.pop(key)
        if isinstance(raw, Exception):
            raise self._fail(what, raw) from raw
        return True, raw

    def _get(self, key: str, what: str) -> Any:
        """``GET key``, answered from the session's read-ahead when it has it (once: a later read goes out)."""
        found, raw = self._ahead(key, what)
        if found:
            return raw
        try:
            return self._redis.get(key)
        except redis.RedisError as exc:
            raise self._fail(what, exc) from exc

    def _write(self, what: str, queued: Queued) -> None:
        """Run a write nobody waits for: queued in a session, else at once."""
        session = self._current
        if session is not None:
            session.writes.append((what, queued))
            return
        pipe = self._redis.pipeline(transaction=True)
        queued(pipe)
        pipe.execute()

    def _send(self, writes: list[tuple[str, Queued]], last: Queued | None = None) -> Any:
        """The queued writes (and ``last``) in one pipeline; ``last``'s result is returned or raised."""
        pipe = self._redis.pipeline(transaction=False)
        counts = []
        for _, queued in writes:
            before = len(pipe.command_stack)
            queued(pipe)
            counts.append(len(pipe.command_stack) - before)
        if last is not None:
            last(pipe)
        try:
            results = pipe.execute(raise_on_error=False)
        except redis.RedisError as exc:
            for what, _ in writes:
                log.warning("%s", self._fail(what, exc))
            if last is not None:
                raise
            return None
        start = 0
        for (what, _), n in zip(writes, counts, strict=True):
            failed = [r for r in results[start : start + n] if isinstance(r, Exception)]
            if failed:
                log.warning("%s", self._fail(what, failed[0]))
            start += n
        if last is None:
            return None
        result = results[-1]
        if isinstance(result, Exception):
            raise result
        return result

    # -- standing authorizations --------------------------------------------------------------

    def get(self, auth_id: str) -> StandingAuthorization | None:
        key = self._key("auth", auth_id)
        raw = self._get(key, "read of a standing authorization")
        return None if raw is None else authorization_from_json(str(raw), key, auth_id)

    async def aget(self, auth_id: str) -> StandingAuthorization | None:
        key = self._key("auth", auth_id)
        found, raw = self._ahead(key, "read of a standing authorization")
        try:
            raw = raw if found else await self._aclient().get(key)
        except redis.RedisError as exc:
            raise self._fail("read of a standing authorization", exc) from exc
        return None if raw is None else authorization_from_json(str(raw), key, auth_id)

    def put(self, auth: StandingAuthorization) -> None:
        try:
            pipe = self._redis.pipeline(transaction=True)
            pipe.set(self._key("auth", auth.id), authorization_to_json(auth))
            pipe.sadd(self._key("auth", "user", auth.user_id), auth.id)
            pipe.execute()
        except redis.RedisError as exc:
            raise self._fail("write of a standing authorization", exc) from exc

    def list(self, user_id: str) -> list[StandingAuthorization]:
        """The user's standing authorizations, in one round trip (a script: the user's ids, then each record)."""
        listed = self._key("auth", "user", user_id)
        ahead, flat = self._ahead(listed, "listing of standing authorizations")
        if not ahead:
            try:
                flat = self._list(keys=[listed], args=[self._key("auth", "")])
            except redis.RedisError as exc:
                raise self._fail("listing of standing authorizations", exc) from exc
        pairs = sorted(zip(flat[::2], flat[1::2], strict=True))
        found = [authorization_from_json(str(raw), self._key("auth", i), str(i)) for i, raw in pairs if raw]
        return sorted((a for a in found if a.user_id == user_id), key=lambda a: a.created)

    def revoke(self, auth_id: str, when: datetime) -> StandingAuthorization:
        return revoke_in(self, auth_id, when)

    # -- the audit log ----------------------------------------------------------------------

    def append_audit(self, event_id: str, payload: Mapping[str, Any], at: datetime) -> bool:
        # The stream's ids and the id set are both on the server's clock and trimmed exactly to the
        # retention, so they always agree: an id is remembered exactly as long as its entry is kept.
        keys = [self._key("audit"), self._key("audit", "ids")]
        session = self._current
        args: list[str | int] = [
            event_id,
            json.dumps(payload, ensure_ascii=True),
            int(self.retention.total_seconds() * 1000),
            self._deadline(session),
        ]
        spends: list[tuple[str, str, int]] = []
        if session is not None:
            spends, session.spends = session.spends, []
        for name, action, px in spends:
            keys.append(name)
            args += [action, px]
        try:
            if session is None or not session.writes:
                result = self._append(keys=keys, args=args)
            else:
                writes, session.writes = session.writes, []
                self._ensure_loaded(self._append)
                try:  # the check's queued writes and the append: one round trip
                    result = self._send(writes, lambda pipe: pipe.evalsha(self._append.sha, len(keys), *keys, *args))
                except redis.exceptions.NoScriptError:  # the server lost its scripts (a restart): once more, loading it
                    result = self._append(keys=keys, args=args)
        except redis.RedisError as exc:
            failed = self._fail("audit append", exc)
            if spends:  # not a StoreError: a record that carries a spend is never spooled
                raise SpendLost(None, str(failed)) from exc
            raise failed from exc
        made, value = result
        if made == _LATE:  # this process stopped waiting for it: a record (and spend) it was not told of is none
            late = StoreError(f"redis audit append ran after its deadline ({redacted(self.url)}): nothing was written")
            if spends:
                raise SpendLost(None, str(late))
            raise late
        if not made:
            raise SpendLost(str(value))
        return bool(value)

    def _deadline(self, session: _Session | None) -> int:
        """The server time (ms) after which the append must write nothing: when this process stops waiting for
        its answer (the socket timeout after sending, less a margin for the reply's way back), on the server's
        clock read with the check's read-ahead; 0 (none) where the record does not go through a check's session."""
        if session is None or session.clock is None:
            return 0
        server, local = session.clock
        elapsed = (time.monotonic() - local) * 1000
        return int(server + elapsed + self._timeout * 1000 - _REPLY_MARGIN_MS)

    def _ensure_loaded(self, script: Any) -> None:
        if script.sha not in self._loaded:
            self._redis.script_load(script.script)
            self._loaded.add(script.sha)

    def _entries(self, rows: Any) -> Entries:
        out: list[tuple[str, dict[str, Any]]] = []
        for entry_id, fields in rows:
            try:
                data = json.loads(fields["data"])
            except (KeyError, ValueError) as exc:
                raise StoreError(f"audit entry {entry_id} is corrupt: {exc}") from None
            if not isinstance(data, dict):
                raise StoreError(f"audit entry {entry_id} is corrupt: its data is {type(data).__name__}, not an object")
            out.append((str(entry_id), {"event_id": fields.get("event_id"), **data}))
        return out

    def audit_after(self, after: str | None, count: int) -> Entries:
        try:
            rows = self._redis.xrange(self._key("audit"), min=f"({after}" if after else "-", count=count)
        except redis.RedisError as exc:
            raise self._fail("audit read", exc) from exc
        return self._entries(rows)

    def audit_tail(self, count: int) -> Entries:
        try:
            rows = self._redis.xrevrange(self._key("audit"), count=count)
        except redis.RedisError as exc:
            raise self._fail("audit read", exc) from exc
        return list(reversed(self._entries(rows)))

    def audit_get(self, entry_id: str) -> dict[str, Any] | None:
        try:
            rows = self._redis.xrange(self._key("audit"), min=entry_id, max=entry_id, count=1)
        except redis.RedisError as exc:
            raise self._fail("audit read", exc) from exc
        entries = self._entries(rows)
        return entries[0][1] if entries else None

    def audit_length(self) -> int:
        try:
            return int(self._redis.xlen(self._key("audit")))
        except redis.RedisError as exc:
            raise self._fail("audit length", exc) from exc

    # -- verdicts kept for reuse -------------------------------------------------------------

    def get_verdict(self, key: str) -> dict[str, Any] | None:
        return _verdict(self._get(self._key("verdict", key), "verdict read"), key)

    def put_verdict(self, key: str, verdict: Mapping[str, Any], ttl: timedelta) -> None:
        data, px = json.dumps(verdict, ensure_ascii=True), int(ttl.total_seconds() * 1000)
        try:
            self._write("verdict write", lambda pipe: pipe.set(self._key("verdict", key), data, px=px))
        except redis.RedisError as exc:
            raise self._fail("verdict write", exc) from exc

    async def aget_verdict(self, key: str) -> dict[str, Any] | None:
        found, raw = self._ahead(self._key("verdict", key), "verdict read")
        try:
            raw = raw if found else await self._aclient().get(self._key("verdict", key))
        except redis.RedisError as exc:
            raise self._fail("verdict read", exc) from exc
        return _verdict(raw, key)

    async def aput_verdict(self, key: str, verdict: Mapping[str, Any], ttl: timedelta) -> None:
        if self._current is not None:  # queued in the session: no I/O now
            self.put_verdict(key, verdict, ttl)
            return
        try:
            await self._aclient().set(
                self._key("verdict", key), json.dumps(verdict, ensure_ascii=True), px=int(ttl.total_seconds() * 1000)
            )
        except redis.RedisError as exc:
            raise self._fail("verdict write", exc) from exc

    # -- one request, one action ------------------------------------------------------------

    def spend(self, key: str, action: str, ttl: timedelta) -> str | None:
        """Spend request ``key`` for ``action`` (see the protocol). In a session that carries spends (the check's
        record is appended through it: :attr:`ReadAhead.carry_spends`) the request is only read now: when
        another action holds it, that one is named; else the spend waits for the check's audit append and is
        made in the same script, or not at all (:class:`~validator.store.base.SpendLost`)."""
        name, px = self._key("spent", key), int(ttl.total_seconds() * 1000)
        session = self._current
        if session is not None and session.carry:  # a refusal it leads to drops the spends (only approvals spend)
            held = self._get(name, "request ledger")
            if held is not None and str(held) != action:
                return str(held)
            session.spends.append((name, action, px))
            return None
        try:
            held = self._spend(keys=[name], args=[action, px])
        except redis.RedisError as exc:
            raise self._fail("request ledger", exc) from exc
        return None if held is None else str(held)

    def add_block(self, key: str, ttl: timedelta) -> None:
        name, px = self._key("blocked", key), int(ttl.total_seconds() * 1000)

        def queued(pipe: Any) -> None:
            pipe.incr(name)
            pipe.pexpire(name, px)

        try:
            self._write("block counter", queued)
        except redis.RedisError as exc:
            raise self._fail("block counter", exc) from exc

    def blocks(self, key: str) -> int:
        return int(self._get(self._key("blocked", key), "block counter") or 0)

    # -- block-rate counters -----------------------------------------------------------------

    def count_outcome(self, scope: str, name: str, blocked: bool, at: datetime) -> None:
        try:
            pipe = self._redis.pipeline(transaction=False)
            for bucket, ttl in ((minute(at), MINUTE_TTL), (hour(at), HOUR_TTL)):
                key = self._key("stats", scope, name, bucket)
                pipe.hincrby(key, "total", 1)
                if blocked:
                    pipe.hincrby(key, "blocked", 1)
                pipe.expire(key, ttl)
            pipe.execute()
        except redis.RedisError as exc:
            raise self._fail("counter update", exc) from exc

    def outcome_counts(self, scope: str, name: str, buckets: Buckets) -> tuple[int, int]:
        try:
            pipe = self._redis.pipeline(transaction=False)
            for bucket in buckets:
                pipe.hmget(self._key("stats", scope, name, bucket), ["total", "blocked"])
            rows = pipe.execute()
        except redis.RedisError as exc:
            raise self._fail("counter read", exc) from exc
        return sum(int(r[0] or 0) for r in rows), sum(int(r[1] or 0) for r in rows)

    def hold(self, size: int, quota: int, at: datetime, ttl: timedelta) -> int | None:
        keys = [self._key("held", b) for b in held_buckets(at, ttl)]
        seconds = int(ttl.total_seconds()) + 7200
        try:
            held = self._hold(keys=keys, args=[size, quota, seconds])
        except redis.RedisError as exc:
            raise self._fail("question quota", exc) from exc
        return None if int(held) < 0 else int(held)

    # -- the connection ------------------------------------------------------------------------

    def persistence(self) -> bool | None:
        """Whether the server keeps what it is told across a restart (an append-only file, or RDB snapshots);
        None when it cannot say (``CONFIG`` renamed by a managed Redis, and no AOF in ``INFO``). On a cluster,
        every primary must (False when one does not).

        Raises:
            StoreError: the server cannot be reached.
        """
        found: list[bool | None] = []
        try:
            for node in self._primaries():
                try:
                    config = self._on(node, "config_get", "appendonly") | self._on(node, "config_get", "save")
                except redis.ResponseError:  # CONFIG disabled or renamed
                    info = self._on(node, "info", "persistence")
                    found.append(True if str(info.get("aof_enabled")) == "1" else None)
                    continue
                found.append(str(config.get("appendonly")) == "yes" or bool(str(config.get("save") or "").strip()))
        except redis.RedisError as exc:
            raise self._fail("persistence check", exc) from exc
        return False if False in found else None if None in found else True

    def eviction(self) -> str | None:
        """The server's ``maxmemory-policy`` (``noeviction`` keeps every key; any other may drop a spent request,
        and the same payment is then approved again); None when it cannot say (``CONFIG`` renamed, and no
        policy in ``INFO memory``). On a cluster, the first primary's policy that is not ``noeviction``, else
        the one they share.

        Raises:
            StoreError: the server cannot be reached.
        """
        found: list[str | None] = []
        try:
            for node in self._primaries():
                try:
                    policy = self._on(node, "config_get", "maxmemory-policy").get("maxmemory-policy")
                except redis.ResponseError:  # CONFIG disabled or renamed
                    policy = self._on(node, "info", "memory").get("maxmemory_policy")
                found.append(str(policy) if policy else None)
        except redis.RedisError as exc:
            raise self._fail("eviction check", exc) from exc
        return _shared_policy(found)

    def _primaries(self) -> tuple[Any, ...]:
        """The nodes a check asks: every primary of a cluster, else the one server (None)."""
        return tuple(self._redis.get_primaries()) if self.cluster else (None,)

    def _on(self, node: Any, command: str, *args: Any) -> Any:
        """``command`` on ``node`` (a cluster's primary), or on the one server."""
        if node is None:
            return getattr(self._redis, command)(*args)
        return getattr(self._redis, command)(*args, target_nodes=node)

    def health(self) -> dict[str, Any]:
        try:
            self._redis.ping()
            info = {**self._redis.info("server"), **self._redis.info("memory")}
            length = self.audit_length()
            if self.cluster:  # every primary's policy, not one node's
                info["maxmemory_policy"] = self.eviction() or info.get("maxmemory_policy")
        except (redis.RedisError, StoreError) as exc:
            return self._health(exc)
        return self._health(info, length)

    async def ahealth(self) -> dict[str, Any]:
        client = self._aclient()
        try:
            await client.ping()
            info = {**await client.info("server"), **await client.info("memory")}
            length = int(await client.xlen(self._key("audit")))
            if self.cluster:  # every primary's policy, not one node's (as the sync health reads it)
                try:
                    policies = await client.config_get("maxmemory-policy", target_nodes=client.PRIMARIES)
                except redis.ResponseError:  # CONFIG disabled or renamed: the node's INFO says what it can
                    policies = {}
                shared = _shared_policy([str(p) if p else None for p in _policies(policies)])
                info["maxmemory_policy"] = shared or info.get("maxmemory_policy")
        except redis.RedisError as exc:
            return self._health(exc)
        return self._health(info, length)

    def _health(self, info: Mapping[str, Any] | Exception, length: int = 0) -> dict[str, Any]:
        shown = {"store": "redis", "url": redacted(self.url)}
        if isinstance(info, Exception):
            return {"ok": False, **shown, "error": redact_in(str(info), self.url)}
        policy = info.get("maxmemory_policy")
        health = {"ok": True, **shown, "redis_version": info.get("redis_version"), "audit_records": length}
        if policy is not None and policy != NO_EVICTION:  # a ledger it may drop: nothing is ready on it
            return {**health, "ok": False, "error": f"maxmemory-policy is {policy}, not {NO_EVICTION}"}
        return health

    def close(self) -> None:
        self._redis.close()


NO_EVICTION = "noeviction"
"""The one ``maxmemory-policy`` under which Redis never drops a key to make room (a spent request stays spent)."""


def _shared_policy(found: list[str | None]) -> str | None:
    """The eviction policy of several primaries: the first that is not ``noeviction``, else ``noeviction`` when
    every one said so, else None (one could not say)."""
    other = [p for p in found if p is not None and p != NO_EVICTION]
    return other[0] if other else None if None in found or not found else NO_EVICTION


def _policies(answers: Any) -> list[Any]:
    """Each node's ``maxmemory-policy`` from a cluster client's ``CONFIG GET`` (one answer, or one per node)."""
    if isinstance(answers, dict) and "maxmemory-policy" in answers:
        return [answers["maxmemory-policy"]]
    if isinstance(answers, dict):
        return [a.get("maxmemory-policy") for a in answers.values() if isinstance(a, dict)]
    return []


def _verdict(raw: Any, key: str) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise StoreError(f"stored verdict {key} is corrupt: {exc}") from None
    if not isinstance(data, dict):
        raise StoreError(f"stored verdict {key} is corrupt: not an object")
    return data
