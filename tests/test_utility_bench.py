"""The benign utility bench (BFCL multi-turn data) runs and prints its figures; the figures themselves are not
asserted (they move as the validator changes)."""

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


@pytest.mark.skipif(
    importlib.util.find_spec("bfcl_eval") is None,
    reason="bfcl-eval is not installed (scripts/setup.sh dev installs it: pip install --no-deps bfcl-eval==2026.3.23)",
)
def test_utility_benchmark_runs_and_accounts_for_every_guarded_call(tmp_path: Path) -> None:
    out = tmp_path / "utility.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "utility.py"), "--limit", "5", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    last = proc.stdout.splitlines()[-1]
    match = re.fullmatch(r"utility: approved (\d+) of (\d+), asked (\d+), blocked (\d+)", last)
    assert match, proc.stdout
    approved, checked, asked, blocked = map(int, match.groups())
    assert checked > 0 and approved + asked + blocked == checked, last
    overall = json.loads(out.read_text())["overall"]
    assert (overall["checked"], overall["approved"], overall["asked"], overall["blocked"]) == (
        checked,
        approved,
        asked,
        blocked,
    )


@pytest.mark.parametrize("data", ["everyday.jsonl", "everyday_holdout.jsonl", "everyday_holdout2.jsonl"])
def test_everyday_requests_bench_checks_each_request_and_blocks_none(tmp_path: Path, data: str) -> None:
    """Every request of bench/everyday.jsonl (and of the held-out set) is checked once, and no plain benign request
    is blocked (asking is the most the validator may do with one: blocking a user's own request is the line never
    crossed)."""
    checks = tmp_path / "everyday.jsonl"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "everyday.py"),
            "--checks",
            str(checks),
            "--data",
            str(ROOT / "bench" / data),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    match = re.fullmatch(r"everyday: approved (\d+) of (\d+), asked (\d+), blocked (\d+)", proc.stdout.splitlines()[-1])
    assert match, proc.stdout
    approved, checked, asked, blocked = map(int, match.groups())
    rows = [json.loads(line) for line in checks.read_text().splitlines()]
    requests = (ROOT / "bench" / data).read_text().splitlines()
    assert checked == len(rows) == len([r for r in requests if r.strip()]) and approved + asked == checked
    assert blocked == 0 and {r["decision"] for r in rows} <= {"approve", "ask_user"}
