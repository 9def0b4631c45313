"""The benchmarks run (quick mode) and print their figures; no timing is asserted (the machine is noisy)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


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


def test_cache_cost_benchmark_runs_and_meets_its_targets(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "cache_cost.py"), "--plot", str(tmp_path / "plot.png")],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    # The emulated figures are deterministic (no clock, no noise), so the targets can be asserted.
    assert "target cache reads >= 90% of validator input at 50 turns: met" in proc.stdout, proc.stdout
    assert "target cost per check <= 0.15x uncached at 50 turns: met" in proc.stdout, proc.stdout
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
