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

Run: ``python bench/service_load.py`` (``--quick`` for a short run).
"""

from __future__ import annotations

import argparse
import json
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
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


def _start(store: str | None) -> tuple[subprocess.Popen[str], str, str, str]:
    """The service, its URL, a token that may check and one that may read the audit."""
    port = _port()
    cli = str(Path(sys.executable).parent / "validator")
    # one operator's load: its checks name their users, and may all run at once
    cmd = [cli, "serve", "--port", str(port), "--rate", "1e9", "--burst", "1000000", "--trust-user-id", "*"]
    cmd += ["--tenant-checks", "1000"]
    tokens: list[str] = []
    if store:
        cmd += ["--store", store]
        for scope in ("check", "admin"):
            made = subprocess.run(
                [cli, "token", "create", "--tenant", "bench", "--store", store, "--scope", scope],
                capture_output=True,
                text=True,
                check=True,
            )
            tokens += re.findall(r"vt_[A-Za-z0-9_-]+", made.stdout + made.stderr)[-1:]
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
    return 0 if errors == 0 and audited == n + len(warm) else 1


if __name__ == "__main__":
    raise SystemExit(main())
