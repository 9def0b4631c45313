"""Two ``validator serve`` processes on one real Redis, or on a Redis Cluster: one request is spent once, whichever
process is asked."""

from __future__ import annotations

import hashlib
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
from validator import Code, examples

ROOT = Path(__file__).resolve().parents[2]
VALIDATOR = str(Path(sys.executable).parent / "validator")
USER = "Please pay 50 EUR to DE89370400440532013000."


def _payment(memo: str, call_id: str | None = None) -> dict[str, object]:
    """A payment the user asked for. ``memo`` names the call in the test only: it is not sent (the user's words
    name no memo, and a memo they never wrote would send the payment to them); calls without an id are new calls."""
    return {
        "messages": [{"role": "user", "content": USER}],
        "action": {
            **({"call_id": call_id} if call_id else {}),
            "tool": "send_money",
            "args": {"recipient": "DE89370400440532013000", "amount": 50, "currency": "EUR"},
            "justification": {
                "reason": "The user asked.",
                "evidence": [{"quote": USER}],
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


@pytest.fixture(params=["redis", "redis-cluster"])
def two_services(request: pytest.FixtureRequest) -> Iterator[tuple[str, str, str, str]]:
    """Two service processes on one Redis, or on a Redis Cluster of three primaries."""
    if request.param == "redis":
        store = f"{request.getfixturevalue('redis_url')}?namespace=scale-{time.monotonic_ns()}"
    else:
        store = f"{request.getfixturevalue('redis_cluster').url}&namespace=scale-{time.monotonic_ns()}"
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
            str(examples.policy_path()),
            "--trust-user-id",  # the agent's token names its users
            "*",
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
    first = ServiceClient(first_url, token).check(_payment("Invoice 5", "call-1"))
    second = ServiceClient(second_url, token).check(_payment("Invoice 5b"))
    assert first.approved and first.code is Code.APPROVED
    assert not second.approved and second.code is Code.REQUEST_ALREADY_USED
    retry = ServiceClient(second_url, token).check(_payment("Invoice 5", "call-1"))  # the same call: no new spend
    assert retry.approved
    again = ServiceClient(second_url, token).check(_payment("Invoice 5"))  # no id: a new call, which spends anew
    assert not again.approved and again.code is Code.REQUEST_ALREADY_USED
    request = urllib.request.Request(first_url + "/v1/audit?count=50", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        entries = json.loads(response.read())
    codes = [e["verdict"]["code"] for e in entries]
    assert codes == ["APPROVED", "REQUEST_ALREADY_USED", "APPROVED", "REQUEST_ALREADY_USED"]
    assert len({e["id"] for e in entries}) == 4  # every verdict in the audit exactly once
    # the operator's commands see the tenant's data as the service keeps it: --tenant, no namespace by hand
    tail = subprocess.run(
        [VALIDATOR, "audit", "tail", "--store", store, "--tenant", "acme"], capture_output=True, text=True, check=True
    )
    assert [line.split()[-1] for line in tail.stdout.splitlines()] == codes
    other = subprocess.run(
        [VALIDATOR, "audit", "tail", "--store", store, "--tenant", "globex"], capture_output=True, text=True
    )
    assert other.returncode == 0 and other.stdout == "" and "no audit records" in other.stderr
    listed = subprocess.run([VALIDATOR, "token", "list", "--store", store], capture_output=True, text=True, check=True)
    digest = hashlib.sha256(token.encode()).hexdigest()
    assert listed.stdout.split() == [digest, "acme", "check,admin"]
    unasked = subprocess.run([VALIDATOR, "token", "revoke", digest, "--store", store], capture_output=True, text=True)
    assert unasked.returncode == 2 and "pass --yes" in unasked.stderr  # no terminal, no --yes: nothing ends
    ended = subprocess.run(
        [VALIDATOR, "token", "revoke", digest, "--yes", "--store", store], capture_output=True, text=True, check=True
    )
    assert f"revoked token {digest[:16]}… of tenant acme" in ended.stdout
    again = subprocess.run(
        [VALIDATOR, "token", "revoke", digest, "--yes", "--store", store], capture_output=True, text=True
    )
    assert again.returncode == 1 and "no such token" in again.stderr
    for url in (first_url, second_url):  # a revoked token ends everywhere within the token cache's 2 s
        deadline = time.monotonic() + 10
        while "401" not in (ended := ServiceClient(url, token).check(_payment("Invoice 5"))).reasoning:
            assert not ended.approved and time.monotonic() < deadline, ended.reasoning
            time.sleep(0.2)
        assert not ended.approved


@pytest.mark.usefixtures("frozen_heap")
def test_identical_parallel_payments_without_an_id_spend_one_request_once(
    two_services: tuple[str, str, str, str],
) -> None:
    """50 byte-identical checks at once were all approved: with no tool-call id on the wire each looked like
    a retry of the others. Now a check without an id is a new call; one with an id is idempotent."""
    from concurrent.futures import ThreadPoolExecutor

    first_url, second_url, token, _ = two_services
    same = json.dumps({**_payment("Invoice 6"), "user_id": "u-june"}).encode()  # a request not yet spent
    with ThreadPoolExecutor(8) as pool:
        verdicts = list(
            pool.map(lambda i: ServiceClient((first_url, second_url)[i % 2], token).check(json.loads(same)), range(20))
        )
    assert sum(v.approved for v in verdicts) == 1
    assert {v.code for v in verdicts if not v.approved} == {Code.REQUEST_ALREADY_USED}
    with ThreadPoolExecutor(8) as pool:  # one id: retries of one call, one verdict, no second spend
        retried = list(
            pool.map(
                lambda i: ServiceClient((first_url, second_url)[i % 2], token).check(
                    {**_payment("Invoice 7", "call-july"), "user_id": "u-july"}
                ),
                range(10),
            )
        )
    assert len({(v.approved, v.code) for v in retried}) == 1 and retried[0].approved
