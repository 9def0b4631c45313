"""The benchmarks run (quick mode) and print their figures; no timing is asserted (the machine is noisy)."""

from __future__ import annotations

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
