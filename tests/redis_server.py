"""A real redis-server for the tests: started on a free loopback port, stopped and restarted at will."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import redis


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _prctl() -> Any:
    if sys.platform != "linux":
        return None
    import ctypes

    return ctypes.CDLL(None, use_errno=True).prctl


_PRCTL = _prctl()
"""``prctl`` of the C library, found here, before any fork (the child calls it and nothing else)."""
_PR_SET_PDEATHSIG = 1


def _dies_with_its_parent() -> None:
    """In the server's process, before it runs redis-server: the kernel kills it when the process that started it
    ends, however that ends (a test run killed by a signal runs no fixture's teardown, and its servers stayed)."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL)  # KILL: a server a test froze (SIGSTOP) dies too


class RedisServer:
    """``redis-server`` in a directory of its own, with an append-only file so a restart keeps the data; it
    ends with the test process that started it, even when that one is killed."""

    def __init__(self, directory: Path, port: int | None = None, *, extra: tuple[str, ...] = ()) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed: the Redis tests need it (scripts/test.sh installs it)")
        self.binary = binary
        self.directory = directory
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.extra = extra
        self.password = extra[extra.index("--requirepass") + 1] if "--requirepass" in extra else None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.directory),
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--save",
                "",
                "--protected-mode",
                "no",
                *self.extra,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_dies_with_its_parent,  # one foreign call, prepared before the fork
        )
        client = redis.Redis(port=self.port, socket_connect_timeout=0.2, password=self.password)
        for _ in range(100):
            if self.process.poll() is not None:  # it exited (a bad option, a port taken): say so now
                raise RuntimeError(f"redis-server exited with {self.process.returncode} on port {self.port}")
            try:
                client.ping()
                client.close()
                return
            except redis.RedisError:
                time.sleep(0.05)
        raise RuntimeError(f"redis-server did not start on port {self.port}")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None


class RedisClusterServers:
    """A Redis Cluster of three primaries on loopback ports (``redis-server --cluster-enabled yes``, each in a
    folder of its own with an append-only file, joined by ``redis-cli --cluster create``), for the store's tests
    on a cluster. ``url`` names one node and ``cluster=true``; :meth:`holder` finds the node of a key's slot."""

    def __init__(self, directory: Path) -> None:
        cluster = ("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "5000")
        # each node's bus port named (by default its port + 10000: past 65535 for a high free port)
        self.nodes = [
            RedisServer(directory / f"node-{i}", extra=(*cluster, "--cluster-port", str(free_port()))) for i in range(3)
        ]

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.nodes[0].port}/0?cluster=true"

    def start(self) -> None:
        cli = shutil.which("redis-cli")
        if cli is None:
            raise RuntimeError("redis-cli is not installed: the cluster tests need it (it comes with redis-server)")
        for node in self.nodes:
            node.directory.mkdir(parents=True, exist_ok=True)
            node.start()
        addresses = [f"127.0.0.1:{node.port}" for node in self.nodes]
        subprocess.run(
            [cli, "--cluster", "create", *addresses, "--cluster-replicas", "0", "--cluster-yes"],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=60,
        )
        deadline = time.monotonic() + 30
        for node in self.nodes:  # every node agrees the cluster is whole before a test uses it
            client = redis.Redis(port=node.port, decode_responses=True)
            while client.cluster("info").get("cluster_state") != "ok":
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the cluster did not come up on {addresses}")
                time.sleep(0.1)
            client.close()

    def holder(self, key: str) -> RedisServer:
        """The primary serving ``key``'s slot."""
        client = redis.Redis(port=self.nodes[0].port, decode_responses=True)
        try:
            slot = int(client.cluster("keyslot", key))
            for start, end, primary, *_ in client.cluster("slots"):
                if int(start) <= slot <= int(end):
                    return next(n for n in self.nodes if n.port == int(primary[1]))
        finally:
            client.close()
        raise RuntimeError(f"no node serves the slot of {key!r}")

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()


def a_late_append_writes_nothing(store: Any, pid: int) -> None:
    """Assert the store's append that records an approval and spends its request writes nothing when the Redis
    process ``pid`` (the one server, or the primary of the store's slot) is frozen past the client's timeout
    while the script is queued: the client gives up (``SpendLost``), Redis resumes and runs it, and no record
    contradicts the refusal the caller got; the request stays unspent. One in time records and spends first."""
    import pytest

    from validator.store.base import ReadAhead, SpendLost

    check = store.session(ReadAhead(carry_spends=True))
    assert check.spend("request-0", "send_money c0", timedelta(days=1)) is None
    assert check.append_audit("event-on-time", {"verdict": {"code": "APPROVED"}}, datetime.now(UTC))
    assert store.audit_length() == 1 and store._redis.get(store._key("spent", "request-0")) == "send_money c0"
    check = store.session(ReadAhead(carry_spends=True))
    assert check.spend("request-1", "send_money c1", timedelta(days=1)) is None  # waits for the record
    os.kill(pid, signal.SIGSTOP)
    resume = threading.Timer(1.5, os.kill, (pid, signal.SIGCONT))
    resume.start()
    try:
        with pytest.raises(SpendLost):
            check.append_audit("event-late", {"verdict": {"code": "APPROVED"}}, datetime.now(UTC))
    finally:
        resume.join()
    time.sleep(0.2)  # the queued script has run by now
    assert store.audit_length() == 1  # the one in time only
    assert store._redis.get(store._key("spent", "request-1")) is None
