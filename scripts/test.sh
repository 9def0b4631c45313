#!/usr/bin/env bash
# Installs what the tests need, then runs the linters, the type checker and the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh dev

echo "== ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .
echo "== mypy --strict"
.venv/bin/mypy --strict validator integrations
echo "== pytest"
.venv/bin/python -m pytest "$@"
