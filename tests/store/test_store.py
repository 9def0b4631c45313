"""The store seam on both implementations, the Redis one against a real redis-server."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import generate_latest

from tests.conftest import POLICY
from validator import (
    Code,
    Decision,
    MemoryRecorder,
    Policy,
    StandingAuthorization,
    StoreError,
    ToolPolicy,
    Validator,
    ValidatorConfig,
    stateful_validator,
)
from validator.record.monitor import Alert, BlockRateMonitor, binomial_z
from validator.state.reuse import VerdictReuse
from validator.store import MemoryStore, Store, open_store
from validator.store.base import ReadAhead
from validator.testing import ScriptedJudge

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
USER = "Please email bob@acme.example the minutes."
MESSAGES = [{"role": "user", "content": USER}]
ACTION = {
    "tool": "send_email",
    "args": {"to": "bob@acme.example"},
    "justification": {"reason": "asked", "evidence": [{"quote": "email bob@acme.example the minutes"}]},
}
OK = {"approved": True, "reasoning": "the user asked", "confidence": "high"}


@pytest.fixture(params=["memory", "redis", "redis-cluster"])
def store(request: pytest.FixtureRequest) -> Any:
    if request.param == "memory":
        return MemoryStore()
    return request.getfixturevalue("redis_store" if request.param == "redis" else "redis_cluster_store")


def _arun(store: Any, coro: Any) -> Any:
    """Run ``coro`` in a fresh loop and close the store's connections of that loop before it ends."""

    async def main() -> Any:
        try:
            return await coro
        finally:
            await store.aclose()

    return asyncio.run(main())


def _auth(**kw: Any) -> StandingAuthorization:
    fields: dict[str, Any] = dict(
        id="auth_1",
        user_id="u-1",
        tool="send_email",
        where={"to": "*@acme.example"},
        quote="You may always email acme people the minutes.",
        created=NOW - timedelta(days=3),
        expires=None,
    )
    fields.update(kw)
    return StandingAuthorization(**fields)


def test_authorizations_round_trip_and_revoke(store: Any) -> None:
    store.put(_auth())
    store.put(_auth(id="auth_2", created=NOW))
    store.put(_auth(id="auth_3", user_id="u-2"))
    assert store.get("auth_1") == _auth()
    assert store.get("missing") is None
    assert [a.id for a in store.list("u-1")] == ["auth_1", "auth_2"]
    revoked = store.revoke("auth_1", NOW)
    assert revoked.revoked == NOW and store.get("auth_1").revoked == NOW
    with pytest.raises(StoreError, match="no standing authorization 'nope'"):
        store.revoke("nope", NOW)
    assert _arun(store, store.aget("auth_2")) == _auth(id="auth_2", created=NOW)


def test_corrupt_records_are_typed_errors_and_never_authorize(redis_store: Any) -> None:
    redis_store._redis.set(f"{redis_store.ns}:auth:auth_bad", "{not json")
    redis_store._redis.set(
        f"{redis_store.ns}:auth:auth_types", json.dumps({**_auth(id="auth_types").to_dict(), "where": ["to"]})
    )
    for auth_id in ("auth_bad", "auth_types"):
        with pytest.raises(StoreError, match=f"stored record {redis_store.ns}:auth:{auth_id} is corrupt"):
            redis_store.get(auth_id)
        action = {**ACTION, "justification": {"reason": "standing", "evidence": [{"authorization_id": auth_id}]}}
        v = Validator(POLICY, authorizations=redis_store).validate(MESSAGES, action, user_id="u-1")
        assert (v.approved, v.code) == (False, Code.AUTHORIZATION_UNAVAILABLE) and "corrupt" in v.reasoning


def test_revocation_reaches_every_worker_at_once(redis_url: str, redis_store: Any) -> None:
    from validator.store.redis import RedisStore

    other = RedisStore(redis_url, namespace=redis_store.ns)  # a second worker on the same store
    redis_store.put(_auth())
    action = {**ACTION, "justification": {"reason": "standing", "evidence": [{"authorization_id": "auth_1"}]}}
    worker = Validator(POLICY, authorizations=other)
    assert worker.validate(MESSAGES, action, user_id="u-1").approved
    redis_store.revoke("auth_1", datetime.now(UTC) - timedelta(seconds=1))
    v = worker.validate(MESSAGES, action, user_id="u-1")
    assert v.code == Code.AUTHORIZATION_REVOKED
    other.close()


def test_audit_appends_are_idempotent_ordered_and_paged(store: Any) -> None:
    for i in range(5):
        assert store.append_audit(f"e{i}", {"n": i, "time": NOW.isoformat()}, NOW + timedelta(seconds=i))
    assert store.append_audit("e2", {"n": 2}, NOW) is False  # a replay never duplicates
    assert store.audit_length() == 5
    first = store.audit_after(None, 2)
    assert [p["n"] for _, p in first] == [0, 1]
    rest = store.audit_after(first[-1][0], 10)
    assert [p["n"] for _, p in rest] == [2, 3, 4]
    assert [p["event_id"] for _, p in store.audit_tail(2)] == ["e3", "e4"]
    entry_id, payload = store.audit_tail(1)[0]
    assert store.audit_get(entry_id) == payload


def test_redis_audit_retention_trims_stream_and_ids_together(redis_url: str) -> None:
    import uuid

    from validator.store.redis import RedisStore

    store = RedisStore(redis_url, namespace=f"test-{uuid.uuid4().hex[:8]}", retention=timedelta(days=1))
    stream, ids = f"{store.ns}:audit", f"{store.ns}:audit:ids"
    seconds, micros = store._redis.time()  # the stream's ids are on the server's clock, whatever the client's says
    old_ms = (seconds - 3 * 86400) * 1000 + micros // 1000
    store._redis.xadd(stream, {"event_id": "old", "data": "{}"}, id=f"{old_ms}-0")  # written three days ago
    store._redis.zadd(ids, {"old": old_ms})
    assert store.append_audit("new", {"n": 1}, datetime.now(UTC))
    assert [p["event_id"] for _, p in store.audit_after(None, 10)] == ["new"]
    assert store._redis.zscore(ids, "old") is None and store._redis.zscore(ids, "new") is not None
    assert store.append_audit("new", {"n": 1}, datetime.now(UTC)) is False  # still remembered: no duplicate
    with pytest.raises(StoreError, match="retention must be between"):
        RedisStore(redis_url, retention=timedelta(days=-1))
    store._redis.delete(stream, ids)


# --- verdict reuse ------------------------------------------------------------------------


def _reusing(store: Any, judge: Any, policy: Policy = POLICY) -> Validator:
    return Validator(policy, judge=judge, authorizations=store, reuse=VerdictReuse(store, timedelta(minutes=5)))


def test_the_same_action_is_judged_once_and_says_so(store: Any) -> None:
    judge = ScriptedJudge([OK])
    v = _reusing(store, judge)
    first = v.validate(MESSAGES, ACTION, user_id="u-1")
    again = v.validate(MESSAGES, ACTION, user_id="u-1")
    assert first.approved and not first.reused
    assert again.approved and again.reused and again.usage is None
    assert len(judge.calls) == 1
    asy = _arun(store, v.avalidate(MESSAGES, ACTION, user_id="u-1"))
    assert asy.reused and len(judge.calls) == 1


def test_reuse_never_crosses_users_policies_or_failures(store: Any) -> None:
    judge = ScriptedJudge([OK, OK, RuntimeError("x"), RuntimeError("y"), OK])
    v = _reusing(store, judge)
    v.validate(MESSAGES, ACTION, user_id="u-1")
    assert not v.validate(MESSAGES, ACTION, user_id="u-2").reused  # another user: judged again
    stricter = Policy({**POLICY.tools, "send_email": ToolPolicy(targets=("to",), intents=("email", "mail"))})
    failed = _reusing(store, judge, stricter).validate(MESSAGES, ACTION, user_id="u-1")  # another policy version
    assert failed.code == Code.JUDGE_UNAVAILABLE
    retried = _reusing(store, judge, stricter).validate(MESSAGES, ACTION, user_id="u-1")
    assert retried.approved and not retried.reused  # a failure is never reused
    judge.assert_complete()


def test_reuse_never_crosses_the_model_that_judged(store: Any) -> None:
    judge = ScriptedJudge([OK, OK])
    v = _reusing(store, judge)
    sonnet = {"model": "claude-sonnet-4-6", "max_tokens": 10, "messages": MESSAGES}
    v.validate(MESSAGES, ACTION, user_id="u-1", agent_request=sonnet)
    other = v.validate(MESSAGES, ACTION, user_id="u-1", agent_request={**sonnet, "model": "claude-haiku-4-5"})
    assert not other.reused  # a judge with no model of its own judges with the agent's
    assert v.validate(MESSAGES, ACTION, user_id="u-1", agent_request=sonnet).reused
    judge.assert_complete()


def test_reuse_never_skips_the_gate(store: Any) -> None:
    judge = ScriptedJudge([OK])
    store.put(_auth())
    action = {**ACTION, "justification": {"reason": "standing", "evidence": [{"authorization_id": "auth_1"}]}}
    v = _reusing(store, judge)
    assert v.validate(MESSAGES, action, user_id="u-1").approved
    store.revoke("auth_1", datetime.now(UTC) - timedelta(seconds=1))
    assert v.validate(MESSAGES, action, user_id="u-1").code == Code.AUTHORIZATION_REVOKED


# --- the monitor --------------------------------------------------------------------------


def test_binomial_z() -> None:
    assert binomial_z(50, 40, 1000, 100) > 10
    assert abs(binomial_z(50, 5, 1000, 100)) < 1
    assert binomial_z(50, 0, 1000, 500) < -5


def test_monitor_alerts_on_a_sudden_block_rate_and_exports_metrics(store: Any) -> None:
    clock = [NOW - timedelta(hours=5)]
    alerts: list[Alert] = []
    monitor = BlockRateMonitor(store, on_alert=alerts.append, clock=lambda: clock[0], min_history=50)
    config = __import__("validator").ValidatorConfig(clock=lambda: clock[0], retry_cap=None)  # one turn, 230 checks
    v = Validator(POLICY, recorder=monitor, config=config)
    blocked = {**ACTION, "justification": {"reason": "r", "evidence": [{"quote": "not said"}]}}
    for i in range(200):  # a quiet history: 5% blocked
        clock[0] = NOW - timedelta(hours=5) + timedelta(minutes=i)
        v.validate(MESSAGES, blocked if i % 20 == 0 else ACTION, user_id="u-1")
    assert alerts == []
    for i in range(30):  # then a burst of blocks
        clock[0] = NOW + timedelta(seconds=i)
        v.validate(MESSAGES, blocked, user_id="u-1")
    scopes = {(a.scope, a.name) for a in alerts}
    assert scopes == {("tool", "send_email"), ("user", "u-1")}
    alert = next(a for a in alerts if a.scope == "tool")
    assert alert.z > 4 and alert.window_rate > 0.5 and "rose" in str(alert)
    text = generate_latest(monitor.registry).decode()
    assert 'validator_verdicts_total{code="EVIDENCE_NOT_FOUND",decision="block",tool="send_email"}' in text
    assert 'validator_alerts_total{scope="tool"} 1.0' in text


def test_a_broken_monitor_never_changes_a_verdict() -> None:
    class Down(MemoryStore):
        def count_outcome(self, *a: Any, **k: Any) -> None:
            raise StoreError("down")

    v = Validator(POLICY, recorder=BlockRateMonitor(Down()))
    assert v.validate(MESSAGES, ACTION).approved


# --- wiring -------------------------------------------------------------------------------


def test_open_store_urls(redis_url: str) -> None:
    assert isinstance(open_store("memory://"), MemoryStore)
    assert open_store(redis_url).health()["ok"] is True
    with pytest.raises(StoreError, match="unknown store URL"):
        open_store("postgres://x")
    down = open_store("redis://127.0.0.1:1/0")
    assert down.health()["ok"] is False
    tuned = open_store(f"{redis_url}?namespace=tuned&retention_days=7")
    assert tuned.ns == "tuned" and tuned.retention == timedelta(days=7) and tuned.health()["ok"]
    with pytest.raises(StoreError, match="retention_days must be a number"):
        open_store(f"{redis_url}?retention_days=soon")


def test_the_async_health_probe_says_what_the_sync_one_says(redis_url: str) -> None:
    async def both(store: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        try:
            return store.health(), await store.ahealth()
        finally:
            await store.aclose()

    for url in (redis_url, "redis://:s3cret@127.0.0.1:1/0", "memory://"):
        sync, aio = asyncio.run(both(open_store(url)))
        assert sync["ok"] is aio["ok"] and sync.keys() == aio.keys(), (sync, aio)
        assert "s3cret" not in json.dumps([sync, aio])


def test_stateful_validator_audits_every_verdict_once(redis_store: Any, tmp_path: Path) -> None:
    v = stateful_validator(
        redis_store, policy=POLICY, spool=str(tmp_path / "spool.jsonl"), extra_recorders=(MemoryRecorder(),)
    )
    verdicts = [
        v.validate(MESSAGES, ACTION, user_id="u-1"),
        v.validate(MESSAGES, {"tool": "read_inbox"}, user_id="u-1"),
    ]
    _arun(redis_store, v.avalidate(MESSAGES, ACTION, user_id="u-1"))
    entries = redis_store.audit_after(None, 10)
    assert len(entries) == 3
    payload = entries[0][1]
    for key in ("time", "user_id", "tool", "args_hash", "transcript_hash", "policy_version", "verdict"):
        assert key in payload
    assert payload["verdict"]["code"] == verdicts[0].code.value == "APPROVED"
    assert entries[1][1]["verdict"]["code"] == "EXEMPT" and entries[2][1]["verdict"]["reused"] is True
    assert not (tmp_path / "spool.jsonl").exists()
    assert verdicts[0].decision is Decision.APPROVE


def test_records_that_disagree_with_their_key_or_lack_a_zone_are_corrupt(redis_store: Any) -> None:
    good = _auth(id="auth_real").to_dict()
    redis_store._redis.set(f"{redis_store.ns}:auth:auth_alias", json.dumps(good))  # the id says auth_real
    redis_store._redis.set(
        f"{redis_store.ns}:auth:auth_naive", json.dumps({**good, "id": "auth_naive", "created": "2026-11-27T12:00:00"})
    )
    with pytest.raises(StoreError, match="auth_alias is corrupt"):
        redis_store.get("auth_alias")
    with pytest.raises(StoreError, match="auth_naive is corrupt"):
        redis_store.get("auth_naive")


def test_listing_returns_only_the_users_own_authorizations(store: Any) -> None:
    store.put(_auth(id="auth_mine"))
    store.put(_auth(id="auth_theirs", user_id="u-2"))
    assert [a.id for a in store.list("u-1")] == ["auth_mine"]
    assert [a.id for a in store.list("u-2")] == ["auth_theirs"]


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("redis://127.0.0.1:notaport/0", "store URL"),
        ("redis://127.0.0.1:6379/0?retention_days=0", "retention"),
        ("redis://127.0.0.1:6379/0?retention_days=1e400", "retention"),
        ("redis://127.0.0.1:6379/0?retention_days=nan", "retention"),
    ],
)
def test_bad_store_urls_are_typed_errors(url: str, problem: str) -> None:
    with pytest.raises(StoreError, match=problem):
        open_store(url)


def test_each_store_gets_its_own_spool_and_bad_spool_times_are_quarantined(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from validator.record.audit import AuditRecorder

    monkeypatch.delenv("VALIDATOR_SPOOL", raising=False)
    monkeypatch.setenv("VALIDATOR_SPOOL_DIR", str(tmp_path))
    one, two = MemoryStore(), MemoryStore()
    a, b = AuditRecorder(one), AuditRecorder(two)
    assert a.spool != b.spool and a.spool.parent == tmp_path
    good = {"id": "e1", "time": NOW.isoformat(), "approved": False}
    lines = [good, {"id": "e2", "time": "2026-11-30T12:00:00"}, {"id": "e3", "time": "yesterday"}]
    a.spool.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    assert a.flush() == 1
    assert [p["id"] for _, p in one.audit_after(None, 10)] == ["e1"] and two.audit_after(None, 10) == []
    corrupt = a.spool.with_suffix(a.spool.suffix + ".corrupt").read_text(encoding="utf-8")
    assert "e2" in corrupt and "e3" in corrupt and a.spooled == 0


def test_verdict_reuse_is_per_judge() -> None:
    from validator.state.reuse import VerdictReuse
    from validator.store import MemoryStore

    store = MemoryStore()
    messages = [{"role": "user", "content": "Please email bob@acme.example"}]
    action = {
        "tool": "send_email",
        "args": {"to": "bob@acme.example"},
        "justification": {"reason": "r", "evidence": [{"quote": "email bob@acme.example"}]},
    }
    ok = {"approved": True, "reasoning": "fine", "confidence": "high"}
    no = {"approved": False, "reasoning": "not fine", "confidence": "high"}

    class Other(ScriptedJudge):
        name = "other"

    assert Validator(POLICY, judge=ScriptedJudge([ok]), reuse=VerdictReuse(store)).validate(messages, action).approved
    assert not Validator(POLICY, judge=Other([no]), reuse=VerdictReuse(store)).validate(messages, action).approved


def _round_trips(store: Any, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts each request a Redis client sends (a pipeline is one)."""
    import redis

    sent: list[int] = []
    original = redis.Connection.send_packed_command

    def counting(self: Any, command: Any, check_health: bool = True) -> None:
        sent.append(1)
        original(self, command, check_health)

    monkeypatch.setattr(redis.Connection, "send_packed_command", counting)
    import redis.asyncio.connection

    asynchronous = redis.asyncio.connection.Connection.send_packed_command

    async def acounting(self: Any, command: Any, check_health: bool = True) -> None:
        sent.append(1)
        await asynchronous(self, command, check_health)

    monkeypatch.setattr(redis.asyncio.connection.Connection, "send_packed_command", acounting)
    return sent


@pytest.mark.parametrize("shell", ["sync", "async"])
@pytest.mark.parametrize("approved", [True, False])
def test_a_check_on_redis_reads_in_one_round_trip_and_writes_in_one(
    redis_store: Any, monkeypatch: pytest.MonkeyPatch, approved: bool, shell: str
) -> None:
    """Either shell: the engine's steps are one generator, so the async check opens the same session."""
    redis_store.put(_auth())
    judge = ScriptedJudge([{**OK, "approved": approved}] * 3)
    validator = stateful_validator(redis_store, policy=POLICY, judge=judge)
    cited = {
        **ACTION,
        "justification": {
            "reason": "r",
            "evidence": [{"quote": "email bob@acme.example the minutes"}, {"authorization_id": "auth_1"}],
        },
    }

    def check(action: dict[str, Any], user_id: str) -> Any:
        if shell == "sync":
            return validator.validate(MESSAGES, action, user_id=user_id)
        return asyncio.run(validator.avalidate(MESSAGES, action, user_id=user_id))

    check(ACTION, "u-0")  # loads the scripts
    sent = _round_trips(redis_store, monkeypatch)
    verdict = check(cited, "u-1")
    assert verdict.approved is approved and verdict.recorded
    # the authorization, the user's list, block count and kept verdict; then the writes with the audit
    assert len(sent) == 2, sent
    again = check(cited, "u-1")
    assert again.reused and again.approved is approved
    entries = redis_store.audit_tail(10)
    assert len(entries) == 3 and redis_store.blocks(action_key_of(cited)) == (0 if approved else 2)


def action_key_of(action: dict[str, Any]) -> str:
    from validator.inputs.checkinput import parse_action, parse_transcript
    from validator.state.keys import retry_key

    return retry_key(parse_transcript(MESSAGES), parse_action(action), POLICY.for_tool("send_email"), "u-1")


def test_a_store_that_fails_mid_check_still_fails_closed(redis_store: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reads ahead, queued writes and the audit append all fail: nothing approves unrecorded, nothing crashes."""
    import redis

    recorder = MemoryRecorder()
    validator = stateful_validator(
        redis_store, policy=POLICY, judge=ScriptedJudge([OK] * 2), extra_recorders=(recorder,)
    )
    validator.validate(MESSAGES, ACTION, user_id="u-0")

    def down(*args: Any, **kwargs: Any) -> Any:
        raise redis.ConnectionError("store down")

    monkeypatch.setattr(redis.Connection, "send_packed_command", down)
    cited = {**ACTION, "justification": {"reason": "r", "evidence": [{"authorization_id": "auth_1"}]}}
    verdict = validator.validate(MESSAGES, cited, user_id="u-1")
    assert not verdict.approved and verdict.code is Code.AUTHORIZATION_UNAVAILABLE
    plain = validator.validate(MESSAGES, {**ACTION, "args": {"to": "bob@acme.example", "body": "x"}}, user_id="u-1")
    assert plain.recorded is False or plain.approved is False or recorder.events[-1].verdict == plain
    monkeypatch.undo()  # the fixture's clean-up needs the store back


def test_audit_ids_only_grow_so_pages_never_repeat_a_record(store: Any) -> None:
    """Records of concurrent checks arrive out of their times' order: paging must still give each once."""
    base = datetime(2026, 12, 1, tzinfo=UTC)
    for i, offset in enumerate([5, 1, 9, 3, 7]):
        store.append_audit(f"e{i}", {"n": i}, base + timedelta(milliseconds=offset))
    seen: list[str] = []
    after = None
    while page := store.audit_after(after, 2):
        seen += [e["event_id"] for _, e in page]
        after = page[-1][0]
    assert sorted(seen) == [f"e{i}" for i in range(5)] and len(seen) == 5


class _OwnStore(Store):
    """A user's own store: only the abstract methods, each kept in a MemoryStore (the base classes give the
    async twins, the retry cap's count and the session their defaults)."""

    def __init__(self) -> None:
        self.kept = MemoryStore()

    identity = "own://test"

    def get(self, auth_id: str) -> StandingAuthorization | None:
        return self.kept.get(auth_id)

    def put(self, auth: StandingAuthorization) -> None:
        self.kept.put(auth)

    def list(self, user_id: str) -> list[StandingAuthorization]:
        return self.kept.list(user_id)

    def revoke(self, auth_id: str, when: datetime) -> StandingAuthorization:
        return self.kept.revoke(auth_id, when)

    def append_audit(self, event_id: str, payload: Any, at: datetime) -> bool:
        return self.kept.append_audit(event_id, payload, at)

    def audit_after(self, after: str | None, count: int) -> Any:
        return self.kept.audit_after(after, count)

    def audit_tail(self, count: int) -> Any:
        return self.kept.audit_tail(count)

    def audit_get(self, entry_id: str) -> dict[str, Any] | None:
        return self.kept.audit_get(entry_id)

    def audit_length(self) -> int:
        return self.kept.audit_length()

    def get_verdict(self, key: str) -> dict[str, Any] | None:
        return self.kept.get_verdict(key)

    def put_verdict(self, key: str, verdict: Any, ttl: timedelta) -> None:
        self.kept.put_verdict(key, verdict, ttl)

    def count_outcome(self, scope: str, name: str, blocked: bool, at: datetime) -> None:
        self.kept.count_outcome(scope, name, blocked, at)

    def outcome_counts(self, scope: str, name: str, buckets: list[str]) -> tuple[int, int]:
        return self.kept.outcome_counts(scope, name, buckets)

    def spend(self, key: str, action: str, ttl: timedelta) -> str | None:
        return self.kept.spend(key, action, ttl)

    def health(self) -> dict[str, Any]:
        return {"store": self.identity}


def test_a_store_of_ones_own_needs_only_the_abstract_methods() -> None:
    """The base classes carry a user's store through both shells: the async reads run the sync ones in a
    thread, no session is opened, no retry count is kept (no cap), and every verdict is audited once."""
    own = _OwnStore()
    v = stateful_validator(own, spool=False, judge=ScriptedJudge([OK]))
    first = v.validate(MESSAGES, ACTION, user_id="u-1")
    again = asyncio.run(v.avalidate(MESSAGES, ACTION, user_id="u-1"))
    assert first.approved and not first.reused and again.approved and again.reused
    assert own.audit_length() == 2 and asyncio.run(own.ahealth()) == {"store": "own://test"}
    assert own.session(ReadAhead(block_key="k")) is own and not own.carries_spends() and own.blocks("k") == 0
    refused = {"approved": False, "reasoning": "no", "confidence": "high"}
    for ledger, capped in ((MemoryStore(), True), (own, False)):  # a ledger that keeps no count caps nothing
        blocked = Validator(
            POLICY, judge=ScriptedJudge([refused] * 3), ledger=ledger, config=ValidatorConfig(retry_cap=1)
        )
        codes = [blocked.validate(MESSAGES, ACTION, user_id="u-1").code for _ in range(3)]
        assert (Code.RETRY_CAP_REACHED in codes) is capped, codes


def test_a_store_missing_a_method_is_refused_when_made() -> None:
    class Partial(Store):
        def spend(self, key: str, action: str, ttl: timedelta) -> str | None:
            return None

    with pytest.raises(TypeError, match="abstract"):
        Partial()  # type: ignore[abstract]


def test_an_approval_whose_answer_came_too_late_is_never_recorded_nor_spent(tmp_path: Path) -> None:
    """Redis frozen past the client's timeout while the script that records an approval and spends its request
    is queued: the client gives up (the approval is refused), Redis resumes and runs the script, and the script
    writes nothing: no record contradicts the refusal the caller got, and the request is still unspent."""
    from tests.redis_server import RedisServer, a_late_append_writes_nothing
    from validator.store.redis import RedisStore

    server = RedisServer(tmp_path)
    server.start()
    store = RedisStore(server.url, namespace="late", timeout=0.5)
    try:
        assert server.process is not None
        a_late_append_writes_nothing(store, server.process.pid)
    finally:
        store.close()
        server.stop()


@pytest.mark.parametrize("field", ["expires", "revoked"])
def test_an_empty_time_is_a_corrupt_record_never_a_grant_without_end(field: str) -> None:
    """``"expires": ""`` was read as no expiry (a grant for ever) and ``"revoked": ""`` as never revoked: a
    record no writer of ours makes is corrupt, and names itself."""
    from validator.store.base import authorization_from_json

    good = _auth(id="auth_e").to_dict()
    assert authorization_from_json(json.dumps(good), "k", "auth_e") == _auth(id="auth_e")
    with pytest.raises(StoreError, match="stored record k is corrupt"):
        authorization_from_json(json.dumps({**good, field: ""}), "k", "auth_e")
