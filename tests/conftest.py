"""Shared fixtures. The suite fails closed: no test may open a connection off this machine."""

from __future__ import annotations

import asyncio
import atexit
import ipaddress
import os
import shutil
import socket
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

# The parses of sentence shapes are kept in a private folder of this run (each worker its own), never in the
# user's cache folder: set before any grammar is built (validator.gate.shapes).
_SHAPES = tempfile.mkdtemp(prefix="validator-test-cache-")
os.environ["VALIDATOR_CACHE_DIR"] = _SHAPES
atexit.register(shutil.rmtree, _SHAPES, ignore_errors=True)

from validator import Message, Policy, ToolCall, ToolPolicy, Transcript  # noqa: E402

_real_connect = socket.socket.connect


def _loopback(address: Any) -> bool:
    if isinstance(address, str):  # unix socket path
        return True
    host = address[0]
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Iterator[None]:
    """Any connection that is not to loopback fails the test (real models are never reached)."""
    if request.node.get_closest_marker("network"):
        yield
        return

    def guarded(self: socket.socket, address: Any) -> Any:
        if not _loopback(address):
            pytest.fail(f"test tried to reach {address!r}: real endpoints are not allowed in tests")
        return _real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    yield


# Each test runs on an event loop of its own, closed afterwards. Frameworks' ``run_sync`` helpers reuse
# the thread's current event loop (Pydantic AI) or leave one behind (the OpenAI Agents SDK), and so does
# a README example that runs one: without this, a loop left behind is picked up by a later test, or
# collected unclosed when a later ``asyncio.run`` lets it go (a ResourceWarning that fails the session).


def _current() -> asyncio.AbstractEventLoop | None:
    local = getattr(asyncio.get_event_loop_policy(), "_local", None)
    loop = getattr(local, "_loop", None)
    return loop if isinstance(loop, asyncio.AbstractEventLoop) else None


@pytest.fixture(autouse=True)
def own_event_loop() -> Iterator[None]:
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        yield
    finally:
        for left in {loop, _current()} - {None}:
            assert left is not None
            if not left.is_closed() and not left.is_running():
                left.run_until_complete(left.shutdown_asyncgens())
                left.close()
        asyncio.set_event_loop(None)


@pytest.fixture(autouse=True, scope="session")
def spool_in_a_temporary_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Recorders built without a spool path put theirs in a temporary folder, not the checkout."""
    mp = pytest.MonkeyPatch()
    mp.setenv("VALIDATOR_SPOOL_DIR", str(tmp_path_factory.mktemp("spool")))
    mp.delenv("VALIDATOR_SPOOL", raising=False)
    yield
    mp.undo()


POLICY = Policy(
    {
        "read_inbox": ToolPolicy(exempt=True),
        "reply_to_user": ToolPolicy(exempt=True),
        "send_email": ToolPolicy(targets=("to", "cc"), intents=("send", "email", "reply", "forward")),
        "send_money": ToolPolicy(risk="dangerous", targets=("recipient",), intents=("pay", "transfer", "send money")),
        "create_event": ToolPolicy(targets=("attendees",), intents=("invite", "schedule")),
        "archive_thread": ToolPolicy(intents=("archive",)),
        "delete_thread": ToolPolicy(risk="dangerous", intents=("delete", "remove")),
    }
)


@pytest.fixture
def policy() -> Policy:
    return POLICY


def inbox_transcript(user: str, tool_output: str, author: str = "billing@supplies.example") -> Transcript:
    return Transcript(
        [
            Message(role="user", content=user),
            Message(role="assistant", tool_calls=(ToolCall("c1", "read_inbox", {}),)),
            Message(role="tool", content=tool_output, tool_call_id="c1", name="read_inbox", author=author),
        ]
    )


def user_says(*texts: str) -> Transcript:
    """A transcript of the user's messages only."""
    return Transcript([Message(role="user", content=t) for t in texts])


def justified(tool: str, args: dict[str, Any], *quotes: str, reason: str = "The user asked for it.") -> dict[str, Any]:
    return {"tool": tool, "args": args, "justification": {"reason": reason, "evidence": [{"quote": q} for q in quotes]}}


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Redis: CI's (VALIDATOR_TEST_REDIS_URL), else one started here. Missing Redis fails, never skips."""
    import os

    url = os.environ.get("VALIDATOR_TEST_REDIS_URL")
    if url:
        yield url
        return
    from tests.redis_server import RedisServer

    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A real Redis Cluster of three primaries, made here (:class:`tests.redis_server.RedisClusterServers`)."""
    from tests.redis_server import RedisClusterServers

    cluster = RedisClusterServers(tmp_path_factory.mktemp("redis-cluster"))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def redis_cluster_store(redis_cluster: Any) -> Iterator[Any]:
    """A RedisStore on the cluster, in a namespace of its own, deleted afterwards."""
    import uuid

    from validator.store.redis import RedisStore

    store = RedisStore(redis_cluster.url.partition("?")[0], namespace=f"test-{uuid.uuid4().hex[:10]}", cluster=True)
    yield store
    for node in store._redis.get_primaries():
        client = store._redis.get_redis_connection(node)
        keys = list(client.scan_iter("{" + store.ns + "}:*"))
        if keys:
            client.delete(*keys)
    store.close()


@pytest.fixture
def redis_store(redis_url: str) -> Iterator[Any]:
    """A RedisStore in a namespace of its own, deleted afterwards."""
    import uuid

    from validator.store.redis import RedisStore

    store = RedisStore(redis_url, namespace=f"test-{uuid.uuid4().hex[:10]}")
    yield store
    keys = list(store._redis.scan_iter(f"{store.ns}:*"))
    if keys:
        store._redis.delete(*keys)
    store.close()


@pytest.fixture
def frozen_heap() -> Iterator[None]:
    """The test process's own heap kept out of the collector's way: after two thousand tests this process holds
    their objects, and a full collection of them costs ~0.2 s. During a burst it stalls every thread of the live
    service running in the process, so a connect to Redis times out (a 503 the service would never give beside
    no test suite); a test that collects on purpose would spend minutes re-reading the other tests' objects."""
    import gc

    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
