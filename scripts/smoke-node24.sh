#!/usr/bin/env bash
# Smoke test of scripts/node24.js's fetch path, as a newcomer with an older Node meets it on a
# clean machine: with an empty cache, a script runs under Node 24 fetched from the npm registry,
# one line says so, and the arguments and exit code pass through; a second run reuses the Node it
# fetched; without a registry, one line names the Node needed and the exit code is 1.
# On Node 24.11 or later there is nothing to fetch: the script runs in the same process, silently.
set -euo pipefail
cd "$(dirname "$0")/.."

scratch=$(mktemp -d /tmp/herald-node24-smoke-XXXXXX)
trap 'rm -rf "$scratch"' EXIT
cat >"$scratch/probe.js" <<'EOF'
console.log(`${process.version} ${process.argv.slice(2).join(' ')}`);
process.exitCode = 3;
EOF
fail() { echo "smoke-node24: $1"; shift; for f in "$@"; do echo "--- $f"; cat "$f"; done; exit 1; }

run() { # run <cache> <name> [env...]: the probe through node24.js; its status, stdout, stderr, time
  local cache=$1 name=$2
  shift 2
  local began status
  began=$(date +%s%N)
  status=0
  env XDG_CACHE_HOME="$cache" "$@" node scripts/node24.js "$scratch/probe.js" one "two words" \
    >"$scratch/$name.out" 2>"$scratch/$name.err" || status=$?
  echo "$status" >"$scratch/$name.status"
  echo $((($(date +%s%N) - began) / 1000000)) >"$scratch/$name.ms"
}

major=$(node -p 'process.versions.node.split(".")[0]')
minor=$(node -p 'process.versions.node.split(".")[1]')
if ((major > 24 || (major == 24 && minor >= 11))); then
  run "$scratch/cache" here
  [[ "$(cat "$scratch/here.status")" == 3 ]] || fail "exit code $(cat "$scratch/here.status"), not the script's 3" "$scratch/here.err"
  [[ "$(cat "$scratch/here.out")" == "$(node --version) one two words" ]] || fail "unexpected output" "$scratch/here.out"
  [[ ! -s "$scratch/here.err" ]] || fail "said something on a Node new enough" "$scratch/here.err"
  echo "smoke-node24: $(node --version) runs the script itself, silently ($(cat "$scratch/here.ms") ms)"
  exit 0
fi

# 1. A clean machine: an empty cache and an empty npm cache, so Node 24 is downloaded from the
#    registry; said so in one line, and it runs the script.
run "$scratch/cache" first npm_config_cache="$scratch/npm-cache-empty"
[[ "$(cat "$scratch/first.status")" == 3 ]] || fail "exit code $(cat "$scratch/first.status"), not the script's 3" "$scratch/first.err"
[[ "$(cat "$scratch/first.out")" == "v24."*" one two words" ]] || fail "the script did not run under Node 24" "$scratch/first.out" "$scratch/first.err"
[[ "$(wc -l <"$scratch/first.err")" == 1 ]] || fail "said more (or less) than one line" "$scratch/first.err"
grep -q "Herald needs Node.js 24.11 or later: running under Node.js v24" "$scratch/first.err" || fail "the line does not say it" "$scratch/first.err"
echo "smoke-node24: downloaded $(cut -d' ' -f1 "$scratch/first.out") into an empty cache and ran the script ($(cat "$scratch/first.ms") ms): $(cat "$scratch/first.err")"

# 2. The same cache: the Node fetched before is reused (no npm run: well under the fetch's time).
run "$scratch/cache" second
[[ "$(cat "$scratch/second.status")" == 3 && "$(cat "$scratch/second.out")" == "$(cat "$scratch/first.out")" ]] ||
  fail "the second run differs" "$scratch/second.out" "$scratch/second.err"
[[ "$(wc -l <"$scratch/second.err")" == 1 ]] || fail "said more (or less) than one line" "$scratch/second.err"
[[ $(find "$scratch/cache/herald" -maxdepth 1 -name 'node-download-*' | wc -l) == 0 ]] || fail "a download folder was left behind"
echo "smoke-node24: the second run reused it ($(cat "$scratch/second.ms") ms)"

# 3. No registry (a closed port, and an empty npm cache so npm cannot answer from it): one line
#    naming the Node needed, exit code 1, and nothing left in the cache.
run "$scratch/closed" closed npm_config_registry=http://127.0.0.1:9/ npm_config_cache="$scratch/npm-cache"
[[ "$(cat "$scratch/closed.status")" == 1 ]] || fail "exit code $(cat "$scratch/closed.status") without a registry, not 1" "$scratch/closed.err"
[[ ! -s "$scratch/closed.out" ]] || fail "the script ran without a Node 24" "$scratch/closed.out"
[[ "$(wc -l <"$scratch/closed.err")" == 1 ]] || fail "said more (or less) than one line" "$scratch/closed.err"
grep -q "Herald needs Node.js 24.11 or later; fetching Node.js v24.* failed" "$scratch/closed.err" || fail "the line does not name the Node needed" "$scratch/closed.err"
[[ -z "$(ls -A "$scratch/closed/herald")" ]] || fail "the failed fetch left files behind: $(ls -A "$scratch/closed/herald")"
echo "smoke-node24: without a registry ($(cat "$scratch/closed.ms") ms): $(cat "$scratch/closed.err")"
