#!/usr/bin/env bash
# tools-check: proves that `make tools` installs every outside program the
# tests use, on a machine where none was installed by it before. CI runs it
# before `make test`.
#
# It runs scripts/tools.sh with empty tool folders: a new GOPATH (so its bin
# is empty; the Go module and build caches are kept, they only save time), a
# new $PDS_TOOLS in place of .tools/, and a PATH without the Go install
# folders, the checkout's .tools/ and any other folder that holds a
# versitygw. Then it checks that each tool is where the tests look for it,
# and runs one test that starts versitygw the way the tests find it.
# Debian packages cannot be taken away here; they are checked on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
fail() { echo "tools-check: FAIL: $*" >&2; exit 1; }

T=$(mktemp -d /tmp/pds-tools-check.XXXXXX)
trap 'rm -rf "$T"' EXIT

# Keep the caches; empty every install folder.
GOMODCACHE=$(go env GOMODCACHE)
GOCACHE=$(go env GOCACHE)
old_bins=()
[ -z "$(go env GOBIN)" ] || old_bins+=("$(go env GOBIN)")
IFS=: read -ra gopaths <<<"$(go env GOPATH)"
for g in "${gopaths[@]}"; do old_bins+=("$g/bin"); done
old_bins+=("$HOME/go/bin" "$ROOT/.tools" "$ROOT/.tools/bin")
godir=$(dirname "$(type -P go)")

path=
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  skip=
  for b in "${old_bins[@]}"; do [ "$d" = "$b" ] && skip=1; done
  if [ -z "$skip" ] && [ -x "$d/versitygw" ]; then
    [ "$d" != "$godir" ] || fail "versitygw is installed beside go in $d; the check cannot hide it"
    skip=1
  fi
  [ -n "$skip" ] || path=${path:+$path:}$d
done

export GOPATH=$T/gopath GOMODCACHE GOCACHE PDS_TOOLS=$T/tools PATH=$path
unset GOBIN PDS_VERSITYGW
mkdir -p "$GOPATH" "$PDS_TOOLS"
type -P versitygw >/dev/null && fail "a versitygw is still on PATH at $(type -P versitygw)"

echo "tools-check: make tools with empty tool folders (GOPATH=$GOPATH, PDS_TOOLS=$PDS_TOOLS)"
start=$SECONDS
bash scripts/tools.sh
echo "tools-check: make tools took $((SECONDS - start)) s"

# Each tool where the tests look for it.
missing=()
[ -x "$GOPATH/bin/versitygw" ] || missing+=("versitygw (expected in $GOPATH/bin)")
for c in minisign curl systemd-analyze node npm; do
  type -P "$c" >/dev/null || missing+=("$c (on PATH)")
done
[ -x /usr/bin/chromium ] || missing+=("chromium (/usr/bin/chromium)")
[ -f "$PDS_TOOLS/mcp-ts/node_modules/@modelcontextprotocol/sdk/package.json" ] ||
  missing+=("the TypeScript MCP SDK (in \$PDS_TOOLS/mcp-ts)")
for m in puppeteer-core axe-core; do
  [ -d "$PDS_TOOLS/browser-test/node_modules/$m" ] || missing+=("$m (in \$PDS_TOOLS/browser-test)")
done
[ -f "$PDS_TOOLS/duckdb/node_modules/@duckdb/node-api/package.json" ] && [ -f "$PDS_TOOLS/duckdb/query.mjs" ] ||
  missing+=("DuckDB's @duckdb/node-api (in \$PDS_TOOLS/duckdb)")
if [ ${#missing[@]} -gt 0 ]; then
  printf 'tools-check: make tools left these missing:\n' >&2
  printf '  %s\n' "${missing[@]}" >&2
  exit 1
fi
"$GOPATH/bin/versitygw" --version >/dev/null || fail "the installed versitygw does not run"
[ "$(bash scripts/tools.sh --which versitygw)" = "$GOPATH/bin/versitygw" ] ||
  fail "tools.sh --which versitygw does not name $GOPATH/bin/versitygw"

# One test that runs versitygw as the tests find it.
go test -count=1 -run '^TestPublishPullFollowS3$' ./snapshots/fleet
echo "tools-check: every tool the tests use was installed into the empty folders"
