#!/usr/bin/env bash
# The main job on the embedded default (strict offline judge, in-memory store; no API key, no server):
# a standalone check of example pending actions, each printing its verdict.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

for example in vendor_invoice authorized_email fabricated_quote delete_instead_of_archive; do
    echo
    echo "== validator check --example $example"
    status=0
    .venv/bin/validator check --example "$example" || status=$?
    # 0 approved, 1 blocked or ask_user: both are verdicts. 2 is bad input, which the examples never are.
    [ "$status" -le 1 ] || exit "$status"
done
