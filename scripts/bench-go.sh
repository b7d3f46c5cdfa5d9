#!/usr/bin/env bash
# make bench-go: the in-process Go benchmarks of the hot paths, with
# allocation counts (-benchmem), into BENCHMARKS.md's bench-go section. They
# are the regression guard of #14: a change that adds allocations to a hot
# path shows in allocs/op, whatever the machine's load does to ns/op.
# Add a hot path's benchmark to BENCHES as "PACKAGE REGEXP".
source "$(dirname "$0")/bench-lib.sh"
cd "$(dirname "$0")/.."
COUNT=${COUNT:-1}
BENCHES=(
  "./domain/gs1/ ."
  "./kv/ IdentityRead"
  "./service/ ViewGet|Resolve1000"
  "./http/ GET"
  "./http/httpfront/ WireGET"
  "./ingest/ Ingest10k"
  "./index/ IndexBuild10k"
)
raw=$(mktemp)
for b in "${BENCHES[@]}"; do
  read -r pkg re <<<"$b"
  go test -run '^$' -bench "$re" -benchmem -cpu 1 -count "$COUNT" "$pkg" | tee -a "$raw"
done
out=$(mktemp)
{
  echo "## In-process hot paths (\`make bench-go\`)"
  echo
  echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') on $(machine); load average when the run ended: $(cut -d' ' -f1-3 /proc/loadavg) (ns/op moves with the machine's load; B/op and allocs/op do not). Command: \`make bench-go\` (scripts/bench-go.sh: \`go test -run '^\$' -bench RE -benchmem -cpu 1 -count $COUNT PKG\` for each of: $(printf '`%s`, ' "${BENCHES[@]}" | sed 's/, $//'))."
  echo
  echo "| benchmark | ns/op | B/op | allocs/op | other |"
  echo "|---|---:|---:|---:|---|"
  awk '/^Benchmark/ {
    name = $1; ns = ""; bop = ""; al = ""; other = ""
    for (i = 3; i < NF; i += 2) {
      if ($(i+1) == "ns/op") ns = $i
      else if ($(i+1) == "B/op") bop = $i
      else if ($(i+1) == "allocs/op") al = $i
      else other = other (other ? ", " : "") $i " " $(i+1)
    }
    printf "| `%s` | %s | %s | %s | %s |\n", name, ns, bop, al, other
  }' "$raw"
} > "$out"
write_section bench-go "$out"
cat "$out"
rm -f "$raw"
