#!/usr/bin/env bash
# make fuzz: run every fuzz target for the given time each (default 10m),
# one after the other. Inputs that fail are written by Go under the
# package's testdata/fuzz/<Target>/; commit them with the fix.
set -euo pipefail
cd "$(dirname "$0")/.."
T=${1:-10m}
targets=(
  "./domain/gs1/ FuzzValidate"
  "./domain/gs1/ FuzzParseDigitalLink"
  "./domain/gs1/ FuzzParseElementString"
  "./ingest/ FuzzParseLine"
  "./ingest/ FuzzFastDecodeMatchesStd"
  "./ingest/ FuzzViewsAreUTF8JSON"
  "./ingest/ FuzzKeptRecords"
  "./ingest/jsonutf8/ FuzzFix"
  "./domain/ FuzzAppendJSONMatchesMarshal"
  "./kv/ FuzzPoints"
  "./snapshots/delta/ FuzzRoundTrip"
  "./snapshots/delta/ FuzzApply"
  "./snapshots/fleet/ FuzzOpenDelta"
  "./snapshots/trust/ FuzzStatements"
  "./kv/ FuzzViewsPart"
  "./kv/jsonshape/ FuzzRoundTrip"
  "./kv/jsonshape/ FuzzParse"
  "./http/ FuzzREST"
  "./http/httpfront/ FuzzLaneHead"
  "./http/httpfront/ FuzzLaneHeadInPieces"
  "./mcp/ FuzzMCP"
  "./mcp/stdio/ FuzzParseLine"
  "./mcp/stdio/ FuzzSession"
  "./service/ FuzzScanResolve"
  "./resolver/ FuzzResolve"
)
for t in "${targets[@]}"; do
  read -r pkg name <<<"$t"
  echo "== $name ($pkg) for $T"
  go test -run '^$' -fuzz "^${name}\$" -fuzztime "$T" -parallel 1 "$pkg"
done
