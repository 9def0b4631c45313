"""Two ``validator serve`` processes on one real Redis: one request is spent once, whichever process is asked."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from validator.integrations.service import ServiceClient

from tests.service.conftest import free_port
from validator import Code

ROOT = Path(__file__).resolve().parents[2]
VALIDATOR = str(Path(sys.executable).parent / "validator")
USER = "Please pay 50 EUR to DE89370400440532013000 for the May invoice."


def _payment(memo: str) -> dict[str, object]:
    return {
        "messages": [{"role": "user", "content": USER}],
        "action": {
            "tool": "send_money",
            "args": {"recipient": "DE89370400440532013000", "amount": 50, "currency": "EUR", "memo": memo},
            "justification": {
                "reason": "The user asked.",
                "evidence": [{"quote": "pay 50 EUR to DE89370400440532013000"}],
            },
        },
        "user_id": "u-1",
    }


def _wait(url: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not start")


@pytest.fixture
def two_services(redis_url: str) -> Iterator[tuple[str, str, str, str]]:
    store = f"{redis_url}?namespace=scale-{time.monotonic_ns()}"
    urls, procs = [], []
    for _ in range(2):
        port = free_port()
        cmd = [
            VALIDATOR,
            "serve",
            "--store",
            store,
            "--port",
            str(port),
            "--policy",
            str(ROOT / "examples" / "policy.toml"),
        ]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
        urls.append(f"http://127.0.0.1:{port}")
    try:
        for url in urls:
            _wait(url)
        token = subprocess.run(
            [
                VALIDATOR,
                "token",
                "create",
                "--tenant",
                "acme",
                "--store",
                store,
                "--scope",
                "check",
                "--scope",
                "admin",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        yield urls[0], urls[1], token, store
    finally:
        for proc in procs:
            proc.terminate()  # a graceful shutdown: in-flight checks finish first
        for proc in procs:
            _, err = proc.communicate(timeout=30)
            # uvicorn re-raises the signal once it has shut down cleanly
            assert proc.returncode in (0, -15) and b"Application shutdown complete" in err, err[-500:]


def test_one_request_is_spent_once_across_two_service_processes(two_services: tuple[str, str, str, str]) -> None:
    first_url, second_url, token, store = two_services
    first = ServiceClient(first_url, token).check(_payment("May invoice"))
    second = ServiceClient(second_url, token).check(_payment("May invoice, again"))
    assert first.approved and first.code is Code.APPROVED
    assert not second.approved and second.code is Code.REQUEST_ALREADY_USED
    retry = ServiceClient(second_url, token).check(_payment("May invoice"))  # the same action again: not a new spend
    assert retry.approved
    request = urllib.request.Request(first_url + "/v1/audit?count=50", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        entries = json.loads(response.read())
    assert [e["verdict"]["code"] for e in entries] == ["APPROVED", "REQUEST_ALREADY_USED", "APPROVED"]
    assert len({e["id"] for e in entries}) == 3  # every verdict in the audit exactly once
    subprocess.run([VALIDATOR, "token", "revoke", token, "--store", store], check=True)
    for url in (first_url, second_url):  # a revoked token ends everywhere at once
        ended = ServiceClient(url, token).check(_payment("May invoice"))
        assert not ended.approved and "401" in ended.reasoning
