"""A real service on a loopback port (uvicorn in a thread), with a token per tenant."""

from __future__ import annotations

import dataclasses
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import uvicorn
from validator.integrations.service import SCOPES, MemoryTenants, ServiceConfig, Tenants, create_app

from validator import examples


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Running:
    url: str
    tenants: Tenants
    token: str
    server: uvicorn.Server
    thread: threading.Thread

    def stop(self) -> None:
        """A graceful shutdown, waited for (in-flight checks finish, stores close)."""
        self.server.should_exit = True
        self.thread.join(timeout=30)


def start(config: ServiceConfig, tenants: Tenants | None = None, *, trust: bool = True) -> Running:
    """A live service on a loopback port. The tests' checks name their users with tokens bound to none: every
    tenant is trusted to (``trusted_user_tenants={"*"}``) unless the test sets its own, or ``trust`` is False (a
    test of that rule)."""
    if trust and not config.trusted_user_tenants:
        config = dataclasses.replace(config, trusted_user_tenants=frozenset({"*"}))
    tenants = tenants or MemoryTenants()
    token = tenants.create("acme", SCOPES)  # the tests' operator token: every route
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(config, tenants=tenants), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the service did not start")
        time.sleep(0.02)
    return Running(f"http://127.0.0.1:{port}", tenants, token, server, thread)


@pytest.fixture
def service() -> Iterator[Running]:
    running = start(ServiceConfig())
    yield running
    running.stop()


def body(**overrides: Any) -> dict[str, Any]:
    """The vendor invoice check input (without its policy), or any part of it replaced."""
    import json

    data: dict[str, Any] = json.loads(examples.check_path("vendor_invoice").read_text())
    data.pop("policy")  # the service applies its own policy; a check carrying one is refused
    data.update(overrides)
    return data
