"""Several worker processes validating concurrently against one real redis-server.

Each worker runs the strict judge with a Redis store: standing authorizations read on the checks
that cite one (half of them), every verdict appended to the audit stream, verdict reuse on (a
tenth of the checks retry an earlier action), block-rate counters updated. The same workload also
runs with the in-memory store, side by side in this run, so the store's cost shows as a difference.

Reports: checks per second over all workers; the time spent inside store calls per check (p50,
p99); check latency with Redis and with memory (p50, p99); and audit completeness (records in the
stream = verdicts given). Starts its own ``redis-server`` on a free loopback port unless
``--redis URL`` is given. Run: ``python bench/store_throughput.py`` (``--quick`` for a short run).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

WORKERS = 4
USER = "Please email the minutes to bob@acme.example and follow up with the Acme people after the call."


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start_redis() -> tuple[str, subprocess.Popen[bytes], str]:
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server is not installed (apt-get install redis-server), or pass --redis URL")
    port, data = _free_port(), tempfile.mkdtemp()
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", data, "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    import redis

    for _ in range(100):
        try:
            redis.Redis(port=port).ping()
            break
        except redis.RedisError:
            time.sleep(0.05)
    return f"redis://127.0.0.1:{port}/0", proc, data


class Timed:
    """Wraps a store; adds the time spent in each call to ``spent``."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.spent = 0.0

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if not callable(attr):
            return attr

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return attr(*args, **kwargs)
            finally:
                self.spent += time.perf_counter() - start

        return timed


def _messages() -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = [{"role": "user", "content": USER}]
    for i in range(10):
        msgs.append(
            {"role": "assistant", "content": "", "tool_calls": [{"id": f"r{i}", "name": "read_inbox", "args": {}}]}
        )
        msgs.append(
            {
                "role": "tool",
                "tool_call_id": f"r{i}",
                "name": "read_inbox",
                "author": f"s{i}@example.com",
                "content": "Quarterly numbers attached; see you at the call. " * 8,
            }
        )
    return msgs


def _actions(n: int, worker: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        if i and i % 10 == 0:
            out.append(out[i - 1])  # a retried call: the same action again
            continue
        evidence = (
            [{"authorization_id": "auth_followups"}] if i % 2 else [{"quote": "email the minutes to bob@acme.example"}]
        )
        args = {"to": "ann@acme.example" if i % 2 else "bob@acme.example", "subject": f"w{worker}-{i}"}
        out.append({"tool": "send_email", "args": args, "justification": {"reason": "asked", "evidence": evidence}})
    return out


def _work(store: Any, spool: str, index: int, n: int) -> dict[str, Any]:
    """One worker's checks against ``store``, timing each check and the store calls inside it."""
    from validator import Policy, ToolPolicy, stateful_validator
    from validator.record.monitor import BlockRateMonitor

    policy = Policy({"send_email": ToolPolicy(targets=("to",), intents=("email", "send", "follow up"))})
    timed = Timed(store)
    validator = stateful_validator(timed, policy=policy, spool=spool, extra_recorders=(BlockRateMonitor(timed),))
    messages = _messages()
    latencies, store_times, codes = [], [], []
    began = time.time()
    for action in _actions(n, index):
        timed.spent = 0.0
        start = time.perf_counter()
        verdict = validator.validate(messages, action, user_id="u-1")
        latencies.append(time.perf_counter() - start)
        store_times.append(timed.spent)
        codes.append(verdict.code.value)
    return {"latency": latencies, "store": store_times, "codes": codes, "span": (began, time.time())}


def worker(args: tuple[str, str, int, int]) -> dict[str, Any]:
    from validator.store import open_store

    url, spool, index, n = args
    return _work(open_store(url), spool, index, n)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def run(url: str, n: int, workers: int, label: str, grant: Callable[[Any], None]) -> dict[str, Any]:
    from validator.store import open_store

    store = open_store(url)
    grant(store)
    spool = tempfile.mktemp(suffix=".jsonl")
    if url.startswith("memory"):
        # one process: a memory store cannot be shared, so the workers run one after another
        results = [_work(store, spool, i, n) for i in range(workers)]
    else:
        with mp.get_context("spawn").Pool(workers) as pool:
            results = pool.map(worker, [(url, spool, i, n) for i in range(workers)])
    # throughput over the time the workers were validating (process start-up left out)
    wall = max(r["span"][1] for r in results) - min(r["span"][0] for r in results)
    latency = [x for r in results for x in r["latency"]]
    store_time = [x for r in results for x in r["store"]]
    verdicts = sum(len(r["codes"]) for r in results)
    return {
        "label": label,
        "checks": verdicts,
        "per_second": verdicts / wall,
        "store_p50": _pct(store_time, 0.5),
        "store_p99": _pct(store_time, 0.99),
        "p50": _pct(latency, 0.5),
        "p99": _pct(latency, 0.99),
        "audit": store.audit_length(),
        "approved": sum(c == "APPROVED" for r in results for c in r["codes"]),
    }


def _grant(store: Any) -> None:
    from validator import StandingAuthorization

    store.put(
        StandingAuthorization(
            id="auth_followups",
            user_id="u-1",
            tool="send_email",
            where={"to": "*@acme.example"},
            quote="You may always send follow-ups to the Acme people after sales calls.",
            created=datetime.now(UTC) - timedelta(days=90),
        )
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis", help="use this Redis instead of starting one")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--workers", type=int, default=WORKERS)
    args = parser.parse_args(argv)
    n = 100 if args.quick else 1000
    proc = data = None
    url = args.redis
    if url is None:
        url, proc, data = _start_redis()
    url = f"{url}?namespace=bench-{uuid.uuid4().hex[:8]}"
    try:
        rows = [run(url, n, args.workers, "redis", _grant), run("memory://", n, args.workers, "memory", _grant)]
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait()
            shutil.rmtree(data or "", ignore_errors=True)
    print(
        f"{args.workers} workers x {n} checks each; strict judge; audit, reuse, authorizations, counters in the store"
    )
    print(
        f"{'store':>7} {'checks':>7} {'checks/s':>9} {'store p50':>10} {'store p99':>10} "
        f"{'check p50':>10} {'check p99':>10} {'audit':>7}"
    )
    for r in rows:
        print(
            f"{r['label']:>7} {r['checks']:>7} {r['per_second']:>9.0f} "
            f"{r['store_p50']:>9.3f}ms {r['store_p99']:>9.3f}ms "
            f"{r['p50']:>9.3f}ms {r['p99']:>9.3f}ms {r['audit']:>7}"
        )
    redis_row = rows[0]
    complete = redis_row["audit"] == redis_row["checks"]
    print(
        f"audit completeness (redis): {redis_row['audit']} records for {redis_row['checks']} verdicts: "
        f"{'complete' if complete else 'INCOMPLETE'}"
    )
    print(
        f"store overhead per check, redis vs memory: p50 {redis_row['p50'] - rows[1]['p50']:+.3f} ms, "
        f"p99 {redis_row['p99'] - rows[1]['p99']:+.3f} ms"
    )
    return 0 if complete else 1


if __name__ == "__main__":
    raise SystemExit(main())
