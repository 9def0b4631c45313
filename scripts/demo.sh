#!/usr/bin/env bash
# The main job on the embedded default (strict offline judge, in-memory store; no API key, no server):
# a standalone check of example pending actions, each printing its verdict.
set -euo pipefail
cd "$(dirname "$0")/.."
# VALIDATOR_DEMO_NO_SETUP=1: .venv is set up already (tests/test_examples.py runs the demo so)
[ "${VALIDATOR_DEMO_NO_SETUP:-}" = 1 ] || scripts/setup.sh

for example in vendor_invoice authorized_email fabricated_quote delete_instead_of_archive; do
    echo
    echo "== validator check --example $example"
    status=0
    .venv/bin/validator check --example "$example" || status=$?
    # 0 approved, 1 blocked, 4 ask_user: each a verdict. 2 is bad input and 3 a verdict not recorded,
    # which the examples never are.
    case "$status" in 0 | 1 | 4) ;; *) exit "$status" ;; esac
done
