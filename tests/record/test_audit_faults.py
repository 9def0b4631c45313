"""Faults against a real redis-server that the test stops and restarts: nothing lost, nothing opened."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.conftest import POLICY
from tests.redis_server import RedisServer
from validator import (
    Code,
    StandingAuthorization,
    Validator,
    ValidatorConfig,
    stateful_validator,
)
from validator.store.redis import RedisStore

MESSAGES = [{"role": "user", "content": "Please email bob@acme.example the minutes."}]
QUOTED = {
    "tool": "send_email",
    "args": {"to": "bob@acme.example"},
    "justification": {"reason": "asked", "evidence": [{"quote": "email bob@acme.example the minutes"}]},
}
STANDING = {**QUOTED, "justification": {"reason": "standing", "evidence": [{"authorization_id": "auth_1"}]}}


def test_redis_restart_mid_run_loses_nothing_duplicates_nothing_and_opens_nothing(tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "data")
    (tmp_path / "data").mkdir()
    server.start()
    start = datetime.now(UTC)
    tick = [0]

    def clock() -> datetime:
        tick[0] += 1
        return start + timedelta(milliseconds=10 * tick[0])

    store = RedisStore(server.url, namespace="faults", timeout=0.5)
    spool = tmp_path / "spool.jsonl"
    try:
        store.put(
            StandingAuthorization(
                id="auth_1",
                user_id="u-1",
                tool="send_email",
                where={"to": "*@acme.example"},
                quote="You may always email acme people.",
                created=start - timedelta(days=1),
            )
        )
        v = stateful_validator(
            store, policy=POLICY, spool=str(spool), reuse_ttl=None, config=ValidatorConfig(clock=clock)
        )
        codes: list[Code] = []

        def run(n: int) -> None:
            for i in range(n):
                codes.append(v.validate(MESSAGES, STANDING if i % 2 else QUOTED, user_id="u-1").code)

        run(10)
        assert codes == [Code.APPROVED] * 10
        server.stop()
        run(10)  # Redis is down: validation goes on, standing authorizations fail closed, audit is spooled
        assert codes[10:] == [Code.APPROVED, Code.AUTHORIZATION_UNAVAILABLE] * 5
        assert spool.exists() and len(spool.read_text().splitlines()) == 10
        server.start()  # same data directory: the ten records before the outage are still there
        # a flush that died after sending the first spooled record but before trimming the spool
        first = __import__("json").loads(spool.read_text().splitlines()[0])
        store.append_audit(first["id"], first, datetime.fromisoformat(first["time"]))
        run(10)
        assert codes[20:] == [Code.APPROVED] * 10
        assert not spool.exists()
        entries = store.audit_after(None, 1000)
        assert len(entries) == 30  # 0 lost
        assert len({p["event_id"] for _, p in entries}) == 30  # 0 duplicated
        times = [p["time"] for _, p in entries]
        assert times == sorted(times)  # in order: the spool went first, as it happened
        assert [p["verdict"]["code"] for _, p in entries] == [c.value for c in codes]
    finally:
        store.close()
        server.stop()


def test_spool_that_cannot_be_written_blocks_approvals(tmp_path: Path) -> None:
    store = RedisStore("redis://127.0.0.1:1/0", namespace="nowhere", timeout=0.2)
    blocked_dir = tmp_path / "not-a-dir"
    blocked_dir.write_text("a file where the spool's folder should be")
    v = stateful_validator(store, policy=POLICY, spool=str(blocked_dir / "spool.jsonl"), reuse_ttl=None)
    verdict = v.validate(MESSAGES, QUOTED, user_id="u-1")
    assert (verdict.approved, verdict.code) == (False, Code.RECORDER_UNAVAILABLE)
    refused: Any = v.validate(MESSAGES, {**QUOTED, "justification": None}, user_id="u-1")
    assert refused.code == Code.MISSING_JUSTIFICATION


def test_a_torn_spool_line_does_not_wedge_the_audit_recorder(tmp_path: Path) -> None:
    from validator.record.audit import AuditRecorder
    from validator.store import MemoryStore

    spool = tmp_path / "spool.jsonl"
    spool.write_text('{"id": "e1", "time": "2026-11-30T12:00:00+00:00", "n": 1}\n{"id": "e2", "ti')
    store = MemoryStore()
    v = Validator(POLICY, recorder=AuditRecorder(store, spool))
    verdict = v.validate(
        [{"role": "user", "content": "Please email bob@acme.example the minutes."}],
        {
            "tool": "send_email",
            "args": {"to": "bob@acme.example"},
            "justification": {"reason": "r", "evidence": [{"quote": "email bob@acme.example the minutes"}]},
        },
    )
    assert verdict.approved
    assert store.audit_length() == 2 and not spool.exists()
    assert (tmp_path / "spool.jsonl.corrupt").read_text().startswith('{"id": "e2"')
