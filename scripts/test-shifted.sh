#!/usr/bin/env bash
# The test suite with every Python process's clock DAYS days ahead (default 7): no test or bench case may
# depend on the day it runs (time-machine imported before pytest: its plugin is off, and the warning that it
# cannot be rewritten is not an error). Usage: scripts/test-shifted.sh DAYS [pytest arguments]
#   e.g. scripts/test-shifted.sh 365 -x
set -euo pipefail
cd "$(dirname "$0")/.."
days="${1:-7}"
shift || true
scripts/setup.sh dev
.venv/bin/python -m pip install --quiet --disable-pip-version-check "time-machine>=2.14"
export VALIDATOR_CLOCK_SHIFT_DAYS="$days"
export PYTHONPATH="$PWD/scripts/shifted_clock${PYTHONPATH:+:$PYTHONPATH}"
.venv/bin/python -c 'from datetime import datetime; print("== the clock reads", datetime.now().isoformat(timespec="seconds"))'
exec scripts/test.sh -p no:time_machine -W "ignore::pytest.PytestAssertRewriteWarning" "$@"
