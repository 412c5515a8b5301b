#!/usr/bin/env bash
# Smoke test of the README's two commands: `npm start` with DATABASE_URL unset, on a fresh
# data folder, must start the embedded PostgreSQL, migrate, and answer /health/ready = 200;
# SIGTERM must stop it cleanly (embedded server included).
set -euo pipefail
cd "$(dirname "$0")/.."

unset DATABASE_URL
data_dir=$(mktemp -d /tmp/herald-smoke-XXXXXX)
chmod 755 "$data_dir"
port=${SMOKE_PORT:-3917}
log="$data_dir/service.log"

HERALD_DATA_DIR="$data_dir" PORT="$port" EMBEDDED_POSTGRES_PORT=${SMOKE_PG_PORT:-54391} npm start >"$log" 2>&1 &
npm_pid=$!

cleanup() {
  kill -TERM "$npm_pid" 2>/dev/null || true
  rm -rf "$data_dir"
}
trap cleanup EXIT

status=000
for _ in $(seq 1 120); do
  status=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/health/ready" || true)
  [ "$status" = "200" ] && break
  if ! kill -0 "$npm_pid" 2>/dev/null; then break; fi
  sleep 1
done
if [ "$status" != "200" ]; then
  echo "smoke: /health/ready never answered 200 (last: $status)"; cat "$log"; exit 1
fi
echo "smoke: /health/ready = 200 on the embedded PostgreSQL"
grep -q "Herald created your first API key" "$log" || { echo "smoke: no first API key was printed"; cat "$log"; exit 1; }

# Stop: SIGTERM to the node process (npm runs it through a shell), then wait for it.
node_pid=$(pgrep -n -f "^node dist/src/main.js")
kill -TERM "$node_pid"
for _ in $(seq 1 30); do kill -0 "$node_pid" 2>/dev/null || break; sleep 1; done
if kill -0 "$node_pid" 2>/dev/null; then echo "smoke: service did not stop within 30 s"; cat "$log"; exit 1; fi
wait "$npm_pid" || true
grep -q "stopped" "$log" || { echo "smoke: no clean stop"; cat "$log"; exit 1; }
if [ -f "$data_dir/postgres/postmaster.pid" ]; then echo "smoke: embedded PostgreSQL still running"; exit 1; fi
echo "smoke: stopped cleanly, embedded PostgreSQL included"
