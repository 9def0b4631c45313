"""The benchmarks run (quick mode) and print their figures; no timing is asserted (the machine is noisy)."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.bench


def test_gate_latency_benchmark_runs() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "gate_latency.py"), "--quick"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    lines = proc.stdout.splitlines()
    assert any(line.strip().startswith("10,000") for line in lines), proc.stdout
    assert sum("target p99 <= 2 ms" in line for line in lines) == 2


def test_check_path_benchmark_runs_each_stage_against_its_floor() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "check_path.py"), "--quick"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    for stage in ("decode", "digest", "index", "gate searches", "check --jsonl, one line", "next turn, cached"):
        assert re.search(rf"^{re.escape(stage)}\s+[\d.]+\s+.*[\d.]+x$", proc.stdout, re.M), (stage, proc.stdout)
    assert re.search(r"^\s+1,000\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+\d+%$", proc.stdout, re.M), proc.stdout


def test_hosts_benchmark_prints_every_row_with_its_target() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "hosts.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    for saver in ("memory", "sqlite"):
        assert re.search(rf"^{saver}\s+1,000(\s+[\d.]+%?)+", proc.stdout, re.M), (saver, proc.stdout)
    for row in ("cold check", "round trip", "one-shot CLI", "conversation cache holds"):
        assert row in proc.stdout, (row, proc.stdout)


def test_service_load_benchmark_is_bounded_errorless_and_audits_each_verdict_once() -> None:
    small = ["--quick", "--tenants", "10", "--heavy-messages", "2000"]  # the two-tenant row, shorter
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "service_load.py"), *small],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    assert "errors: 0;" in proc.stdout and "(exactly once)" in proc.stdout
    assert re.search(r"throughput ratio service / in-process: [\d.]+", proc.stdout)
    # the two-tenant row: the light tenant's checks, alone and beside the heavy one, every one approved
    for label in ("light alone", "light + heavy"):
        assert re.search(rf"{re.escape(label)}: 10 checks, p50 \d+ ms, p99 \d+ ms, errors 0", proc.stdout), proc.stdout
    assert re.search(r"heavy tenant's answers meanwhile: (\d{3} x \d+(, )?)+", proc.stdout), proc.stdout


def test_cache_cost_benchmark_writes_its_rows_and_standalone_never_costs_more_than_uncached(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "cache_cost.py"),
            "--json",
            str(tmp_path / "cache_cost.json"),
            "--plot",
            str(tmp_path / "plot.png"),
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    # The emulated figures are deterministic (a simulated clock, no noise), so they can be asserted.
    assert "standalone mode <= uncached V1 in every row: yes" in proc.stdout, proc.stdout
    rows = json.loads((tmp_path / "cache_cost.json").read_text())["rows"]
    assert [(r["turns"], r["gap_s"]) for r in rows] == [(n, g) for g in (15.0, 75.0) for n in (10, 50, 200)]
    kinds = ("shared", "v1_uncached", "v1_cached", "standalone", "blind")
    document = json.loads((tmp_path / "cache_cost.json").read_text())
    suite = document["suite"]  # the blind request against the shared prefix, on the eval suite's conversations
    assert suite["priced"] > 10 and set(suite["usd_per_check"]) == {"shared_cached", "shared_uncached", "blind"}
    assert suite["input_tokens"]["blind"] < suite["input_tokens"]["shared_uncached"]
    assert "blind to shared, cached:" in proc.stdout
    for r in rows:
        assert all(isinstance(r[k], float) and r[k] > 0 for k in kinds), r
        assert r["standalone"] <= r["v1_uncached"] and r["shared"] < r["v1_cached"] < 1.3 * r["v1_uncached"], r
        assert f"{r['turns']:>5} {r['gap_s']:>3.0f}s" in proc.stdout
    if importlib.util.find_spec("matplotlib"):
        assert (tmp_path / "plot.png").stat().st_size > 10_000


def test_store_throughput_benchmark_runs_against_real_redis(redis_url: str) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "store_throughput.py"),
            "--quick",
            "--workers",
            "2",
            "--redis",
            redis_url,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "audit completeness (redis): 200 records for 200 verdicts: complete" in proc.stdout


def test_eval_replay_benchmark_runs() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "eval_replay.py")],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    assert re.search(r"= \d+ replayed runs", proc.stdout) and "target 540 replayed runs" in proc.stdout


def test_telemetry_benchmark_prints_each_setup_against_none() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "telemetry.py"), "--quick"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    for row in ("none (never set up)", "API, no SDK (no-op)", "SDK, every span kept"):
        assert re.search(rf"^{re.escape(row)}\s+[\d.]+\s+[\d.]+x$", proc.stdout, re.M), (row, proc.stdout)
