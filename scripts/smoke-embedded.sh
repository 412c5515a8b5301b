#!/usr/bin/env bash
# Smoke test of the README's two commands: `npm start` with DATABASE_URL unset, on a fresh
# data folder, must start the embedded PostgreSQL, migrate, and answer /health/ready = 200;
# SIGTERM must stop it cleanly (embedded server included). On a Node older than 24.11 it runs
# under the Node 24 scripts/node24.js fetches, says so in one line, and the SIGTERM goes to the
# process `npm start` started on the older Node, which passes it on.
set -euo pipefail
cd "$(dirname "$0")/.."

unset DATABASE_URL
data_dir=$(mktemp -d /tmp/herald-smoke-XXXXXX)
chmod 755 "$data_dir"
port=${SMOKE_PORT:-3917}
log="$data_dir/service.log"

# The embedded server's port is below Linux's ephemeral range (32768–60999): a port in it can be
# held at that moment as the local end of any outgoing connection (seen: 54392, "already in use").
HERALD_DATA_DIR="$data_dir" PORT="$port" EMBEDDED_POSTGRES_PORT=${SMOKE_PG_PORT:-25491} npm start >"$log" 2>&1 &
npm_pid=$!

# The node processes of this start (npm runs the script through a shell): scripts/node24.js
# running Herald, and the one that starts it with npm start's Node flags (on an older Node, the
# one that runs it under Node 24), told apart from other Heralds on the machine by their data
# folder.
herald_pids() {
  for p in $(pgrep -f "scripts/node24.js .*dist/src/main.js"); do
    [ "$(basename "$(readlink "/proc/$p/exe" 2>/dev/null)")" = node ] || continue
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "HERALD_DATA_DIR=$data_dir" && echo "$p"
  done
}

cleanup() {
  kill -TERM "$npm_pid" $(herald_pids) 2>/dev/null || true
  for _ in $(seq 1 30); do [ -z "$(herald_pids)" ] && break; sleep 1; done
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

runtime_lines=$(grep -c "Herald needs Node.js" "$log" || true)
if node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 24 || (a === 24 && b >= 11) ? 0 : 1)'; then
  [ "$runtime_lines" = 0 ] || { echo "smoke: a Node new enough was told it is not"; cat "$log"; exit 1; }
else
  [ "$runtime_lines" = 1 ] || { echo "smoke: $runtime_lines lines about the Node version on $(node --version), not 1"; cat "$log"; exit 1; }
  echo "smoke: $(grep "Herald needs Node.js" "$log")"
fi

# Stop: SIGTERM to the outer one (Herald itself on Node 24; on an older Node the one that runs
# Herald under Node 24 and passes the signal on), then wait for every one of them.
pids=$(herald_pids)
[ -n "$pids" ] || { echo "smoke: no scripts/node24.js process runs Herald"; cat "$log"; exit 1; }
outer=""
for pid in $pids; do
  echo "$pids" | grep -qx "$(ps -o ppid= -p "$pid" | tr -d ' ')" || outer=$pid
done
kill -TERM "$outer"
for pid in $pids; do
  for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
  if kill -0 "$pid" 2>/dev/null; then echo "smoke: pid $pid did not stop within 30 s"; cat "$log"; exit 1; fi
done
wait "$npm_pid" || true
grep -q "stopped" "$log" || { echo "smoke: no clean stop"; cat "$log"; exit 1; }
if [ -f "$data_dir/postgres/postmaster.pid" ]; then echo "smoke: embedded PostgreSQL still running"; exit 1; fi
echo "smoke: stopped cleanly, embedded PostgreSQL included"
