"""Moves this Python process's wall clock ``VALIDATOR_CLOCK_SHIFT_DAYS`` days ahead (``scripts/test-shifted.sh``).

Loaded at start-up through ``PYTHONPATH`` by every Python process of the run (pytest, the CLI and the service it
starts): ``time.time()``, ``datetime.now()`` and ``date.today()`` read the shifted date and go on ticking; the
monotonic clocks and ``sleep`` are untouched. A process without ``time-machine`` installed (a fresh environment
an install test makes) runs on the machine's clock, and so does every process that is not Python (Redis, the
Claude Code CLI).
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta

_days = os.environ.get("VALIDATOR_CLOCK_SHIFT_DAYS")
if _days:
    try:
        import time_machine
    except ImportError:  # a fresh environment without it: the machine's clock
        pass
    else:
        time_machine.travel(datetime.now(UTC) + timedelta(days=float(_days)), tick=True).start()
