"""One transaction: a user's request is spent in the same Redis script that records the approval it spends.

Against a real redis-server: killed between the check's read of the ledger and its record, raced by another
action, refusing the append, and a policy that asks anyway. In every case a request is spent exactly when the
audit shows the approval that spent it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import redis

from tests.redis_server import RedisServer
from validator import Code, Policy, ToolPolicy, stateful_validator
from validator.store.redis import RedisStore

IBAN = "DE89370400440532013000"
MESSAGES = [{"role": "user", "content": f"Please pay {IBAN} 50 EUR for the lunch."}]
POLICY = Policy(
    {"send_money": ToolPolicy(risk="dangerous", targets=("recipient",), amounts=("amount",), intents=("pay",))}
)


def _pay(call_id: str) -> dict[str, Any]:
    return {
        "tool": "send_money",
        "call_id": call_id,
        "args": {"recipient": IBAN, "amount": 50, "currency": "EUR"},
        "justification": {"reason": "asked", "evidence": [{"quote": f"pay {IBAN} 50 EUR"}]},
    }


class _Hooked(RedisStore):
    """A Redis store that runs ``before_append`` (once) just before a check's record goes out: the moment
    between the ledger's read and the record."""

    before_append: Callable[[RedisStore], None] | None = None

    def append_audit(self, event_id: str, payload: Any, at: datetime) -> bool:
        hook, type(self).before_append = type(self).before_append, None
        if hook is not None:
            hook(self)
        return super().append_audit(event_id, payload, at)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    (tmp_path / "data").mkdir()
    running = RedisServer(tmp_path / "data")
    running.start()
    yield running
    running.stop()


def _spent(server: RedisServer) -> list[str]:
    client = redis.Redis.from_url(server.url, decode_responses=True)
    try:
        return sorted(client.keys("tx:spent:*"))
    finally:
        client.close()


def _codes(store: RedisStore) -> list[str]:
    return [p["verdict"]["code"] for _, p in store.audit_after(None, 100)]


@pytest.mark.parametrize(
    "spool", [False, "spool", "earlier"], ids=["service", "spooling-library", "spooling-library-with-a-spool"]
)
def test_a_kill_between_the_ledger_and_the_record_spends_nothing(
    server: RedisServer, tmp_path: Path, spool: str | bool
) -> None:
    store = _Hooked(server.url, namespace="tx", timeout=0.5)
    spool_path: Any = False if spool is False else str(tmp_path / "spool.jsonl")
    if spool == "earlier":  # records of an earlier outage wait in the spool: they go first, or the record fails
        earlier = {"id": "earlier-1", "time": "2026-12-01T00:00:00+00:00", "verdict": {"code": "EARLIER"}}
        (tmp_path / "spool.jsonl").write_text(json.dumps(earlier) + "\n")
    checker = stateful_validator(store, policy=POLICY, spool=spool_path, reuse_ttl=None)
    try:

        def kill(_: RedisStore) -> None:
            assert server.process is not None
            server.process.kill()  # SIGKILL: no shutdown, nothing flushed but what is on disk
            server.process.wait()
            server.process = None

        _Hooked.before_append = kill
        verdict = checker.validate(MESSAGES, _pay("c1"), user_id="u-1")
        assert not verdict.approved
        assert verdict.code == Code.REQUEST_LEDGER_UNAVAILABLE  # the approval goes to the user; never RUNS
        assert verdict.recorded is (spool is not False)  # its refusal was spooled, or went to the last resort
        server.start()  # same data directory, append-only file: what was written before the kill is back
        assert _spent(server) == []  # nothing spent: the approval's record was never written
        assert _codes(store) == []
        again = checker.validate(MESSAGES, _pay("c1"), user_id="u-1")
        assert again.code == Code.APPROVED  # the request is still the user's to spend
        assert len(_spent(server)) == 1
        codes = _codes(store)
        assert codes[-1] == "APPROVED" and codes.count("APPROVED") == 1
        if spool == "spool":
            assert codes == ["REQUEST_LEDGER_UNAVAILABLE", "APPROVED"]  # the spooled refusal went first
        if spool == "earlier":
            assert codes == ["EARLIER", "REQUEST_LEDGER_UNAVAILABLE", "APPROVED"]
    finally:
        _Hooked.before_append = None
        store.close()


def test_a_request_spent_by_another_action_meanwhile_is_asked_not_approved(server: RedisServer) -> None:
    store = _Hooked(server.url, namespace="tx", timeout=0.5)
    checker = stateful_validator(store, policy=POLICY, spool=False, reuse_ttl=None)
    try:

        def another_worker_spends(view: RedisStore) -> None:
            waiting = view._current.spends if view._current is not None else []
            assert len(waiting) == 1
            client = redis.Redis.from_url(server.url)
            client.set(waiting[0][0], "send_money:c-other")
            client.close()

        _Hooked.before_append = another_worker_spends
        verdict = checker.validate(MESSAGES, _pay("c1"), user_id="u-1")
        assert (verdict.approved, verdict.code) == (False, Code.REQUEST_ALREADY_USED)
        assert "c-other" in verdict.reasoning
        assert verdict.recorded
        assert _codes(store) == ["REQUEST_ALREADY_USED"]  # the approval was never recorded
    finally:
        _Hooked.before_append = None
        store.close()


def test_an_append_the_server_refuses_spends_nothing(server: RedisServer) -> None:
    store = RedisStore(server.url, namespace="tx", timeout=0.5)
    checker = stateful_validator(store, policy=POLICY, spool=False, reuse_ttl=None)
    client = redis.Redis.from_url(server.url)
    try:
        client.set("tx:audit", "not a stream")  # XADD fails inside the script (WRONGTYPE), after the spend's SET
        verdict = checker.validate(MESSAGES, _pay("c1"), user_id="u-1")
        assert not verdict.approved
        assert verdict.code == Code.REQUEST_LEDGER_UNAVAILABLE
        assert _spent(server) == []  # the script undid its own spend
        assert client.zcard("tx:audit:ids") == 0
        client.delete("tx:audit")
        assert checker.validate(MESSAGES, _pay("c1"), user_id="u-1").code == Code.APPROVED
        assert len(_spent(server)) == 1
    finally:
        client.close()
        store.close()


def test_only_an_approval_spends(server: RedisServer) -> None:
    asks = Policy(
        {
            "send_money": ToolPolicy(
                risk="dangerous", targets=("recipient",), amounts=("amount",), intents=("pay",), ask="always"
            )
        }
    )
    store = RedisStore(server.url, namespace="tx", timeout=0.5)
    checker = stateful_validator(store, policy=asks, spool=False, reuse_ttl=None)
    try:
        verdict = checker.validate(MESSAGES, _pay("c1"), user_id="u-1")
        assert verdict.code == Code.POLICY_ASKS_USER
        assert _spent(server) == []  # the question spent nothing: the user's answer decides
        assert _codes(store) == ["POLICY_ASKS_USER"]
    finally:
        store.close()


def test_a_second_action_on_a_spent_request_spends_nothing_more(server: RedisServer) -> None:
    store = RedisStore(server.url, namespace="tx", timeout=0.5)
    checker = stateful_validator(store, policy=POLICY, spool=False, reuse_ttl=None)
    try:
        assert checker.validate(MESSAGES, _pay("c1"), user_id="u-1").code == Code.APPROVED
        held = _spent(server)
        assert checker.validate(MESSAGES, _pay("c1"), user_id="u-1").code == Code.APPROVED  # the same call again
        assert checker.validate(MESSAGES, _pay("c2"), user_id="u-1").code == Code.REQUEST_ALREADY_USED
        assert _spent(server) == held
        assert _codes(store) == ["APPROVED", "APPROVED", "REQUEST_ALREADY_USED"]
    finally:
        store.close()
