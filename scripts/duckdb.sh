#!/usr/bin/env bash
# Installs DuckDB for the tests that read pds export's Parquet files back,
# when missing:
#   node and npm        from Debian (nodejs, npm) when node is not on PATH
#   @duckdb/node-api    DuckDB's Node.js package, at the version
#                       scripts/duckdb/package-lock.json pins, with its native
#                       library (@duckdb/node-bindings-<platform>), into
#                       .tools/duckdb ($PDS_TOOLS/duckdb when set)
# and copies scripts/duckdb/query.mjs beside it. DuckDB's Python package
# would do as well, but the npm registry is the package source this project's
# machines and CI reach (with Debian and the Go module proxy); PyPI is not.
# make tools runs it; so does the export package's test, which runs
# `node query.mjs SQL` in the folder this prints on success.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD/scripts/duckdb
DIR=${PDS_TOOLS:-$PWD/.tools}/duckdb

apt_install() {
  echo "duckdb: installing $* (Debian)" >&2
  local sudo=
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get -o DPkg::Lock::Timeout=900 update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=900 install -y -qq "$@" >/dev/null
}

if ! type -P node >/dev/null || ! type -P npm >/dev/null; then
  apt_install nodejs npm
fi
if ! cmp -s "$SRC/package-lock.json" "$DIR/package-lock.json" || [ ! -f "$DIR/node_modules/@duckdb/node-api/package.json" ]; then
  echo "duckdb: installing @duckdb/node-api into $DIR" >&2
  rm -rf "$DIR"
  mkdir -p "$DIR"
  cp "$SRC/package.json" "$SRC/package-lock.json" "$DIR/"
  (cd "$DIR" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
cp "$SRC/query.mjs" "$DIR/query.mjs" # beside its node_modules, where its import resolves
echo "$DIR"
