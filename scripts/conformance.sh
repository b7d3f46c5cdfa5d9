#!/usr/bin/env bash
# Runs the public MCP conformance suite against pds on loopback (make conformance).
#
# - installs Node 22 and the suite from the npm registry into .tools/node
#   (the machine's Node may be older; nothing is installed globally);
# - builds a snapshot with bin/pds ingest (the bundled sample, or the passport
#   test case when the sample is missing) and makes a key with bin/pds keys add;
# - serves it with bin/pds serve on 127.0.0.1, behind a small loopback proxy
#   (mcp/testdata/keyproxy) that adds the key, since the suite cannot send an
#   Authorization header;
# - runs the scenarios below at spec version 2026-07-28 with the expected
#   failures of mcp/testdata/conformance-expected-failures.yml.
#
# Exit status 0 when every scenario passes (expected failures aside).
# Results, and the logs of pds and the proxy, are written to var/conformance/.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
SUITE_VERSION=0.2.0-alpha.12
SPEC_VERSION=2026-07-28
SCENARIOS=(server-stateless tools-list caching dns-rebinding-protection http-header-validation)
TOOLS=${PDS_TOOLS:-$ROOT/.tools}/node
BIN=$ROOT/bin/pds
EXPECTED=$ROOT/mcp/testdata/conformance-expected-failures.yml
OUT=$ROOT/var/conformance

[[ -x $BIN ]] || { echo "conformance: $BIN is missing; run make build" >&2; exit 1; }

# Node 22 and the suite, once (npm from Debian when missing).
type -P npm >/dev/null || bash scripts/tools.sh --only npm
if [[ ! -x $TOOLS/node_modules/.bin/node || ! -d $TOOLS/node_modules/@modelcontextprotocol/conformance ]] ||
	! grep -q "\"version\": \"$SUITE_VERSION\"" "$TOOLS/node_modules/@modelcontextprotocol/conformance/package.json"; then
	echo "conformance: installing node@22 and @modelcontextprotocol/conformance@$SUITE_VERSION into .tools/node"
	mkdir -p "$TOOLS"
	[[ -f $TOOLS/package.json ]] || echo '{"private": true}' >"$TOOLS/package.json"
	npm install --prefix "$TOOLS" --no-audit --no-fund --loglevel=error node@22 "@modelcontextprotocol/conformance@$SUITE_VERSION"
fi
export PATH=$TOOLS/node_modules/.bin:$PATH
echo "conformance: node $(node --version), suite $SUITE_VERSION, spec $SPEC_VERSION"

WORK=$(mktemp -d)
rm -rf "$OUT"
mkdir -p "$OUT"
PIDS=()
cleanup() {
	for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT

# The snapshot: the bundled sample, or else the passport test case.
IN=$ROOT/sample-input
if ! compgen -G "$IN/products.ndjson*" >/dev/null; then
	IN=$WORK/in
	mkdir -p "$IN"
	awk -v dir="$IN" '/^-- /{file=dir "/" substr($0, 4); next} file{print > file}' "$ROOT/ingest/testdata/cases/passport.txt"
fi
"$BIN" ingest --in "$IN" --out "$WORK/snap" --quiet
"$BIN" keys add --keys "$WORK/keys.json" --tenant conformance \
	--scopes identifiers:validate,digital-links:parse,products:read,products:resolve,products:search,sources:read,mcp \
	>"$WORK/key" 2>/dev/null

# wait_for FILE PATTERN: wait up to 30 s for a line matching PATTERN.
wait_for() {
	for _ in $(seq 300); do
		if grep -q "$2" "$1" 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	echo "conformance: timed out waiting for $2 in $1" >&2
	cat "$1" >&2 || true
	return 1
}

"$BIN" serve --snapshot "$WORK/snap" --keys "$WORK/keys.json" --addr 127.0.0.1:0 --watch 0 2>"$OUT/pds.log" &
PIDS+=($!)
wait_for "$OUT/pds.log" '"msg":"serving"'
PDS_ADDR=$(sed -n 's/.*"msg":"serving".*"addr":"\([^"]*\)".*/\1/p' "$OUT/pds.log" | head -n1)

go build -o "$WORK/keyproxy" ./mcp/testdata/keyproxy
"$WORK/keyproxy" -target "http://$PDS_ADDR" -key-file "$WORK/key" -addr-file "$WORK/proxy.addr" 2>"$OUT/keyproxy.log" &
PIDS+=($!)
wait_for "$WORK/proxy.addr" ':'
URL="http://$(head -n1 "$WORK/proxy.addr")/v1/mcp"
echo "conformance: pds on $PDS_ADDR, suite talks to $URL"

failed=()
for s in "${SCENARIOS[@]}"; do
	echo
	echo "=== $s"
	if ! (cd "$TOOLS" && npx --no-install "@modelcontextprotocol/conformance@$SUITE_VERSION" server \
		--url "$URL" --scenario "$s" --spec-version "$SPEC_VERSION" \
		--expected-failures "$EXPECTED" -o "$OUT") 2>&1 | tee "$OUT/$s.txt"; then
		failed+=("$s")
	fi
done

echo
if ((${#failed[@]})); then
	echo "conformance: FAILED: ${failed[*]} (see $OUT)"
	exit 1
fi
echo "conformance: every scenario passed (expected failures: $EXPECTED)"
