"""``validator serve`` under a bounded load on loopback, against in-process ``validate()`` on the same inputs.

Starts ``validator serve`` (memory store by default, ``--store redis://...`` to share one) on a free
loopback port, then sends ``--checks`` check inputs (half the vendor invoice, which is blocked, half
an email the user asked for) from ``--clients`` threads through :class:`ServiceClient`. The same
inputs then run through ``Validator.check`` in this process, one thread. Prints throughput and
p50/p99 for both and their ratios, the errors (a refusal that is not the expected verdict), and the
audit count read back over the API (every verdict exactly once). Bounded in count and time.

Then the concurrency row: ``--at-once`` (400) checks sent at the same moment, each on a connection of its
own, while a thread polls ``/healthz``: the statuses (every one a 200, or a 429 with ``Retry-After``; never
a 5xx), p50 / p99, and the slowest ``/healthz`` during the load. ``--store redis://...`` runs it all on a
Redis (a persistent one: the service refuses a volatile store), its tokens made with ``validator token``.

Then the two-tenant row: a service with the default bound on a tenant's checks at once (3), two tenants'
check tokens, and the light tenant's small checks sent alone and then while the heavy tenant sends long
conversations (30,000 one-sentence user messages before the request, each near the gate's budget) from
twelve threads: the light tenant's p50 / p99 and errors in both, and the heavy tenant's statuses. It needs
a Redis (tokens of two tenants): ``--store``, or a throwaway ``redis-server`` the bench starts on a loopback
port when one is installed (``--tenants 0`` skips the row).

Run: ``python bench/service_load.py`` (``--quick`` for a short run).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from validator.integrations.service import ServiceClient

from validator import Validator, examples

ROOT = Path(__file__).resolve().parent.parent
EMAIL = json.loads(examples.check_path("authorized_email").read_text())  # the email the user asked for


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _inputs(n: int) -> list[tuple[dict[str, Any], bool]]:
    invoice = json.loads(examples.check_path("vendor_invoice").read_text())
    invoice.pop("policy")  # the service applies its own policy (a check carrying one is refused)
    out = []
    for i in range(n):  # distinct inputs: no verdict reuse between them
        if i % 2:
            email = json.loads(json.dumps(EMAIL))
            email["action"]["args"]["subject"] = f"Q3 report ({i})"  # the body is the user's words, framed
            out.append((email, True))
        else:
            blocked = json.loads(json.dumps(invoice))
            blocked["action"]["args"]["amount"] = 4800 + i
            out.append((blocked, False))
    return out


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


CLI = str(Path(sys.executable).parent / "validator")


def _token(store: str, tenant: str, scope: str) -> str:
    made = subprocess.run(
        [CLI, "token", "create", "--tenant", tenant, "--store", store, "--scope", scope],
        capture_output=True,
        text=True,
        check=True,
    )
    return re.findall(r"vt_[A-Za-z0-9_-]+", made.stdout + made.stderr)[-1]


def _start(
    store: str | None,
    tenant_checks: int = 1000,
    tokens_of: tuple[tuple[str, str], tuple[str, str]] = (("bench", "check"), ("bench", "admin")),
) -> tuple[subprocess.Popen[str], str, str, str]:
    """The service, its URL and two tokens: on a Redis store, those ``tokens_of`` names (tenant, scope), by default
    one that may check and one that may read the audit; on memory, the agent's and the operator's it prints."""
    port = _port()
    # one operator's load: its checks name their users, and may all run at once (unless told the bound)
    cmd = [CLI, "serve", "--port", str(port), "--rate", "1e9", "--burst", "1000000", "--trust-user-id", "*"]
    cmd += ["--tenant-checks", str(tenant_checks)]
    tokens: list[str] = []
    if store:
        cmd += ["--store", store]
        tokens += [_token(store, tenant, scope) for tenant, scope in tokens_of]
    token_file = Path(tempfile.mkdtemp()) / "tokens"
    if not store:
        cmd += ["--token-file", str(token_file)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None  # read until it runs; then left to the pipe
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if "Uvicorn running" in line or "Application startup complete" in line:
            break
    if not store and token_file.exists():  # the agent's (check) first, the answers', the operator's last
        made = re.findall(r"vt_[A-Za-z0-9_-]+", token_file.read_text())
        tokens += [made[0], made[-1]] if made else []
    threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()  # keep the pipe drained
    if len(tokens) < 2:
        proc.terminate()
        raise SystemExit("no tokens: the service printed none")
    url = f"http://127.0.0.1:{port}"
    _wait_ready(url, deadline, proc)
    return proc, url, tokens[0], tokens[-1]


def _at_once(url: str, token: str, n: int) -> None:
    """``n`` checks at the same moment, each on a connection of its own, with /healthz polled meanwhile."""
    gate = threading.Barrier(n + 1, timeout=120)
    done = threading.Event()
    health: list[float] = []

    def one(i: int) -> tuple[int, float, bool]:
        body = {**EMAIL, "user_id": f"once-{i}", "action": {**EMAIL["action"], "call_id": f"once-{i}"}}
        request = urllib.request.Request(url + "/v1/check", data=json.dumps(body).encode(), method="POST")
        request.add_header("Authorization", f"Bearer {token}")
        request.add_header("Content-Type", "application/json")
        gate.wait()
        started = time.perf_counter()
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                status, retry = response.status, True
        except urllib.error.HTTPError as exc:
            status, retry = exc.code, bool(exc.headers.get("Retry-After"))
        return status, time.perf_counter() - started, retry

    def poll() -> None:
        gate.wait()
        while not done.is_set():
            started = time.perf_counter()
            with urllib.request.urlopen(url + "/healthz", timeout=60):
                health.append(time.perf_counter() - started)
            time.sleep(0.05)

    watcher = threading.Thread(target=poll, daemon=True)
    watcher.start()
    with ThreadPoolExecutor(n) as pool:
        answers = list(pool.map(one, range(n)))
    done.set()
    watcher.join(timeout=60)
    statuses: dict[int, int] = {}
    for status, _, _ in answers:
        statuses[status] = statuses.get(status, 0) + 1
    times = [t for _, t, _ in answers]
    shown = ", ".join(f"{k} x {v}" for k, v in sorted(statuses.items()))
    told = all(retry for status, _, retry in answers if status != 200)
    p50, p99 = _percentile(times, 0.5) * 1000, _percentile(times, 0.99) * 1000
    slowest = max(health, default=0.0) * 1000
    print(
        f"{n} checks at once: {shown}; p50 {p50:.0f} ms, p99 {p99:.0f} ms; slowest /healthz meanwhile {slowest:.0f} ms"
    )
    failed = sum(v for k, v in statuses.items() if k >= 500)
    print(f"  every answer not a 200 carries Retry-After: {told}; a 5xx: {failed}")


def _long_check(messages: int) -> dict[str, Any]:
    """A valid check whose conversation holds ``messages`` one-sentence user messages before the request."""
    body = json.loads(json.dumps(EMAIL))
    filler = [{"role": "user", "content": f"Note {i} is filed."} for i in range(messages)]
    body["messages"] = filler + body["messages"]
    return body


def _light_run(url: str, token: str, n: int) -> tuple[list[float], int]:
    """``n`` small checks from five threads: their latencies and how many were not the expected approval."""
    client = ServiceClient(url, token, timeout=60)

    def one(i: int) -> tuple[float, bool]:
        body = {**EMAIL, "user_id": f"light-{i}", "action": {**EMAIL["action"], "call_id": f"light-{i}"}}
        started = time.perf_counter()
        verdict = client.check(body)
        return time.perf_counter() - started, verdict.approved

    with ThreadPoolExecutor(5) as pool:
        answers = list(pool.map(one, range(n)))
    return [t for t, _ in answers], sum(not ok for _, ok in answers)


def _two_tenants(store: str, n: int, heavy_messages: int) -> int:
    """The light tenant alone, then beside the heavy one (module docstring): the light tenant's errors."""
    proc, url, heavy, light = _start(store, tenant_checks=3, tokens_of=(("heavy", "check"), ("light", "check")))
    statuses: dict[int, int] = {}
    try:
        _light_run(url, light, 10)  # warm-up
        alone, alone_errors = _light_run(url, light, n)
        stop = threading.Event()
        payload = json.dumps(_long_check(heavy_messages)).encode()

        def hammer() -> None:
            while not stop.is_set():
                request = urllib.request.Request(url + "/v1/check", data=payload, method="POST")
                request.add_header("Authorization", f"Bearer {heavy}")
                request.add_header("Content-Type", "application/json")
                try:
                    with urllib.request.urlopen(request, timeout=120) as response:
                        status = response.status
                except urllib.error.HTTPError as exc:
                    status = exc.code
                statuses[status] = statuses.get(status, 0) + 1
                if status == 429:
                    time.sleep(0.2)

        threads = [threading.Thread(target=hammer, daemon=True) for _ in range(12)]
        for t in threads:
            t.start()
        time.sleep(2)  # the heavy tenant's checks are running
        beside, beside_errors = _light_run(url, light, n)
        stop.set()
        for t in threads:
            t.join(timeout=120)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    print(f"two tenants (a tenant's checks at once: 3; {heavy_messages:,}-message checks of the heavy one)")
    for label, values, errors in (("light alone", alone, alone_errors), ("light + heavy", beside, beside_errors)):
        p50, p99 = _percentile(values, 0.5) * 1000, _percentile(values, 0.99) * 1000
        print(f"  {label:>14}: {len(values)} checks, p50 {p50:.0f} ms, p99 {p99:.0f} ms, errors {errors}")
    shown = ", ".join(f"{k} x {v}" for k, v in sorted(statuses.items()))
    print(f"  heavy tenant's answers meanwhile: {shown}")
    return alone_errors + beside_errors


_DURABLE = ("--appendonly", "yes", "--maxmemory-policy", "noeviction")
"""What ``serve`` asks of its Redis: it keeps its data across a restart and evicts nothing."""


def _throwaway_redis() -> tuple[str, Callable[[], None]] | None:
    """A persistent ``redis-server`` on a free loopback port in a folder of its own, and how to stop it; None
    when none is installed."""
    binary = shutil.which("redis-server")
    if binary is None:
        return None
    port, folder = _port(), Path(tempfile.mkdtemp())
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder), "--save", "", *_DURABLE],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.05)

    def stop() -> None:
        proc.terminate()
        proc.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)

    return f"redis://127.0.0.1:{port}/0", stop


def _wait_ready(url: str, deadline: float, proc: subprocess.Popen[str]) -> None:
    """Poll ``/healthz`` until the socket answers: uvicorn logs "startup complete" before it binds, so a
    check sent on that line alone can be refused before the service ever sees it (and is not audited)."""
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the service exited with {proc.returncode} before it answered")
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.05)
    proc.terminate()
    raise SystemExit(f"the service at {url} did not answer /healthz in time")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 checks")
    parser.add_argument("--checks", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--at-once", type=int, default=None, help="checks sent at the same moment (400; --quick 50)")
    parser.add_argument("--store", default=None, help="a persistent Redis (redis://...); default: memory")
    parser.add_argument(
        "--tenants", type=int, default=None, help="the two-tenant row's light checks (50; --quick 20; 0 skips it)"
    )
    parser.add_argument("--heavy-messages", type=int, default=30_000, help="messages of a heavy tenant's check")
    args = parser.parse_args(argv)
    n = 200 if args.quick else args.checks
    inputs = _inputs(n)
    proc, url, token, admin = _start(args.store)
    warm: list[tuple[dict[str, Any], bool]] = []
    try:
        client = ServiceClient(url, token, timeout=30)

        def one(item: tuple[dict[str, Any], bool]) -> tuple[float, bool]:
            started = time.perf_counter()
            verdict = client.check(item[0])
            return time.perf_counter() - started, verdict.approved == item[1]

        warm = [({**item, "user_id": "warm-up"}, ok) for item, ok in _inputs(2 * args.clients)]
        with ThreadPoolExecutor(args.clients) as pool:  # warm-up: imports, the tenant's validator, connections
            list(pool.map(one, warm))
        started = time.perf_counter()
        with ThreadPoolExecutor(args.clients) as pool:
            over_http = list(pool.map(one, inputs))
        http_seconds = time.perf_counter() - started
        audited = 0
        after = ""
        while True:
            request = urllib.request.Request(
                f"{url}/v1/audit?count=1000" + (f"&after={after}" if after else ""),
                headers={"Authorization": f"Bearer {admin}"},
            )
            with urllib.request.urlopen(request, timeout=30) as response:
                page = json.loads(response.read())
            if not page:
                break
            audited += len(page)
            after = page[-1]["entry_id"]
        at_once = args.at_once if args.at_once is not None else (50 if args.quick else 400)
        if at_once:
            _at_once(url, token, at_once)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    validator = Validator()
    for item, _ in warm:
        validator.check(item)
    local: list[float] = []
    started = time.perf_counter()
    for item, _ in inputs:
        t = time.perf_counter()
        validator.check(item)
        local.append(time.perf_counter() - t)
    local_seconds = time.perf_counter() - started
    latencies = [t for t, _ in over_http]
    errors = sum(not ok for _, ok in over_http)
    http_rate, local_rate = n / http_seconds, n / local_seconds
    print(f"{n} checks; {args.clients} client threads over loopback HTTP vs one thread in process")
    print(f"{'':>12} {'checks/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'p99/p50':>8}")
    for label, rate, values in (("service", http_rate, latencies), ("in-process", local_rate, local)):
        p50, p99 = _percentile(values, 0.5) * 1000, _percentile(values, 0.99) * 1000
        print(f"{label:>12} {rate:>10.0f} {p50:>8.3f} {p99:>8.3f} {p99 / p50:>8.2f}")
    print(f"throughput ratio service / in-process: {http_rate / local_rate:.2f}")
    print(f"p50 ratio service / in-process: {statistics.median(latencies) / statistics.median(local):.1f}")
    once = "exactly once" if audited == n + len(warm) else "MISMATCH"
    print(f"errors: {errors}; audit records: {audited} for {n + len(warm)} verdicts, warm-up included ({once})")
    light = args.tenants if args.tenants is not None else (20 if args.quick else 50)
    light_errors = 0
    if light:
        started_redis = None if args.store else _throwaway_redis()
        store = args.store or (started_redis[0] if started_redis else None)
        if store is None:
            print("two tenants: skipped (no --store, and no redis-server installed)")
        else:
            try:
                light_errors = _two_tenants(store, light, args.heavy_messages)
            finally:
                if started_redis is not None:
                    started_redis[1]()
    return 0 if errors == 0 and light_errors == 0 and audited == n + len(warm) else 1


if __name__ == "__main__":
    raise SystemExit(main())
