#!/usr/bin/env bash
# mypy --strict on everything shipped, laid out as it installs: integrations/ is validator.integrations,
# evals/ is validator.evals.
# mypy does not follow setuptools' package-dir mapping, so it reads a temporary tree of symlinks.
set -euo pipefail
cd "$(dirname "$0")/.."
tree="$(mktemp -d)"
trap 'rm -rf "$tree"' EXIT
mkdir "$tree/validator"
for entry in validator/*; do ln -s "$PWD/$entry" "$tree/validator/"; done
ln -s "$PWD/integrations" "$tree/validator/integrations"
ln -s "$PWD/evals" "$tree/validator/evals"
.venv/bin/mypy --strict --config-file pyproject.toml "$tree/validator" "$@"
