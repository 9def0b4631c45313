#!/usr/bin/env bash
# Installs what the tests need (Python packages, Debian's redis-server), starts Redis on a loopback
# port, then runs the linters, the type checker and the test suite; stops Redis on the way out.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh dev

if ! command -v redis-server >/dev/null 2>&1; then
    if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
        echo "make test: the tests need Redis and redis-server is missing; install it (Debian, Ubuntu:" \
            "sudo apt-get install redis-server; macOS: brew install redis), then run make test again" >&2
        exit 1
    fi
    echo "== installing redis-server"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq redis-server >/dev/null
fi
# A free loopback port of our own (never a fixed one: two runs on one machine must not meet), and on the
# way out we stop only the server we started, by its pid.
port="${VALIDATOR_TEST_REDIS_PORT:-$(.venv/bin/python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
data="$(mktemp -d)"
redis-server --port "$port" --bind 127.0.0.1 --dir "$data" --save "" --appendonly yes --appendfsync everysec \
    --daemonize yes --pidfile "$data/redis.pid" --logfile "$data/redis.log"
stop_redis() {
    if [ -s "$data/redis.pid" ]; then
        pid="$(cat "$data/redis.pid")"
        kill "$pid" 2>/dev/null || true
        # wait for it to be gone: a server still writing its files on the way out races the folder's removal
        for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
    rm -rf "$data" || true
}
trap stop_redis EXIT
for _ in $(seq 1 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
redis-cli -p "$port" ping >/dev/null
export VALIDATOR_TEST_REDIS_URL="redis://127.0.0.1:$port/0"
echo "== redis-server $(redis-server --version | awk '{print $3}') on 127.0.0.1:$port"

echo "== ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .
echo "== mypy --strict"
scripts/typecheck.sh
echo "== docs (mkdocs build --strict: a broken link or a page left out fails)"
site="$(mktemp -d)"
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet --site-dir "$site/site"
rm -rf "$site"
echo "== pytest"
# one worker process per core (pytest-xdist): the suite is CPU-bound; each file runs whole in one worker, in order
# (the install tests' documentation blocks build on each other); VALIDATOR_TEST_WORKERS=0 runs it all in this process
.venv/bin/python -m pytest -n "${VALIDATOR_TEST_WORKERS:-auto}" --dist loadfile "$@"
echo "== eval suite (strict judge, plus every judge with committed recordings, replayed)"
.venv/bin/validator eval --recorded --no-progress
