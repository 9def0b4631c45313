#!/usr/bin/env bash
# Creates .venv (Python >= 3.11) and installs the project into it.
# Usage: scripts/setup.sh [EXTRAS]   e.g. scripts/setup.sh dev
set -euo pipefail
cd "$(dirname "$0")/.."

extras="${1:-}"
python="${PYTHON:-python3}"
if ! "$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
    echo "error: $python is missing or older than 3.11; set PYTHON=/path/to/python3.11+" >&2
    exit 2
fi
if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
fi
spec="."
[ -n "$extras" ] && spec=".[$extras]"
.venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip 2>/dev/null || true
# setuptools warns on every editable install that a folder named like the package may shadow it: this clone's is
# the package itself (quiet, as the rest of the set-up is)
PYTHONWARNINGS="ignore:Editable installation" .venv/bin/python -m pip install --quiet --disable-pip-version-check -e "$spec"
# The benign utility bench (bench/utility.py) reads the Berkeley Function Calling Leaderboard's multi-turn
# data and simulated APIs (Apache-2.0); --no-deps: its declared dependencies (torch, ...) are not needed.
if [[ "$extras" == *dev* ]]; then .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps bfcl-eval==2026.3.23; fi
