"""The tests' redis-server ends with the test process that started it, even one killed by a signal."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

_START = """
import sys
from pathlib import Path
from tests.redis_server import RedisServer
server = RedisServer(Path(sys.argv[1]))
server.start()
print(server.process.pid, flush=True)
sys.stdin.read()  # until the test kills this process
"""


@pytest.mark.skipif(sys.platform != "linux", reason="the kernel's parent-death signal is Linux's")
def test_a_server_does_not_outlive_a_test_run_killed_by_a_signal(tmp_path: Path) -> None:
    with subprocess.Popen(
        [sys.executable, "-c", _START, str(tmp_path)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as run:
        assert run.stdout is not None
        pid = int(run.stdout.readline())
        os.kill(pid, 0)  # running
        run.kill()  # SIGKILL: no teardown, no atexit
        run.wait(timeout=10)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)  # (not this process's child: init reaps it)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    pytest.fail(f"redis-server {pid} still ran after the test process that started it was killed")
